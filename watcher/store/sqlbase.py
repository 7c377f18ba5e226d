"""What the SQL backends share: the store's logic, written once.

Why a shared base: the SQLite and PostgreSQL stores must behave the same
(a history that moves from one backend to the other, or a test written for
one, must see identical results), and their SQL differs only in placeholders,
column types and a few dialect details.  The statements here use ``?``
placeholders and SQL both engines accept (``INSERT ... ON CONFLICT``,
``RETURNING``, partial indexes); a subclass supplies the connection, the
placeholder style, the schema text, how times are stored, and the two places
where each engine has a much better way (bulk document-frequency updates and
``IN`` lookups).

Write path of :meth:`SQLStore.put_verdict` (one transaction): insert the
verdict row (``ON CONFLICT DO NOTHING``: a duplicate changes nothing); reject
it if its id was pruned before (checked *after* the insert so that, on a
server with concurrent writers, an insert that waited for a pruning
transaction sees that transaction's ``pruned`` row); bump document
frequencies (terms sorted, so concurrent writers lock rows in one order) and
the document count; move the ``latest`` row forward; set the optional
baseline; prune to ``history_limit``.  Every writer of a history takes the
locks in that order, so writers on several machines cannot deadlock.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, ClassVar, Protocol

from ..errors import StoreError
from ..model import Verdict
from .base import StoredBaseline
from .codec import decode_fingerprint, decode_verdict, encode_fingerprint, encode_verdict


class Rows(Protocol):
    """The part of a DB-API cursor the shared code reads."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class _Rejected(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised inside a write transaction to roll it back and report "not stored"."""


