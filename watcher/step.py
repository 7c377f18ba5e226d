"""The one scoring step: :func:`score_next` (state, capture) -> (verdict, new state).

Batch folds it over a history in capture-time order (:meth:`Engine.scan_history`),
the streaming watcher drives it from the store (:class:`watcher.watch.Watcher`),
and ``compare`` is a two-capture history; all of them reach it through
:meth:`watcher.engine.Engine.score_next`.  Because the step reads only the
state built from earlier captures (the baseline, never an IDF over the whole
history or anything later), a batch result is exactly what the stream says.
The state itself lives in :mod:`watcher.state` (the store reads that, never this).

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
import logging
from typing import TYPE_CHECKING, Protocol

from .model import Capture, Fingerprint, MeasureResult, Verdict, ts14, utc
from .quality import new_text_bytes
from .state import HistoryState, Reference
from .verdict import Decision, drift_score, extraction_failed
from .wording import headed

if TYPE_CHECKING:
    from .config import EngineConfig
    from .profiles.base import Profile
    from .profiles.seedkind import Seed

log = logging.getLogger(__name__)


class Scores(Protocol):
    """What the step needs of :class:`watcher.engine.Engine`: its configuration, each profile's
    parameters, and the comparison of two fingerprints."""

    config: EngineConfig
    params: dict[str, object]

    def compare(self, base: Fingerprint, cur: Fingerprint, seed_url: Seed | str = "",
                profile: Profile | str | None = None, *, state: HistoryState | None = None,
                capture: Capture | None = None) -> tuple[dict[str, MeasureResult], Decision]: ...


def score_next(engine: Scores, history: str, state: HistoryState, cap: Capture, fp: Fingerprint, seed: Seed,
               prof: Profile) -> tuple[Verdict, HistoryState]:
    """The one scoring step: the verdict on ``cap`` (fingerprint ``fp``) and the state after it, the
    profile and the history's seed resolved by the caller (the :class:`watcher.job.Job`)."""
    verdict, after = _step(engine, history, state, cap, fp, seed, prof)
    return verdict, prof.remember(after, verdict, seed)


def _step(engine: Scores, history: str, state: HistoryState, cap: Capture, fp: Fingerprint, seed: Seed,
          prof: Profile) -> tuple[Verdict, HistoryState]:
    """:func:`score_next` before the state remembers the verdict."""
    pol = engine.config.baseline
    t = utc(cap.timestamp)
    if pol.policy == "pinned" and pinned_here(dict(pol.pinned), history, cap):
        why = unfit_reason(fp, pol.policy)
        if why is None:
            d = Decision("on-topic", "baseline", "pinned baseline capture", 0.0)
            pin = Reference(t, cap.uri_m, prof.keeps(fp, seed, engine.config))
            return make_verdict(history, cap, fp, pin, {}, d, prof.name, 0.0), \
                dataclasses.replace(state, pinned=pin)
        log.warning("pinned baseline %s of %s cannot be a baseline: %s", ts14(t), history, why)
    ref = state.reference_at(t)
    if ref is None or (pol.policy != "rolling" and state.pinned is None and state.baseline is not None
                       and t < state.baseline.capture_time):
        return _first(engine, history, state, cap, fp, prof, seed)
    how = read_differently(ref.fingerprint, fp) if ref is state.baseline else None
    if how is not None and unfit_reason(fp, pol.policy) is None:
        # The stored baseline was read another way (extract.main_content, tokens.stemming changed):
        # comparing the two would measure the change of reading, not of the page.
        d = Decision("on-topic", "baseline", f"baseline re-taken: the text is now read as {how}, the "
                     "stored baseline was not", 0.0)
        new = Reference(t, cap.uri_m, prof.keeps(fp, seed, engine.config))
        return make_verdict(history, cap, fp, new, {}, d, prof.name, 0.0), \
            dataclasses.replace(state, baseline=new)
    results, d = engine.compare(ref.fingerprint, fp, seed, prof, state=state, capture=cap)
    verdict = make_verdict(history, cap, fp, ref, dict(results), d, prof.name, drift_score(results, d))
    if (pol.policy == "rolling" and d.status == "on-topic" and unfit_reason(fp, pol.policy) is None
            and ref is state.baseline and t > ref.capture_time):
        rolled = Reference(t, cap.uri_m, prof.keeps(fp, seed, engine.config))
        return verdict, dataclasses.replace(state, baseline=rolled)
    return verdict, state


def _first(engine: Scores, history: str, state: HistoryState, cap: Capture, fp: Fingerprint,
           profile: Profile, seed: Seed) -> tuple[Verdict, HistoryState]:
    """No baseline in force at this capture's time: it becomes the baseline if it is fit to be one
    (unless the profile reads it otherwise: :meth:`Profile.first`)."""
    why = unfit_reason(fp, engine.config.baseline.policy)
    own = profile.first(fp, why, cap, engine.params.get(profile.name))
    if own is not None:
        return make_verdict(history, cap, fp, None, {}, own, profile.name, own.drift_score), state
    if why is None:
        d = Decision("on-topic", "baseline", "baseline capture", 0.0)
        ref = Reference(utc(cap.timestamp), cap.uri_m, profile.keeps(fp, seed, engine.config))
        return make_verdict(history, cap, fp, ref, {}, d, profile.name, 0.0), \
            dataclasses.replace(state, baseline=ref)
    if extraction_failed(fp):
        d = Decision("error", "error", fp.error or "extraction failed", 0.0)
    elif fp.is_empty:
        d = Decision("empty", "empty", headed("no content", fp.error, "empty") + "; no baseline yet", 0.0)
    elif fp.page_kind or (fp.http_status is not None and fp.http_status >= 400):
        d = Decision("off-topic", "off-topic", f"{why}; no baseline yet", 0.95,
                     ("page_kind",) if fp.page_kind else ("http_error",))
    else:
        d = Decision("empty", "empty", f"not fit to be a baseline ({why}); waiting for one", 0.0)
    return make_verdict(history, cap, fp, None, {}, d, profile.name, 0.95 if d.status == "off-topic" else 0.0), \
        state


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
    from .model import verdict_id

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
