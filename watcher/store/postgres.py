"""The shared store: one PostgreSQL database for every consumer machine.

Why PostgreSQL: streaming consumers scale out by joining one Kafka consumer
group from several machines, and a rebalance moves partitions (so URL
histories) between them.  With the embedded SQLite store each machine has
its own file, so a moved history would lose its baseline and document
frequencies.  A server every machine reaches keeps one state per history.

Semantics are the SQLite store's, from the same code (:mod:`.sqlbase`):
``put_verdict`` is one transaction (``INSERT ... ON CONFLICT DO NOTHING`` on
the verdict id; document frequencies, document count, ``latest`` row,
optional baseline and pruning only when the row is new).  Concurrent writers
on several machines are safe under PostgreSQL's default READ COMMITTED
isolation: a second insert of the same verdict id waits for the first
transaction and then inserts nothing; writers of one history lock its rows in
one order (verdict, sorted terms, document count, ``latest``, baseline), so
they cannot deadlock; the ``pruned`` check runs after the insert, so it sees a
concurrent pruning that the insert waited for.

What is PostgreSQL's own here: ``%s`` placeholders, ``TIMESTAMPTZ`` and
``BYTEA`` columns, ``COLLATE "C"`` keys (verdicts order by id on equal times
exactly as in SQLite, whatever the database's locale), one ``unnest``
statement per document-frequency update, ``= ANY(array)`` lookups, and an
advisory lock so two machines starting at once do not race to create the
schema.  History keys and terms are stored through :func:`_key` (on write and
lookup alike): NUL, which PostgreSQL text cannot hold, becomes U+FFFD, and a
key too long for a btree entry becomes a prefix plus its SHA-256.

Concurrency inside a process: one connection per store, guarded by a lock
(the consumer calls from its event-loop thread and ``asyncio.to_thread``).
A connection the server dropped is replaced on the next call; the call that
saw it fail raises :class:`~watcher.errors.StoreError` (the at-least-once
pipeline re-delivers, and every write is idempotent).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, ClassVar

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ..errors import ConfigError, StoreError
from ..model import utc
from .base import Rows
from .sqlbase import SQLStore

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3
#: Key of the advisory lock that serialises schema creation (b"driftln" as an integer).
_SCHEMA_LOCK_KEY = int.from_bytes(b"driftln", "big")
#: Defaults added to the DSN when it does not set them.
_MAX_KEY_BYTES = 1000  # history and term keys: the doc_freq index holds both (btree limit ~2.7 kB)
_CONNECT_DEFAULTS = {"connect_timeout": "10", "application_name": "driftline"}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS baselines (
    history TEXT COLLATE "C" PRIMARY KEY,
    capture_time TIMESTAMPTZ NOT NULL,
    uri_m TEXT,
    fingerprint BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS verdicts (
    verdict_id TEXT COLLATE "C" PRIMARY KEY,
    history TEXT COLLATE "C" NOT NULL,
    capture_time TIMESTAMPTZ NOT NULL,
    status TEXT NOT NULL,
    change TEXT NOT NULL,
    json TEXT NOT NULL,
    fingerprint BYTEA,
    received_at DOUBLE PRECISION
);
CREATE INDEX IF NOT EXISTS verdicts_history_time ON verdicts (history, capture_time DESC, verdict_id DESC);
CREATE TABLE IF NOT EXISTS doc_count (history TEXT COLLATE "C" PRIMARY KEY, n BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS alerts (
    verdict_id TEXT COLLATE "C" PRIMARY KEY,
    state TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS latest (
    history TEXT COLLATE "C" PRIMARY KEY,
    verdict_id TEXT COLLATE "C" NOT NULL,
    capture_time TIMESTAMPTZ NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pruned (verdict_id TEXT COLLATE "C" PRIMARY KEY);
CREATE INDEX IF NOT EXISTS latest_off_topic ON latest (status) WHERE status = 'off-topic'
"""


