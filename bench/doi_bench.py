"""DOI monitor throughput: how many checks per second one machine sustains.

A local resolver (handle API + a 302 per DOI) and eight publisher hosts
(127.0.0.2-9, loopback: "hosts that allow it") run in a child process,
serving generated landing pages of the five publisher layouts
(tests/fixtures/doi_pages.py; abstract-only, a third with full text); every tenth
page is redesigned each time it is served.  Every check does what
production does: handle API, the redirect chain, the landing page, a HEAD of
it (``doi.head_check``; ``--no-head`` leaves it out), a WARC request/response
pair, fingerprint and scholarly record, the watcher's scoring step (profile
doi: the verdict and, when it changes, the state in the baseline store), the
check record and state row in SQLite.
The Kafka producer is replaced by a counter (the broker is measured by
bench/stream_bench.py).

Measured in the same run:

* ``check_all`` rounds (``doi run --once``): every DOI checked once,
  ``--concurrency`` checks in flight; round 0 also stores the baselines;
* the real scheduler (APScheduler, SQLAlchemy job store in a SQLite file
  beside the store's) with every DOI on a ``--interval``: checks completed per second over
  ``--seconds``.

RSS is printed after every round: it must stay flat.  CPU per check (this
process: event loop and threads; and the judge processes') gives the
capacity independent of other load on the machine: checks/s per core =
1000 / (ms per check, both summed); the 1-minute load average is printed
beside each figure.

    .venv/bin/python bench/doi_bench.py --dois 2000 --rounds 3 --seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from procstat import rss_mb  # bench/procstat.py: bench/ is the script's own folder on sys.path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from watcher.config import load_config
from watcher.doi.lists import DoiEntry
from watcher.doi.schedule import DoiScheduler, check_all, open_monitor

HOSTS = 8


def proc_cpu_s(pids: list[int]) -> float:
    """User + system CPU seconds of the processes ``pids`` (the judge processes), from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _judges(mon: Any) -> list[int]:
    pool = mon._pool
    return [p.pid for p in (pool._processes or {}).values()] if pool is not None else []


def _title(n: int) -> str:
    from tests.fixtures import doi_pages as dp

    return dp.article(n, full_text=False).title


def _server(n_dois: int, out: Any) -> None:
    """The child process: resolver + publishers until terminated."""
    from dataclasses import replace

    from tests.fixtures import doi_pages as dp
    from tests.fixtures.doi_server import Page, landscape

    layouts = sorted(dp.LAYOUTS)
    hosts = ["a", "b", *[f"h{i}" for i in range(HOSTS - 2)]]
    cache: dict[tuple[int, int], Page] = {}

    def page(doi: str, served: int) -> Page | None:
        if not doi.startswith("10.5555/b"):
            return None
        n = int(doi.rsplit("b", 1)[1])
        if n >= n_dois:
            return None
        version = served % 4 if n % 10 == 0 else 0
        key = (n, version)
        if key not in cache:
            name = layouts[n % len(layouts)]
            a = replace(dp.article(n, full_text=dp.FULL_TEXT[name] and n % 3 == 0), doi=doi)
            cache[key] = Page(dp.LAYOUTS[name](a, version), host=hosts[n % len(hosts)])
        return cache[key]

    async def run() -> None:
        async with landscape(extra_hosts=HOSTS - 2) as land:
            land.dynamic = page
            out.put(dict(land.base))
            while True:
                await asyncio.sleep(3600)

    asyncio.run(run())


