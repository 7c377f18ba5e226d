"""The CSV output carries each verdict's reason (a reader of the sheet sees why, not only what)."""

from __future__ import annotations

import csv
import io

from tests.fixtures.outputcases import CFG, results
from watcher.output import CSV_FIELDS, write_csv


def test_csv_has_a_reason_column() -> None:
    out = io.StringIO()
    write_csv(results(), out, CFG)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert "reason" in CSV_FIELDS and CSV_FIELDS[-1] == "reason"
    stamps = ["".join(ch for ch in r["capture_time"] if ch.isdigit()) for r in rows]
    assert rows and [r["reason"] for r in rows] == [f"reason {s}" for s in stamps]
