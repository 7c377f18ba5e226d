#!/usr/bin/env python3
"""Latency of a review queue page with 100,000 verdicts in SQLite.

Why: the issue's bar is a queue page at p95 <= 300 ms with 100,000 verdicts in a SQLite store.  This
builds such a store (verdicts of 5,000 synthetic histories x 20 captures, the class mix of the gold
standard's scan: ~4 % off topic; 5 % of them labelled, some against driftline), lets ``driftline
review``'s sync index it, then requests queue pages through the real aiohttp app over loopback HTTP --
the first page, a class filter, a deep page, the disagreement filter, a date range, a SURT prefix, a
language, "not reviewed yet" -- and reports p50/p95/max of each and of all.  The reference, measured
in the same run on the same server and connection, is the page's own static style sheet: what any
request to this server costs before a query runs.

usage: .venv/bin/python bench/review_bench.py [--verdicts 100000] [--rounds 40] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from watcher.config import load_config  # noqa: E402
from watcher.model import ChangeClass, MeasureResult, TopicStatus, Verdict, verdict_id  # noqa: E402
from watcher.store.codec import encode_verdict  # noqa: E402
from watcher.store.labels import Query, review_data  # noqa: E402
from watcher.store.sqlite import SQLiteStore, time_key  # noqa: E402

T0 = datetime(2010, 1, 1, tzinfo=UTC)
MIX: list[tuple[ChangeClass, TopicStatus, float]] = [
       ("minor", "on-topic", 0.60), ("unchanged", "on-topic", 0.20), ("baseline", "on-topic", 0.05),
       ("off-topic", "off-topic", 0.04), ("drifted", "on-topic", 0.04), ("empty", "empty", 0.05),
       ("error", "error", 0.02)]


def build(path: Path, n: int, seed: int = 7) -> float:
    """A SQLite store holding ``n`` verdicts; returns the seconds the review sync took."""
    rng = random.Random(seed)
    store = SQLiteStore(path)
    per = 20
    rows = []
    classes = [c for c, _, _ in MIX]
    weights = [w for _, _, w in MIX]
    for h in range(n // per):
        url = f"http://site{h}.example{h % 97}.org/"
        for i in range(per):
            t = T0 + timedelta(days=30 * i, seconds=h)
            change = "baseline" if i == 0 else rng.choices(classes, weights)[0]
            status = next(s for c, s, _ in MIX if c == change)
            vid = verdict_id(url, t, f"sha1:{h}-{i}")
            v = Verdict(verdict_id=vid, history=url, url=url, capture_time=t, uri_m=f"http://archive.example/"
                        f"{t:%Y%m%d%H%M%S}/{url}", digest=f"sha1:{h}-{i}", baseline_time=T0, baseline_uri_m=None,
                        measures={"tfintersection": MeasureResult("tfintersection", rng.random(), "on-topic", 1.0)},
                        status=status, change=change, reason="synthetic", language=rng.choice(["en", "fr", "es"]),
                        title=f"Site {h}", drift_score=round(rng.random(), 4), seed=url)
            rows.append((vid, url, time_key(t), status, change, encode_verdict(v)))
    c = store._conn
    c.execute("BEGIN")
    c.executemany("INSERT INTO verdicts (verdict_id, history, capture_time, status, change, json) "
                  "VALUES (?, ?, ?, ?, ?, ?)", rows)
    c.execute("COMMIT")
    review = review_data(store)
    started = time.perf_counter()
    review.sync()
    took = time.perf_counter() - started
    items = review.queue(Query(size=500, reviewed="no")).items
    labels = ["off-topic", "on-topic", "drifted", "unsure"]
    for k in range(n // 20):  # 5 % labelled
        it = rng.choice(items) if k < len(items) else None
        vid = it.verdict_id if it else rows[rng.randrange(len(rows))][0]
        review.set_label(vid, 1, rng.choice(labels))
    store.close()
    return took


async def measure(path: Path, rounds: int) -> dict[str, list[float]]:
    from aiohttp import ClientSession, web

    from watcher.review.ingest import open_input
    from watcher.review.server import make_app

    store, review, where, _ = open_input(str(path))
    app = make_app(store, review, load_config(None), where=where)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    base = f"http://127.0.0.1:{port}"
    pages = {"first page": "/", "class off-topic": "/?change=off-topic", "page 1000": "/?page=1000",
             "curator disagrees": "/?disagree=1", "date range": "/?from=2011-01-01&to=2011-06-30",
             "SURT prefix": "/?where=http%3A%2F%2Fsite42.example42.org%2F", "language fr": "/?lang=fr",
             "not reviewed, drifted": "/?reviewed=no&change=drifted", "reference (static CSS)": "/static/review.css"}
    times: dict[str, list[float]] = {k: [] for k in pages}
    async with ClientSession() as s:
        for name, path_q in pages.items():  # warm up: the first request of each kind
            async with s.get(base + path_q) as r:
                assert r.status == 200, (name, r.status)
                await r.read()
        for _ in range(rounds):
            for name, path_q in pages.items():
                t = time.perf_counter()
                async with s.get(base + path_q) as r:
                    await r.read()
                times[name].append(time.perf_counter() - t)
    await runner.cleanup()
    store.close()
    return times


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verdicts", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--workdir")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        path = Path(tmp) / "review-bench.sqlite"
        t = time.perf_counter()
        sync_s = build(path, args.verdicts)
        print(f"store: {args.verdicts} verdicts built in {time.perf_counter() - t:.1f} s; review index sync "
              f"{sync_s:.1f} s (once per new verdict)")
        times = asyncio.run(measure(path, args.rounds))
    ref = times.pop("reference (static CSS)")
    every = [x for xs in times.values() for x in xs]
    print(f"{'request':28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, xs in [*times.items(), ("all queue pages", every), ("reference (static CSS)", ref)]:
        print(f"{name:28} {1000 * statistics.median(xs):8.1f} {1000 * pct(xs, 95):8.1f} {1000 * max(xs):8.1f}")
    p95 = pct(every, 95)
    print(f"queue page p95 {1000 * p95:.1f} ms with {args.verdicts} verdicts (bar 300 ms: "
          f"{'met' if p95 <= 0.300 else 'NOT met'}); reference p95 {1000 * pct(ref, 95):.1f} ms, "
          f"{p95 / pct(ref, 95):.0f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({"verdicts": args.verdicts, "p95_s": p95, "reference_p95_s":
                                               pct(ref, 95), "per_page_p95_s": {k: pct(v, 95) for k, v in
                                                                              times.items()}}, indent=2))
    return 0 if p95 <= 0.300 else 1


if __name__ == "__main__":
    sys.exit(main())