async def main(args: argparse.Namespace) -> None:
    from tests.fixtures.doi_server import Landscape, doi_config

    q: Any = mp.get_context("spawn").Queue()
    child = mp.get_context("spawn").Process(target=_server, args=(args.dois, q), daemon=True)
    child.start()
    try:
        land = Landscape(base=q.get(timeout=60))
        tmp = Path(tempfile.mkdtemp(prefix="doi-bench-"))
        cfg = load_config(overrides=doi_config(land, tmp, per_host_concurrency=args.per_host,
                                               max_concurrent_checks=args.concurrency, timeout_s=30.0,
                                               jitter_s=args.jitter, judge_processes=args.judge_processes,
                                               head_check=args.head))
        entries = [DoiEntry(f"10.5555/b{n}", _title(n), interval_s=args.interval) for n in range(args.dois)]
        sent = {"n": 0}

        async def emit(kind: str, msg: dict[str, Any]) -> None:
            sent["n"] += 1

        print(f"{args.dois} DOIs on {HOSTS} publisher hosts (server in a child process), concurrency "
              f"{args.concurrency}, {args.per_host} requests in flight per host, no per-host delay, "
              f"{args.judge_processes} judge processes, HEAD {'on' if args.head else 'off'}")
        async with open_monitor(cfg, emit, render=False) as mon:
            mon.registry.add(entries)
            for r in range(args.rounds):
                t0, c0, j0 = time.perf_counter(), time.process_time(), proc_cpu_s(_judges(mon))
                results = await check_all(mon)
                dt, cpu = time.perf_counter() - t0, time.process_time() - c0
                jcpu = proc_cpu_s(_judges(mon)) - j0
                outcomes: dict[str, int] = {}
                changes: dict[str, int] = {}
                for res in results:
                    outcomes[res.outcome] = outcomes.get(res.outcome, 0) + 1
                    changes[res.record["change"]] = changes.get(res.record["change"], 0) + 1
                print(f"round {r}: {len(results)} checks in {dt:.1f} s = {len(results) / dt:.1f} checks/s, "
                      f"{cpu / len(results) * 1000:.1f} ms CPU per check in this process + "
                      f"{jcpu / len(results) * 1000:.1f} ms in the judge processes; load average "
                      f"{os.getloadavg()[0]:.1f}; "
                      f"outcomes {outcomes}; changes {changes}; RSS {rss_mb():.0f} MB")
            if args.seconds > 0:
                done_before = sum(1 for _ in _all_checks(mon))
                sched = DoiScheduler(cfg, mon)
                t0 = time.perf_counter()
                sched.start()
                await asyncio.sleep(args.seconds)
                sched.scheduler.pause()  # no new check; those under way finish, and count with their time
                await sched.stop()
                dt = time.perf_counter() - t0
                await asyncio.sleep(2.0)
                rows = _all_checks(mon)
                done = len(rows) - done_before
                late: dict[str, int] = {}
                for _doi, outcome in rows[done_before:]:
                    late[outcome] = late.get(outcome, 0) + 1
                print(f"scheduler: {done} checks in {dt:.1f} s = {done / dt:.1f} checks/s (every DOI due every "
                      f"{args.interval} s); outcomes {late}; RSS {rss_mb():.0f} MB")
        warc_mb = sum(p.stat().st_size for p in (tmp / "warcs").glob("*.warc.gz")) / 1e6
        print(f"events emitted: {sent['n']}; WARC files: {warc_mb:.1f} MB")
    finally:
        child.terminate()
        child.join(10)


def _all_checks(mon: Any) -> list[Any]:
    with mon.registry.store.reading() as c:
        return list(mon.registry.store.run(c, "SELECT doi, outcome FROM doi_checks ORDER BY check_time").fetchall())


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dois", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=float, default=60.0, help="scheduler run (0: skip)")
    p.add_argument("--interval", type=int, default=20, help="check interval of every DOI in the scheduler run")
    p.add_argument("--jitter", type=float, default=0.0, help="doi.jitter_s in the scheduler run (spreads checks)")
    p.add_argument("--concurrency", type=int, default=64)
    p.add_argument("--per-host", dest="per_host", type=int, default=8)
    p.add_argument("--judge-processes", dest="judge_processes", type=int, default=2,
                   help="doi.judge_processes (0: fingerprint in a thread)")
    p.add_argument("--no-head", dest="head", action="store_false", help="doi.head_check false (no HEAD per check)")
    asyncio.run(main(p.parse_args()))
