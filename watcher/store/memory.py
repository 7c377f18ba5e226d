"""A dict-based store for batch runs, tests of callers, and quick use.

Same semantics as the SQLite store (idempotent verdicts, document
frequencies updated only for new verdicts, ``latest`` tracking, per-history
pruning, baselines reduced to their stored form), so code that works on one
works on the other; nothing survives the process.
"""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import TracebackType

from ..errors import StoreError
from ..model import Verdict, utc
from .base import StoredBaseline
from .codec import MAX_STORED_TERMS, reduce_fingerprint


def _order_key(v: Verdict) -> tuple[datetime, str]:
    return (utc(v.capture_time), v.verdict_id)


class MemoryStore:
    """:class:`~watcher.store.base.BaselineStore` held in dictionaries (thread-safe)."""

    def __init__(
        self,
        *,
        keep_text: bool = False,
        keep_shingles: bool = False,
        history_limit: int = 1000,
        max_terms: int = MAX_STORED_TERMS,
    ) -> None:
        self.keep_text = keep_text
        self.keep_shingles = keep_shingles
        self.history_limit = max(1, history_limit)
        self.max_terms = max_terms
        self._lock = threading.RLock()
        self._closed = False
        self._baselines: dict[str, StoredBaseline] = {}
        self._verdicts: dict[str, Verdict] = {}
        # per history: verdicts sorted oldest -> newest by (capture_time, verdict_id)
        self._by_history: dict[str, list[tuple[tuple[datetime, str], Verdict]]] = defaultdict(list)
        self._df: dict[str, dict[str, int]] = defaultdict(dict)
        self._n: dict[str, int] = defaultdict(int)
        self._pruned: set[str] = set()  # ids of verdicts dropped by the history limit
        self._latest: dict[str, tuple[tuple[datetime, str], str]] = {}  # history -> (order key, status)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("store is closed", reason="store_closed")

    def get_baseline(self, history: str) -> StoredBaseline | None:
        with self._lock:
            self._check_open()
            return self._baselines.get(history)

    def _reduced(self, baseline: StoredBaseline) -> StoredBaseline:
        fp = reduce_fingerprint(
            baseline.fingerprint, keep_text=self.keep_text, keep_shingles=self.keep_shingles, max_terms=self.max_terms
        )
        return StoredBaseline(
            history=baseline.history, capture_time=utc(baseline.capture_time), uri_m=baseline.uri_m, fingerprint=fp
        )

    def set_baseline(self, baseline: StoredBaseline) -> None:
        stored = self._reduced(baseline)
        with self._lock:
            self._check_open()
            self._baselines[baseline.history] = stored

    def has_verdict(self, verdict_id: str) -> bool:
        with self._lock:
            self._check_open()
            return verdict_id in self._verdicts

    def get_verdict(self, verdict_id: str) -> Verdict | None:
        with self._lock:
            self._check_open()
            return self._verdicts.get(verdict_id)

    def put_verdict(self, verdict: Verdict, terms: Sequence[str] = (), baseline: StoredBaseline | None = None) -> bool:
        key = _order_key(verdict)
        stored = self._reduced(baseline) if baseline is not None else None
        with self._lock:
            self._check_open()
            if verdict.verdict_id in self._verdicts or verdict.verdict_id in self._pruned:
                return False
            h = verdict.history
            self._verdicts[verdict.verdict_id] = verdict
            rows = self._by_history[h]
            bisect.insort(rows, (key, verdict), key=lambda r: r[0])
            df = self._df[h]
            for t in set(terms):
                df[t] = df.get(t, 0) + 1
            self._n[h] += 1
            if stored is not None:
                self._baselines[stored.history] = stored
            current = self._latest.get(h)
            if current is None or key[0] >= current[0][0]:
                self._latest[h] = (key, verdict.status)
            while len(rows) > self.history_limit:
                _, old = rows.pop(0)
                del self._verdicts[old.verdict_id]
                self._pruned.add(old.verdict_id)
            return True

    def recent_verdicts(self, history: str, limit: int) -> list[Verdict]:
        with self._lock:
            self._check_open()
            rows = self._by_history.get(history, [])
            return [v for _, v in reversed(rows[-limit:])] if limit > 0 else []

    def verdict_count(self, history: str) -> int:
        with self._lock:
            return len(self._by_history.get(history, []))

    def document_frequencies(self, history: str, terms: Sequence[str]) -> tuple[int, Mapping[str, int]]:
        with self._lock:
            self._check_open()
            df = self._df.get(history, {})
            return self._n.get(history, 0), {t: df[t] for t in terms if t in df}

    def histories_off_topic(self) -> int:
        with self._lock:
            self._check_open()
            return sum(1 for _, status in self._latest.values() if status == "off-topic")

    def close(self) -> None:
        with self._lock:
            self._closed = True

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
