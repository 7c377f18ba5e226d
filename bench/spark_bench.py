#!/usr/bin/env python3
"""Does ``driftline spark`` scale with cores?  Throughput at local[1] against local[2], shuffle and memory.

The same input is scored at ``local[1]`` and ``local[2]``, interleaved (1, 2, 1, 2, ...) for
``--rounds`` rounds, each run in a fresh process (a fresh JVM), so that a burst of load on a
shared machine hits both sides alike; the ratio of throughputs (near 2 when the job scales
with cores) is reported per round with its spread, never from one run.  From Spark's event
log (written to a temporary folder) each run also gives:

- bytes shuffled per capture (the sum of every stage's shuffle write over the verdicts):
  what a cluster's network carries, since records travel as fingerprints, never payloads;
- peak executor memory: the JVM heap peak (event log) and the Python workers' peak resident
  memory, summed over the workers and of the largest one (sampled from /proc every 0.25 s).

Input: the shared gold standard (a WARC-less input: its pages are read by the tasks) when
present, else a generated collection (``--sites``).

usage (from the repository root)::

    .venv/bin/python bench/spark_bench.py --rounds 3
    .venv/bin/python bench/spark_bench.py --sites 60 --rounds 2    # generated input
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

# bench/procstat.py: bench/ is the script's own folder on sys.path
from procstat import tree_rss_bytes, tree_rss_max_bytes

REPO = Path(__file__).resolve().parent.parent
GOLD_TAR = REPO.parent / "shared" / "data" / "goldstandard-1068.tar.gz"

_CHILD = """
import json, sys, time
from watcher.config import load_config
from watcher.spark.job import run, session
master, events, inp, out = sys.argv[1:5]
t0 = time.perf_counter()
# driftline's own session (as `driftline spark` makes it), with the event log this script reads
spark = session(master, "driftline-bench", extra={
    "spark.eventLog.enabled": "true", "spark.eventLog.dir": "file://" + events, "spark.eventLog.compress": "false",
    "spark.executor.metrics.pollingInterval": "200ms"})
started = time.perf_counter()
counts = run([inp], load_config(None), out, "jsonl")
done = time.perf_counter()
spark.stop()
print(json.dumps({"startup_s": started - t0, "job_s": done - started, "verdicts": counts["verdicts"]}))
"""


def gold_input(tmp: Path) -> Path:
    with tarfile.open(GOLD_TAR) as tar:
        tar.extractall(tmp, filter="data")
    return tmp / "goldstandard-1068"


def generated_input(tmp: Path, sites: int) -> Path:
    sys.path.insert(0, str(REPO))
    from tests.fixtures.wacz import collection_warc

    out = tmp / "warcs"
    out.mkdir()
    collection_warc(out, sites=sites, captures=10)
    return out


def event_figures(events: Path) -> dict[str, float]:
    """Shuffle bytes written, and the executor memory peaks, from a run's event log."""
    shuffle = 0
    jvm = 0
    for log in (p for p in events.rglob("*") if p.is_file()):  # Spark 4 writes a folder of event files
        for line in log.read_text(errors="replace").splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            kind = ev.get("Event")
            if kind == "SparkListenerTaskEnd":
                metrics = ev.get("Task Metrics") or {}
                shuffle += int((metrics.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0))
            peaks = ev.get("Executor Metrics") or ev.get("Task Executor Metrics") or {}
            jvm = max(jvm, int(peaks.get("JVMHeapMemory", 0)))
    return {"shuffle_bytes": shuffle, "jvm_heap_peak_mb": jvm / 2**20}


def one_run(master: str, inp: Path, tmp: Path, i: int) -> dict[str, Any]:
    events = tmp / f"events-{i}"
    events.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, master, str(events), str(inp), str(tmp / f"out-{i}.jsonl")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0, 0]  # the Python workers summed, and the largest one
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.25):
            peak[0] = max(peak[0], tree_rss_bytes(proc.pid, b"pyspark.daemon"))
            peak[1] = max(peak[1], tree_rss_max_bytes(proc.pid, b"pyspark.daemon"))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate()
    done.set()
    sampler.join()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{master} run failed:\n{stderr[-3000:]}")
    out: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    out.update(event_figures(events), master=master, wall_s=wall, python_rss_peak_mb=peak[0] / 2**20,
               python_worker_rss_peak_mb=peak[1] / 2**20)
    out["captures_per_s"] = out["verdicts"] / out["job_s"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sites", type=int, default=0, help="generated input of this many sites (default: the gold)")
    ap.add_argument("--json", metavar="FILE", help="also write the runs as JSON")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="spark-bench-") as d:
        tmp = Path(d)
        inp = gold_input(tmp) if GOLD_TAR.is_file() and not args.sites else generated_input(tmp, args.sites or 40)
        runs: list[dict[str, Any]] = []
        for r in range(args.rounds):
            for master in ("local[1]", "local[2]"):
                run = one_run(master, inp, tmp, len(runs))
                runs.append(run)
                print(f"round {r + 1} {master}: {run['verdicts']} captures in {run['job_s']:.1f} s "
                      f"({run['captures_per_s']:.1f}/s; JVM start {run['startup_s']:.1f} s), shuffle "
                      f"{run['shuffle_bytes'] / run['verdicts']:.0f} B/capture, peaks: JVM heap "
                      f"{run['jvm_heap_peak_mb']:.0f} MB, Python workers {run['python_rss_peak_mb']:.0f} MB "
                      f"(the largest one {run['python_worker_rss_peak_mb']:.0f} MB)",
                      flush=True)
    ratios = [runs[i + 1]["captures_per_s"] / runs[i]["captures_per_s"] for i in range(0, len(runs) - 1, 2)]
    print(f"\nlocal[2]/local[1] throughput ratio per round: {', '.join(f'{x:.2f}' for x in ratios)}")
    if ratios:
        print(f"median {statistics.median(ratios):.2f}, min {min(ratios):.2f}, max {max(ratios):.2f} "
              f"(load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    per_capture = [r["shuffle_bytes"] / r["verdicts"] for r in runs]
    print(f"shuffle per capture: {statistics.median(per_capture):.0f} B (median of {len(runs)} runs)")
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2) + "\n")


if __name__ == "__main__":
    main()
