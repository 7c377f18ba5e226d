"""Curator review data kept beside a store's verdicts: labels, the review queue, muted seeds, pins.

Why a module of its own: the verdict layer never reads any of this (a label must not change how a
capture is scored), and the tables live in their own ``review_*`` namespace, created on first use by
:func:`review_data`, so the store's schema version and its migrations stay the verdict layer's.

What is kept, in every backend (SQLite, PostgreSQL, memory):

- ``review_labels``: one row per labelled capture: verdict id and the version the curator saw,
  label, polarity (1 on topic, 0 off topic, NULL for ``blocked``/``unsure``), note, time, reviewer;
- ``review_items``: the review queue, one row per verdict with the columns the queue filters and
  sorts on (severity rank, drift score, profile, language, seed, capture time as 14 digits), derived
  from the ``verdicts`` table by :meth:`SQLReview.sync` -- so a queue page with 100,000 verdicts is
  one indexed query, not 100,000 JSON decodes;
- ``review_sources``: where a capture's bytes can be re-read (a scan result's locator);
- ``review_muted``: seeds the curator muted (the alert path asks :meth:`SQLReview.is_muted`);
- ``review_pins``: captures made the baseline of their history.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import StoreError
from ..model import Verdict, ts14

LABELS = ("on-topic", "off-topic", "drifted", "unchanged", "blocked", "unsure")
# Gold polarity of each label (0 = off topic, 1 = on topic); None: not exported to gold.
POLARITY: dict[str, int | None] = {"on-topic": 1, "off-topic": 0, "drifted": 1, "unchanged": 1, "blocked": None,
                                   "unsure": None}
# Queue order: the classes a curator acts on first.
SEVERITY = ("off-topic", "replaced", "drifted", "blocked", "gone", "moved", "layout", "error", "empty", "minor",
            "unchanged", "baseline")
_RANK = {c: i for i, c in enumerate(SEVERITY)}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS review_items (
    verdict_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    history TEXT NOT NULL,
    seed TEXT NOT NULL,
    url TEXT NOT NULL,
    uri_m TEXT,
    ts TEXT NOT NULL,
    change TEXT NOT NULL,
    status TEXT NOT NULL,
    profile TEXT NOT NULL,
    language TEXT NOT NULL,
    drift DOUBLE PRECISION NOT NULL,
    severity INTEGER NOT NULL,
    flagged INTEGER NOT NULL,
    title TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS review_items_order ON review_items (severity, drift DESC, ts, verdict_id, language, profile,
    change);
CREATE INDEX IF NOT EXISTS review_items_history ON review_items (history, ts);
CREATE INDEX IF NOT EXISTS review_items_change ON review_items (change);
CREATE INDEX IF NOT EXISTS review_items_language ON review_items (language, change);
CREATE INDEX IF NOT EXISTS review_items_ts ON review_items (ts, change);
CREATE INDEX IF NOT EXISTS review_items_profile ON review_items (profile, change);
CREATE INDEX IF NOT EXISTS review_items_seed ON review_items (seed);
CREATE INDEX IF NOT EXISTS review_items_url ON review_items (url);
CREATE TABLE IF NOT EXISTS review_labels (
    verdict_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    label TEXT NOT NULL,
    polarity INTEGER,
    note TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    reviewer TEXT NOT NULL,
    disagrees INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS review_labels_disagree ON review_labels (disagrees) WHERE disagrees = 1;
CREATE TABLE IF NOT EXISTS review_sources (verdict_id TEXT PRIMARY KEY, locator TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS review_muted (seed TEXT PRIMARY KEY, at DOUBLE PRECISION NOT NULL, reviewer TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS review_pins (
    history TEXT PRIMARY KEY, ts TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, reviewer TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS review_outbox (
    verdict_id TEXT NOT NULL, version INTEGER NOT NULL, at DOUBLE PRECISION NOT NULL, PRIMARY KEY (verdict_id, version)
)
"""
_OUTBOX = ("INSERT INTO review_outbox (verdict_id, version, at) VALUES (?, ?, ?) "
           "ON CONFLICT (verdict_id, version) DO NOTHING")


