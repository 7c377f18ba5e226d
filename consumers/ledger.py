"""Which alerts were already sent: so each alert goes out once per capture.

Why a ledger and not just "the store already had this verdict": the verdict
is stored *before* the alert is sent.  A crash between the two re-delivers
the event, finds the verdict stored, and would never send its alert.  The
ledger records an alert id only after the broker acknowledged it, so:

* a duplicate event for an already-alerted capture sends nothing;
* a crash before the send re-sends (nothing lost);
* a crash between the acknowledgement and the ledger write re-sends once:
  the only duplicate window, and the re-sent alert carries the same id.

It lives beside the baseline store so every consumer of one store shares it:
a small SQLite file next to the SQLite store, a table in the PostgreSQL
store's database, or a set in memory for the in-memory store (one process).
Database errors raise :class:`~watcher.errors.StoreError` (``store_read`` /
``store_write``), which the scorer retries like any store outage.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from watcher.config import Config
from watcher.errors import StoreError

_TABLE = "driftline_sent_alerts"
_SCHEMA = f"CREATE TABLE IF NOT EXISTS {_TABLE} (verdict_id TEXT PRIMARY KEY, sent_at DOUBLE PRECISION NOT NULL)"


class AlertLedger:
    """The ledger API; this base class keeps ids in memory (one process)."""

    def __init__(self) -> None:
        self._memory: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def for_config(cls, cfg: Config) -> AlertLedger:
        if cfg.kafka.alert_ledger_path:
            return SQLiteLedger(cfg.kafka.alert_ledger_path)
        if cfg.store.backend == "sqlite" and cfg.store.path not in ("", ":memory:"):
            return SQLiteLedger(cfg.store.path + ".alerts")
        if cfg.store.backend == "postgres" and cfg.store.dsn:
            return PostgresLedger(cfg.store.dsn.get_secret_value())
        return cls()

    def was_sent(self, verdict_id: str) -> bool:
        with self._lock:
            return verdict_id in self._memory

    def mark_sent(self, verdict_id: str) -> None:
        with self._lock:
            self._memory.add(verdict_id)

    def prune(self, older_than_s: float) -> int:
        """Forget alerts older than ``older_than_s`` (re-deliveries never come that late)."""
        return 0

    def close(self) -> None:
        return None


class SQLiteLedger(AlertLedger):
    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._conn: sqlite3.Connection | None = sqlite3.connect(
                path, timeout=30.0, check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the alert ledger {path}: {exc}", reason="store_open") from exc

    def _execute(self, sql: str, params: tuple[Any, ...], reason: str) -> sqlite3.Cursor:
        with self._lock:
            if self._conn is None:
                raise StoreError("the alert ledger is closed", reason="store_closed")
            try:
                return self._conn.execute(sql, params)
            except sqlite3.Error as exc:
                raise StoreError(f"alert ledger {self.path}: {exc}", reason=reason) from exc

    def was_sent(self, verdict_id: str) -> bool:
        cur = self._execute(f"SELECT 1 FROM {_TABLE} WHERE verdict_id = ?", (verdict_id,), "store_read")
        return cur.fetchone() is not None

    def mark_sent(self, verdict_id: str) -> None:
        self._execute(f"INSERT OR IGNORE INTO {_TABLE} (verdict_id, sent_at) VALUES (?, ?)",
                      (verdict_id, time.time()), "store_write")

    def prune(self, older_than_s: float) -> int:
        cur = self._execute(f"DELETE FROM {_TABLE} WHERE sent_at < ?", (time.time() - older_than_s,), "store_write")
        return int(cur.rowcount)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class PostgresLedger(AlertLedger):
    """A table in the PostgreSQL store's database (``psycopg`` is the store's own driver).

    One connection, replaced when the server dropped it; the call that saw
    the failure raises :class:`StoreError` and the scorer retries.
    """

    def __init__(self, dsn: str) -> None:
        super().__init__()
        try:
            import psycopg
        except ImportError as exc:  # the postgres extra is not installed
            raise StoreError("the PostgreSQL alert ledger needs psycopg", reason="store_open") from exc
        self._psycopg: Any = psycopg
        self._dsn = dsn
        self._conn: Any = None
        self._closed = False
        self._execute(_SCHEMA, (), "store_open")

    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed:
            self._conn = self._psycopg.connect(self._dsn, autocommit=True, connect_timeout=10,
                                               application_name="driftline-ledger")
        return self._conn

    def _execute(self, sql: str, params: tuple[Any, ...], reason: str) -> Any:
        with self._lock:
            if self._closed:
                raise StoreError("the alert ledger is closed", reason="store_closed")
            try:
                return self._connection().execute(sql, params)
            except self._psycopg.Error as exc:
                conn, self._conn = self._conn, None
                if conn is not None:
                    with contextlib.suppress(self._psycopg.Error):  # already dead
                        conn.close()
                raise StoreError(f"alert ledger (PostgreSQL): {exc}", reason=reason) from exc

    def was_sent(self, verdict_id: str) -> bool:
        cur = self._execute(f"SELECT 1 FROM {_TABLE} WHERE verdict_id = %s", (verdict_id,), "store_read")
        return cur.fetchone() is not None

    def mark_sent(self, verdict_id: str) -> None:
        self._execute(f"INSERT INTO {_TABLE} (verdict_id, sent_at) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                      (verdict_id, time.time()), "store_write")

    def prune(self, older_than_s: float) -> int:
        cur = self._execute(f"DELETE FROM {_TABLE} WHERE sent_at < %s", (time.time() - older_than_s,),
                            "store_write")
        return int(cur.rowcount)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None
