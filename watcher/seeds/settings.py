"""The ``seeds:`` configuration section (crawl guidance)."""

from __future__ import annotations

from pydantic import Field, model_validator

from ..confbase import Frozen


class SeedsConfig(Frozen):
    """How per-seed crawl guidance is computed and published."""

    recrawl_min_days: float = Field(default=1.0, gt=0)
    recrawl_max_days: float = Field(default=90.0, gt=0)
    # the recommended interval is when a revisit finds changed text with this probability
    recrawl_change_probability: float = Field(default=0.5, gt=0, lt=1)
    # 64-bit term SimHashes more than this many bits apart are a text change (Manku et al.: near
    # duplicates differ in 3 bits at most)
    change_simhash_bits: int = Field(default=3, ge=0, le=63)
    confidence: float = 0.95  # level of the change-rate band: 0.90, 0.95 or 0.99
    low_yield: float = Field(default=0.5, ge=0, le=1)  # seeds under this yield are counted (metric, report)
    topic: str = "driftline-seed-reports"  # the streaming app publishes a seed's report here as verdicts arrive
    publish_interval_s: float = Field(default=60.0, ge=0)  # at most one report per seed this often (0: every verdict)
    history_verdicts: int = Field(default=1000, ge=2)  # newest verdicts of a seed a streamed report reads
    max_tracked_seeds: int = Field(default=100_000, ge=1)  # seeds kept for the metrics' distributions

    @model_validator(mode="after")
    def _check(self) -> SeedsConfig:
        if self.recrawl_min_days > self.recrawl_max_days:
            raise ValueError("recrawl_min_days must not exceed recrawl_max_days")
        if self.confidence not in (0.90, 0.95, 0.99):
            raise ValueError("confidence must be 0.90, 0.95 or 0.99")
        return self
