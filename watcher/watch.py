"""Streaming scoring: one capture at a time against the stored baseline.

The batch engine sees a whole history at once; a crawl delivers captures one
by one.  :class:`Watcher` keeps what the batch path computes in memory (the
baseline, the history's document frequencies, earlier verdicts) in the
baseline store, and is idempotent per capture: the verdict id is derived from
the canonical URL, capture time and digest, so a re-delivered event returns
the stored verdict and changes nothing.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

from .canonical import url_key
from .engine import Engine, has_content, idf_table, is_valid_baseline
from .errors import ExtractError
from .model import Capture, Fingerprint, Verdict, utc, verdict_id
from .store.base import BaselineStore, StoredBaseline
from .verdict import Decision, extraction_failed

log = logging.getLogger(__name__)


class Watcher:
    """Scores captures of many URLs against their stored baselines."""

    def __init__(self, engine: Engine, store: BaselineStore) -> None:
        self.engine = engine
        self.store = store
        # Optional ``on_stage(stage, seconds)`` timing hook (stages extract, score,
        # store): the streaming app feeds it to the per-stage latency histogram.
        self.on_stage: Callable[[str, float], None] | None = None
        # Captures of one history must be scored in order; the consumer
        # guarantees that per partition, this lock guards the rest.
        self._lock = threading.Lock()

    def history_key(self, url: str) -> str:
        return url_key(url, self.engine.config.canonical)

    def baseline_digest(self, history: str) -> str | None:
        base = self.store.get_baseline(history)
        return base.fingerprint.digest if base else None

    def process(self, capture: Capture) -> Verdict:
        """Score ``capture``; see :meth:`process_new`."""
        return self.process_new(capture)[0]

    def process_new(self, capture: Capture) -> tuple[Verdict, bool]:
        """Score and store ``capture``; return ``(verdict, stored_now)``.

        ``stored_now`` is False when this capture's verdict was already in the
        store (a redelivered event): callers use it to avoid re-sending alerts.
        """
        history = capture.history or self.history_key(capture.url)
        digest = capture.effective_digest
        vid = verdict_id(history, capture.timestamp, digest)
        existing = self.store.get_verdict(vid)
        if existing is not None:
            return existing, False
        with self._lock:
            verdict, terms, new_base = self._score(history, capture)
            # Verdict, document frequencies and a new baseline go in one
            # transaction: a crash cannot leave a baseline without its verdict.
            started = time.perf_counter()
            new = self.store.put_verdict(verdict, terms, baseline=new_base)
            self._timed("store", started)
        if not new:
            stored = self.store.get_verdict(vid)
            return (stored or verdict), False
        return verdict, True

    def _score(self, history: str, cap: Capture) -> tuple[Verdict, list[str], StoredBaseline | None]:
        eng = self.engine
        base = self.store.get_baseline(history)
        if base is not None and cap.content is None and cap.digest and cap.digest == base.fingerprint.digest:
            # Same payload as the baseline: unchanged, no fetch, no parse.
            fp = base.fingerprint
            d = Decision("on-topic", "unchanged", "same digest as the baseline", 0.0)
            base_cap = Capture(url=cap.url, timestamp=base.capture_time, uri_m=base.uri_m)
            return eng.make_verdict(history, cap, fp, base_cap, {}, d), [], None
        started = time.perf_counter()
        fp = eng.fingerprint(cap)
        self._timed("extract", started)
        if extraction_failed(fp):
            # A bad event for the streaming policy: dead-lettered with the reason.
            raise ExtractError(f"{cap.url}: {fp.error}", reason="extract")
        terms = list(fp.term_freqs)
        if base is None:
            verdict, new_base = self._first(history, cap, fp)
            return verdict, terms, new_base
        n_docs, df = self.store.document_frequencies(history, terms)
        # The IDF includes the capture being scored, as in the batch path.
        n = n_docs + 1
        idf = idf_table(n, {t: df.get(t, 0) + 1 for t in terms} | {
            t: df.get(t, 0) for t in base.fingerprint.term_freqs if t not in fp.term_freqs})
        started = time.perf_counter()
        results, d = eng.compare(base.fingerprint, fp, idf, math.log(1 + n) + 1.0)
        self._timed("score", started)
        base_cap = Capture(url=cap.url, timestamp=base.capture_time, uri_m=base.uri_m)
        verdict = eng.make_verdict(history, cap, fp, base_cap, results, d)
        pol = eng.config.baseline.policy
        roll = pol == "rolling" and d.status == "on-topic" and is_valid_baseline(fp)
        if roll and utc(cap.timestamp) > base.capture_time:
            return verdict, terms, StoredBaseline(history, utc(cap.timestamp), cap.uri_m, fp)
        return verdict, terms, None

    def _timed(self, stage: str, started: float) -> None:
        if self.on_stage is not None:
            self.on_stage(stage, time.perf_counter() - started)

    def _first(self, history: str, cap: Capture, fp: Fingerprint) -> tuple[Verdict, StoredBaseline | None]:
        """No baseline yet: this capture becomes it, if it can serve as one."""
        eng = self.engine
        pol = eng.config.baseline.policy
        strict = pol in ("first-valid", "pinned")
        usable = is_valid_baseline(fp) if strict else has_content(fp)
        if usable:
            d = Decision("on-topic", "baseline", "first capture: now the baseline", 0.0)
            base = StoredBaseline(history, utc(cap.timestamp), cap.uri_m, fp)
            return eng.make_verdict(history, cap, fp, cap, {}, d), base
        if fp.is_empty:
            d = Decision("empty", "empty", f"no content ({fp.error or 'empty'}); no baseline yet", 0.0)
        elif fp.page_kind:
            d = Decision("off-topic", "off-topic", f"page kind {fp.page_kind} ({fp.page_kind_evidence}); "
                         "no baseline yet", 0.95)
        else:
            d = Decision("empty", "empty", "not usable as a baseline; waiting for one", 0.0)
        return eng.make_verdict(history, cap, fp, None, {}, d), None
