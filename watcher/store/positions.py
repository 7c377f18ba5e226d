"""Read positions and dead letters kept in the store, for inputs that have no broker.

Why in the store: ``driftline run --crawl-log`` follows files, not a Kafka
topic, so there is no consumer group to commit an offset to and no topic to
park a bad line on.  Its position (which file, how far) is written in the
same transaction as the verdicts that line produced, so a crash can neither
skip a capture (position ahead of the verdicts) nor score it twice (verdicts
ahead of the position).  A line that produces no verdict (skipped, a dead
letter, a capture already scored) moves the position in a transaction of its
own, with its dead letter when it has one.

How the position rides with the verdict: the follower calls
:meth:`carry_position` before it hands the line to the scorer; the store's
``put_verdict`` writes the carried position inside its own transaction (one
call, :meth:`_write_carried`) until the follower drops it after the line.
Only one line is scored at a time, so one carried position per store is
enough; the Kafka path never carries one, so it writes nothing here.

The two tables are created on first use (``CREATE TABLE IF NOT EXISTS``), so
stores that never follow a file never get them and the schema version is
untouched.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..errors import ConfigError, StoreError
from ..model import Verdict
from .base import Rows
from .ledger import LedgerBuilder, MemoryLedger, Message, Published, SQLLedger


@dataclass(frozen=True, slots=True)
class DeadLetterRow:
    """A line that could not be scored: where it was read, why, and the letter itself (JSON)."""

    source: str  # the followed path and the file's identity
    offset: int  # byte offset of the line's start in that file
    reason: str
    body: str  # the dead letter as the Kafka path publishes it (JSON text, original bytes base64)
    at: float = 0.0


_DDL = (
    "CREATE TABLE IF NOT EXISTS input_positions (stream TEXT PRIMARY KEY, position TEXT NOT NULL, "
    "at DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS input_dead_letters (source TEXT NOT NULL, line_offset BIGINT NOT NULL, "
    "reason TEXT NOT NULL, body TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, PRIMARY KEY (source, line_offset))",
)


class SQLPositions(SQLLedger):
    """The positions and dead letters of :class:`~watcher.store.sqlbase.SQLStore` (a mixin), with the
    ledger of published messages (:mod:`.ledger`)."""

    POSITION_DDL: ClassVar[tuple[str, ...]] = _DDL
    _carried: tuple[str, str] | None = None
    _positions_ready: bool = False

    if TYPE_CHECKING:  # supplied by SQLStore
        DB_ERRORS: ClassVar[tuple[type[Exception], ...]]
        _lock: threading.RLock

        @property
        def where(self) -> str: ...

        def transaction(self) -> AbstractContextManager[Any]: ...

        def reading(self) -> AbstractContextManager[Any]: ...

        def run(self, c: Any, sql: str, params: Sequence[Any] = ()) -> Rows: ...

        def _lock_schema(self, c: Any) -> None: ...

    def _ensure_positions(self) -> None:
        if self._positions_ready:
            return
        try:
            with self.transaction() as c:
                self._lock_schema(c)
                for stmt in (*self.POSITION_DDL, *self._ledger_ddl()):
                    self.run(c, stmt)
        except self.DB_ERRORS as exc:
            raise StoreError(f"cannot create the position tables in {self.where}: {exc}", reason="store_write") \
                from exc
        self._positions_ready = True

    def get_position(self, stream: str) -> str | None:
        """The stored position of ``stream`` (JSON text), or None before its first line."""
        self._ensure_positions()
        with self.reading() as c:
            row = self.run(c, "SELECT position FROM input_positions WHERE stream = ?", (stream,)).fetchone()
        return None if row is None else str(row[0])

    def carry_position(self, stream: str, position: str) -> None:
        """Have the next stored verdict's transaction also set ``stream``'s position."""
        self._ensure_positions()
        self._carried = (stream, position)

    def drop_carried(self) -> None:
        self._carried = None
        self._carried_ledger = None

    def _write_carried(self, c: Any, verdicts: Sequence[Verdict] = ()) -> None:
        """Called by ``put_verdict`` inside its transaction: write the carried position, if any, and the
        ledger messages of ``verdicts`` (the stored verdict and its corrections) if a builder is carried.
        Both stay carried until :meth:`drop_carried`, so a transaction retried after a failure writes
        them again."""
        if self._carried is not None:
            self._upsert_position(c, *self._carried)
        self._write_ledger(c, verdicts)

    def _upsert_position(self, c: Any, stream: str, position: str) -> None:
        self.run(c, "INSERT INTO input_positions (stream, position, at) VALUES (?, ?, ?) ON CONFLICT (stream) "
                  "DO UPDATE SET position = excluded.position, at = excluded.at", (stream, position, time.time()))

    def set_position(self, stream: str, position: str, dead_letter: DeadLetterRow | None = None) -> None:
        """Set ``stream``'s position, with ``dead_letter`` stored in the same transaction."""
        self._ensure_positions()
        try:
            with self.transaction() as c:
                if dead_letter is not None:
                    self._insert_dead_letter(c, dead_letter)
                self._upsert_position(c, stream, position)
        except self.DB_ERRORS as exc:
            raise StoreError(f"cannot store the position in {self.where}: {exc}", reason="store_write") from exc

    def _insert_dead_letter(self, c: Any, d: DeadLetterRow) -> None:
        self.run(c, "INSERT INTO input_dead_letters (source, line_offset, reason, body, at) VALUES "
                  "(?, ?, ?, ?, ?) ON CONFLICT (source, line_offset) DO NOTHING",
                  (d.source, d.offset, d.reason, d.body, d.at or time.time()))

    def record_line(self, stream: str, position: str | None, messages: Sequence[Message] = (), *,
                    dead_letter: DeadLetterRow | None = None, advice: Sequence[tuple[str, str]] = (),
                    written: Sequence[int] = (), keep: int = 0) -> int:
        """One transaction for a line's outcome: its messages recorded in the ledger (returns how many
        were new), the last advice, the messages written out since, its dead letter and its position."""

        def rows(c: Any) -> None:
            if dead_letter is not None:
                self._insert_dead_letter(c, dead_letter)
            if position is not None:
                self._upsert_position(c, stream, position)

        return self.record(stream, messages, advice=advice, written=written, keep=keep, also=rows)

    def input_dead_letters(self, limit: int = 1000) -> list[DeadLetterRow]:
        """The stored dead letters, oldest first."""
        self._ensure_positions()
        with self.reading() as c:
            rows = self.run(c, "SELECT source, line_offset, reason, body, at FROM input_dead_letters "
                             "ORDER BY at, source, line_offset LIMIT ?", (max(0, limit),)).fetchall()
        return [DeadLetterRow(str(r[0]), int(r[1]), str(r[2]), str(r[3]), float(r[4])) for r in rows]

    def pending_alert_ids(self) -> list[str]:
        """Ids of verdicts whose alert is owed and was never delivered (re-sent at start)."""
        with self.reading() as c:
            rows = self.run(c, "SELECT verdict_id FROM alerts WHERE state = 'pending' ORDER BY at").fetchall()
        return [str(r[0]) for r in rows]


