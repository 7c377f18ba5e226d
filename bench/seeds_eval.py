"""Crawl guidance on the shared gold: does a seed's yield (or its text quality alone) tell the
histories that went off topic from those that did not?

For each TimeMap of a labelled scan result (``driftline scan GOLD -o gold.json``), the seed report
(:mod:`watcher.seeds`) is computed from driftline's verdicts; the positive class is "this seed has
captures labelled off topic".  A low yield, a high Badness, a high boilerplate share and a low
new-text-per-byte should each rank positives first.  Nothing here is fitted, so the folds only show
how much the figure moves between subsets of seeds: ROC AUC over all seeds, then its mean and
spread over five grouped folds for three fold seeds.

    python bench/seeds_eval.py GOLD_RESULT.json [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from watcher.config import load_config
from watcher.evaluation.metrics import roc_auc
from watcher.output.readback import read_result
from watcher.seeds.report import SeedReport, group, report

SCORES: dict[str, Callable[[SeedReport], float | None]] = {
    "low yield": lambda r: None if r.yield_ is None else -r.yield_,
    "badness": lambda r: r.badness,
    "boilerplate share": lambda r: r.boilerplate_share,
    "low new text per byte": lambda r: None if r.new_text_per_byte is None else -r.new_text_per_byte,
}


def auc(rows: list[tuple[float | None, bool]]) -> float | None:
    scores = [float("-inf") if s is None else s for s, _ in rows]
    return roc_auc(scores, [p for _, p in rows])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("result", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    cfg = load_config().seeds
    seeds = []
    for name, vs in group(read_result(args.result)):
        labelled = [v for v in vs if v.label is not None]
        if not labelled:
            continue
        seeds.append((report(name, vs, cfg), any(v.label == 0 for v in labelled)))
    out: dict[str, object] = {"seeds": len(seeds), "with off-topic captures": sum(p for _, p in seeds)}
    for label, fn in SCORES.items():
        rows = [(fn(r), p) for r, p in seeds]
        known = sum(1 for s, _ in rows if s is not None)
        folds = []
        for fold_seed in (0, 1, 2):
            order = list(range(len(rows)))
            random.Random(fold_seed).shuffle(order)
            for k in range(5):
                part = [rows[i] for i in order[k::5]]
                a = auc(part)
                if a is not None:
                    folds.append(a)
        whole = auc(rows)
        out[label] = {"auc": None if whole is None else round(whole, 3), "known": known,
                      "fold_mean": round(statistics.mean(folds), 3), "fold_sd": round(statistics.stdev(folds), 3),
                      "folds": len(folds)}
        print(f"{label:24s} AUC {whole:.3f}  folds {statistics.mean(folds):.3f} ± {statistics.stdev(folds):.3f} "
              f"({len(folds)} folds; {known} of {len(rows)} seeds scored)")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
