"""A dict-based store for batch runs, tests of callers, and quick use.

Same semantics as the SQLite store (idempotent verdicts, fingerprints kept
for the re-scoring window, corrections, ``latest`` tracking, per-history
pruning, states reduced to their stored form), so code that works on one
works on the other; nothing survives the process.
"""

from __future__ import annotations

import bisect
import dataclasses
import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import datetime
from types import TracebackType

from ..compact import reduce_fingerprint
from ..errors import StoreError
from ..model import Fingerprint, Verdict, utc
from ..state import HistoryState, Reference
from .positions import MemoryPositions


def _order_key(v: Verdict) -> tuple[datetime, str]:
    return (utc(v.capture_time), v.verdict_id)


class MemoryStore(MemoryPositions):
    """:class:`~watcher.store.base.BaselineStore` held in dictionaries (thread-safe)."""

    def __init__(
        self,
        *,
        keep_text: bool = True,
        keep_shingles: bool = True,
        history_limit: int = 1000,
        max_terms: int = 0,
        rescore_window_s: float = 86_400.0,
    ) -> None:
        self.keep_text = keep_text
        self.keep_shingles = keep_shingles
        self.history_limit = max(1, history_limit)
        self.max_terms = max_terms
        self.rescore_window_s = rescore_window_s
        self._lock = threading.RLock()
        self._closed = False
        self._states: dict[str, HistoryState] = {}
        self._verdicts: dict[str, Verdict] = {}
        # per history: verdicts sorted oldest -> newest by (capture_time, verdict_id)
        self._by_history: dict[str, list[tuple[tuple[datetime, str], Verdict]]] = defaultdict(list)
        self._fps: dict[str, tuple[float, Fingerprint]] = {}  # verdict id -> (arrival, fingerprint)
        self._pruned: set[str] = set()  # ids of verdicts dropped by the history limit
        self._alerts: dict[str, str] = {}  # verdict id -> "pending" | "sent"
        self._latest: dict[str, tuple[tuple[datetime, str], str]] = {}  # history -> (order key, status)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("store is closed", reason="store_closed")

    def _reduce(self, fp: Fingerprint) -> Fingerprint:
        return reduce_fingerprint(fp, keep_text=self.keep_text, keep_shingles=self.keep_shingles,
                                  max_terms=self.max_terms)

    def _reduced(self, state: HistoryState) -> HistoryState:
        base, pin = (None if r is None else Reference(utc(r.capture_time), r.uri_m, self._reduce(r.fingerprint))
                     for r in (state.baseline, state.pinned))
        return dataclasses.replace(state, baseline=base, pinned=pin, latest=None)

    def get_state(self, history: str) -> HistoryState:
        with self._lock:
            self._check_open()
            state = self._states.get(history)
            if state is None:
                return HistoryState()  # as the SQL stores: the newest capture time comes with a stored state
            latest = self._latest.get(history)
            return state if latest is None else dataclasses.replace(state, latest=latest[0][0])

    def set_state(self, history: str, state: HistoryState) -> None:
        stored = self._reduced(state)
        with self._lock:
            self._check_open()
            self._states[history] = stored

    def has_verdict(self, verdict_id: str) -> bool:
        with self._lock:
            self._check_open()
            return verdict_id in self._verdicts

    def get_verdict(self, verdict_id: str) -> Verdict | None:
        with self._lock:
            self._check_open()
            return self._verdicts.get(verdict_id)

    def put_verdict(self, verdict: Verdict, state: HistoryState | None = None, fingerprint: Fingerprint | None = None,
                    corrections: Sequence[Verdict] = (), *,
                    alerts: Sequence[str] = ()) -> bool:
        key = _order_key(verdict)
        stored = self._reduced(state) if state is not None else None
        fp = self._reduce(fingerprint) if fingerprint is not None else None
        now = time.time()
        with self._lock:
            self._check_open()
            if verdict.verdict_id in self._verdicts or verdict.verdict_id in self._pruned:
                return False
            h = verdict.history
            self._verdicts[verdict.verdict_id] = verdict
            rows = self._by_history[h]
            bisect.insort(rows, (key, verdict), key=lambda r: r[0])
            if fp is not None:
                self._fps[verdict.verdict_id] = (now, fp)
            for v in corrections:
                if v.verdict_id in self._verdicts:
                    self._verdicts[v.verdict_id] = v
                    idx = next(i for i, (_, old) in enumerate(rows) if old.verdict_id == v.verdict_id)
                    rows[idx] = (rows[idx][0], v)
            for v in (verdict, *corrections):
                k = _order_key(v)
                current = self._latest.get(h)
                if current is None or k[0] >= current[0][0]:
                    self._latest[h] = (k, v.status)
            if stored is not None:
                self._states[h] = stored
            for vid in alerts:
                self._alerts.setdefault(vid, "pending")
            self._write_carried(None, (verdict, *corrections))  # a followed file's position and messages
            for _, old in rows:
                got = self._fps.get(old.verdict_id)
                if got is not None and got[0] < now - self.rescore_window_s:
                    del self._fps[old.verdict_id]
            while len(rows) > self.history_limit:
                _, old = rows.pop(0)
                del self._verdicts[old.verdict_id]
                self._fps.pop(old.verdict_id, None)
                self._pruned.add(old.verdict_id)
            return True

    def alert_pending(self, verdict_id: str) -> bool:
        with self._lock:
            return self._alerts.get(verdict_id) == "pending"

    def mark_alert_sent(self, verdict_id: str) -> None:
        with self._lock:
            if verdict_id in self._alerts:
                self._alerts[verdict_id] = "sent"

    def logged(self, history: str) -> list[tuple[Verdict, Fingerprint]]:
        with self._lock:
            self._check_open()
            return [(v, self._fps[v.verdict_id][1]) for _, v in self._by_history.get(history, [])
                    if v.verdict_id in self._fps]

    def recent_verdicts(self, history: str, limit: int) -> list[Verdict]:
        with self._lock:
            self._check_open()
            rows = self._by_history.get(history, [])
            return [v for _, v in reversed(rows[-limit:])] if limit > 0 else []

    def replace_verdicts(self, verdicts: Sequence[Verdict]) -> None:
        """Store new versions of verdicts it holds (review's re-scoring), in place; others are ignored."""
        with self._lock:
            self._check_open()
            for v in verdicts:
                if v.verdict_id not in self._verdicts:
                    continue
                self._verdicts[v.verdict_id] = v
                rows = self._by_history.get(v.history, [])
                for i, (k, old) in enumerate(rows):
                    if old.verdict_id == v.verdict_id:
                        rows[i] = (k, v)

    def all_verdicts(self) -> Iterator[Verdict]:
        """Every stored verdict, history by history in capture order (as the SQL stores)."""
        with self._lock:
            self._check_open()
            rows = [v for h in sorted(self._by_history) for _, v in self._by_history[h]]
        yield from sorted(rows, key=lambda v: (v.history, v.capture_time, v.verdict_id))

    def verdict_count(self, history: str) -> int:
        with self._lock:
            return len(self._by_history.get(history, []))

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