@dataclass(frozen=True, slots=True)
class Label:
    verdict_id: str
    version: int
    label: str
    note: str
    at: float
    reviewer: str

    @property
    def polarity(self) -> int | None:
        return POLARITY.get(self.label)


@dataclass(frozen=True, slots=True)
class Item:
    """One queue row (what the list shows; the detail view reads the verdict itself)."""

    verdict_id: str
    version: int
    history: str
    seed: str
    url: str
    uri_m: str | None
    ts: str
    change: str
    status: str
    profile: str
    language: str
    drift: float
    title: str = ""
    reason: str = ""
    label: str | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class Query:
    """The queue's filters (every one optional), page and page size."""

    change: str = ""
    profile: str = ""
    where: str = ""  # a seed URL, or a SURT (history key) prefix
    language: str = ""
    date_from: str = ""  # YYYY-MM-DD or 14 digits, inclusive
    date_to: str = ""
    reviewed: str = ""  # "yes", "no" or "" (either)
    disagree: bool = False
    page: int = 1
    size: int = 50


@dataclass(slots=True)
class Page:
    items: list[Item]
    total: int
    counts: dict[str, int] = field(default_factory=dict)


def check_label(label: str) -> str:
    if label not in POLARITY:
        raise StoreError(f"unknown label {label!r}; expected one of {', '.join(LABELS)}", reason="review_label")
    return label


def _ts_bound(text: str, end: bool) -> str:
    digits = "".join(ch for ch in text if ch.isdigit())[:14]
    return digits.ljust(14, "9" if end else "0") if digits else ""


def item_row(v: Mapping[str, Any]) -> tuple[Any, ...]:
    """The ``review_items`` row of a verdict given as its stored JSON mapping (no full decode)."""
    from .codec import parse_iso

    ts = ts14(parse_iso(str(v["capture_time"])))
    change = str(v.get("change") or "")
    drift = v.get("drift_score")
    return (str(v["verdict_id"]), int(v.get("version") or 1), str(v["history"]), str(v.get("seed") or v.get("url")),
            str(v.get("url") or ""), v.get("uri_m"), ts, change, str(v.get("status") or ""),
            str(v.get("profile") or "collection"), str(v.get("language") or ""),
            float(drift) if isinstance(drift, int | float) else 0.0, _RANK.get(change, len(SEVERITY)),
            int(v.get("status") == "off-topic"), str(v.get("title") or "")[:300], str(v.get("reason") or "")[:300])


def _item(row: Sequence[Any]) -> Item:
    return Item(verdict_id=row[0], version=int(row[1]), history=row[2], seed=row[3], url=row[4], uri_m=row[5],
                ts=row[6], change=row[7], status=row[8], profile=row[9], language=row[10], drift=float(row[11]),
                title=row[12], reason=row[13], label=row[14], note=row[15] or "")


# A label disagrees with driftline when its polarity (1 on topic) equals the verdict's flag (1 off topic).
_DISAGREE = ("UPDATE review_labels SET disagrees = COALESCE((SELECT CASE WHEN review_labels.polarity = i.flagged "
             "THEN 1 ELSE 0 END FROM review_items i WHERE i.verdict_id = review_labels.verdict_id), 0)")

_ITEM_COLS = ("i.verdict_id, i.version, i.history, i.seed, i.url, i.uri_m, i.ts, i.change, i.status, i.profile, "
              "i.language, i.drift, i.title, i.reason, l.label, l.note")


