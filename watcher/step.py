"""The one scoring step: ``score_next(state, capture) -> (verdict, new state)``.

Batch folds it over a history in capture-time order (:meth:`Engine.scan_history`),
the streaming watcher drives it from the store (:class:`watcher.watch.Watcher`),
and ``compare`` is a two-capture history.  Because the step reads only the
state built from earlier captures (the baseline, never an IDF over the whole
history or anything later), a batch result is exactly what the stream says.

The state is small on purpose (a baseline fingerprint in compact form, the
pinned one when a pin is configured, and what the history remembers of its
verdicts: a flag and up to two names): about 1.7 kB per URL.

Order: a capture that arrives late is scored against the baseline in force at
its capture time and what the history remembered then.  Under
``first``/``first-valid`` the baseline is the earliest capture fit to be one,
so a late capture earlier than the baseline becomes the new baseline when it
is fit; the stream then re-scores the later captures it still holds (see
Watcher) and re-publishes changed verdicts as new versions, as it does when a
late capture changes what the history remembers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from .compact import reduce_fingerprint
from .model import Capture, Fingerprint, Verdict, ts14, utc
from .quality import new_text_bytes
from .verdict import Decision, extraction_failed
from .wording import headed

if TYPE_CHECKING:
    from .profiles.seeds import Seed


@dataclass(frozen=True, slots=True)
class Reference:
    """A capture serving as baseline: when, where, and its fingerprint in
    state form (:func:`state_form`)."""

    capture_time: datetime
    uri_m: str | None
    fingerprint: Fingerprint


def state_form(fp: Fingerprint, keep_shingles: bool = False, keep_tokens: bool = False,
               keep_record: bool = True) -> Fingerprint:
    """What a baseline keeps of a fingerprint: the same in batch and stream,
    so that both score later captures against the same thing.  The whole
    shingle set gives way to its bottom-k sample (kept), the word sequence and
    the text are dropped unless configured; what is dropped leaves the
    recorded features, so a measure that needs it is n/a.  The scholarly
    record (title, authors, a 1,024-hash sample of the main text) is kept only
    where the profile reads it (``doi``): a page with Dublin Core or citation
    meta would otherwise cost some 5 kB per URL in a collection."""
    kept = reduce_fingerprint(fp, keep_text=keep_tokens, keep_shingles=keep_shingles)
    return dataclasses.replace(
        kept,
        headings=(),  # read once, for the page kind
        citation={},  # the DOI profile keeps the record it needs in its own field
        # the record (its main-text shingle set already given way to its sample, as the page's does)
        record=kept.record if keep_record else None,
        text_bytes=0, badness=None, boilerplate_share=None,  # the capture's evidence, not the baseline's
    )


@dataclass(frozen=True, slots=True)
class HistoryState:
    """Everything a history's next capture is scored against.

    ``baseline``: the first capture fit to be a baseline (``first``,
    ``first-valid``), or the latest on-topic one (``rolling``).  ``pinned``:
    the configured pinned capture once seen; it is the baseline from its capture
    time on (captures before it keep ``baseline``).

    What the profile remembers of the verdicts since the baseline (its
    ``remember``, a fold over them, so the stream can rebuild it for a late
    capture from the verdicts it stored: :func:`memory_of`); the ``collection``
    profile's (watcher.profiles.collection.remember): ``names``, the titles
    (normalised) a site carried while judged on topic, other than its
    baseline's, the newest last (a renamed or translated site keeps its
    identity under its new name).

    ``latest``: the newest capture time scored in the history, as the store
    knows it (never written with the state; the stream reads it to tell a late
    capture).  Batch folds in capture-time order and leaves it unset.
    """

    baseline: Reference | None = None
    pinned: Reference | None = None
    names: tuple[str, ...] = ()
    latest: datetime | None = field(default=None, compare=False)

    def reference_at(self, when: datetime) -> Reference | None:
        """The baseline in force for a capture taken at ``when``."""
        t = utc(when)
        if self.pinned is not None and self.pinned.capture_time <= t:
            return self.pinned
        if self.baseline is not None and self.baseline.capture_time <= t:
            return self.baseline
        return None


def unfit_reason(fp: Fingerprint, policy: str) -> str | None:
    """Why ``fp`` cannot be a baseline, or None when it can.

    Under every policy: no content, an unreadable or binary payload, no words,
    an HTTP error or redirect status, a redirect stub, an off-topic page kind
    (soft 404, parked, suspended, bot wall...).  A baseline is what every later
    capture is judged against: a "301 Moved Permanently" page or a parked
    domain as baseline turns every real page after it into "off topic".
    """
    if extraction_failed(fp):
        return fp.error or "extraction failed"
    if fp.is_empty:
        return headed("no content", fp.error, "empty")
    if fp.kind == "binary":
        return "not a document"
    if fp.http_status is not None and not 200 <= fp.http_status < 300:
        return f"HTTP {fp.http_status}"
    if fp.redirect:
        return f"redirect stub to {fp.redirect}"
    if fp.word_count == 0:
        return "no words"
    if fp.page_kind:
        return f"page kind {fp.page_kind} ({fp.page_kind_evidence})"
    return None


def read_differently(base: Fingerprint, cur: Fingerprint) -> str | None:
    """How the baseline was read otherwise than the capture (boilerplate removed or not, terms
    stemmed or not), or None.  Two fingerprints read differently measure different texts: after a
    configuration change (or an upgrade that changed a default) a stored baseline would make every
    capture drift, so a fit capture takes its place instead (Engine.score_next)."""
    if base.kind in ("html", "text", "pdf") and cur.kind in ("html", "text", "pdf"):
        if base.boilerplate_removed != cur.boilerplate_removed:
            return "main content" if cur.boilerplate_removed else "whole page"
        if base.stemmed != cur.stemmed:
            return "stemmed terms" if cur.stemmed else "unstemmed terms"
    return None


def make_verdict(history: str, cap: Capture, fp: Fingerprint, ref: Reference | None, results: dict[str, object],
                 d: Decision, profile: str, score: float) -> Verdict:
    from .model import MeasureResult, verdict_id

    measures = {k: v for k, v in results.items() if isinstance(v, MeasureResult)}
    return Verdict(
        verdict_id=verdict_id(history, cap.timestamp, fp.digest),
        history=history, url=cap.url, capture_time=utc(cap.timestamp), uri_m=cap.uri_m, digest=fp.digest,
        baseline_time=ref.capture_time if ref else None, baseline_uri_m=ref.uri_m if ref else None,
        measures=measures, status=d.status, change=d.change, reason=d.reason,
        page_kind=fp.page_kind, language=fp.language, byte_count=fp.byte_count, word_count=fp.word_count,
        title=fp.title, seed=cap.seed, job=cap.job, label=cap.label, drift_score=score,
        profile=profile, checks=d.checks,
        text_bytes=fp.text_bytes, badness=fp.badness, boilerplate_share=fp.boilerplate_share,
        text_simhash=f"{fp.simhash_tf:016x}" if fp.simhash_tf else "",
        new_text_bytes=new_text_bytes(fp.text_bytes, fp.shingle_count,
                                      ref.fingerprint.shingle_count if ref else None,
                                      measures["containment"].score if "containment" in measures else None),
    )


def same_verdict(a: Verdict, b: Verdict) -> bool:
    """Equal in everything a reader acts on (the version aside)."""
    return dataclasses.replace(a, version=1) == dataclasses.replace(b, version=1)


def pinned_here(pins: dict[str, str] | None, history: str, cap: Capture) -> bool:
    return bool(pins) and pins is not None and pins.get(history) == ts14(cap.timestamp)


def memory_of(state: HistoryState, verdicts: Iterable[Verdict], profile: Remembers, seed: Seed) -> HistoryState:
    """``state`` with what it remembers rebuilt from ``verdicts`` (any order; folded in capture-time
    order, as batch scores them, by the profile's ``remember``): the stream's view of the history at
    a late capture's time."""
    out = dataclasses.replace(state, names=())
    for v in sorted(verdicts, key=lambda x: utc(x.capture_time)):
        out = profile.remember(out, v, seed)
    return out


class Remembers(Protocol):
    """What :func:`memory_of` needs of a profile (:class:`watcher.profiles.base.Profile`)."""

    def remember(self, state: HistoryState, verdict: Verdict, seed: Seed) -> HistoryState: ...
