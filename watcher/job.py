"""One capture's work, resolved once at the edge: the :class:`Job`.

Every caller of the scoring step (batch :meth:`watcher.engine.Engine.scan_history`, the stream's
scorer, ``compare``, the DOI monitor, review's re-scoring) scores a capture through a Job, so the
things that decide a verdict besides the capture itself are worked out in one place, one way:

- the history key: the router's Kafka key where there is one (it was computed from the same URL with
  the same ``engine.canonical``), else the capture's declared history, else the URL's key under the
  configured ``engine.canonical`` (never the defaults);
- the seed the history stands for (:func:`seed_url`): the crawler's seed when it keys to the history,
  else the capture's URL, in batch as in the stream;
- the profile, with its parameters read from the engine configuration (``engine.doi`` for ``doi``);
- the state the capture is scored against, and the reference whose payload it repeats by digest
  (:func:`same_reference`: then nothing is fetched or parsed, and the reference's fingerprint in
  state form is the capture's, in batch as in the stream);
- the verdict id, and whether it is stored already (a re-delivered event): checked before anything
  is acquired, when the event names its payload digest.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime

from .canonical import url_key
from .config import CanonicalConfig
from .errors import ExtractError
from .fingerprint import failure_reason
from .model import Fingerprint, Verdict, verdict_id
from .profiles.base import Profile
from .profiles.seedkind import Seed
from .state import HistoryState, Reference
from .verdict import extraction_failed


@dataclass(frozen=True, slots=True)
class Job:
    """Everything one capture is scored with besides its payload.

    ``verdict_id``: the id its verdict is stored under when the digest is known before the payload
    is read (``None``: known once it is read).  ``done``: the verdict already stored under that id (a
    re-delivered event): nothing is acquired, nothing scored.  ``same``: the reference (the baseline
    or the pinned capture in force) whose payload the capture repeats by digest."""

    history: str
    seed: Seed
    profile: Profile
    state: HistoryState = field(default_factory=HistoryState)
    same: Reference | None = None
    verdict_id: str | None = None
    done: Verdict | None = None

    @property
    def same_digest(self) -> str | None:
        """The payload digest of the reference this capture repeats, if any."""
        return self.same.fingerprint.digest if self.same is not None else None

    @property
    def needs_payload(self) -> bool:
        """False when the capture needs no fetch: re-delivered, or the same payload as the reference."""
        return self.done is None and self.same is None


def history_of(url: str, canonical: CanonicalConfig, *, key: str | None = None, declared: str | None = None) -> str:
    """The history a capture belongs to: the router's ``key``, the capture's ``declared`` history (a DOI
    check's ``doi:...``), else ``url``'s canonical key under ``canonical``."""
    return key or declared or url_key(url, canonical)


def seed_url(history: str, url: str, seed: str | None, canonical: CanonicalConfig) -> str:
    """The URL the history stands for: the crawler's ``seed`` when it is this history's URL (up to
    canonicalisation), else the capture's own ``url``; batch and stream alike."""
    if seed and seed != url and url_key(seed, canonical) == history:
        return seed
    return url


def same_reference(state: HistoryState, digest: str | None, reading: tuple[bool, bool] | None = None
                   ) -> Reference | None:
    """The reference in force (pinned, else baseline) when its payload digest is ``digest``: the one
    same-digest test (a capture repeating it needs no fetch and no parse).  ``reading``: (main content,
    stemmed terms) as the engine reads this history now; a reference read another way (a store from
    before a configuration change) does not stand for the payload, so the capture is read again and
    the step re-takes the baseline (:func:`watcher.step.read_differently`)."""
    ref = state.pinned or state.baseline
    if ref is None or not digest or digest != ref.fingerprint.digest:
        return None
    fp = ref.fingerprint
    if reading is not None and fp.kind in ("html", "text", "pdf") and (fp.boilerplate_removed, fp.stemmed) != reading:
        return None
    return ref


def expected_id(history: str, timestamp: datetime, digest: str | None) -> str | None:
    """The verdict id of a capture whose payload ``digest`` is known before it is read, else ``None``."""
    return verdict_id(history, timestamp, digest) if digest else None


def repeated(job: Job, status: int | None) -> Fingerprint | None:
    """The fingerprint of a capture without payload that repeats the job's reference (its HTTP status
    its own), or ``None``."""
    if job.same is None:
        return None
    fp = job.same.fingerprint
    return fp if status is None or fp.http_status == status else dataclasses.replace(fp, http_status=status)


def readable(url: str, fp: Fingerprint) -> Fingerprint:
    """``fp``, or :class:`ExtractError` when the capture could not be read.

    One behaviour in the step, surfaced per medium: an unreadable capture never changes the state
    (no baseline, nothing remembered; :func:`watcher.step.score_next`).  A scan writes it as an
    ``error`` row (its results file has one row per capture the input named); the stream raises this,
    and the event ends as a dead letter with the reason (the house rule for a failed event: it can be
    replayed once the cause is fixed)."""
    if extraction_failed(fp):
        raise ExtractError(f"{url}: {fp.error}", reason=failure_reason(fp.error))
    return fp
