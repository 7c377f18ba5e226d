"""The ledger of published messages, for inputs that have no broker (``driftline run --crawl-log``).

Why: the durable path's output (stdout or a file) cannot take part in a
store transaction, and what decides whether a message is due (the last
crawl-guidance advice of a seed, the stop recommendations issued, the alerts
sent) used to live in process memory, so a restart repeated messages or lost
them.  Every message the durable path publishes is first recorded here, under
a key that names it (``verdict:<id>:<version>``, ``alert:<verdict id>``,
``recommendation:<id>``, ``advice:<history>:<id>:<verdict id>``, ...): a
message recorded once is never recorded again, so whatever a restart makes
again is dropped here, and each recorded message gets a sequence number and
is written out once (``written``) in that order.

When: the verdict messages of a line (its verdict and the corrections it
caused) are recorded in the verdict's own transaction (``put_verdict`` calls
:meth:`SQLLedger._write_ledger`), so a verdict never exists without its
message; the other messages (alerts, recommendations, advice, seed reports,
dead letters) are recorded before anything is marked as done (an alert as
sent) and before the position moves past their line.

The last advice of each history (``advice_ledger``) is what
:class:`watcher.seeds.stream.SeedReporter` compares a new advice with after a
restart.  Written messages are pruned beyond the newest ``keep`` (their keys
still deduplicate until then: far more than one line's re-reading needs).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import StoreError
from ..model import Verdict

if TYPE_CHECKING:
    from .base import Rows


@dataclass(frozen=True, slots=True)
class Message:
    """A message to publish: its ledger key, its kind (``verdict``, ``alert``, ...) and its JSON text."""

    key: str
    kind: str
    body: str


@dataclass(frozen=True, slots=True)
class Published:
    """A recorded message and its place in the output's order."""

    seq: int
    key: str
    stream: str
    kind: str
    body: str
    written: bool


#: Builds the ledger messages of the verdicts a transaction stores (the verdict and its corrections).
LedgerBuilder = Callable[[Sequence[Verdict]], Sequence[Message]]


class SQLLedger:
    """The ledger of :class:`~watcher.store.sqlbase.SQLStore` (a mixin; tables made with the positions')."""

    #: The sequence column (PostgreSQL: ``BIGSERIAL``).
    LEDGER_SEQ: ClassVar[str] = "seq INTEGER PRIMARY KEY AUTOINCREMENT"
    _carried_ledger: tuple[str, LedgerBuilder] | None = None

    if TYPE_CHECKING:  # supplied by SQLStore / SQLPositions
        DB_ERRORS: ClassVar[tuple[type[Exception], ...]]
        _lock: threading.RLock

        @property
        def where(self) -> str: ...

        def transaction(self) -> AbstractContextManager[Any]: ...

        def reading(self) -> AbstractContextManager[Any]: ...

        def run(self, c: Any, sql: str, params: Sequence[Any] = ()) -> Rows: ...

        def _key(self, text: str) -> str: ...

        def _ensure_positions(self) -> None: ...

    def _ledger_ddl(self) -> tuple[str, ...]:
        return (
            f"CREATE TABLE IF NOT EXISTS published ({self.LEDGER_SEQ}, msg_key TEXT NOT NULL UNIQUE, "
            "stream TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL, written INTEGER NOT NULL, "
            "at DOUBLE PRECISION NOT NULL)",
            "CREATE INDEX IF NOT EXISTS published_unwritten ON published (stream, seq) WHERE written = 0",
            "CREATE TABLE IF NOT EXISTS advice_ledger (history TEXT PRIMARY KEY, advice_id TEXT NOT NULL, "
            "at DOUBLE PRECISION NOT NULL)",
        )

    def carry_ledger(self, stream: str, build: LedgerBuilder) -> None:
        """Have the next stored verdict's transaction also record its messages (made by ``build``) for
        ``stream``, until :meth:`drop_carried`."""
        self._ensure_positions()
        self._carried_ledger = (stream, build)

    def _write_ledger(self, c: Any, verdicts: Sequence[Verdict]) -> None:
        if self._carried_ledger is not None and verdicts:
            stream, build = self._carried_ledger
            self._insert(c, stream, build(verdicts))

    def _insert(self, c: Any, stream: str, messages: Sequence[Message]) -> int:
        n, now = 0, time.time()
        for m in messages:
            n += max(0, self.run(c, "INSERT INTO published (msg_key, stream, kind, body, written, at) VALUES "
                                  "(?, ?, ?, ?, 0, ?) ON CONFLICT (msg_key) DO NOTHING",
                                  (m.key, stream, m.kind, m.body, now)).rowcount)
        return n

    def record(self, stream: str, messages: Sequence[Message] = (), *, advice: Sequence[tuple[str, str]] = (),
               written: Sequence[int] = (), keep: int = 0, also: Callable[[Any], None] | None = None) -> int:
        """In one transaction: record ``messages`` (those not recorded before; returns how many were new),
        set each ``(history, advice id)`` as the history's last advice, mark the ``written`` messages as
        written (and prune written ones beyond the newest ``keep``, if ``keep``), and run ``also`` (the
        position and dead-letter rows of the caller) with the connection."""
        self._ensure_positions()
        now = time.time()
        try:
            with self.transaction() as c:
                n = self._insert(c, stream, messages)
                for history, advice_id in advice:
                    self.run(c, "INSERT INTO advice_ledger (history, advice_id, at) VALUES (?, ?, ?) ON CONFLICT "
                              "(history) DO UPDATE SET advice_id = excluded.advice_id, at = excluded.at",
                              (self._key(history), advice_id, now))
                for seq in written:
                    self.run(c, "UPDATE published SET written = 1 WHERE seq = ?", (seq,))
                if written and keep > 0:
                    self.run(c, "DELETE FROM published WHERE written = 1 AND seq <= ?", (max(written) - keep,))
                if also is not None:
                    also(c)
        except self.DB_ERRORS as exc:
            raise StoreError(f"cannot record published messages in {self.where}: {exc}",
                             reason="store_write") from exc
        return n

    def unwritten(self, streams: Sequence[str]) -> list[Published]:
        """The recorded messages of ``streams`` not yet written out, in order."""
        self._ensure_positions()
        if not streams:
            return []
        marks = ", ".join("?" for _ in streams)
        with self.reading() as c:
            rows = self.run(c, f"SELECT seq, msg_key, stream, kind, body, written FROM published WHERE written = 0 "
                             f"AND stream IN ({marks}) ORDER BY seq", tuple(streams)).fetchall()
        return [_published(r) for r in rows]

    def published_since(self, after_seq: int, limit: int = 10_000) -> list[Published]:
        """Recorded messages (written out or not) with a sequence number over ``after_seq``, in order."""
        self._ensure_positions()
        with self.reading() as c:
            rows = self.run(c, "SELECT seq, msg_key, stream, kind, body, written FROM published WHERE seq > ? "
                             "ORDER BY seq LIMIT ?", (after_seq, max(0, limit))).fetchall()
        return [_published(r) for r in rows]

    def seq_of(self, key_prefix: str) -> int | None:
        """The first sequence number of a message whose key starts with ``key_prefix`` (``verdict:<id>:``)."""
        self._ensure_positions()
        escaped = key_prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        with self.reading() as c:
            row = self.run(c, "SELECT MIN(seq) FROM published WHERE msg_key LIKE ? ESCAPE '\\'",
                            (escaped + "%",)).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def last_advice(self, history: str) -> str | None:
        """The id of the last advice published for ``history``."""
        self._ensure_positions()
        with self.reading() as c:
            row = self.run(c, "SELECT advice_id FROM advice_ledger WHERE history = ?",
                            (self._key(history),)).fetchone()
        return None if row is None else str(row[0])


