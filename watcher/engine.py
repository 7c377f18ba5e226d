"""The drift engine: fingerprints, the one scoring step, per-history results.

Batch (:meth:`Engine.scan_history`), streaming (:class:`watcher.watch.Watcher`)
and ``compare`` run the same step (:meth:`Engine.score_next`) over the same
causal state (:class:`watcher.step.HistoryState`): fingerprint each capture
once, take the baseline in force at its capture time, score the configured
measures, let the profile decide.

The DOI monitor runs this step too (in process, through the same
:class:`~watcher.watch.Watcher` and store), with the ``doi`` profile: a
capture names its history (``doi:<doi>``), the registered DOI and title, and
the engine holds the ``doi:`` thresholds, so a check's change class is the
verdict the stream would store for the same capture, never a second opinion.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Iterable, Sequence
from datetime import datetime

from . import measures as ms
from .config import DEFAULT_VOTING, DoiConfig, EngineConfig
from .fingerprint import fingerprint
from .model import Behaviour, Capture, Fingerprint, HistoryResult, MeasureResult, Verdict, ts14, utc
from .profiles import seed_kind
from .step import (
    HistoryState,
    Reference,
    make_verdict,
    pinned_here,
    read_differently,
    remember,
    state_form,
    unfit_reason,
)
from .verdict import Decision, decide, drift_score, extraction_failed, score_measures
from .wording import headed

log = logging.getLogger(__name__)


def has_content(fp: Fingerprint) -> bool:
    """Content that can be compared: bytes that were read and extracted."""
    return not fp.is_empty and fp.kind != "binary" and not extraction_failed(fp)


def is_valid_baseline(fp: Fingerprint) -> bool:
    """A capture fit to be a baseline (see :func:`watcher.step.unfit_reason`)."""
    return unfit_reason(fp, "first") is None


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


class Engine:
    """Stateless scoring engine; safe to share across histories (not threads)."""

    def __init__(self, config: EngineConfig, doi: DoiConfig | None = None) -> None:
        """``doi``: the ``doi`` profile's thresholds (``doi:`` config; defaults when not given)."""
        self.doi = doi or DoiConfig()
        measures = dict(config.measures) or dict(DEFAULT_VOTING)
        for name in (*measures, *config.report_measures):
            ms.get(name)  # unknown names fail loudly, at start-up
        self.config = config.model_copy(update={
            "measures": {ms.get(n).name: t for n, t in measures.items()},
            "report_measures": tuple(ms.get(n).name for n in config.report_measures),
        })

    # -- one capture --------------------------------------------------------
    def fingerprint(self, capture: Capture, profile: str | None = None, seed_url: str | None = None) -> Fingerprint:
        """``capture``'s fingerprint for ``profile`` (the configured one by default): the scholarly
        record is read only where the profile compares it (``doi``); the main content or the whole
        page as the profile and the history's seed (``seed_url``, else the capture's URL) call for."""
        prof = profile or self.config.profile
        deep = seed_kind(seed_url or capture.url) == "page"
        return fingerprint(capture, self.config, record=prof == "doi", words_kept=prof == "text",
                           main_content=self.config.extract.main_content_for(prof, deep))

    def compare(self, base: Fingerprint, cur: Fingerprint, seed_url: str = "", profile: str | None = None, *,
                doi: str | None = None, expected_title: str | None = None, names: tuple[str, ...] = ()
                ) -> tuple[dict[str, MeasureResult], Decision]:
        """Score ``cur`` against ``base``: every configured measure, then the profile's decision
        (``doi``/``expected_title``: what a DOI check watches, for the ``doi`` profile; ``names``: the
        other names the site was judged on topic under, for the ``collection`` profile)."""
        ctx = ms.Context()
        if not has_content(cur) or base.is_empty:
            results: dict[str, MeasureResult] = {}
        else:
            results = score_measures(base, cur, self.config, ctx)
        return results, decide(base, cur, results, self.config, seed_url, profile, doi=doi,
                               expected_title=expected_title, doi_params=self.doi, names=names)

    def _state_form(self, fp: Fingerprint, profile: str, seed: str) -> Fingerprint:
        # the text profile aligns the baseline's words with the capture's (typos: textprofile.text); a
        # first-level heading names a deep page's subject, never a home page's (profiles.collection)
        kept = state_form(fp, self.config.tokens.keep_shingles, self.config.tokens.keep_tokens or profile == "text",
                          keep_record=profile == "doi")
        return dataclasses.replace(kept, heading="") if kept.heading and seed_kind(seed) == "site" else kept

    def score_next(self, history: str, state: HistoryState, cap: Capture, fp: Fingerprint,
                   seed_url: str | None = None, profile: str | None = None) -> tuple[Verdict, HistoryState]:
        """The one scoring step: the verdict on ``cap`` and the state after it.

        ``seed_url`` is the URL the history stands for (its first capture's);
        ``profile`` overrides the configured one (per input topic).
        """
        prof = profile or self.config.profile
        seed = seed_url or cap.url
        site = seed_kind(seed) == "site"
        verdict, after = self._step(history, state, cap, fp, seed, prof, site)
        return verdict, remember(after, verdict, prof, site)

    def _step(self, history: str, state: HistoryState, cap: Capture, fp: Fingerprint, seed: str,
              prof: str, site: bool) -> tuple[Verdict, HistoryState]:
        """:meth:`score_next` before the state remembers the verdict."""
        pol = self.config.baseline
        t = utc(cap.timestamp)
        if pol.policy == "pinned" and pinned_here(dict(pol.pinned), history, cap):
            why = unfit_reason(fp, pol.policy)
            if why is None:
                d = Decision("on-topic", "baseline", "pinned baseline capture", 0.0)
                pin = Reference(t, cap.uri_m, self._state_form(fp, prof, seed))
                return make_verdict(history, cap, fp, pin, {}, d, prof, 0.0), dataclasses.replace(state, pinned=pin)
            log.warning("pinned baseline %s of %s cannot be a baseline: %s", ts14(t), history, why)
        ref = state.reference_at(t)
        if ref is None or (pol.policy != "rolling" and state.pinned is None and state.baseline is not None
                           and t < state.baseline.capture_time):
            return self._first(history, state, cap, fp, prof, seed)
        how = read_differently(ref.fingerprint, fp) if ref is state.baseline else None
        if how is not None and unfit_reason(fp, pol.policy) is None:
            # The stored baseline was read another way (extract.main_content, tokens.stemming changed):
            # comparing the two would measure the change of reading, not of the page.
            d = Decision("on-topic", "baseline", f"baseline re-taken: the text is now read as {how}, the "
                         "stored baseline was not", 0.0)
            new = Reference(t, cap.uri_m, self._state_form(fp, prof, seed))
            return make_verdict(history, cap, fp, new, {}, d, prof, 0.0), dataclasses.replace(state, baseline=new)
        results, d = self.compare(ref.fingerprint, fp, seed, prof, doi=cap.doi, expected_title=cap.expected_title,
                                  names=state.names if site else ())
        verdict = make_verdict(history, cap, fp, ref, dict(results), d, prof, drift_score(results, d))
        if (pol.policy == "rolling" and d.status == "on-topic" and unfit_reason(fp, pol.policy) is None
                and ref is state.baseline and t > ref.capture_time):
            rolled = Reference(t, cap.uri_m, self._state_form(fp, prof, seed))
            return verdict, dataclasses.replace(state, baseline=rolled)
        return verdict, state

    def _first(self, history: str, state: HistoryState, cap: Capture, fp: Fingerprint,
               profile: str, seed: str) -> tuple[Verdict, HistoryState]:
        """No baseline in force at this capture's time: it becomes the baseline if it is fit to be one."""
        why = unfit_reason(fp, self.config.baseline.policy)
        if profile == "doi":
            from .doi.profile import first_doi

            d = first_doi(fp, why, cap.expected_title, self.doi)
            if d.change != "baseline":
                return make_verdict(history, cap, fp, None, {}, d, profile, d.drift_score), state
        if why is None:
            d = Decision("on-topic", "baseline", "baseline capture", 0.0)
            ref = Reference(utc(cap.timestamp), cap.uri_m, self._state_form(fp, profile, seed))
            return make_verdict(history, cap, fp, ref, {}, d, profile, 0.0), dataclasses.replace(state, baseline=ref)
        if extraction_failed(fp):
            d = Decision("error", "error", fp.error or "extraction failed", 0.0)
        elif fp.is_empty:
            d = Decision("empty", "empty", headed("no content", fp.error, "empty") + "; no baseline yet", 0.0)
        elif fp.page_kind or (fp.http_status is not None and fp.http_status >= 400):
            d = Decision("off-topic", "off-topic", f"{why}; no baseline yet", 0.95,
                         ("page_kind",) if fp.page_kind else ("http_error",))
        else:
            d = Decision("empty", "empty", f"not fit to be a baseline ({why}); waiting for one", 0.0)
        return make_verdict(history, cap, fp, None, {}, d, profile, 0.95 if d.status == "off-topic" else 0.0), state

    # -- a whole history ----------------------------------------------------
    def scan_history(self, history: str, captures: Iterable[Capture], profile: str | None = None) -> HistoryResult:
        """Fold :meth:`score_next` over ``captures`` in capture-time order."""
        caps = sorted(captures, key=lambda c: utc(c.timestamp))
        by_digest: dict[str, Fingerprint] = {}
        state = HistoryState()
        seed = caps[0].url if caps else history
        verdicts: list[Verdict] = []
        for c in caps:
            dig = c.effective_digest
            if dig and c.content is None and dig in by_digest:
                fp = by_digest[dig]  # a revisit without payload: the payload it repeats
                if c.status is not None and fp.http_status != c.status:
                    fp = _with_status(fp, c.status)
            else:
                fp = self.fingerprint(c, profile, seed)
                if dig and not fp.is_empty:
                    by_digest.setdefault(dig, fp)
            v, state = self.score_next(history, state, c, fp, seed, profile)
            verdicts.append(v)
        return summarise(history, seed, verdicts)


def _with_status(fp: Fingerprint, status: int) -> Fingerprint:
    import dataclasses

    return dataclasses.replace(fp, http_status=status)


def summarise(history: str, url: str, verdicts: Sequence[Verdict]) -> HistoryResult:
    statuses = [v.status for v in verdicts]
    judged = [s for s in statuses if s in ("on-topic", "off-topic")]
    first: datetime | None = next((v.capture_time for v in verdicts if v.status == "off-topic"), None)
    share = sum(1 for s in judged if s == "off-topic") / len(judged) if judged else 0.0
    return HistoryResult(history=history, url=url, verdicts=tuple(verdicts), behaviour=behaviour_of(statuses),
                         first_drift=first, off_topic_share=round(share, 4))