class MemoryPositions(MemoryLedger):
    """The same for :class:`~watcher.store.memory.MemoryStore` (nothing survives the process)."""

    _carried: tuple[str, str] | None = None

    if TYPE_CHECKING:  # supplied by MemoryStore
        _lock: threading.RLock
        _alerts: dict[str, str]

    def _positions(self) -> dict[str, str]:
        got: dict[str, str] | None = self.__dict__.get("_position_rows")
        if got is None:
            got = self.__dict__.setdefault("_position_rows", {})
        return got

    def _letters(self) -> dict[tuple[str, int], DeadLetterRow]:
        got: dict[tuple[str, int], DeadLetterRow] | None = self.__dict__.get("_letter_rows")
        if got is None:
            got = self.__dict__.setdefault("_letter_rows", {})
        return got

    def get_position(self, stream: str) -> str | None:
        with self._lock:
            return self._positions().get(stream)

    def carry_position(self, stream: str, position: str) -> None:
        self._carried = (stream, position)

    def drop_carried(self) -> None:
        self._carried = None
        self._carried_ledger = None

    def _write_carried(self, c: Any = None, verdicts: Sequence[Verdict] = ()) -> None:
        if self._carried is not None:
            self._positions()[self._carried[0]] = self._carried[1]
        self._write_ledger(c, verdicts)

    def record_line(self, stream: str, position: str | None, messages: Sequence[Message] = (), *,
                    dead_letter: DeadLetterRow | None = None, advice: Sequence[tuple[str, str]] = (),
                    written: Sequence[int] = (), keep: int = 0) -> int:

        def rows(_c: Any) -> None:
            if dead_letter is not None:
                key = (dead_letter.source, dead_letter.offset)
                self._letters().setdefault(key, dead_letter if dead_letter.at else
                                           DeadLetterRow(*key, dead_letter.reason, dead_letter.body, time.time()))
            if position is not None:
                self._positions()[stream] = position

        return self.record(stream, messages, advice=advice, written=written, keep=keep, also=rows)

    def set_position(self, stream: str, position: str, dead_letter: DeadLetterRow | None = None) -> None:
        with self._lock:
            if dead_letter is not None:
                key = (dead_letter.source, dead_letter.offset)
                self._letters().setdefault(key, dead_letter if dead_letter.at else
                                           DeadLetterRow(*key, dead_letter.reason, dead_letter.body, time.time()))
            self._positions()[stream] = position

    def input_dead_letters(self, limit: int = 1000) -> list[DeadLetterRow]:
        with self._lock:
            return sorted(self._letters().values(), key=lambda d: (d.at, d.source, d.offset))[:max(0, limit)]

    def pending_alert_ids(self) -> list[str]:
        with self._lock:
            return [vid for vid, state in self._alerts.items() if state == "pending"]


