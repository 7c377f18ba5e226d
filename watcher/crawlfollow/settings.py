"""The ``crawl_log:`` configuration section (``driftline run --crawl-log``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from ..confbase import Frozen


class CrawlLogConfig(Frozen):
    """How followed crawl.log files are read and where their verdicts go."""

    poll_interval_s: float = Field(default=0.5, gt=0, le=60)  # how often a file at its end is looked at again
    batch_lines: int = Field(default=500, ge=1)  # lines read from one file before the next file gets a turn
    max_line_bytes: int = Field(default=1_000_000, ge=1024)  # a longer line is a dead letter (too_large)
    from_start: bool = True  # a path seen for the first time is read from its start (false: from its end)
    ledger_keep: int = Field(default=100_000, ge=1000)  # written messages kept in the store's ledger (replay)
    output: str = "-"  # "-": verdicts, alerts, recommendations as JSONL on stdout; a path: appended there; "": none

    @field_validator("output", mode="before")
    @classmethod
    def _none_is_no_output(cls, v: Any) -> Any:
        # DRIFTLINE__CRAWL_LOG__OUTPUT= (empty) arrives as YAML null: no output, as "".
        return "" if v is None else v