def _published(r: Any) -> Published:
    return Published(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), bool(r[5]))


class MemoryLedger:
    """The same for :class:`~watcher.store.memory.MemoryStore` (nothing survives the process)."""

    _carried_ledger: tuple[str, LedgerBuilder] | None = None

    if TYPE_CHECKING:  # supplied by MemoryStore
        _lock: threading.RLock

    def _ledger(self) -> tuple[dict[str, Published], dict[str, str]]:
        got: tuple[dict[str, Published], dict[str, str]] | None = self.__dict__.get("_ledger_rows")
        if got is None:
            got = self.__dict__.setdefault("_ledger_rows", ({}, {}))
        return got

    def carry_ledger(self, stream: str, build: LedgerBuilder) -> None:
        self._carried_ledger = (stream, build)

    def _write_ledger(self, c: Any, verdicts: Sequence[Verdict]) -> None:
        if self._carried_ledger is not None and verdicts:
            stream, build = self._carried_ledger
            self._insert(stream, build(verdicts))

    def _insert(self, stream: str, messages: Sequence[Message]) -> int:
        rows, _ = self._ledger()
        n = 0
        for m in messages:
            if m.key not in rows:
                seq = self.__dict__["_ledger_seq"] = self.__dict__.get("_ledger_seq", 0) + 1
                rows[m.key] = Published(seq, m.key, stream, m.kind, m.body, False)
                n += 1
        return n

    def record(self, stream: str, messages: Sequence[Message] = (), *, advice: Sequence[tuple[str, str]] = (),
               written: Sequence[int] = (), keep: int = 0, also: Callable[[Any], None] | None = None) -> int:
        with self._lock:
            n = self._insert(stream, messages)
            rows, last = self._ledger()
            last.update(advice)
            done = set(written)
            for key, p in list(rows.items()):
                if p.seq in done:
                    rows[key] = Published(p.seq, p.key, p.stream, p.kind, p.body, True)
            if written and keep > 0:
                cut = max(written) - keep
                for key, p in list(rows.items()):
                    if p.written and p.seq <= cut:
                        del rows[key]
            if also is not None:
                also(None)
            return n

    def unwritten(self, streams: Sequence[str]) -> list[Published]:
        with self._lock:
            want = set(streams)
            return sorted((p for p in self._ledger()[0].values() if not p.written and p.stream in want),
                          key=lambda p: p.seq)

    def published_since(self, after_seq: int, limit: int = 10_000) -> list[Published]:
        with self._lock:
            return sorted((p for p in self._ledger()[0].values() if p.seq > after_seq),
                          key=lambda p: p.seq)[:max(0, limit)]

    def seq_of(self, key_prefix: str) -> int | None:
        with self._lock:
            return min((p.seq for p in self._ledger()[0].values() if p.key.startswith(key_prefix)), default=None)

    def last_advice(self, history: str) -> str | None:
        with self._lock:
            return self._ledger()[1].get(history)
