"""Bytes per URL: the state a history needs for scoring, a stored verdict, a logged capture.

Why: at 10^9 URLs every byte of per-URL state is a gigabyte.  The state a
history needs for scoring is its baseline in compact form (watcher.state.state_form):
top content terms, a MinHash, a bottom-k shingle sample, counts, title; and what it
remembers of its verdicts (the collection profile: up to two names of a renamed site).
The state counted per URL is the largest the history holds at any capture.  This
script folds the scoring step over every history of the shared gold collection
(or over pages it makes itself when ../shared is absent) and prints the sizes
the SQLite store writes: the state blob, a verdict row's JSON, and a logged
capture's fingerprint (kept only for store.rescore_window_s).

    python bench/state_bench.py [GOLD_DIR]
"""

from __future__ import annotations

import statistics
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from watcher.config import EngineConfig
from watcher.engine import Engine
from watcher.model import Capture
from watcher.state import HistoryState
from watcher.store.codec import encode_fingerprint, encode_state, encode_verdict


def histories(gold: Path | None) -> list[tuple[str, list[Capture]]]:
    if gold is not None:
        from watcher.sources.gold import iter_gold

        return [(h, list(c)) for h, c in iter_gold(str(gold))]
    from datetime import UTC, datetime, timedelta

    from tests.fixtures import textgen

    out = []
    for i in range(50):
        topics = list(textgen.TOPICS)
        caps = [Capture(url=f"http://site{i}.example.org/", timestamp=datetime(2020, 1, 1, tzinfo=UTC)
                        + timedelta(days=d), content=textgen.html(textgen.document(
                            [topics[(i + d + k) % len(topics)] for k in range(4)], 200, d)), content_type="text/html")
                for d in range(10)]
        out.append((f"h{i}", caps))
    return out


def pct(xs: list[int], p: float) -> int:
    return sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]


def main() -> None:
    gold: Path | None = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    tmp = None
    if gold is None:
        shared = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "goldstandard-1068.tar.gz"
        if shared.exists():
            tmp = tempfile.TemporaryDirectory()
            with tarfile.open(shared) as tar:
                tar.extractall(tmp.name, filter="data")
            gold = Path(tmp.name) / "goldstandard-1068"
    eng = Engine(EngineConfig())
    state_b: list[int] = []
    verdict_b: list[int] = []
    logged_b: list[int] = []
    for history, caps in histories(gold):
        state = HistoryState()
        peak = 0  # the largest state the history holds at any point (what it remembers comes and goes)
        for c in sorted(caps, key=lambda c: c.timestamp):
            fp = eng.fingerprint(c)
            v, state = eng.score_next(history, state, c, fp)
            verdict_b.append(len(encode_verdict(v).encode()))
            logged_b.append(len(encode_fingerprint(fp, keep_text=True, keep_shingles=True, max_terms=0)))
            if state.baseline is not None:
                peak = max(peak, len(encode_state(state)))
        if peak:
            state_b.append(peak)
    src = f"gold ({gold})" if gold else "generated pages"
    print(f"{src}: {len(state_b)} histories, {len(verdict_b)} captures")
    print("| what | median | p95 | max |")
    print("|---|--:|--:|--:|")
    for name, xs in (("state per URL (baseline and what it remembers, compact; its largest)", state_b),
                     ("stored verdict (JSON)", verdict_b),
                     ("logged capture fingerprint (re-scoring window only)", logged_b)):
        print(f"| {name} | {int(statistics.median(xs))} B | {pct(xs, 0.95)} B | {max(xs)} B |")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
