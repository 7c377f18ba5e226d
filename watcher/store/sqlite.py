"""The embedded default store: one SQLite file, WAL mode.

Why SQLite: a crawl-time watcher needs durable per-URL state (baseline,
document frequencies, verdicts) that survives restarts, with no server to run.
WAL lets readers go on while one writer commits; ``synchronous=NORMAL`` is
durable across process crashes (only an OS crash can lose the last commits,
which the at-least-once pipeline re-delivers anyway).

Concurrency: one connection guarded by a lock.  The streaming consumer calls
the store from its event loop thread and from ``asyncio.to_thread`` workers;
serialising calls on one connection avoids ``database is locked`` errors
between threads of one process, and a ``busy_timeout`` covers a second
process (a CLI scan beside a consumer) on the same file.  Every write is one
``BEGIN IMMEDIATE`` transaction, so ``put_verdict`` either stores the verdict
*and* its document-frequency update *and* the ``latest`` row (and a new
baseline, when given), or nothing.

The logic is shared with the PostgreSQL store (:mod:`.sqlbase`); this
module holds what is SQLite's own: the connection, the schema, the time
encoding (fixed-width UTC text) and chunked ``IN`` lookups.

Tables (``meta.schema_version`` = :data:`SCHEMA_VERSION`): ``baselines``,
``verdicts`` (with each capture's fingerprint while it may be re-scored), ``doc_count``, ``latest`` (newest verdict per
history: the off-topic gauge is a count over a partial index), ``pruned`` (ids
of verdicts dropped by ``history_limit``, so re-delivery stays idempotent).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

from ..errors import StoreError
from ..model import utc
from .base import Rows
from .codec import parse_iso
from .sqlbase import SQLStore

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS baselines (
    history TEXT PRIMARY KEY,
    capture_time TEXT NOT NULL,
    uri_m TEXT,
    fingerprint BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS verdicts (
    verdict_id TEXT PRIMARY KEY,
    history TEXT NOT NULL,
    capture_time TEXT NOT NULL,
    status TEXT NOT NULL,
    change TEXT NOT NULL,
    json TEXT NOT NULL,
    fingerprint BLOB,
    received_at DOUBLE PRECISION
);
CREATE INDEX IF NOT EXISTS verdicts_history_time ON verdicts (history, capture_time DESC, verdict_id DESC);
CREATE TABLE IF NOT EXISTS doc_count (history TEXT PRIMARY KEY, n INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS alerts (
    verdict_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS latest (
    history TEXT PRIMARY KEY,
    verdict_id TEXT NOT NULL,
    capture_time TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pruned (verdict_id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS latest_off_topic ON latest (status) WHERE status = 'off-topic';
"""


def time_key(dt: datetime) -> str:
    """Fixed-width UTC text that sorts like the datetimes it encodes."""
    return utc(dt).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SQLiteStore(SQLStore):
    """:class:`~watcher.store.base.BaselineStore` on one SQLite file."""

    BEGIN: ClassVar[str] = "BEGIN IMMEDIATE"  # take the write lock up front: two writers never deadlock on an upgrade
    LIMIT_ALL: ClassVar[str] = "LIMIT -1"
    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    SCHEMA: ClassVar[str] = _SCHEMA
    DB_ERRORS: ClassVar[tuple[type[Exception], ...]] = (sqlite3.Error,)

    def __init__(
        self,
        path: str | Path,
        *,
        keep_text: bool = True,
        keep_shingles: bool = True,
        history_limit: int = 1000,
        max_terms: int = 0,
        rescore_window_s: float = 86_400.0,
        busy_timeout_ms: int = 10_000,
    ) -> None:
        super().__init__(
            keep_text=keep_text, keep_shingles=keep_shingles, history_limit=history_limit, max_terms=max_terms,
            rescore_window_s=rescore_window_s,
        )
        self.path = str(path)
        if self.path != ":memory:" and not self.path.startswith("file:"):
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
            )
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            mode = self._conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._migrate()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite store {self.path}: {exc}", reason="store_open") from exc
        if str(mode).lower() != "wal" and self.path != ":memory:":
            log.warning("SQLite store %s: journal_mode is %s, not WAL", self.path, mode)
        log.debug("opened SQLite store %s (schema %d)", self.path, SCHEMA_VERSION)

    # -- the hooks of SQLStore ------------------------------------------------

    @property
    def where(self) -> str:
        return f"SQLite store {self.path}"

    def _connection(self) -> sqlite3.Connection:
        return self._conn

    def run(self, c: Any, sql: str, params: Sequence[Any] = ()) -> Rows:
        cur: sqlite3.Cursor = c.execute(sql, params)
        return cur

    def _rollback(self, c: Any) -> None:
        if c.in_transaction:
            c.execute("ROLLBACK")

    def _time_in(self, dt: datetime) -> object:
        return time_key(dt)

    def _time_out(self, value: Any) -> datetime:
        return parse_iso(str(value))

    # -- lifecycle ------------------------------------------------------------

    def close(self) -> None:
        """Checkpoint the WAL and close (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._conn.execute("PRAGMA optimize")
                self._conn.close()
            except sqlite3.Error as exc:
                log.warning("closing SQLite store %s: %s", self.path, exc)

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
