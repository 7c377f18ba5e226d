"""Kafka glue of the DOI monitor: runs the scheduler (watcher/doi) and
produces its capture events to the watcher's input topic."""

from __future__ import annotations

from watcher.config import Config
from watcher.errors import DoiError


def run_monitor(cfg: Config, *, once: bool = False) -> int:
    """Run the DOI monitor until stopped (``once``: one round of checks)."""
    raise DoiError("driftline doi run: the scheduler is not built yet", reason="not_implemented")
