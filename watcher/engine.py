"""The drift engine: baseline selection, comparison and per-history results.

Batch (:meth:`Engine.scan_history`) and streaming (:class:`watcher.watch.Watcher`)
share the same steps: fingerprint each capture once, pick the baseline by
policy, score the configured measures, decide.  Revisits and repeated
payload digests are resolved without re-scoring.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from . import measures as ms
from .config import DEFAULT_VOTING, EngineConfig
from .fingerprint import fingerprint
from .model import Behaviour, Capture, Fingerprint, HistoryResult, MeasureResult, Verdict, ts14, utc, verdict_id
from .verdict import Decision, decide, extraction_failed, score_measures

log = logging.getLogger(__name__)



def idf_table(n_docs: int, df: Mapping[str, int]) -> dict[str, float]:
    """Smoothed IDF (scikit-learn's formula): ln((1+n)/(1+df)) + 1."""
    return {t: math.log((1 + n_docs) / (1 + d)) + 1.0 for t, d in df.items()}


def has_content(fp: Fingerprint) -> bool:
    """Content that can be compared: bytes that were read and extracted."""
    return not fp.is_empty and fp.kind != "binary" and not extraction_failed(fp)


def is_valid_baseline(fp: Fingerprint) -> bool:
    """A capture fit to be a "first-valid" baseline: has content and is no
    error, parked or otherwise off-topic page kind."""
    return has_content(fp) and fp.page_kind is None


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

    def __init__(self, config: EngineConfig) -> None:
        measures = dict(config.measures) or dict(DEFAULT_VOTING)
        for name in (*measures, *config.report_measures):
            ms.get(name)  # unknown names fail loudly, at start-up
        self.config = config.model_copy(update={
            "measures": {ms.get(n).name: t for n, t in measures.items()},
            "report_measures": tuple(ms.get(n).name for n in config.report_measures),
        })

    # -- one capture --------------------------------------------------------
    def fingerprint(self, capture: Capture) -> Fingerprint:
        return fingerprint(capture, self.config)

    def compare(self, base: Fingerprint, cur: Fingerprint, idf: Mapping[str, float] | None = None,
                default_idf: float = 1.0) -> tuple[dict[str, MeasureResult], Decision]:
        ctx = ms.Context(idf, default_idf)
        if not has_content(cur) or base.is_empty:
            results: dict[str, MeasureResult] = {}
        else:
            results = score_measures(base, cur, self.config, ctx)
        return results, decide(base, cur, results, self.config, ctx)

    def make_verdict(self, history: str, cap: Capture, fp: Fingerprint, base_cap: Capture | None,
                     results: Mapping[str, MeasureResult], d: Decision) -> Verdict:
        return Verdict(
            verdict_id=verdict_id(history, cap.timestamp, fp.digest),
            history=history, url=cap.url, capture_time=utc(cap.timestamp), uri_m=cap.uri_m, digest=fp.digest,
            baseline_time=utc(base_cap.timestamp) if base_cap else None,
            baseline_uri_m=base_cap.uri_m if base_cap else None,
            measures=dict(results), status=d.status, change=d.change, reason=d.reason,
            page_kind=fp.page_kind, language=fp.language, byte_count=fp.byte_count, word_count=fp.word_count,
            title=fp.title, seed=cap.seed, job=cap.job, label=cap.label, drift_score=round(d.drift_score, 4),
        )

    # -- a whole history ----------------------------------------------------
    def choose_baseline(self, history: str, caps: Sequence[Capture], fps: Sequence[Fingerprint]) -> int | None:
        pol = self.config.baseline
        if pol.policy == "pinned" and history in pol.pinned:
            want = pol.pinned[history]
            for i, c in enumerate(caps):
                if ts14(c.timestamp) == want and not fps[i].is_empty:
                    return i
            log.warning("pinned baseline %s of %s not found; using the first valid capture", want, history)
        if pol.policy in ("first-valid", "pinned"):
            for i, fp in enumerate(fps):
                if is_valid_baseline(fp):
                    return i
        # "first" (and "rolling", which starts from it): an empty capture cannot
        # be a baseline (there is nothing to compare with), so the first
        # capture with content is.
        for i, fp in enumerate(fps):
            if has_content(fp):
                return i
        for i, fp in enumerate(fps):
            if not fp.is_empty and not extraction_failed(fp):
                return i
        return None

    def scan_history(self, history: str, captures: Iterable[Capture]) -> HistoryResult:
        caps = sorted(captures, key=lambda c: utc(c.timestamp))
        fps: list[Fingerprint] = []
        by_digest: dict[str, int] = {}
        for c in caps:
            dig = c.effective_digest
            if dig and dig in by_digest and c.content is None:
                fps.append(fps[by_digest[dig]])  # revisit without payload: reuse
                continue
            fp = self.fingerprint(c)
            fps.append(fp)
            if dig and not fp.is_empty:
                by_digest.setdefault(dig, len(fps) - 1)
        df: Counter[str] = Counter()
        docs = 0
        for fp in {id(f): f for f in fps}.values():
            if fp.term_freqs:
                docs += 1
                df.update(fp.term_freqs.keys())
        idf = idf_table(docs, df)
        default_idf = math.log((1 + docs) / 1) + 1.0
        b = self.choose_baseline(history, caps, fps)
        verdicts: list[Verdict] = []
        scored: dict[str, Verdict] = {}
        base_idx = b
        for i, (cap, fp) in enumerate(zip(caps, fps, strict=True)):
            if base_idx is None:
                d = Decision("empty", "empty", "no capture with content to use as baseline", 0.0)
                if extraction_failed(fp):
                    d = Decision("error", "error", fp.error or "unreadable", 0.0)
                verdicts.append(self.make_verdict(history, cap, fp, None, {}, d))
                continue
            base_cap, base_fp = caps[base_idx], fps[base_idx]
            if i == base_idx:
                results, _ = self.compare(base_fp, fp, idf, default_idf)
                d = Decision("on-topic", "baseline", "baseline capture", 0.0)
            elif fp.digest in scored and fp.digest != base_fp.digest:
                prev = scored[fp.digest]
                results = dict(prev.measures)
                d = Decision(prev.status, "unchanged" if prev.status != "empty" else "empty",
                             f"same digest as {ts14(prev.capture_time)}: {prev.reason}", prev.drift_score or 0.0)
            else:
                results, d = self.compare(base_fp, fp, idf, default_idf)
            v = self.make_verdict(history, cap, fp, base_cap, results, d)
            verdicts.append(v)
            if not fp.is_empty:
                scored.setdefault(fp.digest, v)
            if (self.config.baseline.policy == "rolling" and i > (b or 0) and d.status == "on-topic"
                    and is_valid_baseline(fp)):
                base_idx = i
        return summarise(history, caps[0].url if caps else history, verdicts)


def summarise(history: str, url: str, verdicts: Sequence[Verdict]) -> HistoryResult:
    statuses = [v.status for v in verdicts]
    judged = [s for s in statuses if s in ("on-topic", "off-topic")]
    first: datetime | None = next((v.capture_time for v in verdicts if v.status == "off-topic"), None)
    share = sum(1 for s in judged if s == "off-topic") / len(judged) if judged else 0.0
    return HistoryResult(history=history, url=url, verdicts=tuple(verdicts), behaviour=behaviour_of(statuses),
                         first_drift=first, off_topic_share=round(share, 4))