def _pg_sql(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (a literal ``%`` doubled first)."""
    return sql.replace("%", "%%").replace("?", "%s")


def _key(text: str) -> str:
    """``text`` as a key column holds it: NUL (which PostgreSQL text cannot
    hold) as U+FFFD, and a text over :data:`_MAX_KEY_BYTES` as its first 200
    characters plus its SHA-256 (a btree entry must stay under ~2.7 kB, and a
    page can hold a "word" or a URL of any length)."""
    text = text.replace("\x00", "\ufffd")
    if len(text) * 4 > _MAX_KEY_BYTES and len(text.encode("utf-8", "surrogatepass")) > _MAX_KEY_BYTES:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return f"{text[:200]}\u2026sha256:{digest}"
    return text


def describe_dsn(dsn: str) -> str:
    """``dbname at host:port`` of ``dsn``, for messages: never its password."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as exc:
        raise ConfigError(f"store.dsn is not a valid PostgreSQL connection string: {exc}", reason="store_dsn") from exc
    host = str(parts.get("host") or parts.get("hostaddr") or "localhost")
    port = parts.get("port")
    where = f"{host}:{port}" if port else host
    return f"{parts.get('dbname') or parts.get('user') or 'postgres'} at {where}"


class PostgresStore(SQLStore):
    """:class:`~watcher.store.base.BaselineStore` in a PostgreSQL database (``store.dsn``)."""

    SCHEMA_VERSION: ClassVar[int] = SCHEMA_VERSION
    SCHEMA: ClassVar[str] = _SCHEMA
    LEDGER_SEQ: ClassVar[str] = "seq BIGSERIAL PRIMARY KEY"
    DB_ERRORS: ClassVar[tuple[type[Exception], ...]] = (psycopg.Error,)

    def __init__(
        self,
        dsn: str,
        *,
        keep_text: bool = True,
        keep_shingles: bool = True,
        history_limit: int = 1000,
        max_terms: int = 0,
        rescore_window_s: float = 86_400.0,
    ) -> None:
        super().__init__(
            keep_text=keep_text, keep_shingles=keep_shingles, history_limit=history_limit, max_terms=max_terms,
            rescore_window_s=rescore_window_s,
        )
        self._where = f"PostgreSQL store {describe_dsn(dsn)}"
        given = conninfo_to_dict(dsn)
        self._conninfo = make_conninfo(dsn, **{k: v for k, v in _CONNECT_DEFAULTS.items() if k not in given})
        self._conn: psycopg.Connection[tuple[Any, ...]] | None = None
        try:
            with self._lock:
                self._migrate()
        except psycopg.Error as exc:
            self._drop_connection()
            raise StoreError(f"cannot open {self._where}: {exc}", reason="store_open") from exc
        except StoreError:
            self._drop_connection()
            raise
        log.debug("opened %s (schema %d)", self._where, SCHEMA_VERSION)

    # -- the hooks of SQLStore ------------------------------------------------

    @property
    def where(self) -> str:
        return self._where

    def _connection(self) -> psycopg.Connection[tuple[Any, ...]]:
        """The store's connection; a new one if there is none or the server dropped it."""
        if self._conn is None or self._conn.closed:
            if self._conn is not None:
                log.warning("%s: connection lost, reconnecting", self._where)
            self._conn = psycopg.connect(self._conninfo, autocommit=True)
        return self._conn

    def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error as exc:  # closing a dead connection: nothing to save
                log.debug("%s: close: %s", self._where, exc)
            self._conn = None

    def run(self, c: Any, sql: str, params: Sequence[Any] = ()) -> Rows:
        cur: psycopg.Cursor[tuple[Any, ...]] = c.execute(_pg_sql(sql), tuple(params))
        return cur

    def _rollback(self, c: Any) -> None:
        try:
            c.execute("ROLLBACK")
        except psycopg.Error as exc:  # the connection died: the server rolled back already
            log.debug("%s: rollback: %s", self._where, exc)

    def _key(self, text: str) -> str:
        return _key(text)

    def _lock_schema(self, c: Any) -> None:
        self.run(c, "SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK_KEY,))

    def _time_in(self, dt: datetime) -> object:
        return utc(dt)

    def _time_out(self, value: Any) -> datetime:
        if not isinstance(value, datetime):
            raise StoreError(f"{self._where}: capture_time is a {type(value).__name__}", reason="store_codec")
        return utc(value)

    # -- lifecycle ------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._drop_connection()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
