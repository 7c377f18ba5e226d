"""Gold-standard directories: ``labels.tsv`` + ``html/<id>/<date>.html``.

The format of AlNoamany et al.'s off-topic gold standard (columns ``id date
URI label``; label 1 = on-topic, 0 = off-topic).  Each TimeMap id is one
history (``gold:<id>``), because one TimeMap holds several spellings of its
URL that canonicalisation alone might not join.  Rows repeated in the labels
file are read once (by ``(id, date)``).
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..archive.detect import gold_labels_file
from ..archive.index import parse_warc_date
from ..canonical import original_url
from ..errors import InputError
from ..model import Capture

log = logging.getLogger(__name__)

_MAGIC = ((b"%PDF", "application/pdf"), (b"\x89PNG", "image/png"), (b"GIF8", "image/gif"),
          (b"\xff\xd8\xff", "image/jpeg"))


_COLUMNS = ("id", "date", "uri", "label")  # matched case-insensitively, in any order


@dataclass(frozen=True, slots=True)
class GoldRow:
    id: str
    date: str
    uri: str
    label: int


def read_labels(path: Path) -> list[GoldRow]:
    """Rows of a labels file (a ``labels.tsv`` path or a gold directory),
    deduplicated by ``(id, date)`` in file order."""
    if path.is_dir():
        found = gold_labels_file(path)
        if found is None:
            raise InputError(f"{path}: no labels.tsv in this directory", reason="gold_labels")
        path = found
    try:
        # utf-8-sig: a labels file saved by a spreadsheet starts with a BOM, which would
        # otherwise become part of the first column's name.
        fh = path.open(newline="", encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        raise InputError(f"{path}: cannot read labels: {exc}", reason="unreadable") from exc
    rows: list[GoldRow] = []
    seen: set[tuple[str, str]] = set()
    with fh:
        reader = csv.reader(fh, delimiter="\t")
        header = [name.strip().lower() for name in next(reader, [])]
        missing = [name for name in _COLUMNS if name not in header]
        if missing:
            raise InputError(f"{path}: labels file lacks columns {missing}", reason="gold_labels")
        col = {name: header.index(name) for name in _COLUMNS}
        for lineno, rec in enumerate(reader, 2):
            if not any(field.strip() for field in rec):
                continue  # a blank line (a trailing one, or between blocks)
            get = {name: (rec[i].strip() if i < len(rec) else "") for name, i in col.items()}
            key = (get["id"], get["date"])
            if key in seen:
                continue
            try:
                label = int(get["label"])
            except ValueError:
                log.warning("%s:%d: label %r is not 0/1; row skipped", path, lineno, get["label"])
                continue
            seen.add(key)
            rows.append(GoldRow(id=key[0], date=key[1], uri=get["uri"], label=label))
    return rows


def _sniff(content: bytes) -> str:
    for magic, ctype in _MAGIC:
        if content.startswith(magic):
            return ctype
    return "text/html"


def iter_gold(directory: str, rows: list[GoldRow] | None = None) -> Iterator[tuple[str, list[Capture]]]:
    """Yield ``("gold:<id>", captures)`` per TimeMap id, ids in numeric order
    (``rows``: the directory's labels when already read)."""
    root = Path(directory)
    labels = gold_labels_file(root)
    if labels is None:
        raise InputError(f"{directory}: not a gold-standard directory (no labels.tsv)", reason="gold_labels")
    if rows is None:
        rows = read_labels(labels)
    by_id: dict[str, list[GoldRow]] = {}
    for row in rows:
        by_id.setdefault(row.id, []).append(row)
    for tid in sorted(by_id, key=lambda s: (not s.isdigit(), int(s) if s.isdigit() else 0, s)):
        history = f"gold:{tid}"
        captures: list[Capture] = []
        for row in by_id[tid]:
            ts = parse_warc_date(row.date)
            if ts is None:
                log.warning("%s: id %s has an unusable date %r; row skipped", labels, tid, row.date)
                continue
            path = root / "html" / tid / f"{row.date}.html"
            content: bytes | None
            error: str | None = None
            try:
                content = path.read_bytes()
            except OSError:
                content, error = None, "missing_file"
                log.warning("%s: no HTML file for id %s date %s", root, tid, row.date)
            captures.append(Capture(
                url=original_url(row.uri),
                timestamp=ts,
                content=content,
                content_type=_sniff(content) if content else None,
                uri_m=row.uri,
                source="gold",
                history=history,
                error=error,
                label=row.label,
                locator=f"file:{path.resolve()}" if content is not None else None,
            ))
        captures.sort(key=lambda c: c.timestamp)
        yield history, captures
