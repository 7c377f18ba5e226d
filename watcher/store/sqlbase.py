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
verdict row with the capture's compact fingerprint (``ON CONFLICT DO
NOTHING``: a duplicate changes nothing); reject it if its id was pruned before
(checked *after* the insert so that, on a server with concurrent writers, an
insert that waited for a pruning transaction sees that transaction's
``pruned`` row); bump the verdict count; store corrected verdicts (new
versions of later captures a late capture re-scored); move the ``latest``
row forward; set the history's new state; drop fingerprints older than the
re-scoring window; prune to ``history_limit``.  Every writer of a history
takes the locks in that order, so writers on several machines cannot
deadlock.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, ClassVar

from ..errors import StoreError
from ..model import Fingerprint, Verdict
from ..state import HistoryState, Reference
from .base import Rows
from .codec import decode_fingerprint, decode_state, decode_verdict, encode_fingerprint, encode_state, encode_verdict
from .positions import SQLPositions


class _Rejected(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised inside a write transaction to roll it back and report "not stored"."""


class SQLStore(SQLPositions, ABC):
    """:class:`~watcher.store.base.BaselineStore` logic over a SQL connection.

    One connection per store, guarded by a lock: the streaming consumer calls
    from its event-loop thread and from ``asyncio.to_thread`` workers.
    """

    #: Statement that opens a write transaction.
    BEGIN: ClassVar[str] = "BEGIN"
    #: ``LIMIT`` clause meaning "no limit" (needed before ``OFFSET``).
    LIMIT_ALL: ClassVar[str] = "LIMIT ALL"
    #: Version written to ``meta.schema_version``; a store with a higher one is refused.
    SCHEMA_VERSION: ClassVar[int] = 3
    #: Statements that bring a version-1 store to version 2.
    MIGRATE_1_2: ClassVar[tuple[str, ...]] = (
        "ALTER TABLE verdicts ADD COLUMN fingerprint BLOB",
        "ALTER TABLE verdicts ADD COLUMN received_at DOUBLE PRECISION",
        "DROP TABLE IF EXISTS doc_freq",
    )
    #: The schema, ``;``-separated (the ``meta`` table is created first, separately).
    SCHEMA: ClassVar[str] = ""
    #: Exceptions of the driver, turned into :class:`StoreError`.
    DB_ERRORS: ClassVar[tuple[type[Exception], ...]] = ()

    def __init__(self, *, keep_text: bool, keep_shingles: bool, history_limit: int, max_terms: int,
                 rescore_window_s: float = 86_400.0) -> None:
        self.keep_text = keep_text
        self.keep_shingles = keep_shingles
        self.history_limit = max(1, history_limit)
        self.max_terms = max_terms
        self.rescore_window_s = rescore_window_s
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
    def run(self, c: Any, sql: str, params: Sequence[Any] = ()) -> Rows:
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

    def _key(self, text: str) -> str:
        """``text`` (a history key) as the key columns store it; identity unless
        the engine limits key size (PostgreSQL's btree entries do)."""
        return text

    def _lock_schema(self, c: Any) -> None:
        """Serialise schema creation between processes (SQLite's BEGIN IMMEDIATE already does)."""

    # -- plumbing -------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("store is closed", reason="store_closed")

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """One write transaction under the lock."""
        with self._lock:
            self._check_open()
            c = self._connection()
            self.run(c, self.BEGIN)
            try:
                yield c
            except BaseException:
                self._rollback(c)
                raise
            else:
                self.run(c, "COMMIT")

    @contextmanager
    def reading(self) -> Iterator[Any]:
        with self._lock:
            self._check_open()
            try:
                yield self._connection()
            except self.DB_ERRORS as exc:
                raise StoreError(f"read from {self.where} failed: {exc}", reason="store_read") from exc

    def _migrate(self) -> None:
        """Create the schema on first open; refuse a store from a newer version."""
        with self.transaction() as c:
            self._lock_schema(c)
            self.run(c, "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            row = self.run(c, "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is not None and int(row[0]) > self.SCHEMA_VERSION:
                raise StoreError(
                    f"{self.where} has schema version {row[0]}; this driftline knows up to {self.SCHEMA_VERSION}",
                    reason="store_schema",
                )
            if row is not None and int(row[0]) == self.SCHEMA_VERSION:
                return  # up to date: skip the DDL (on a server it would lock tables writers are using)
            if row is not None and int(row[0]) == 1:
                for stmt in self.MIGRATE_1_2:
                    self.run(c, stmt)
            # version 2 -> 3 adds a table only: the schema's CREATE ... IF NOT EXISTS does it
            for stmt in self.SCHEMA.split(";"):
                if stmt.strip():
                    self.run(c, stmt)
            self.run(
                c,
                "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(self.SCHEMA_VERSION),),
            )

    @property
    def schema_version(self) -> int:
        with self.reading() as c:
            row = self.run(c, "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return int(row[0])

    # -- state ----------------------------------------------------------------

    def get_state(self, history: str) -> HistoryState:
        """The history's state, with the newest capture time scored (``latest``, from the ``latest``
        row, read in the same statement)."""
        with self.reading() as c:
            row = self.run(
                c, "SELECT b.capture_time, b.uri_m, b.fingerprint, l.capture_time FROM baselines b "
                "LEFT JOIN latest l ON l.history = b.history WHERE b.history = ?", (self._key(history),)
            ).fetchone()
        if row is None:
            return HistoryState()
        state = decode_state(bytes(row[2]), self._time_out(row[0]), row[1])
        return state if row[3] is None else dataclasses.replace(state, latest=self._time_out(row[3]))

    def _reduce(self, fp: Fingerprint) -> Fingerprint:
        from ..compact import reduce_fingerprint

        return reduce_fingerprint(fp, keep_text=self.keep_text, keep_shingles=self.keep_shingles,
                                  max_terms=self.max_terms)

    def _state_blob(self, state: HistoryState) -> tuple[bytes, Reference | None]:
        base, pin = (None if r is None else Reference(r.capture_time, r.uri_m, self._reduce(r.fingerprint))
                     for r in (state.baseline, state.pinned))
        reduced = dataclasses.replace(state, baseline=base, pinned=pin, latest=None)
        return encode_state(reduced), state.baseline or state.pinned

    def _upsert_state(self, c: Any, history: str, state: HistoryState) -> None:
        blob, ref = self._state_blob(state)
        if ref is None:
            return
        self.run(
            c,
            "INSERT INTO baselines (history, capture_time, uri_m, fingerprint) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (history) DO UPDATE SET capture_time = excluded.capture_time, "
            "uri_m = excluded.uri_m, fingerprint = excluded.fingerprint",
            (self._key(history), self._time_in(ref.capture_time), ref.uri_m, blob),
        )

    def set_state(self, history: str, state: HistoryState) -> None:
        try:
            with self.transaction() as c:
                self._upsert_state(c, history, state)
        except self.DB_ERRORS as exc:
            raise StoreError(f"cannot store state in {self.where}: {exc}", reason="store_write") from exc

    # -- verdicts -------------------------------------------------------------

    def has_verdict(self, verdict_id: str) -> bool:
        with self.reading() as c:
            return self.run(c, "SELECT 1 FROM verdicts WHERE verdict_id = ?", (verdict_id,)).fetchone() is not None

    def get_verdict(self, verdict_id: str) -> Verdict | None:
        with self.reading() as c:
            row = self.run(c, "SELECT json FROM verdicts WHERE verdict_id = ?", (verdict_id,)).fetchone()
        return decode_verdict(row[0]) if row is not None else None

    def put_verdict(self, verdict: Verdict, state: HistoryState | None = None, fingerprint: Fingerprint | None = None,
                    corrections: Sequence[Verdict] = (), *,
                    alerts: Sequence[str] = ()) -> bool:
        """Insert ``verdict`` once, with the capture's ``fingerprint`` (kept
        for ``rescore_window_s`` so that a late capture can re-score it); the
        ``corrections`` (new versions of stored verdicts), the new ``state``,
        the ``latest`` row and pruning happen in the same transaction, and only
        when the verdict is new."""
        at = self._time_in(verdict.capture_time)
        payload = encode_verdict(verdict)
        fp_blob = encode_fingerprint(self._reduce(fingerprint), keep_text=True, keep_shingles=True,
                                     max_terms=0) if fingerprint is not None else None
        h = self._key(verdict.history)
        now = time.time()
        try:
            with self.transaction() as c:
                cur = self.run(
                    c,
                    "INSERT INTO verdicts (verdict_id, history, capture_time, status, change, json, fingerprint, "
                    "received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (verdict_id) DO NOTHING",
                    (verdict.verdict_id, h, at, verdict.status, verdict.change, payload, fp_blob, now),
                )
                if cur.rowcount == 0:
                    return False
                if self.run(c, "SELECT 1 FROM pruned WHERE verdict_id = ?", (verdict.verdict_id,)).fetchone():
                    raise _Rejected  # stored once and pruned: roll the insert back
                seen = self.run(
                    c,
                    "INSERT INTO doc_count (history, n) VALUES (?, 1) "
                    "ON CONFLICT (history) DO UPDATE SET n = doc_count.n + 1 RETURNING n",
                    (h,),
                ).fetchall()[0][0]  # fetchall: finish the RETURNING statement before COMMIT
                for v in (verdict, *corrections):
                    if v is not verdict:
                        self.run(c, "UPDATE verdicts SET json = ?, status = ?, change = ? WHERE verdict_id = ?",
                                  (encode_verdict(v), v.status, v.change, v.verdict_id))
                    self.run(
                        c,
                        "INSERT INTO latest (history, verdict_id, capture_time, status) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT (history) DO UPDATE SET verdict_id = excluded.verdict_id, "
                        "capture_time = excluded.capture_time, status = excluded.status "
                        "WHERE excluded.capture_time >= latest.capture_time",
                        (h, v.verdict_id, self._time_in(v.capture_time), v.status),
                    )
                if state is not None:
                    self._upsert_state(c, verdict.history, state)
                for vid in alerts:  # the alert is owed from the moment the verdict exists
                    self.run(c, "INSERT INTO alerts (verdict_id, state, at) VALUES (?, 'pending', ?) "
                              "ON CONFLICT (verdict_id) DO NOTHING", (vid, now))
                self._write_carried(c, (verdict, *corrections))  # a followed file's position and messages
                self.run(c, "UPDATE verdicts SET fingerprint = NULL WHERE history = ? AND fingerprint IS NOT NULL "
                          "AND received_at < ?", (h, now - self.rescore_window_s))
                if int(seen) > self.history_limit:  # n counts every verdict ever stored: an upper bound
                    self._prune(c, h)
        except _Rejected:
            return False
        except self.DB_ERRORS as exc:
            raise StoreError(f"cannot store verdict in {self.where}: {exc}", reason="store_write") from exc
        return True

    def alert_pending(self, verdict_id: str) -> bool:
        """An alert is owed for this verdict and was not acknowledged by the broker yet."""
        with self.reading() as c:
            row = self.run(c, "SELECT state FROM alerts WHERE verdict_id = ?", (verdict_id,)).fetchone()
        return row is not None and row[0] == "pending"

    def mark_alert_sent(self, verdict_id: str) -> None:
        try:
            with self.transaction() as c:
                self.run(c, "UPDATE alerts SET state = 'sent', at = ? WHERE verdict_id = ?", (time.time(), verdict_id))
        except self.DB_ERRORS as exc:
            raise StoreError(f"cannot mark alert sent in {self.where}: {exc}", reason="store_write") from exc

    def logged(self, history: str) -> list[tuple[Verdict, Fingerprint]]:
        """Stored verdicts of ``history`` that still hold their capture's
        fingerprint (those within the re-scoring window), oldest first."""
        with self.reading() as c:
            rows = self.run(
                c, "SELECT json, fingerprint FROM verdicts WHERE history = ? AND fingerprint IS NOT NULL "
                   "ORDER BY capture_time, verdict_id", (self._key(history),)).fetchall()
        return [(decode_verdict(r[0]), decode_fingerprint(bytes(r[1]))) for r in rows]

    def _prune(self, c: Any, history: str) -> None:
        """Keep the newest ``history_limit`` verdicts of ``history`` (already a :meth:`_key`).

        The ids of dropped verdicts stay in ``pruned`` (about 50 bytes each) so a
        re-delivered old capture is still recognised: idempotence must not
        depend on how much history is kept.
        """
        n = self.run(c, "SELECT COUNT(*) FROM verdicts WHERE history = ?", (history,)).fetchone()[0]
        if int(n) <= self.history_limit:
            return
        old = "SELECT verdict_id FROM verdicts WHERE history = ? ORDER BY capture_time DESC, verdict_id DESC "
        old += f"{self.LIMIT_ALL} OFFSET ?"
        args = (history, self.history_limit)
        self.run(c, f"INSERT INTO pruned (verdict_id) {old} ON CONFLICT (verdict_id) DO NOTHING", args)
        self.run(c, f"DELETE FROM verdicts WHERE verdict_id IN ({old})", args)

    def recent_verdicts(self, history: str, limit: int) -> list[Verdict]:
        with self.reading() as c:
            rows = self.run(
                c,
                "SELECT json FROM verdicts WHERE history = ? ORDER BY capture_time DESC, verdict_id DESC LIMIT ?",
                (self._key(history), max(0, limit)),
            ).fetchall()
        return [decode_verdict(r[0]) for r in rows]

    def all_verdicts(self) -> Iterator[Verdict]:
        """Every stored verdict (its newest version), history by history in capture order: what a
        whole-store report (``driftline seeds``) reads.  Streamed in pages of 1,000 so that a large
        store is never held in memory."""
        after: tuple[str, object, str] = ("", self._time_in(datetime(1, 1, 2, tzinfo=UTC)), "")
        while True:
            with self.reading() as c:
                rows = self.run(
                    c,
                    "SELECT history, capture_time, verdict_id, json FROM verdicts "
                    "WHERE (history, capture_time, verdict_id) > (?, ?, ?) "
                    "ORDER BY history, capture_time, verdict_id LIMIT 1000",
                    after,
                ).fetchall()
            if not rows:
                return
            for r in rows:
                yield decode_verdict(r[3])
            last = rows[-1]
            after = (str(last[0]), self._time_in(self._time_out(last[1])), str(last[2]))

    def verdict_count(self, history: str) -> int:
        """Number of stored verdicts of ``history`` (after pruning)."""
        with self.reading() as c:
            n = self.run(c, "SELECT COUNT(*) FROM verdicts WHERE history = ?", (self._key(history),)).fetchone()[0]
        return int(n)

    def histories_off_topic(self) -> int:
        with self.reading() as c:
            return int(self.run(c, "SELECT COUNT(*) FROM latest WHERE status = 'off-topic'").fetchone()[0])
