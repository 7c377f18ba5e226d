#!/usr/bin/env python3
"""How fast does ``driftline run --crawl-log`` get through a crawl.log?  Lines per second, by kind.

Why: the durable path scores one line at a time and writes its position in the store for every
line (with the line's verdicts, or alone for a line with no new verdict), so its speed is the
scoring step's plus a store transaction per line.  This script builds a synthetic crawl (the
tests' WARC and crawl.log builders: ``histories`` sites with ``captures`` captures each, and
``skips`` skipped lines - DNS lookups, images - per capture, as in a real crawl.log most lines are
not documents), runs the follower in process with ``--once`` on a fresh SQLite store, and reports
captures per second and skipped lines per second, over several seeds (the spread is the machine's
and the collection's).

usage: PYTHONPATH=. python bench/crawl_log_bench.py [--histories 20] [--captures 10] [--skips 4] [--seeds 0,1,2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from consumers.crawllog import CrawlLogRunner
from tests.fixtures.crawllog import collection, follow_config


def _skip_line(i: int) -> str:
    return (f"2024-05-01T00:00:00.000Z   200       5000 http://img{i % 50}.example.org/logo{i}.png E "
            f"http://img{i % 50}.example.org/ image/png #002 20240501000001000+7 "
            f"sha1:2LENGFGYPASOPNZFQFXG25LAQPZJIYEK - - {{}}\n")


async def _run(folder: Path, lines: list[str], warc: Path) -> float:
    log = folder / "crawl.log"
    log.write_text("".join(lines))
    cfg = follow_config(folder, warc, output="")
    started = time.perf_counter()
    async with CrawlLogRunner(cfg, [str(log)]) as runner:
        await runner.run(asyncio.Event(), once=True)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--histories", type=int, default=20)
    ap.add_argument("--captures", type=int, default=10)
    ap.add_argument("--skips", type=int, default=4)
    ap.add_argument("--seeds", default="0,1,2")
    args = ap.parse_args()
    caps_per_s, skips_per_s = [], []
    for seed in (int(s) for s in args.seeds.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            warc, _refs, captures = collection(folder / "c", histories=args.histories, captures=args.captures,
                                              seed=seed)
            skips = [_skip_line(i) for i in range(len(captures) * args.skips)]
            t_caps = asyncio.run(_run(folder / "c", captures, warc))
            (folder / "s").mkdir()
            t_skips = asyncio.run(_run(folder / "s", skips, warc))
        caps_per_s.append(len(captures) / t_caps)
        skips_per_s.append(len(skips) / t_skips)
        print(json.dumps({"seed": seed, "captures": len(captures), "captures_s": round(t_caps, 2),
                          "skipped_lines": len(skips), "skipped_s": round(t_skips, 2)}), flush=True)

    def spread(xs: list[float]) -> str:
        return f"median {statistics.median(xs):.0f}/s (min {min(xs):.0f}, max {max(xs):.0f})"

    print(f"captures: {spread(caps_per_s)}; skipped lines: {spread(skips_per_s)}")


if __name__ == "__main__":
    main()
