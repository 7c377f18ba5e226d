"""``driftline demo``: a self-contained demonstration crawl.

:func:`build_demo_warc` writes a WARC of six seeds captured five times each
(written by the project, no third-party pages) plus the Heritrix feed events;
:func:`run_demo` streams those events through the real pipeline (embedded
broker, consumer group, store) and prints what driftline says.
"""

from __future__ import annotations

from .crawl import SEEDS, DemoCrawl, DemoRecord, DemoSeed, build_demo_warc

__all__ = ["SEEDS", "DemoCrawl", "DemoRecord", "DemoSeed", "build_demo_warc"]