class SQLStore(ABC):
    """:class:`~watcher.store.base.BaselineStore` logic over a SQL connection.

    One connection per store, guarded by a lock: the streaming consumer calls
    from its event-loop thread and from ``asyncio.to_thread`` workers.
    """

    #: Statement that opens a write transaction.
    BEGIN: ClassVar[str] = "BEGIN"
    #: ``LIMIT`` clause meaning "no limit" (needed before ``OFFSET``).
    LIMIT_ALL: ClassVar[str] = "LIMIT ALL"
    #: Version written to ``meta.schema_version``; a store with a higher one is refused.
    SCHEMA_VERSION: ClassVar[int] = 1
    #: The schema, ``;``-separated (the ``meta`` table is created first, separately).
    SCHEMA: ClassVar[str] = ""
    #: Exceptions of the driver, turned into :class:`StoreError`.
    DB_ERRORS: ClassVar[tuple[type[Exception], ...]] = ()

    def __init__(self, *, keep_text: bool, keep_shingles: bool, history_limit: int, max_terms: int) -> None:
        self.keep_text = keep_text
        self.keep_shingles = keep_shingles
        self.history_limit = max(1, history_limit)
        self.max_terms = max_terms
        self._lock = threading.RLock()
        self._closed = False

    # -- what a backend supplies ---------------------------------------------

    @property
    @abstractmethod
    def where(self) -> str:
        """Where the data lives, for messages (never containing a password)."""

    @abstractmethod
    def _connection(self) -> Any:
        """The open connection (called under the lock, after the closed check)."""

    @abstractmethod
    def _run(self, c: Any, sql: str, params: Sequence[Any] = ()) -> Rows:
        """Execute one statement written with ``?`` placeholders."""

    @abstractmethod
    def _rollback(self, c: Any) -> None:
        """Roll back the open transaction, if any (must not raise on a dead connection)."""

    @abstractmethod
    def _time_in(self, dt: datetime) -> object:
        """A datetime as the time columns store it (sorting like the datetime)."""

    @abstractmethod
    def _time_out(self, value: Any) -> datetime:
        """Inverse of :meth:`_time_in`: an aware UTC datetime."""

    @abstractmethod
    def _bump_doc_freqs(self, c: Any, history: str, terms: Sequence[str]) -> None:
        """Add 1 to the df of each of ``terms`` (distinct, sorted) in ``history``."""

    @abstractmethod
    def _select_doc_freqs(self, c: Any, history: str, terms: Sequence[str]) -> Iterable[tuple[str, int]]:
        """(term, df) for those of ``terms`` (distinct) that ``history`` has seen."""

    def _key(self, text: str) -> str:
        """``text`` (a history key) as the key columns store it; identity unless
        the engine limits key size (PostgreSQL's btree entries do)."""
        return text

    def _lock_schema(self, c: Any) -> None:  # noqa: B027 - optional hook, no-op by default
        """Serialise schema creation between processes (SQLite's BEGIN IMMEDIATE already does)."""

    # -- plumbing -------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("store is closed", reason="store_closed")

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """One write transaction under the lock."""
        with self._lock:
            self._check_open()
            c = self._connection()
            self._run(c, self.BEGIN)
            try:
                yield c
            except BaseException:
                self._rollback(c)
                raise
            else:
                self._run(c, "COMMIT")

    @contextmanager
    def _read(self) -> Iterator[Any]:
        with self._lock:
            self._check_open()
            try:
                yield self._connection()
            except self.DB_ERRORS as exc:
                raise StoreError(f"read from {self.where} failed: {exc}", reason="store_read") from exc

    def _migrate(self) -> None:
        """Create the schema on first open; refuse a store from a newer version."""
        with self._tx() as c:
            self._lock_schema(c)
            self._run(c, "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            row = self._run(c, "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is not None and int(row[0]) > self.SCHEMA_VERSION:
                raise StoreError(
                    f"{self.where} has schema version {row[0]}; this driftline knows up to {self.SCHEMA_VERSION}",
                    reason="store_schema",
                )
            if row is not None and int(row[0]) == self.SCHEMA_VERSION:
                return  # up to date: skip the DDL (on a server it would lock tables writers are using)
            for stmt in self.SCHEMA.split(";"):
                if stmt.strip():
                    self._run(c, stmt)
            self._run(
                c,
                "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(self.SCHEMA_VERSION),),
            )

    @property
    def schema_version(self) -> int:
        with self._read() as c:
            row = self._run(c, "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return int(row[0])

    # -- baselines ------------------------------------------------------------

    def get_baseline(self, history: str) -> StoredBaseline | None:
        with self._read() as c:
            row = self._run(
                c, "SELECT capture_time, uri_m, fingerprint FROM baselines WHERE history = ?", (self._key(history),)
            ).fetchone()
        if row is None:
            return None
        return StoredBaseline(
            history=history,
            capture_time=self._time_out(row[0]),
            uri_m=row[1],
            fingerprint=decode_fingerprint(bytes(row[2])),
        )

    def _baseline_blob(self, baseline: StoredBaseline) -> bytes:
        return encode_fingerprint(
            baseline.fingerprint, keep_text=self.keep_text, keep_shingles=self.keep_shingles, max_terms=self.max_terms
        )

    def _upsert_baseline(self, c: Any, baseline: StoredBaseline, blob: bytes) -> None:
        self._run(
            c,
            "INSERT INTO baselines (history, capture_time, uri_m, fingerprint) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (history) DO UPDATE SET capture_time = excluded.capture_time, "
            "uri_m = excluded.uri_m, fingerprint = excluded.fingerprint",
            (self._key(baseline.history), self._time_in(baseline.capture_time), baseline.uri_m, blob),
        )

    def set_baseline(self, baseline: StoredBaseline) -> None:
        blob = self._baseline_blob(baseline)
        try:
            with self._tx() as c:
                self._upsert_baseline(c, baseline, blob)
        except self.DB_ERRORS as exc:
            raise StoreError(f"cannot store baseline in {self.where}: {exc}", reason="store_write") from exc

    # -- verdicts -------------------------------------------------------------

    def has_verdict(self, verdict_id: str) -> bool:
        with self._read() as c:
            return self._run(c, "SELECT 1 FROM verdicts WHERE verdict_id = ?", (verdict_id,)).fetchone() is not None

    def get_verdict(self, verdict_id: str) -> Verdict | None:
        with self._read() as c:
            row = self._run(c, "SELECT json FROM verdicts WHERE verdict_id = ?", (verdict_id,)).fetchone()
        return decode_verdict(row[0]) if row is not None else None

    def put_verdict(self, verdict: Verdict, terms: Sequence[str] = (), baseline: StoredBaseline | None = None) -> bool:
        """Insert ``verdict`` once; document frequencies, the ``latest`` row,
        the optional new ``baseline`` and pruning happen in the same
        transaction, and only when the verdict is new."""
        at = self._time_in(verdict.capture_time)
        payload = encode_verdict(verdict)
        distinct = sorted(set(terms))
        blob = self._baseline_blob(baseline) if baseline is not None else None
        h = self._key(verdict.history)
        try:
            with self._tx() as c:
                cur = self._run(
                    c,
                    "INSERT INTO verdicts (verdict_id, history, capture_time, status, change, json) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (verdict_id) DO NOTHING",
                    (verdict.verdict_id, h, at, verdict.status, verdict.change, payload),
                )
                if cur.rowcount == 0:
                    return False
                if self._run(c, "SELECT 1 FROM pruned WHERE verdict_id = ?", (verdict.verdict_id,)).fetchone():
                    raise _Rejected  # stored once and pruned: roll the insert back
                if distinct:
                    self._bump_doc_freqs(c, h, distinct)
                seen = self._run(
                    c,
                    "INSERT INTO doc_count (history, n) VALUES (?, 1) "
                    "ON CONFLICT (history) DO UPDATE SET n = doc_count.n + 1 RETURNING n",
                    (h,),
                ).fetchall()[0][0]  # fetchall: finish the RETURNING statement before COMMIT
                self._run(
                    c,
                    "INSERT INTO latest (history, verdict_id, capture_time, status) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (history) DO UPDATE SET verdict_id = excluded.verdict_id, "
                    "capture_time = excluded.capture_time, status = excluded.status "
                    "WHERE excluded.capture_time >= latest.capture_time",
                    (h, verdict.verdict_id, at, verdict.status),
                )
                if baseline is not None:
                    self._upsert_baseline(c, baseline, blob or b"")
                if int(seen) > self.history_limit:  # n counts every verdict ever stored: an upper bound
                    self._prune(c, h)
        except _Rejected:
            return False
        except self.DB_ERRORS as exc:
            raise StoreError(f"cannot store verdict in {self.where}: {exc}", reason="store_write") from exc
        return True

    def _prune(self, c: Any, history: str) -> None:
        """Keep the newest ``history_limit`` verdicts of ``history`` (already a :meth:`_key`).

        The ids of dropped verdicts stay in ``pruned`` (about 50 bytes each) so a
        re-delivered old capture is still recognised and cannot count its terms
        twice: idempotence must not depend on how much history is kept.
        """
        n = self._run(c, "SELECT COUNT(*) FROM verdicts WHERE history = ?", (history,)).fetchone()[0]
        if int(n) <= self.history_limit:
            return
        old = "SELECT verdict_id FROM verdicts WHERE history = ? ORDER BY capture_time DESC, verdict_id DESC "
        old += f"{self.LIMIT_ALL} OFFSET ?"
        args = (history, self.history_limit)
        self._run(c, f"INSERT INTO pruned (verdict_id) {old} ON CONFLICT (verdict_id) DO NOTHING", args)
        self._run(c, f"DELETE FROM verdicts WHERE verdict_id IN ({old})", args)

    def recent_verdicts(self, history: str, limit: int) -> list[Verdict]:
        with self._read() as c:
            rows = self._run(
                c,
                "SELECT json FROM verdicts WHERE history = ? ORDER BY capture_time DESC, verdict_id DESC LIMIT ?",
                (self._key(history), max(0, limit)),
            ).fetchall()
        return [decode_verdict(r[0]) for r in rows]

    def verdict_count(self, history: str) -> int:
        """Number of stored verdicts of ``history`` (after pruning)."""
        with self._read() as c:
            n = self._run(c, "SELECT COUNT(*) FROM verdicts WHERE history = ?", (self._key(history),)).fetchone()[0]
        return int(n)

    def document_frequencies(self, history: str, terms: Sequence[str]) -> tuple[int, Mapping[str, int]]:
        wanted = list(dict.fromkeys(terms))
        with self._read() as c:
            # df first, then n: both only grow and move together, so reading n last
            # (even outside one snapshot) never gives a df above n.
            h = self._key(history)
            out = {str(term): int(df) for term, df in self._select_doc_freqs(c, h, wanted)} if wanted else {}
            row = self._run(c, "SELECT n FROM doc_count WHERE history = ?", (h,)).fetchone()
        return (int(row[0]) if row is not None else 0), out

    def histories_off_topic(self) -> int:
        with self._read() as c:
            return int(self._run(c, "SELECT COUNT(*) FROM latest WHERE status = 'off-topic'").fetchone()[0])
