"""Writers of batch results (json in OTMT's schema, csv, jsonl, summary)."""

from __future__ import annotations

from .common import DRIFTLINE_KEY, MEASURES_KEY, SUMMARY_KEY, capture_entry, uri_m_of, uri_t_of
from .writers import (
    CSV_FIELDS,
    WRITERS,
    OutputError,
    write_csv,
    write_json,
    write_jsonl,
    write_results,
    write_summary,
)

__all__ = [
    "CSV_FIELDS",
    "DRIFTLINE_KEY",
    "MEASURES_KEY",
    "SUMMARY_KEY",
    "WRITERS",
    "OutputError",
    "capture_entry",
    "uri_m_of",
    "uri_t_of",
    "write_csv",
    "write_json",
    "write_jsonl",
    "write_results",
    "write_summary",
]
