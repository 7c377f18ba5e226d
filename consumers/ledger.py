"""Which alerts were already sent: so each alert goes out once per capture.

Why a ledger and not just "the store already had this verdict": the verdict
is stored *before* the alert is sent.  A crash between the two re-delivers
the event, finds the verdict stored, and would never send its alert.  The
ledger records an alert id only after the broker acknowledged it, so:

* a duplicate event for an already-alerted capture sends nothing;
* a crash before the send re-sends (nothing lost);
* a crash between the acknowledgement and the ledger write re-sends once:
  the only duplicate window, and the re-sent alert carries the same id.

Backed by a small SQLite file next to the store (shared by every consumer
process of one store), or by a set for the in-memory store backend.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from watcher.config import Config

_SCHEMA = "CREATE TABLE IF NOT EXISTS sent_alerts (verdict_id TEXT PRIMARY KEY, sent_at REAL NOT NULL)"


class AlertLedger:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self._memory: set[str] = set()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path, timeout=30.0, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)

    @classmethod
    def for_config(cls, cfg: Config) -> AlertLedger:
        if cfg.kafka.alert_ledger_path:
            return cls(cfg.kafka.alert_ledger_path)
        if cfg.store.backend == "sqlite" and cfg.store.path not in ("", ":memory:"):
            return cls(cfg.store.path + ".alerts")
        return cls(None)

    def was_sent(self, verdict_id: str) -> bool:
        with self._lock:
            if self._conn is None:
                return verdict_id in self._memory
            row = self._conn.execute("SELECT 1 FROM sent_alerts WHERE verdict_id = ?", (verdict_id,)).fetchone()
            return row is not None

    def mark_sent(self, verdict_id: str) -> None:
        with self._lock:
            if self._conn is None:
                self._memory.add(verdict_id)
                return
            self._conn.execute(
                "INSERT OR IGNORE INTO sent_alerts (verdict_id, sent_at) VALUES (?, ?)", (verdict_id, time.time())
            )

    def prune(self, older_than_s: float) -> int:
        """Forget alerts older than ``older_than_s`` (re-deliveries never come that late)."""
        with self._lock:
            if self._conn is None:
                return 0
            cur = self._conn.execute("DELETE FROM sent_alerts WHERE sent_at < ?", (time.time() - older_than_s,))
            return int(cur.rowcount)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
