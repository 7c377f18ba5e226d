#!/usr/bin/env python3
"""Which ``actuator.deprioritise_below_yield``?  Grouped CV over TimeMaps on the shared gold.

Why: the default decides which seeds a crawler is told to serve last, and a
value picked on one run of one collection says little about the next.  Here
each TimeMap of the gold standard stands for a seed (its captures are the
seed's visits):

* driftline's yield of a seed: the share of its captures the scan judged
  ``on-topic`` with content of their own (change not ``empty``), the yield
  the seed report computes from the same verdicts;
* the truth it should find: the seed's *gold* yield (the share of its
  captures labelled on topic that have content) is below one half, i.e. most
  of what the crawl fetched from it was off topic or empty.  The looser truth "the seed has any
  off-topic capture" is reported beside it.

Seeds with fewer than ``--min-captures`` captures are left out, as
``actuator.guidance_min_captures`` leaves them out.  Repeated K-fold over
TimeMaps (a TimeMap is one group, so folds are grouped by construction): the
threshold is the best-F1 value on the training folds, scored on the held-out
fold; mean, standard deviation, min and max over all folds and repeats, and
the spread of the thresholds chosen.  Also: F1 of fixed thresholds pooled over
all seeds, and the ROC AUC of yield (low yield = positive).

usage: guidance_threshold_cv.py [--gold DIR] [--result SCAN.json] [--folds 5] [--repeats 20] [--json OUT]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
GRID = [round(0.05 * i, 2) for i in range(1, 20)]


def scan(gold: Path, out: Path) -> None:
    subprocess.run([sys.executable, "-m", "watcher.cli", "--log-level", "WARNING", "scan", str(gold), "-o", str(out),
                    "--no-progress"], check=True, cwd=REPO)


def seeds(result: dict[str, Any], labels: Path, min_captures: int) -> list[tuple[str, float, float, bool, float]]:
    """(TimeMap id, driftline yield, gold yield, any off-topic, gold on-topic share) per TimeMap."""
    gold: dict[tuple[str, str], int] = {}
    with labels.open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            gold[(row["id"], row["URI"])] = int(row["label"])
    out = []
    for history, captures in result.items():
        tm = history.split(":", 1)[1]
        judged, truth = [], []
        for uri_m, entry in captures.items():
            v = entry.get("driftline") if isinstance(entry, dict) else None
            if not v or (tm, uri_m) not in gold:
                continue  # the history's summary, or a capture without a label
            has_content = v.get("change") != "empty"
            truth.append(gold[(tm, uri_m)] == 1 and has_content)
            judged.append(v.get("status") == "on-topic" and has_content)
        if len(judged) < min_captures:
            continue
        labels_ = [gold[(tm, u)] for u in captures if (tm, u) in gold]
        out.append((tm, sum(judged) / len(judged), sum(truth) / len(truth), 0 in labels_,
                    sum(labels_) / len(labels_)))
    return out


def f1(pred: list[bool], truth: list[bool]) -> float:
    tp = sum(p and t for p, t in zip(pred, truth, strict=True))
    fp = sum(p and not t for p, t in zip(pred, truth, strict=True))
    fn = sum(t and not p for p, t in zip(pred, truth, strict=True))
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def auc(scores: list[float], truth: list[bool]) -> float:
    """ROC AUC of ``-score`` (a low yield predicts the positive class); ties count a half."""
    pos = [s for s, t in zip(scores, truth, strict=True) if t]
    neg = [s for s, t in zip(scores, truth, strict=True) if not t]
    if not pos or not neg:
        return float("nan")
    wins = sum(1.0 if p < n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def cv(rows: list[tuple[str, float, bool]], folds: int, repeats: int) -> dict[str, Any]:
    scores, chosen = [], []
    for rep in range(repeats):
        order = list(rows)
        random.Random(rep).shuffle(order)
        for k in range(folds):
            test = order[k::folds]
            train = [r for i, r in enumerate(order) if i % folds != k]
            best = max(GRID, key=lambda t: (f1([y < t for _, y, _ in train], [p for _, _, p in train]), -t))
            chosen.append(best)
            if any(p for _, _, p in test):  # F1 is undefined on a fold without a positive seed
                scores.append(f1([y < best for _, y, _ in test], [p for _, _, p in test]))
    return {
        "f1_mean": statistics.mean(scores), "f1_sd": statistics.stdev(scores),
        "f1_min": min(scores), "f1_max": max(scores),
        "threshold_median": statistics.median(chosen), "threshold_min": min(chosen), "threshold_max": max(chosen),
        "folds_scored": len(scores), "folds": len(chosen),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gold", type=Path, help="an extracted gold directory (default: extract the shared one)")
    ap.add_argument("--result", type=Path, help="a `driftline scan` result of the gold directory")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--min-captures", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        gold = args.gold
        if gold is None:
            with tarfile.open(REPO.parent / "shared" / "data" / "goldstandard-1068.tar.gz") as tar:
                tar.extractall(tmp, filter="data")
            gold = Path(tmp) / "goldstandard-1068"
        result_path = args.result or Path(tmp) / "gold.json"
        if args.result is None:
            scan(gold, result_path)
        result = json.loads(result_path.read_text(encoding="utf-8"))
        data = seeds(result, gold / "labels.tsv", args.min_captures)
    report: dict[str, Any] = {"seeds": len(data)}
    truths: dict[str, Callable[[float, bool, float], bool]] = {
        "gold yield < 0.5": lambda g, anyoff, on: g < 0.5,
        "gold on-topic share < 0.5 (emptiness ignored)": lambda g, anyoff, on: on < 0.5,
        "any off-topic capture": lambda g, anyoff, on: anyoff,
    }
    for name, truth_of in truths.items():
        rows = [(tm, y, bool(truth_of(g, anyoff, on))) for tm, y, g, anyoff, on in data]
        truth = [p for _, _, p in rows]
        report[name] = {
            "positives": sum(truth),
            "auc_of_yield": auc([y for _, y, _ in rows], truth),
            "fixed": {t: round(f1([y < t for _, y, _ in rows], truth), 3) for t in (0.2, 0.3, 0.4, 0.5, 0.6)},
            "cv": cv(rows, args.folds, args.repeats),
        }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