class SQLReview:
    """Review data in a SQL store (:class:`watcher.store.sqlbase.SQLStore`: SQLite or PostgreSQL),
    through the store's own connection, lock and transactions."""

    def __init__(self, store: Any) -> None:
        self.store = store
        # A history-key prefix as a range where the key column sorts byte-wise (SQLite's BINARY; the
        # index serves it), else LIKE (PostgreSQL's text sorts by the database's locale).
        from .sqlite import SQLiteStore

        self._prefix_range = isinstance(store, SQLiteStore)
        try:
            with store.transaction() as c:
                for stmt in _SCHEMA.split(";"):
                    if stmt.strip():
                        store.run(c, stmt)
        except store.DB_ERRORS as exc:
            raise StoreError(f"cannot create the review tables in {store.where}: {exc}", reason="store_open") from exc

    def _write(self, what: str, statements: Iterable[tuple[str, Sequence[Any]]]) -> None:
        try:
            with self.store.transaction() as c:
                for sql, params in statements:
                    self.store.run(c, sql, params)
        except self.store.DB_ERRORS as exc:
            raise StoreError(f"cannot store {what} in {self.store.where}: {exc}", reason="store_write") from exc

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.store.reading() as c:
            return list(self.store.run(c, sql, params).fetchall())

    # -- the queue ------------------------------------------------------------

    def sync(self) -> int:
        """Bring ``review_items`` up to the ``verdicts`` table (new verdicts, and those whose class or
        status a later version changed); returns the rows written."""
        rows = self._rows(
            "SELECT v.json FROM verdicts v LEFT JOIN review_items i ON i.verdict_id = v.verdict_id "
            "WHERE i.verdict_id IS NULL OR i.change <> v.change OR i.status <> v.status")
        items = [item_row(json.loads(r[0])) for r in rows]
        self.put_items(items)
        return len(items)

    def put_items(self, items: Sequence[tuple[Any, ...]]) -> None:
        sql = ("INSERT INTO review_items (verdict_id, version, history, seed, url, uri_m, ts, change, status, profile, "
               "language, drift, severity, flagged, title, reason) VALUES (" + ", ".join("?" * 16) + ") "
               "ON CONFLICT (verdict_id) DO UPDATE SET version = excluded.version, change = excluded.change, "
               "status = excluded.status, drift = excluded.drift, severity = excluded.severity, "
               "flagged = excluded.flagged, title = excluded.title, reason = excluded.reason")
        for start in range(0, len(items), 5000):
            self._write("review items", ((sql, it) for it in items[start:start + 5000]))
        if items:  # a new version may have changed driftline's side of a disagreement
            self._write("review labels", [(_DISAGREE, ())])

    @staticmethod
    def _base(labelled: bool) -> str:
        """The FROM clause: the labels first when a filter needs one (they are few; CROSS JOIN keeps that
        order in SQLite's planner, and is a plain join in PostgreSQL's), else the queue rows."""
        return "FROM review_labels l CROSS JOIN review_items i" if labelled else "FROM review_items i"

    def _where(self, q: Query, with_change: bool, labelled: bool = False) -> tuple[str, list[Any]]:
        parts: list[str] = ["i.verdict_id = l.verdict_id"] if labelled else []
        args: list[Any] = []
        if with_change and q.change:
            parts.append("i.change = ?")
            args.append(q.change)
        if q.profile:
            parts.append("i.profile = ?")
            args.append(q.profile)
        if q.where:
            if "://" in q.where:
                parts.append("(i.seed = ? OR i.url = ?)")
                args += [q.where, q.where]
            elif self._prefix_range:
                parts.append("i.history >= ? AND i.history < ?")
                args += [q.where, q.where + "\U0010ffff"]
            else:
                parts.append("i.history LIKE ? ESCAPE '\\'")
                args.append(q.where.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
        if q.language:
            parts.append("i.language = ?")
            args.append(q.language)
        if q.date_from:
            parts.append("i.ts >= ?")
            args.append(_ts_bound(q.date_from, False))
        if q.date_to:
            parts.append("i.ts <= ?")
            args.append(_ts_bound(q.date_to, True))
        if q.reviewed == "no" and not q.disagree:
            parts.append("NOT EXISTS (SELECT 1 FROM review_labels n WHERE n.verdict_id = i.verdict_id)")
        if q.disagree:
            parts.append("l.disagrees = 1")
        return (" WHERE " + " AND ".join(parts)) if parts else "", args

    def queue(self, q: Query) -> Page:
        """One page of the queue and the counts per class under the same filters (the class filter aside).

        The page's ids are chosen on ``review_items`` alone (in SQLite by a scan of the queue index in
        page order, which holds every column those filters read, so it stops at the page), or from the
        labels when a filter needs one; the labels of the page's rows are then read for those rows only."""
        if q.reviewed == "no" and q.disagree:  # a disagreement needs a label: nothing is both
            return Page([], 0, {})
        labelled = q.reviewed == "yes" or q.disagree
        where, args = self._where(q, True, labelled)
        size = max(1, min(q.size, 500))
        offset = (max(1, q.page) - 1) * size
        order = "ORDER BY i.severity, i.drift DESC, i.ts, i.verdict_id"
        base = self._base(labelled)
        if not labelled and not q.where and self._prefix_range:
            base += " INDEXED BY review_items_order"
        rows = self._rows(
            f"SELECT {_ITEM_COLS} FROM review_items i LEFT JOIN review_labels l ON l.verdict_id = i.verdict_id "
            f"WHERE i.verdict_id IN (SELECT i.verdict_id {base}{where} {order} LIMIT ? OFFSET ?) {order}",
            [*args, size, offset])
        counts = self._counts(q)
        total = counts.get(q.change, 0) if q.change else sum(counts.values())
        return Page([_item(r) for r in rows], total, counts)

    def _counts(self, q: Query) -> dict[str, int]:
        """Verdicts per class under ``q``'s filters but its class.  "Not reviewed" is counted as all less
        the reviewed (an anti-join over every verdict costs a scan; the labels are few)."""
        def count(query: Query) -> dict[str, int]:
            labelled = query.reviewed == "yes" or query.disagree
            cwhere, cargs = self._where(query, False, labelled)
            return {str(r[0]): int(r[1]) for r in self._rows(
                f"SELECT i.change, COUNT(*) {self._base(labelled)}{cwhere} GROUP BY i.change", cargs)}

        if q.reviewed != "no":
            return count(q)
        every = count(dataclasses.replace(q, reviewed=""))
        done = count(dataclasses.replace(q, reviewed="yes"))
        return {c: n - done.get(c, 0) for c, n in every.items() if n - done.get(c, 0) > 0}

    def timeline(self, history: str) -> list[Item]:
        rows = self._rows(f"SELECT {_ITEM_COLS} FROM review_items i LEFT JOIN review_labels l "
                          "ON l.verdict_id = i.verdict_id WHERE i.history = ? ORDER BY i.ts, i.verdict_id", (history,))
        return [_item(r) for r in rows]

    def item(self, verdict_id: str) -> Item | None:
        rows = self._rows(f"SELECT {_ITEM_COLS} FROM review_items i LEFT JOIN review_labels l "
                          "ON l.verdict_id = i.verdict_id WHERE i.verdict_id = ?", (verdict_id,))
        return _item(rows[0]) if rows else None

    # -- labels ---------------------------------------------------------------

    def set_label(self, verdict_id: str, version: int, label: str, note: str | None = None,
                  reviewer: str = "curator") -> Label:
        """Store (or replace) the label of a capture; ``note`` None keeps the note it had."""
        check_label(label)
        old = self.get_label(verdict_id)
        keep = old.note if (note is None and old is not None) else (note or "")
        lab = Label(verdict_id, version, label, keep, time.time(), reviewer)
        self._write("a label", [(
            "INSERT INTO review_labels (verdict_id, version, label, polarity, note, at, reviewer) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (verdict_id) DO UPDATE SET version = excluded.version, "
            "label = excluded.label, polarity = excluded.polarity, note = excluded.note, at = excluded.at, "
            "reviewer = excluded.reviewer",
            (lab.verdict_id, lab.version, lab.label, lab.polarity, lab.note, lab.at, lab.reviewer)),
            (_DISAGREE + " WHERE verdict_id = ?", (verdict_id,))])
        return lab

    def get_label(self, verdict_id: str) -> Label | None:
        rows = self._rows("SELECT verdict_id, version, label, note, at, reviewer FROM review_labels "
                          "WHERE verdict_id = ?", (verdict_id,))
        return Label(rows[0][0], int(rows[0][1]), rows[0][2], rows[0][3], float(rows[0][4]), rows[0][5]) \
            if rows else None

    def labels(self) -> list[tuple[Label, Item | None]]:
        """Every label with its queue row (None when the verdict is gone), oldest label first."""
        rows = self._rows(
            "SELECT l.verdict_id, l.version, l.label, l.note, l.at, l.reviewer, i.verdict_id, i.version, i.history, "
            "i.seed, i.url, i.uri_m, i.ts, i.change, i.status, i.profile, i.language, i.drift, i.title, i.reason "
            "FROM review_labels l LEFT JOIN review_items i ON i.verdict_id = l.verdict_id ORDER BY l.at, l.verdict_id")
        out: list[tuple[Label, Item | None]] = []
        for r in rows:
            lab = Label(r[0], int(r[1]), r[2], r[3], float(r[4]), r[5])
            it = None if r[6] is None else _item([*r[6:20], lab.label, lab.note])
            out.append((lab, it))
        return out

    def agreement(self) -> dict[str, tuple[int, int]]:
        """Per driftline change class: (captures the curator labelled with a polarity, of them agreeing)."""
        rows = self._rows("SELECT i.change, COUNT(*), SUM(CASE WHEN l.polarity <> i.flagged THEN 1 ELSE 0 END) "
                          "FROM review_labels l CROSS JOIN review_items i WHERE i.verdict_id = l.verdict_id "
                          "AND l.polarity IS NOT NULL GROUP BY i.change")
        return {str(r[0]): (int(r[1]), int(r[2] or 0)) for r in rows}

    def reviewed(self) -> int:
        return int(self._rows("SELECT COUNT(*) FROM review_labels")[0][0])

    # -- sources, mutes, pins -------------------------------------------------

    def set_sources(self, locators: Mapping[str, str]) -> None:
        sql = ("INSERT INTO review_sources (verdict_id, locator) VALUES (?, ?) "
               "ON CONFLICT (verdict_id) DO UPDATE SET locator = excluded.locator")
        items = list(locators.items())
        for start in range(0, len(items), 5000):
            self._write("capture sources", ((sql, kv) for kv in items[start:start + 5000]))

    def source(self, verdict_id: str) -> str | None:
        rows = self._rows("SELECT locator FROM review_sources WHERE verdict_id = ?", (verdict_id,))
        return str(rows[0][0]) if rows else None

    def mute(self, seed: str, muted: bool, reviewer: str = "curator") -> None:
        if muted:
            self._write("a muted seed", [("INSERT INTO review_muted (seed, at, reviewer) VALUES (?, ?, ?) "
                                          "ON CONFLICT (seed) DO NOTHING", (seed, time.time(), reviewer))])
        else:
            self._write("a muted seed", [("DELETE FROM review_muted WHERE seed = ?", (seed,))])

    def is_muted(self, seed: str) -> bool:
        return bool(self._rows("SELECT 1 FROM review_muted WHERE seed = ?", (seed,)))

    def muted(self) -> list[str]:
        return [str(r[0]) for r in self._rows("SELECT seed FROM review_muted ORDER BY seed")]

    def set_pin(self, history: str, ts: str, reviewer: str = "curator") -> None:
        self._write("a pinned baseline", [(
            "INSERT INTO review_pins (history, ts, at, reviewer) VALUES (?, ?, ?, ?) ON CONFLICT (history) "
            "DO UPDATE SET ts = excluded.ts, at = excluded.at, reviewer = excluded.reviewer",
            (history, ts, time.time(), reviewer))])

    def pins(self) -> dict[str, str]:
        return {str(r[0]): str(r[1]) for r in self._rows("SELECT history, ts FROM review_pins")}

    def replace_verdicts(self, verdicts: Sequence[Verdict]) -> None:
        """Store new versions of stored verdicts (a re-scoring the curator asked for) and their queue rows."""
        from .codec import encode_verdict, verdict_to_dict

        now = time.time()
        statements: list[tuple[str, Sequence[Any]]] = []
        for v in verdicts:  # the new version and its place in the outbox: one transaction
            statements.append(("UPDATE verdicts SET json = ?, status = ?, change = ? WHERE verdict_id = ?",
                               (encode_verdict(v), v.status, v.change, v.verdict_id)))
            statements.append((_OUTBOX, (v.verdict_id, v.version, now)))
        self._write("re-scored verdicts", statements)
        self.put_items([item_row(verdict_to_dict(v)) for v in verdicts])

    # -- re-scored versions owed to the results topic -----------------------------

    def owed(self, limit: int = 500) -> list[tuple[str, int]]:
        """Re-scored verdict versions (id, version) not yet published: a running ``driftline run``
        on this store sends them to its results topic (:meth:`published` once acknowledged), so a
        pin made on the review page reaches the stream's readers as new versions."""
        return [(str(r[0]), int(r[1])) for r in self._rows(
            "SELECT verdict_id, version FROM review_outbox ORDER BY at, verdict_id, version LIMIT ?", (limit,))]

    def published(self, owed: Sequence[tuple[str, int]]) -> None:
        self._write("published versions", [("DELETE FROM review_outbox WHERE verdict_id = ? AND version = ?", o)
                                           for o in owed])


class MemoryReview(SQLReview):
    """Review data of a :class:`watcher.store.memory.MemoryStore` (batch runs, tests): the same
    semantics, held in an in-memory SQLite database beside the store's dictionaries."""

    def __init__(self, store: Any) -> None:
        from .sqlite import SQLiteStore

        self._mem = SQLiteStore(":memory:")
        self._source = store
        self._sync_lock = threading.Lock()
        super().__init__(self._mem)

    def sync(self) -> int:
        from .codec import verdict_to_dict

        with self._sync_lock:
            verdicts = list(self._source.all_verdicts())
        have = {(r[0], r[1], r[2]) for r in self._rows("SELECT verdict_id, change, status FROM review_items")}
        fresh = [item_row(verdict_to_dict(v)) for v in verdicts if (v.verdict_id, v.change, v.status) not in have]
        self.put_items(fresh)
        return len(fresh)

    def replace_verdicts(self, verdicts: Sequence[Verdict]) -> None:
        from .codec import verdict_to_dict

        self._source.replace_verdicts(verdicts)
        self._write("re-scored verdicts", [(_OUTBOX, (v.verdict_id, v.version, time.time())) for v in verdicts])
        self.put_items([item_row(verdict_to_dict(v)) for v in verdicts])


_MEMORY: weakref.WeakKeyDictionary[Any, MemoryReview] = weakref.WeakKeyDictionary()


def review_data(store: Any) -> SQLReview:
    """The review data of ``store`` (any backend), its tables created on first use."""
    from .memory import MemoryStore
    from .sqlbase import SQLStore

    if isinstance(store, MemoryStore):
        if store not in _MEMORY:  # one per store: the alert path and the page see the same mutes
            _MEMORY[store] = MemoryReview(store)
        return _MEMORY[store]
    if isinstance(store, SQLStore):
        return SQLReview(store)
    raise StoreError(f"a {type(store).__name__} keeps no review data", reason="store_backend")


def seed_muted(store: Any, seed: str) -> bool:
    """Did the curator mute ``seed`` (the alert path asks before it sends an alert)?  A store where
    nobody reviewed anything has no review tables: nothing is muted there."""
    from .memory import MemoryStore
    from .sqlbase import SQLStore

    if isinstance(store, MemoryStore):
        review = _MEMORY.get(store)
        return review is not None and review.is_muted(seed)
    if not isinstance(store, SQLStore):
        return False
    try:
        with store.reading() as c:
            return store.run(c, "SELECT 1 FROM review_muted WHERE seed = ?", (seed,)).fetchone() is not None
    except StoreError:  # no review_muted table: never reviewed
        return False


def owed_versions(store: Any) -> SQLReview | None:
    """The review data of ``store`` when a curator has re-scored anything there (its outbox may hold
    versions owed to the results topic), else ``None``: a store nobody reviewed gets no tables."""
    from .memory import MemoryStore
    from .sqlbase import SQLStore

    if isinstance(store, MemoryStore):
        return _MEMORY.get(store)
    if not isinstance(store, SQLStore):
        return None
    try:
        with store.reading() as c:
            store.run(c, "SELECT 1 FROM review_outbox LIMIT 1").fetchone()
    except StoreError:  # no review tables: never reviewed
        return None
    return SQLReview(store)
