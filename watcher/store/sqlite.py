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

Tables (``meta.schema_version`` = :data:`SCHEMA_VERSION`): ``baselines``,
``verdicts``, ``doc_freq``, ``doc_count``, ``latest`` (newest verdict per
history: the off-topic gauge is a count over a partial index), ``pruned`` (ids
of verdicts dropped by ``history_limit``, so re-delivery stays idempotent).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from types import TracebackType

from ..errors import StoreError
from ..model import Verdict, utc
from .base import StoredBaseline
from .codec import (
    MAX_STORED_TERMS,
    decode_fingerprint,
    decode_verdict,
    encode_fingerprint,
    encode_verdict,
    parse_iso,
)

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
_IN_CHUNK = 900  # stays below SQLite's historical 999 host-parameter limit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
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
    json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS verdicts_history_time ON verdicts (history, capture_time DESC, verdict_id DESC);
CREATE TABLE IF NOT EXISTS doc_freq (
    history TEXT NOT NULL,
    term TEXT NOT NULL,
    df INTEGER NOT NULL,
    PRIMARY KEY (history, term)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS doc_count (history TEXT PRIMARY KEY, n INTEGER NOT NULL);
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


class SQLiteStore:
    """:class:`~watcher.store.base.BaselineStore` on one SQLite file."""

    def __init__(
        self,
        path: str | Path,
        *,
        keep_text: bool = False,
        keep_shingles: bool = False,
        history_limit: int = 1000,
        max_terms: int = MAX_STORED_TERMS,
        busy_timeout_ms: int = 10_000,
    ) -> None:
        self.path = str(path)
        self.keep_text = keep_text
        self.keep_shingles = keep_shingles
        self.history_limit = max(1, history_limit)
        self.max_terms = max_terms
        self._lock = threading.RLock()
        self._closed = False
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

    # -- plumbing -----------------------------------------------------------

    def _migrate(self) -> None:
        """Create the schema on first open; refuse a file from a newer version."""
        with self._tx():
            self._conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is not None and int(row[0]) > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} has schema version {row[0]}; this driftline knows up to {SCHEMA_VERSION}",
                    reason="store_schema",
                )
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    self._conn.execute(stmt)
            self._conn.execute(
                "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (str(SCHEMA_VERSION),),
            )

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction under the lock (``BEGIN IMMEDIATE``: take the
        write lock up front, so two writers never deadlock on an upgrade)."""
        with self._lock:
            self._check_open()
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._check_open()
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite read failed: {exc}", reason="store_read") from exc

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("store is closed", reason="store_closed")

    @property
    def schema_version(self) -> int:
        with self._read() as c:
            row = c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return int(row[0])

    # -- baselines ----------------------------------------------------------

    def get_baseline(self, history: str) -> StoredBaseline | None:
        with self._read() as c:
            row = c.execute(
                "SELECT capture_time, uri_m, fingerprint FROM baselines WHERE history = ?", (history,)
            ).fetchone()
        if row is None:
            return None
        return StoredBaseline(
            history=history, capture_time=parse_iso(row[0]), uri_m=row[1], fingerprint=decode_fingerprint(row[2])
        )

    def _baseline_blob(self, baseline: StoredBaseline) -> bytes:
        return encode_fingerprint(
            baseline.fingerprint, keep_text=self.keep_text, keep_shingles=self.keep_shingles, max_terms=self.max_terms
        )

    @staticmethod
    def _upsert_baseline(c: sqlite3.Connection, baseline: StoredBaseline, blob: bytes) -> None:
        c.execute(
            "INSERT INTO baselines (history, capture_time, uri_m, fingerprint) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(history) DO UPDATE SET capture_time = excluded.capture_time, "
            "uri_m = excluded.uri_m, fingerprint = excluded.fingerprint",
            (baseline.history, time_key(baseline.capture_time), baseline.uri_m, blob),
        )

    def set_baseline(self, baseline: StoredBaseline) -> None:
        blob = self._baseline_blob(baseline)
        try:
            with self._tx() as c:
                self._upsert_baseline(c, baseline, blob)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot store baseline: {exc}", reason="store_write") from exc

    # -- verdicts -----------------------------------------------------------

    def has_verdict(self, verdict_id: str) -> bool:
        with self._read() as c:
            return c.execute("SELECT 1 FROM verdicts WHERE verdict_id = ?", (verdict_id,)).fetchone() is not None

    def get_verdict(self, verdict_id: str) -> Verdict | None:
        with self._read() as c:
            row = c.execute("SELECT json FROM verdicts WHERE verdict_id = ?", (verdict_id,)).fetchone()
        return decode_verdict(row[0]) if row is not None else None

    def put_verdict(self, verdict: Verdict, terms: Sequence[str] = (), baseline: StoredBaseline | None = None) -> bool:
        """Insert ``verdict`` once; document frequencies, the ``latest`` row,
        the optional new ``baseline`` and pruning happen in the same
        transaction, and only when the verdict is new."""
        key = time_key(verdict.capture_time)
        payload = encode_verdict(verdict)
        distinct = sorted(set(terms))
        blob = self._baseline_blob(baseline) if baseline is not None else None
        try:
            with self._tx() as c:
                if c.execute("SELECT 1 FROM pruned WHERE verdict_id = ?", (verdict.verdict_id,)).fetchone():
                    return False
                cur = c.execute(
                    "INSERT OR IGNORE INTO verdicts (verdict_id, history, capture_time, status, change, json) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (verdict.verdict_id, verdict.history, key, verdict.status, verdict.change, payload),
                )
                if cur.rowcount == 0:
                    return False
                if distinct:
                    c.executemany(
                        "INSERT INTO doc_freq (history, term, df) VALUES (?, ?, 1) "
                        "ON CONFLICT(history, term) DO UPDATE SET df = df + 1",
                        [(verdict.history, t) for t in distinct],
                    )
                seen = c.execute(
                    "INSERT INTO doc_count (history, n) VALUES (?, 1) ON CONFLICT(history) DO UPDATE SET n = n + 1 "
                    "RETURNING n",
                    (verdict.history,),
                ).fetchall()[0][0]  # fetchall: finish the RETURNING statement before COMMIT
                c.execute(
                    "INSERT INTO latest (history, verdict_id, capture_time, status) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(history) DO UPDATE SET verdict_id = excluded.verdict_id, "
                    "capture_time = excluded.capture_time, status = excluded.status "
                    "WHERE excluded.capture_time >= latest.capture_time",
                    (verdict.history, verdict.verdict_id, key, verdict.status),
                )
                if baseline is not None:
                    self._upsert_baseline(c, baseline, blob or b"")
                if seen > self.history_limit:  # n counts every verdict ever stored: an upper bound
                    self._prune(c, verdict.history)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot store verdict: {exc}", reason="store_write") from exc
        return True

    def _prune(self, c: sqlite3.Connection, history: str) -> None:
        """Keep the newest ``history_limit`` verdicts of ``history``.

        The ids of dropped verdicts stay in ``pruned`` (about 50 bytes each) so a
        re-delivered old capture is still recognised and cannot count its terms
        twice: idempotence must not depend on how much history is kept.
        """
        n = c.execute("SELECT COUNT(*) FROM verdicts WHERE history = ?", (history,)).fetchone()[0]
        if n <= self.history_limit:
            return
        old = "SELECT verdict_id FROM verdicts WHERE history = ? ORDER BY capture_time DESC, verdict_id DESC "
        old += "LIMIT -1 OFFSET ?"
        c.execute(f"INSERT OR IGNORE INTO pruned (verdict_id) {old}", (history, self.history_limit))
        c.execute(f"DELETE FROM verdicts WHERE verdict_id IN ({old})", (history, self.history_limit))

    def recent_verdicts(self, history: str, limit: int) -> list[Verdict]:
        with self._read() as c:
            rows = c.execute(
                "SELECT json FROM verdicts WHERE history = ? ORDER BY capture_time DESC, verdict_id DESC LIMIT ?",
                (history, max(0, limit)),
            ).fetchall()
        return [decode_verdict(r[0]) for r in rows]

    def verdict_count(self, history: str) -> int:
        """Number of stored verdicts of ``history`` (after pruning)."""
        with self._read() as c:
            return int(c.execute("SELECT COUNT(*) FROM verdicts WHERE history = ?", (history,)).fetchone()[0])

    def document_frequencies(self, history: str, terms: Sequence[str]) -> tuple[int, Mapping[str, int]]:
        wanted = list(dict.fromkeys(terms))
        out: dict[str, int] = {}
        with self._read() as c:
            row = c.execute("SELECT n FROM doc_count WHERE history = ?", (history,)).fetchone()
            n = int(row[0]) if row is not None else 0
            for i in range(0, len(wanted), _IN_CHUNK):
                chunk = wanted[i : i + _IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                for term, df in c.execute(
                    f"SELECT term, df FROM doc_freq WHERE history = ? AND term IN ({marks})", (history, *chunk)
                ):
                    out[term] = int(df)
        return n, out

    def histories_off_topic(self) -> int:
        with self._read() as c:
            return int(c.execute("SELECT COUNT(*) FROM latest WHERE status = 'off-topic'").fetchone()[0])

    # -- lifecycle ----------------------------------------------------------

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
