"""The watched DOIs and their check results, in the project's database.

Why the baseline store's database: one file (SQLite, ``store.path``) or one
server (PostgreSQL, ``store.dsn``) holds everything driftline keeps, so a
deployment backs up, moves and scales one thing.  The connection handling
(one connection under a lock, write transactions, the driver's errors turned
into :class:`~watcher.errors.StoreError`, reconnects on PostgreSQL) is the
store's own (:class:`~watcher.store.sqlbase.SQLStore`); this module adds its
tables, written in SQL both engines accept (``?`` placeholders, ``TEXT``
times in fixed-width UTC so they sort as text).

Tables: ``doi_entries`` (what is watched: DOI, expected title, landing URL,
interval, tags, where it came from), ``doi_imports`` (when each registry
import last ran, for ``import --since``), ``doi_state`` (the latest outcome
per DOI, its first drift and its run of consecutive failures) and
``doi_checks`` (one row per check: the DataCite-style link-check record).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..config import StoreConfig
from ..errors import StoreError
from ..store.base import BaselineStore
from ..store.codec import parse_iso
from ..store.sqlbase import SQLStore
from ..store.sqlite import time_key
from .lists import DoiEntry

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS doi_entries (
    doi TEXT PRIMARY KEY,
    title TEXT,
    landing_url TEXT,
    interval_s INTEGER,
    tags TEXT NOT NULL,
    source TEXT NOT NULL,
    added TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS doi_imports (
    source TEXT PRIMARY KEY,
    last_run TEXT NOT NULL,
    records INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS doi_state (
    doi TEXT PRIMARY KEY,
    last_check TEXT NOT NULL,
    outcome TEXT NOT NULL,
    http_status INTEGER,
    final_url TEXT,
    change TEXT,
    reason TEXT,
    first_drift TEXT,
    failures INTEGER NOT NULL,
    failure_kind TEXT,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS doi_checks (
    doi TEXT NOT NULL,
    check_time TEXT NOT NULL,
    outcome TEXT NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (doi, check_time)
);
"""

#: Change classes that start (or continue) a drift: the first one's time is kept.
DRIFT_CHANGES = frozenset({"drifted", "replaced", "gone", "moved"})
#: Outcomes that are failures to observe the page (counted for alerting).
FAILURE_OUTCOMES = frozenset({"not_found", "blocked", "timeout", "dns_error", "server_error", "invalid_doi", "error"})


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class DoiState:
    """The latest check of one DOI, as ``driftline doi status`` shows it."""

    doi: str
    last_check: datetime
    outcome: str
    http_status: int | None
    final_url: str | None
    change: str | None
    reason: str | None
    first_drift: datetime | None
    failures: int
    failure_kind: str | None
    record: Mapping[str, Any]