def reason_of(body: bytes | str) -> str:
    """The reason slug inside a dead letter built by :mod:`consumers.publish.messages` (``internal`` if unreadable)."""
    try:
        got = json.loads(body)
    except ValueError:
        return "internal"
    reason = got.get("reason") if isinstance(got, dict) else None
    return str(reason) if reason else "internal"



class PositionStore(Protocol):
    """What a follower needs of a store besides :class:`~watcher.store.base.BaselineStore`."""

    def get_position(self, stream: str) -> str | None: ...

    def carry_position(self, stream: str, position: str) -> None: ...

    def drop_carried(self) -> None: ...

    def set_position(self, stream: str, position: str, dead_letter: DeadLetterRow | None = None) -> None: ...

    def input_dead_letters(self, limit: int = 1000) -> list[DeadLetterRow]: ...

    def pending_alert_ids(self) -> list[str]: ...

    def carry_ledger(self, stream: str, build: LedgerBuilder) -> None: ...

    def record_line(self, stream: str, position: str | None, messages: Sequence[Message] = (), *,
                    dead_letter: DeadLetterRow | None = None, advice: Sequence[tuple[str, str]] = (),
                    written: Sequence[int] = (), keep: int = 0) -> int: ...

    def unwritten(self, streams: Sequence[str]) -> list[Published]: ...

    def published_since(self, after_seq: int, limit: int = 10_000) -> list[Published]: ...

    def seq_of(self, key_prefix: str) -> int | None: ...

    def last_advice(self, history: str) -> str | None: ...


def positions_of(store: object) -> PositionStore:
    """``store`` as a :class:`PositionStore` (every shipped backend is one)."""
    if isinstance(store, SQLPositions | MemoryPositions):
        return store
    raise ConfigError(f"the store {type(store).__name__} cannot keep read positions (needed by --crawl-log)",
                      reason="store_backend")
