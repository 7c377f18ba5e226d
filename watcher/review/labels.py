"""The curator's labels out of the store: ``gold`` (what ``driftline eval`` reads) and ``jsonl``.

``gold`` is the published gold standards' tab-separated layout -- header ``id, date, URI, label``,
date 14 digits, label 1 on topic and 0 off topic -- so a collection's own labels score driftline with
the same code as the published ones.  ``off-topic`` is 0; ``on-topic``, ``drifted`` and
``unchanged`` are 1 (a drifted page is still on the collection's topic); ``blocked`` and ``unsure``
say nothing about the topic and stay out of it.  ``jsonl`` keeps every label, with its note, time,
reviewer and the verdict it was given on.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from ..errors import DriftlineError
from ..store.labels import Item, Label, review_data
from .ingest import open_store_spec

GOLD_HEADER = ("id", "date", "URI", "label")


def history_id(history: str) -> str:
    """The id a gold file names a history by (``gold:12`` -> ``12``; other histories by their key)."""
    return history[5:] if history.startswith("gold:") else history


def gold_rows(labels: list[tuple[Label, Item | None]]) -> Iterator[tuple[str, str, str, int]]:
    for lab, item in labels:
        pol = lab.polarity
        if pol is None or item is None:
            continue
        yield history_id(item.history), item.ts, item.uri_m or item.url, pol


def jsonl_record(lab: Label, item: Item | None) -> dict[str, Any]:
    rec: dict[str, Any] = {"verdict_id": lab.verdict_id, "version": lab.version, "label": lab.label,
                           "polarity": lab.polarity, "note": lab.note, "at": lab.at, "reviewer": lab.reviewer}
    if item is not None:
        rec.update({"id": history_id(item.history), "history": item.history, "date": item.ts,
                    "uri_m": item.uri_m, "url": item.url, "seed": item.seed, "change": item.change,
                    "status": item.status, "profile": item.profile, "verdict_version": item.version})
    return rec


def write_labels(store: str, out: TextIO, fmt: str = "gold") -> int:
    """Write the labels of ``store`` (a SQLite path or a PostgreSQL DSN) to ``out``; returns rows written."""
    if fmt not in ("gold", "jsonl"):
        raise DriftlineError(f"unknown label format {fmt!r}; expected gold or jsonl", reason="usage")
    st = open_store_spec(store, create=False)
    try:
        review = review_data(st)
        review.sync()
        labels = review.labels()
    finally:
        st.close()
    n = 0
    if fmt == "gold":
        out.write("\t".join(GOLD_HEADER) + "\n")
        for row in gold_rows(labels):
            out.write("\t".join(str(c).replace("\t", " ") for c in row) + "\n")
            n += 1
        return n
    for lab, item in labels:
        out.write(json.dumps(jsonl_record(lab, item), ensure_ascii=False) + "\n")
        n += 1
    return n


def export_labels(store: str, out_path: Path | None, fmt: str = "gold") -> int:
    """:func:`write_labels` to a file (written beside it and renamed into place), or stdout."""
    if out_path is None or str(out_path) == "-":
        import sys

        return write_labels(store, sys.stdout, fmt)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            n = write_labels(store, fh, fmt)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out_path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


def export_gold(store: str, out_path: Path) -> int:
    """The gold TSV of ``store``'s labels at ``out_path`` (the contract ``driftline tune`` and
    ``driftline eval --labels`` call); returns the rows written (the header not counted)."""
    return export_labels(store, Path(out_path), "gold")
