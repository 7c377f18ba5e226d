"""What ``driftline review`` and ``driftline labels`` open: a store, or a scan result imported into one.

A store is named by a PostgreSQL DSN (``postgresql://...``) or a SQLite file (recognised by its
header, not its name).  A scan result (``driftline scan`` JSON in OTMT's schema, or JSONL) is read
once into a review store -- ``--store`` when given, else ``<result file>.review.sqlite`` beside it --
so labels, pins and mutes persist between sessions; its verdicts are stored as they are (an import
is idempotent: a verdict already there is kept, with its labels), and each capture's ``source``
locator (where its bytes can be re-read) goes to ``review_sources``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..config import StoreConfig
from ..errors import InputError
from ..model import Verdict
from ..output.common import DRIFTLINE_KEY, MEASURES_KEY
from ..store import BaselineStore, open_store
from ..store.codec import verdict_from_dict
from ..store.labels import SQLReview, review_data

log = logging.getLogger(__name__)

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_dsn(spec: str) -> bool:
    """A PostgreSQL connection string: a URL, or libpq's ``key=value`` form (``host=... dbname=...``)."""
    return spec.startswith(("postgresql://", "postgres://")) or (
        not Path(spec).exists() and any(k in spec for k in ("host=", "dbname=")))


def is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def open_store_spec(spec: str, *, create: bool = True) -> BaselineStore:
    """The store a ``--store`` value names (a DSN or a SQLite path)."""
    if is_dsn(spec):
        from pydantic import SecretStr

        return open_store(StoreConfig(backend="postgres", dsn=SecretStr(spec)))
    path = Path(spec)
    if not create and not path.exists():
        raise InputError(f"{spec}: no such store", reason="unreadable")
    if path.exists() and path.stat().st_size > 0 and not is_sqlite(path):
        raise InputError(f"{spec}: not a SQLite store", reason="unknown_input")
    return open_store(StoreConfig(backend="sqlite", path=str(path)))


def _measures(entry: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, m in (entry.get(MEASURES_KEY) or {}).items():
        out[name] = {"name": name, "score": m.get("comparison score"), "status": m.get("topic status", "n/a"),
                     "threshold": m.get("threshold")}
    return out


def _verdict(entry: Mapping[str, Any]) -> tuple[Verdict, str | None] | None:
    block = entry.get(DRIFTLINE_KEY)
    if not isinstance(block, dict) or "verdict_id" not in block:
        return None
    d = dict(block)
    d["measures"] = _measures(entry)
    source = d.pop("source", None)
    locator = source.get("locator") if isinstance(source, dict) else None
    return verdict_from_dict(d), locator if isinstance(locator, str) else None


def iter_result(path: Path) -> Iterator[tuple[Verdict, str | None]]:
    """Verdicts (and source locators) of a scan result, JSON or JSONL (by content)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read scan result: {exc}", reason="unreadable") from exc
    try:
        doc = json.loads(text)
        entries: Iterator[Mapping[str, Any]] = (
            e for block in doc.values() if isinstance(block, dict)
            for k, e in block.items() if not k.startswith("__") and isinstance(e, dict))
    except json.JSONDecodeError:
        try:
            # by "\n" only: JSON strings hold U+2028, U+2029 and NEL unescaped (str.splitlines() splits there)
            entries = iter([json.loads(line) for line in text.split("\n") if line.strip()])
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: neither a store nor a driftline scan result (JSON or JSONL): {exc}",
                             reason="unknown_input") from exc
    for e in entries:
        got = _verdict(e)
        if got is not None:
            yield got


def import_result(path: Path, store: BaselineStore, review: SQLReview) -> int:
    """Store the verdicts of a scan result (those not stored yet); returns how many were new."""
    n = seen = 0
    locators: dict[str, str] = {}
    for v, locator in iter_result(path):
        seen += 1
        if store.put_verdict(v):
            n += 1
        if locator:
            locators[v.verdict_id] = locator
    if not seen:
        raise InputError(f"{path}: holds no driftline verdicts", reason="unknown_input")
    review.set_sources(locators)
    return n


def open_input(spec: str, store_spec: str | None = None) -> tuple[BaselineStore, SQLReview, str, Path | None]:
    """Open ``driftline review INPUT``: (store, its review data, where it lives, the result file if any)."""
    if is_dsn(spec) or is_sqlite(Path(spec)):
        if store_spec:
            raise InputError("--store is for a scan result; INPUT is a store already", reason="usage")
        store = open_store_spec(spec, create=False)
        where = spec if not is_dsn(spec) else getattr(store, "where", "PostgreSQL store")
        review = review_data(store)
        review.sync()
        return store, review, str(where), None
    path = Path(spec)
    if not path.is_file():
        raise InputError(f"{spec}: no such store or scan result", reason="unreadable")
    target = store_spec or f"{path}.review.sqlite"
    store = open_store_spec(target)
    review = review_data(store)
    n = import_result(path, store, review)
    log.info("%s: %d new verdicts imported into %s", path, n, target)
    review.sync()
    where = getattr(store, "where", target) if is_dsn(target) else target
    return store, review, str(where), path
