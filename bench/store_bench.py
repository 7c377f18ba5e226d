#!/usr/bin/env python3
"""Throughput of the baseline store's hot path, per backend.

Why: the streaming consumer does, per scored event, one ``get_verdict`` (is it
re-delivered?), one ``get_state`` (the history's baseline and memory, read once:
``Watcher.job``) and one ``put_verdict`` (the verdict and the capture's
fingerprint in one transaction; the state only when it changed, which most
captures leave alone; tests/engine/test_round_trips.py counts them).  This measures
those calls on a real SQLite file (WAL, synchronous=NORMAL) and on the memory
backend, with realistic sizes: ~250 distinct terms per fingerprint (the
gold-standard median) drawn from a Zipf-like vocabulary, 1,000 histories.

usage: .venv/bin/python bench/store_bench.py [--captures 20000] [--histories 1000] [--terms 250]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from watcher.config import StoreConfig  # noqa: E402
from watcher.model import Fingerprint, MeasureResult, Verdict, verdict_id  # noqa: E402
from watcher.state import HistoryState, Reference  # noqa: E402
from watcher.store import open_store  # noqa: E402

T0 = datetime(2020, 1, 1, tzinfo=UTC)


def fingerprint(terms: list[str]) -> Fingerprint:
    return Fingerprint(
        kind="html", digest="sha1:X", byte_count=40_000, word_count=1500, language="en", title="t", headings=(),
        term_freqs={t: 1 + i % 7 for i, t in enumerate(terms)}, shingle_count=1400, minhash=bytes(512),
        simhash_raw=1, simhash_tf=2, dois=frozenset(), citation={}, page_kind=None,
    )  # fmt: skip


def verdict(history: str, at: datetime) -> Verdict:
    m = {"cosine": MeasureResult("cosine", 0.8, "on-topic", 0.12)}
    return Verdict(
        verdict_id=verdict_id(history, at, None), history=history, url="http://x/", capture_time=at, uri_m=None,
        digest=None, baseline_time=T0, baseline_uri_m=None, measures=m, status="on-topic", change="unchanged",
        reason="",
    )  # fmt: skip


def run(backend: str, path: Path, captures: int, histories: int, n_terms: int) -> None:
    rng = random.Random(7)
    vocab = [f"term{i}" for i in range(50_000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    store = open_store(StoreConfig(backend=backend, path=str(path)))  # type: ignore[arg-type]
    hist = [f"org,example{i})/" for i in range(histories)]
    samples = [sorted(set(rng.choices(vocab, weights, k=n_terms * 2)))[:n_terms] for _ in range(64)]
    t0 = time.perf_counter()
    for i, h in enumerate(hist):
        store.set_state(h, HistoryState(Reference(T0, None, fingerprint(samples[i % 64]))))
    t_base = time.perf_counter() - t0
    t_get = t_state = t_put = 0.0
    for i in range(captures):
        h = hist[i % histories]
        fp = fingerprint(samples[(i * 7) % 64])
        v = verdict(h, T0 + timedelta(minutes=i + 1))
        a = time.perf_counter()
        store.get_verdict(v.verdict_id)
        b = time.perf_counter()
        store.get_state(h)
        c = time.perf_counter()
        store.put_verdict(v, None, fp)
        d = time.perf_counter()
        t_get, t_state, t_put = t_get + b - a, t_state + c - b, t_put + d - c
    total = t_get + t_state + t_put
    store.close()
    size = f"{path.stat().st_size / 1e6:.1f} MB" if backend == "sqlite" else "-"
    print(
        f"{backend:<7} set_state {histories / t_base:8.0f}/s | per capture:"
        f" get_verdict {t_get / captures * 1e3:.3f} ms,"
        f" get_state {t_state / captures * 1e3:.3f} ms,"
        f" put_verdict {t_put / captures * 1e3:.3f} ms"
        f" | {captures / total:7.0f} captures/s | file {size}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--captures", type=int, default=20_000)
    ap.add_argument("--histories", type=int, default=1_000)
    ap.add_argument("--terms", type=int, default=250)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="driftline-store-bench-") as tmp:
        for backend in ("sqlite", "memory"):
            run(backend, Path(tmp) / "bench.db", args.captures, args.histories, args.terms)
    return 0


if __name__ == "__main__":
    sys.exit(main())