class DoiRegistry:
    """The DOI tables on an open :class:`SQLStore` (owned: :meth:`close` closes it)."""

    def __init__(self, store: SQLStore, owner: BaselineStore | None = None) -> None:
        self.store = store
        self._owner = owner
        with self._tx() as c:
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    store.run(c, stmt)

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """One write transaction of the store; driver errors become :class:`StoreError`."""
        try:
            with self.store.transaction() as c:
                yield c
        except self.store.DB_ERRORS as exc:
            raise StoreError(f"DOI registry write to {self.store.where} failed: {exc}", reason="store_write") from exc

    # -- entries --------------------------------------------------------------

    def add(self, entries: Iterable[DoiEntry]) -> tuple[int, int]:
        """Insert or update ``entries``; returns (added, updated).  An update
        keeps what the new entry leaves empty (an import without a landing URL
        does not erase one a list gave)."""
        added = updated = 0
        now = time_key(_now())
        with self._tx() as c:
            for e in entries:
                row = self.store.run(c, "SELECT 1 FROM doi_entries WHERE doi = ?", (e.doi,)).fetchone()
                self.store.run(
                    c,
                    "INSERT INTO doi_entries (doi, title, landing_url, interval_s, tags, source, added, updated) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (doi) DO UPDATE SET "
                    "title = COALESCE(excluded.title, doi_entries.title), "
                    "landing_url = COALESCE(excluded.landing_url, doi_entries.landing_url), "
                    "interval_s = COALESCE(excluded.interval_s, doi_entries.interval_s), "
                    "tags = CASE WHEN excluded.tags = '[]' THEN doi_entries.tags ELSE excluded.tags END, "
                    "source = excluded.source, updated = excluded.updated",
                    (e.doi, e.title, e.landing_url, e.interval_s, json.dumps(list(e.tags)), e.source, now, now),
                )
                if row is None:
                    added += 1
                else:
                    updated += 1
        return added, updated

    def remove(self, dois: Iterable[str]) -> int:
        n = 0
        with self._tx() as c:
            for d in dois:
                n += self.store.run(c, "DELETE FROM doi_entries WHERE doi = ?", (d,)).rowcount
                self.store.run(c, "DELETE FROM doi_state WHERE doi = ?", (d,))
        return n

    def get(self, doi: str) -> DoiEntry | None:
        with self.store.reading() as c:
            row = self.store.run(
                c, "SELECT doi, title, landing_url, interval_s, tags, source FROM doi_entries WHERE doi = ?", (doi,)
            ).fetchone()
        return _entry(row) if row is not None else None

    def entries(self, tag: str | None = None) -> list[DoiEntry]:
        with self.store.reading() as c:
            rows = self.store.run(
                c, "SELECT doi, title, landing_url, interval_s, tags, source FROM doi_entries ORDER BY doi"
            ).fetchall()
        out = [_entry(r) for r in rows]
        return [e for e in out if tag in e.tags] if tag else out

    def count(self) -> int:
        with self.store.reading() as c:
            return int(self.store.run(c, "SELECT COUNT(*) FROM doi_entries").fetchone()[0])

    # -- imports --------------------------------------------------------------

    def last_import(self, source: str) -> datetime | None:
        with self.store.reading() as c:
            row = self.store.run(c, "SELECT last_run FROM doi_imports WHERE source = ?", (source,)).fetchone()
        return parse_iso(row[0]) if row is not None else None

    def set_last_import(self, source: str, when: datetime, records: int) -> None:
        with self._tx() as c:
            self.store.run(
                c,
                "INSERT INTO doi_imports (source, last_run, records) VALUES (?, ?, ?) ON CONFLICT (source) DO UPDATE "
                "SET last_run = excluded.last_run, records = excluded.records",
                (source, time_key(when), records),
            )

    # -- checks ---------------------------------------------------------------

    def record_check(self, doi: str, when: datetime, outcome: str, record: Mapping[str, Any]) -> DoiState:
        """Store one check and move the DOI's state on: the run of consecutive
        failures of one kind grows or restarts, the first drift is kept until
        the DOI is ``unchanged``/``layout`` again."""
        at = time_key(when)
        change = record.get("change")
        with self._tx() as c:
            prev = self.store.run(
                c, "SELECT failures, failure_kind, first_drift FROM doi_state WHERE doi = ?", (doi,)
            ).fetchone()
            failures, kind, first = (int(prev[0]), prev[1], prev[2]) if prev is not None else (0, None, None)
            if outcome in FAILURE_OUTCOMES:
                failures, kind = (failures + 1, kind) if kind == outcome else (1, outcome)
            else:
                failures, kind = 0, None
            if change in DRIFT_CHANGES:
                first = first or at
            elif change in ("unchanged", "layout", "baseline"):
                first = None
            body = json.dumps(dict(record), ensure_ascii=False, separators=(",", ":"), default=str)
            self.store.run(
                c,
                "INSERT INTO doi_checks (doi, check_time, outcome, record) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (doi, check_time) DO NOTHING",
                (doi, at, outcome, body),
            )
            self.store.run(
                c,
                "INSERT INTO doi_state (doi, last_check, outcome, http_status, final_url, change, reason, first_drift, "
                "failures, failure_kind, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (doi) DO UPDATE "
                "SET last_check = excluded.last_check, outcome = excluded.outcome, "
                "http_status = excluded.http_status, final_url = excluded.final_url, change = excluded.change, "
                "reason = excluded.reason, first_drift = excluded.first_drift, failures = excluded.failures, "
                "failure_kind = excluded.failure_kind, record = excluded.record",
                (doi, at, outcome, record.get("http_status"), record.get("final_url"), change, record.get("reason"),
                 first, failures, kind, body),
            )
        state = self.state(doi)
        if state is None:  # pragma: no cover - just written
            raise StoreError(f"DOI state of {doi} vanished", reason="store_read")
        return state

    def state(self, doi: str) -> DoiState | None:
        rows = self._states("WHERE doi = ?", (doi,))
        return rows[0] if rows else None

    def states(self) -> list[DoiState]:
        return self._states("ORDER BY doi", ())

    def _states(self, where: str, params: tuple[Any, ...]) -> list[DoiState]:
        with self.store.reading() as c:
            rows = self.store.run(
                c,
                "SELECT doi, last_check, outcome, http_status, final_url, change, reason, first_drift, failures, "
                f"failure_kind, record FROM doi_state {where}",
                params,
            ).fetchall()
        return [
            DoiState(doi=r[0], last_check=parse_iso(r[1]), outcome=r[2], http_status=r[3], final_url=r[4],
                     change=r[5], reason=r[6], first_drift=parse_iso(r[7]) if r[7] else None, failures=int(r[8]),
                     failure_kind=r[9], record=json.loads(r[10]))
            for r in rows
        ]

    def checks(self, doi: str, limit: int = 100) -> list[dict[str, Any]]:
        with self.store.reading() as c:
            rows = self.store.run(
                c, "SELECT record FROM doi_checks WHERE doi = ? ORDER BY check_time DESC LIMIT ?", (doi, limit)
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    @property
    def baselines(self) -> BaselineStore:
        """The baseline store on the same database: the watcher's state and verdicts of the DOIs' checks."""
        if self._owner is None:
            raise StoreError("the DOI registry was opened without its baseline store", reason="store_backend")
        return self._owner

    def close(self) -> None:
        if self._owner is not None:
            self._owner.close()

    def __enter__(self) -> DoiRegistry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _entry(row: Any) -> DoiEntry:
    return DoiEntry(doi=row[0], title=row[1], landing_url=row[2], interval_s=row[3], tags=tuple(json.loads(row[4])),
                    source=row[5])


def open_registry(cfg: StoreConfig) -> DoiRegistry:
    """The registry in the database ``cfg`` names (the ``memory`` backend gets a
    private in-memory SQLite database: nothing outlives the process)."""
    from ..store import open_store
    from ..store.sqlite import SQLiteStore

    store = SQLiteStore(":memory:") if cfg.backend == "memory" else open_store(cfg)
    if not isinstance(store, SQLStore):  # pragma: no cover - every SQL backend is one
        raise StoreError(f"store backend {cfg.backend} has no SQL database", reason="store_backend")
    return DoiRegistry(store, owner=store)
