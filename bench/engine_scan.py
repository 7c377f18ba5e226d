#!/usr/bin/env python3
"""Score inputs through driftline's Python API, in one process (no CLI, no workers).

Why it exists: ``scan_bench.py`` times ``python -m watcher.cli scan``; when the
CLI is absent (or to see the single-process engine cost on its own) it runs
this driver instead, which does what a sequential scan does: read the inputs
into histories (``watcher.sources.iter_histories``) and score each with
``Engine.scan_history``.  Output: a small JSON summary (verdict and status counts).

usage: engine_scan.py INPUT... -o OUT.json [--measures cosine,wordcount]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def main(argv: list[str] | None = None) -> int:
    from watcher.config import load_config
    from watcher.engine import Engine
    from watcher.measures import parse_measures
    from watcher.sources import iter_histories

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--measures", help="comma-separated measure names (OTMT -tm style)")
    args = ap.parse_args(argv)

    overrides: dict[str, Any] = {}
    if args.measures:
        # exactly these measures (as OTMT computes them): no extra reported ones
        overrides = {"engine": {"measures": parse_measures(args.measures), "report_measures": []}}
    cfg = load_config(overrides=overrides)
    engine = Engine(cfg.engine)
    t0 = time.perf_counter()
    statuses: Counter[str] = Counter()
    histories = 0
    for history, captures in iter_histories(args.inputs, cfg):
        result = engine.scan_history(history, captures)
        histories += 1
        statuses.update(v.status for v in result.verdicts)
    seconds = time.perf_counter() - t0
    summary = {
        "histories": histories,
        "verdicts": sum(statuses.values()),
        "statuses": dict(statuses),
        "measures": sorted(engine.config.measures),
        "seconds": seconds,
    }
    args.output.write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
