#!/usr/bin/env python3
"""Batch throughput of ``driftline scan`` against a bare lxml parse and OTMT.

Why these baselines: a bare ``lxml.html.fromstring`` of every payload is the
floor any HTML-reading tool pays, so engine/lxml says how much the whole
pipeline (decode, extract, tokenise, sketch, score) costs on top of parsing;
OTMT (the Off-Topic Memento Toolkit) is the peer driftline is measured
against.  Everything runs on the same WARC, built from the shared gold
standard in the same run, so the figures are comparable.

usage (from the repository root)::

    .venv/bin/python bench/scan_bench.py                     # lxml + driftline
    .venv/bin/python bench/scan_bench.py --otmt /tmp/otmt    # + OTMT vs driftline, same measures
    .venv/bin/python bench/scan_bench.py --limit 20          # first 20 TimeMaps only (quick)
    .venv/bin/python bench/scan_bench.py --rounds 3          # lxml and driftline three times, alternated

With ``--rounds N`` the bare parse and each driftline scan run N times in turn (OTMT once: it takes
minutes); each ratio to the parse is taken within its round, and the median round's row is shown
with every round's ratio beside it, since this machine's speed drifts by a tenth and more between
runs minutes apart.

Peak memory: ``os.wait4`` gives the child's own peak RSS (largest single
process); a sampler sums the RSS of the child's whole process tree every
0.1 s (what a ``--workers N`` run really occupies).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from procstat import tree_rss_bytes  # bench/procstat.py: bench/ is the script's own folder on sys.path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
GOLD_TAR = SHARED / "data" / "goldstandard-1068.tar.gz"
GOLD2WARC = SHARED / "tools" / "gold2warc.py"
OTMT_SETUP = SHARED / "tools" / "otmt-offline.sh"
OTMT_MEASURES = "cosine,wordcount,bytecount,jaccard"


@dataclass
class Row:
    name: str
    seconds: float | None = None
    cpu_seconds: float | None = None  # user + system, robust against other load on the machine
    captures: int = 0
    mbytes: float = 0.0
    peak_rss_mb: float | None = None
    tree_rss_mb: float | None = None
    note: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def captures_per_s(self) -> float | None:
        return self.captures / self.seconds if self.seconds else None

    @property
    def mb_per_s(self) -> float | None:
        return self.mbytes / self.seconds if self.seconds else None


# -- input ------------------------------------------------------------------


def build_gold_warc(workdir: Path, limit: int | None) -> Path:
    """Extract the gold standard and pack it with the shared gold2warc tool."""
    out = workdir / (f"gold-{limit}.warc.gz" if limit else "gold.warc.gz")
    if out.exists():
        return out
    with tarfile.open(GOLD_TAR) as tar:
        tar.extractall(workdir, filter="data")
    cmd = [sys.executable, str(GOLD2WARC), str(workdir / "goldstandard-1068"), str(out)]
    if limit:
        cmd.append(str(limit))
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def read_payloads(warc: Path) -> list[bytes]:
    """HTTP payloads of the WARC's response records (the bytes every tool parses)."""
    from warcio.archiveiterator import ArchiveIterator

    payloads: list[bytes] = []
    with warc.open("rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type == "response":
                payloads.append(rec.content_stream().read())
    return payloads


# -- measurements -----------------------------------------------------------


def bench_lxml(payloads: list[bytes]) -> Row:
    """Bare ``lxml.html.fromstring`` on every payload (empty ones fail fast and count)."""
    import lxml.etree
    import lxml.html

    failures = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for data in payloads:
        try:
            lxml.html.fromstring(data)
        except (lxml.etree.ParserError, ValueError):
            failures += 1
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    size = sum(len(p) for p in payloads) / 1e6
    return Row("lxml.html.fromstring", dt, cpu, len(payloads), size, note=f"{failures} unparseable (empty)")


@dataclass
class Timed:
    wall_s: float
    returncode: int
    cpu_s: float  # user + system of the child and the descendants it waited for
    own_rss_kb: int
    tree_rss_kb: int


def run_timed(cmd: list[str], *, cwd: Path, log: Path, env: dict[str, str] | None = None) -> Timed:
    """Run ``cmd`` with its output in ``log``; wall and CPU time, peak memory."""
    with log.open("wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
        peak_tree = 0
        done = threading.Event()

        def sample() -> None:
            nonlocal peak_tree
            while not done.is_set():
                peak_tree = max(peak_tree, tree_rss_bytes(proc.pid) // 1024)
                done.wait(0.1)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        dt = time.perf_counter() - t0
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return Timed(dt, proc.returncode, cpu, int(usage.ru_maxrss), peak_tree)


def _count_json_records(path: Path) -> int | None:
    """Best-effort count of per-capture records in a tool's JSON output."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(doc, list):
        return len(doc)
    if isinstance(doc, dict):
        for key in ("verdicts", "captures", "results"):
            if isinstance(doc.get(key), list):
                return len(doc[key])
        histories = doc.get("histories")
        if isinstance(histories, list):
            return sum(len(h.get("verdicts", [])) for h in histories if isinstance(h, dict))
        # OTMT: {"from-warc::timemap::URI-R": {URI-M: {"timemap measures": {...}, ...}}}
        n = 0
        for v in doc.values():
            if isinstance(v, dict):
                n += sum(1 for m in v.values() if isinstance(m, dict) and "timemap measures" in m)
        return n or None
    return None


def bench_driftline(
    warc: Path,
    workdir: Path,
    n: int,
    mbytes: float,
    *,
    measures: str | None,
    workers: int | None,
    tag: str,
) -> Row:
    """Time ``python -m watcher.cli scan`` (this checkout's code: run from its root)."""
    stem = f"driftline-{tag or 'default'}"
    out, log = workdir / f"{stem}.json", workdir / f"{stem}.log"
    name = f"driftline scan{' ' + tag if tag else ''}"
    cmd = [sys.executable, "-m", "watcher.cli", "scan", str(warc), "-o", str(out), "--format", "json"]
    cmd += ["--no-progress"]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    if measures:  # exactly these measures, as OTMT computes them: no extra reported ones
        cmd += ["--report", "", "--measures", measures]
    env = dict(os.environ, DRIFTLINE__SCAN__PROGRESS="false", DRIFTLINE__STORE__BACKEND="memory")
    t = run_timed(cmd, cwd=REPO, log=log, env=env)
    row = Row(name, t.wall_s, t.cpu_s, n, mbytes, t.own_rss_kb / 1024, t.tree_rss_kb / 1024)
    if t.returncode != 0:
        row.note = f"exit {t.returncode}, see {log}"
    else:
        row.note = f"{_count_json_records(out)} verdicts in output"
    return row


def bench_otmt(warc: Path, workdir: Path, venv: Path, n: int, mbytes: float) -> Row:
    exe = venv / "bin" / "detect_off_topic"
    if not exe.exists():
        subprocess.run(["bash", str(OTMT_SETUP), str(venv)], check=True)
    work = workdir / "otmt-work"  # OTMT wants a directory that does not exist yet
    subprocess.run(["rm", "-rf", str(work)], check=True)
    out = workdir / "otmt-out.json"
    cmd = [str(exe), "-i", f"warc={warc}", "-o", str(out), "-d", str(work), "-tm", OTMT_MEASURES]
    t = run_timed(cmd, cwd=workdir, log=workdir / "otmt.log")
    row = Row(
        f"OTMT detect_off_topic ({OTMT_MEASURES})",
        t.wall_s,
        t.cpu_s,
        n,
        mbytes,
        t.own_rss_kb / 1024,
        t.tree_rss_kb / 1024,
    )
    row.note = (
        f"exit {t.returncode}, see {workdir / 'otmt.log'}"
        if t.returncode
        else f"{_count_json_records(out)} mementos in output"
    )
    return row


# -- report -----------------------------------------------------------------


def _fmt(v: float | None, spec: str) -> str:
    if v is None:
        width = spec.split(".")[0]
        return "-".rjust(int(width)) if width.isdigit() else "-"
    return format(v, spec)


def print_table(rows: list[Row]) -> None:
    head = f"{'what':<58} {'wall s':>8} {'CPU s':>8} {'capt/s':>9} {'MB/s':>7} {'RSS MB':>7} {'tree MB':>8}  note"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r.name:<58} {_fmt(r.seconds, '8.2f')} {_fmt(r.cpu_seconds, '8.2f')} "
            f"{_fmt(r.captures_per_s, '9.1f')} {_fmt(r.mb_per_s, '7.2f')} "
            f"{_fmt(r.peak_rss_mb, '7.0f')} {_fmt(r.tree_rss_mb, '8.0f')}  {r.note}"
        )


def ratio(a: Row, b: Row, *, cpu: bool = False) -> float | None:
    """How many times slower ``a`` is than ``b`` (wall time, or CPU time)."""
    x, y = (a.cpu_seconds, b.cpu_seconds) if cpu else (a.seconds, b.seconds)
    if x and y:
        return x / y
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warc", type=Path, help="use this WARC instead of building one from the gold standard")
    ap.add_argument("--limit", type=int, help="only the first N TimeMaps of the gold standard")
    ap.add_argument("--workdir", type=Path, help="keep inputs and outputs here (default: a temporary folder)")
    ap.add_argument("--otmt", type=Path, metavar="VENV", help="also time OTMT (installed into VENV if missing)")
    ap.add_argument("--workers", type=int, help="pass --workers N to driftline scan")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    ap.add_argument("--rounds", type=int, default=1, help="run the parse and driftline N times, alternated (default 1)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")

    if args.warc is None and not GOLD_TAR.exists():
        print(f"needs the shared gold standard at {GOLD_TAR} (or --warc FILE)", file=sys.stderr)
        return 2
    tmp = None
    if args.workdir:
        workdir = args.workdir.resolve()
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="driftline-bench-")
        workdir = Path(tmp.name)
    try:
        warc = args.warc.resolve() if args.warc else build_gold_warc(workdir, args.limit)
        t0 = time.perf_counter()
        payloads = read_payloads(warc)
        read_s = time.perf_counter() - t0
        n, mbytes = len(payloads), sum(len(p) for p in payloads) / 1e6
        print(
            f"input: {warc} ({warc.stat().st_size / 1e6:.1f} MB on disk), {n} response records, "
            f"{mbytes:.1f} MB of payload; WARC read {read_s:.2f} s"
        )
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n"
        )

        rounds: list[tuple[Row, Row, Row | None]] = []
        for _ in range(args.rounds):
            lx = bench_lxml(payloads)
            dl = bench_driftline(warc, workdir, n, mbytes, measures=None, workers=args.workers, tag="")
            dl4 = (bench_driftline(warc, workdir, n, mbytes, measures=OTMT_MEASURES, workers=args.workers, tag="4m")
                   if args.otmt else None)
            rounds.append((lx, dl, dl4))
        del payloads
        per_round = [ratio(dl, lx, cpu=True) or 0.0 for lx, dl, _ in rounds]
        median = sorted(range(len(rounds)), key=per_round.__getitem__)[len(rounds) // 2]
        lx, dl, dl4 = rounds[median]
        rows = [lx, dl]
        if dl4 is not None:
            rows += [dl4, bench_otmt(warc, workdir, args.otmt.resolve(), n, mbytes)]
        print_table(rows)
        print()
        if len(rounds) > 1:
            print(f"rounds: {len(rounds)}, the median round (by driftline / lxml CPU) shown above")
        for label, num, den in [("driftline / lxml", dl, lx)] + (
            [("OTMT / driftline (same 4 measures)", rows[3], rows[2])] if args.otmt else []
        ):
            rw, rc = ratio(num, den), ratio(num, den, cpu=True)
            print(f"{label}: wall {_fmt(rw, '.1f')}x, CPU {_fmt(rc, '.1f')}x")
        if len(rounds) > 1:
            print("driftline / lxml CPU by round: " + ", ".join(f"{r:.1f}x" for r in per_round))
            if args.otmt:
                ot = rows[3]
                print("OTMT / driftline wall against each round's 4-measure scan: "
                      + ", ".join(f"{_fmt(ratio(ot, d4), '.1f')}x" for _, _, d4 in rounds if d4 is not None))
        if args.json:
            doc = {
                "date": datetime.now(UTC).isoformat(),
                "cores": os.cpu_count(),
                "warc": str(warc),
                "records": n,
                "payload_mb": mbytes,
                "rows": [asdict(x) | {"captures_per_s": x.captures_per_s, "mb_per_s": x.mb_per_s} for x in rows],
                "rounds": [[asdict(x) for x in r if x is not None] for r in rounds],
            }
            args.json.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
