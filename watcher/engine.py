"""The drift engine: fingerprints, the one scoring step, per-history results.

Batch (:meth:`Engine.scan_history`), streaming (:class:`watcher.watch.Watcher`)
and ``compare`` run the same step (:meth:`Engine.score_next`) over the same
causal state (:class:`watcher.state.HistoryState`): fingerprint each capture
once, take the baseline in force at its capture time, score the configured
measures, let the profile decide.

The DOI monitor runs this step too (in process, through the same
:class:`~watcher.watch.Watcher` and store), with the ``doi`` profile: a
capture names its history (``doi:<doi>``), the registered DOI and title, and
the engine configuration holds the ``engine.doi`` thresholds, so a check's change class is the
verdict the stream would store for the same capture, never a second opinion.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Iterable, Sequence
from datetime import datetime

from . import measures as ms
from . import profiles, step
from .config import DEFAULT_VOTING, EngineConfig
from .fingerprint import fingerprint, reading_key
from .job import Job, repeated, same_reference
from .job import seed_url as job_seed
from .model import Behaviour, Capture, Fingerprint, HistoryResult, MeasureResult, Verdict, utc
from .profiles.base import Case, Profile
from .profiles.seedkind import Seed, as_seed
from .profiles.shared import judge
from .state import HistoryState
from .verdict import Decision, extraction_failed, score_measures

log = logging.getLogger(__name__)


def has_content(fp: Fingerprint) -> bool:
    """Content that can be compared: bytes that were read and extracted."""
    return not fp.is_empty and fp.kind != "binary" and not extraction_failed(fp)


def behaviour_of(statuses: Sequence[str]) -> Behaviour:
    """TimeMap behaviour from the on/off sequence (empty captures ignored)."""
    seq = [s == "off-topic" for s in statuses if s in ("on-topic", "off-topic", "baseline")]
    if not seq:
        return "Empty"
    if not any(seq):
        return "Always On"
    if all(seq):
        return "Always Off"
    changes = sum(1 for a, b in itertools.pairwise(seq) if a != b)
    if changes == 1:
        return "Step Function On" if not seq[0] else "Step Function Off"
    return "Oscillating"


Readings = dict[tuple[object, ...], Fingerprint]
"""Fingerprints already made, by :func:`~watcher.fingerprint.reading_key` (:meth:`Engine.read_once`)."""


class Engine:
    """Stateless scoring engine; safe to share across histories (not threads)."""

    def __init__(self, config: EngineConfig) -> None:
        # each profile's own configuration section, handed to it with every case (Case.params): part of
        # the engine configuration, so no caller passes (or forgets) it
        self.params: dict[str, object] = {"doi": config.doi}
        measures = dict(config.measures) or dict(DEFAULT_VOTING)
        for name in (*measures, *config.report_measures):
            ms.get(name)  # unknown names fail loudly, at start-up
        self.config = config.model_copy(update={
            "measures": {ms.get(n).name: t for n, t in measures.items()},
            "report_measures": tuple(ms.get(n).name for n in config.report_measures),
        })

    def profile(self, profile: Profile | str | None = None) -> Profile:
        """``profile`` resolved: a profile given as itself, by name, or the configured one."""
        if profile is None or isinstance(profile, str):
            return profiles.get(profile or self.config.profile)
        return profile

    # -- one capture --------------------------------------------------------
    def fingerprint(self, capture: Capture, profile: Profile | str | None = None,
                    seed_url: Seed | str | None = None) -> Fingerprint:
        """``capture``'s fingerprint for ``profile`` (the configured one by default): the scholarly
        record and the word sequence read only where the profile compares them; the main content or
        the whole page as the profile and the history's seed (``seed_url``, else the capture's URL)
        call for."""
        prof = self.profile(profile)
        return fingerprint(capture, self.config, **self.reading_args(prof, as_seed(seed_url or capture.url)))

    def read_once(self, capture: Capture, profile: Profile, seed: Seed, read: Readings, keep: int = 0) -> Fingerprint:
        """:meth:`fingerprint`, or the fingerprint ``read`` holds of a capture read before with everything
        a fingerprint reads the same (:func:`~watcher.fingerprint.reading_key`): a payload that comes
        back is parsed once.  ``keep`` > 0 bounds ``read`` to the last ``keep`` payloads read.  ``read``
        belongs to this engine: its configuration is not in the key."""
        args = self.reading_args(profile, seed)
        key = reading_key(capture, **args)
        fp = read.get(key) if key is not None else None
        if fp is None:
            fp = fingerprint(capture, self.config, **args)
            if key is not None:
                if keep and len(read) >= keep:
                    del read[next(iter(read))]  # the oldest (dicts keep their order)
                read[key] = fp
        return fp

    def reading_args(self, profile: Profile, seed: Seed) -> dict[str, bool]:
        """:func:`~watcher.fingerprint.fingerprint`'s options for a capture of ``seed``'s history under
        ``profile``: the scholarly record and the word sequence where the profile compares them, the
        main content or the whole page as the profile and the seed call for."""
        return {"record": profile.reads_record, "words_kept": profile.words_kept,
                "main_content": self.config.extract.main_content_for(profile.main_content(seed))}

    def compare(self, base: Fingerprint, cur: Fingerprint, seed_url: Seed | str = "",
                profile: Profile | str | None = None, *, state: HistoryState | None = None,
                capture: Capture | None = None) -> tuple[dict[str, MeasureResult], Decision]:
        """Score ``cur`` against ``base``: every configured measure, then the profile's decision
        (``state``: what the history remembers; ``capture``: what a DOI check watches)."""
        ctx = ms.Context()
        if not has_content(cur) or base.is_empty:
            results: dict[str, MeasureResult] = {}
        else:
            results = score_measures(base, cur, self.config, ctx)
        prof = self.profile(profile)
        case = Case(base, cur, results, self.config, as_seed(seed_url), state or HistoryState(), capture,
                    self.params.get(prof.name))
        return results, judge(prof, case)

    def score_next(self, history: str, state: HistoryState, cap: Capture, fp: Fingerprint,
                   seed_url: Seed | str | None = None, profile: Profile | str | None = None
                   ) -> tuple[Verdict, HistoryState]:
        """The one scoring step: the verdict on ``cap`` and the state after it.

        ``seed_url`` is the history's seed (its first capture's URL), ``profile`` overrides the
        configured one (per input topic); both are best resolved once by the caller
        (:meth:`profile`, :meth:`Seed.of`) and passed down as values.
        """
        prof = self.profile(profile)
        return step.score_next(self, history, state, cap, fp, as_seed(seed_url or cap.url), prof)

    def job(self, history: str, cap: Capture, state: HistoryState, profile: Profile | str | None = None) -> Job:
        """``cap``'s :class:`~watcher.job.Job` in a fold that holds the history's ``state`` itself (batch,
        ``compare``): made by the rules the stream's :meth:`watcher.watch.Watcher.job` uses."""
        seed, prof = Seed.of(job_seed(history, cap.url, cap.seed, self.config.canonical)), self.profile(profile)
        return Job(history, seed, prof, state, same_reference(state, cap.effective_digest, self.reading(prof, seed)))

    def reading(self, profile: Profile, seed: Seed) -> tuple[bool, bool]:
        """How this engine reads a capture of ``seed``'s history under ``profile``: (main content, stemmed)."""
        return self.reading_args(profile, seed)["main_content"], self.config.tokens.stemming

    def score(self, job: Job, cap: Capture, fp: Fingerprint) -> tuple[Verdict, HistoryState]:
        """:meth:`score_next` for ``cap`` (fingerprint ``fp``) with what its ``job`` resolved."""
        return step.score_next(self, job.history, job.state, cap, fp, job.seed, job.profile)

    # -- a whole history ----------------------------------------------------
    def scan_history(self, history: str, captures: Iterable[Capture], profile: Profile | str | None = None
                     ) -> HistoryResult:
        """Fold :meth:`score_next` over ``captures`` in capture-time order (the profile and the seed
        resolved once, here)."""
        caps = sorted(captures, key=lambda c: utc(c.timestamp))
        by_digest: dict[str, Fingerprint] = {}
        read: Readings = {}  # the payloads read in this history
        state = HistoryState()
        prof = self.profile(profile)
        verdicts: list[Verdict] = []
        for c in caps:
            dig = c.effective_digest
            job = self.job(history, c, state, prof)
            fp = repeated(job, c.status)  # the reference's payload again: its fingerprint, no parse
            if fp is None and dig and c.content is None and dig in by_digest:
                # a revisit without payload: the payload it repeats (the stream reads it from the archive)
                fp = _with_status(by_digest[dig], c.status)
            elif fp is None:
                fp = self.read_once(c, prof, job.seed, read)
                if dig and not fp.is_empty:
                    by_digest.setdefault(dig, fp)
            v, state = self.score(job, c, fp)
            verdicts.append(v)
        return summarise(history, caps[0].url if caps else history, verdicts)


def _with_status(fp: Fingerprint, status: int | None) -> Fingerprint:
    return fp if status is None or fp.http_status == status else dataclasses.replace(fp, http_status=status)


def summarise(history: str, url: str, verdicts: Sequence[Verdict]) -> HistoryResult:
    statuses = [v.status for v in verdicts]
    judged = [s for s in statuses if s in ("on-topic", "off-topic")]
    first: datetime | None = next((v.capture_time for v in verdicts if v.status == "off-topic"), None)
    share = sum(1 for s in judged if s == "off-topic") / len(judged) if judged else 0.0
    return HistoryResult(history=history, url=url, verdicts=tuple(verdicts), behaviour=behaviour_of(statuses),
                         first_drift=first, off_topic_share=round(share, 4))
