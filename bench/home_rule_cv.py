#!/usr/bin/env python3
"""The home-page rule against its alternatives, by grouped cross-validation over TimeMaps.

The collection profile keeps a home page on topic when the site stays the same, however much of
its text was replaced ("on topic (home page: same site, text replaced; containment 0.02 < 0.80)");
the site's identity is lost only where the title AND the text both go (watcher/profiles/
collection.py).  A held-out collection had 8 false negatives of that reason (and the shared gold 4,
as "text changed").  The alternatives (issue 39): a replaced text under the same site is off topic
unless what names the site carries over:

- ``title``: ... unless the title carries over (title similarity >= 0.50, the identity line);
- ``title|terms``: ... unless the title or the subject terms carry over (a top-20 term shared:
  ``tfintersection`` >= 1, its voting line);
- ``title|cosine``: ... unless the title carries over or the text keeps its vocabulary (cosine >=
  0.30, the "another text" line of the text profile);
- ``replaced``: a replaced text (containment < 0.20) is off topic, whatever carries over.

Nothing is fitted: each rule is scored as it stands on the held-out fold, so the folds give the
spread of its F1 and of its difference to today's rule.  Every rule flips only the captures that
today's verdict keeps on topic under the home-page reason; the rest of the verdict is the scan's.

usage: home_rule_cv.py SCAN.json [SCAN.json ...] [--folds 5] [--seeds 0,1,2]
(``SCAN.json``: ``driftline scan`` of a labelled gold directory; ``--json OUT`` writes the figures.)
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from watcher.evaluation.crossval import assign_folds

HOME = re.compile(r"^on topic \(home page[^:]*: same site, text (replaced|changed)")
Scores = dict[str, float | None]
RULES: dict[str, Callable[[Scores], bool]] = {
    "today (kept on topic)": lambda s: False,
    "replaced unless title": lambda s: _replaced(s) and not _ge(s, "title", 0.50),
    "replaced unless title|terms": lambda s: _replaced(s) and not (_ge(s, "title", 0.50)
                                                                   or _ge(s, "tfintersection", 1.0)),
    "replaced unless title|cosine": lambda s: _replaced(s) and not (_ge(s, "title", 0.50) or _ge(s, "cosine", 0.30)),
    "replaced": lambda s: _replaced(s),
}


def _ge(s: Scores, name: str, t: float) -> bool:
    v = s.get(name)
    return v is not None and v >= t


def _replaced(s: Scores) -> bool:
    v = s.get("containment")
    return v is not None and v < 0.20


def rows_of(path: Path) -> list[tuple[str, bool, bool, Scores | None]]:
    """(TimeMap, off topic by its label, flagged by the scan, scores where the home-page rule kept it)."""
    out = []
    for history, caps in json.loads(path.read_text()).items():
        for entry in caps.values():
            d = entry.get("driftline")
            if not d or d.get("label") is None:
                continue
            scores = {k: v.get("comparison score") for k, v in entry.get("timemap measures", {}).items()}
            home = scores if HOME.match(d.get("reason") or "") else None
            out.append((history, d["label"] == 0, d["status"] == "off-topic", home))
    return out


def f1(pred: list[bool], pos: list[bool]) -> float:
    tp = sum(p and y for p, y in zip(pred, pos, strict=True))
    fp = sum(p and not y for p, y in zip(pred, pos, strict=True))
    fn = sum(y and not p for p, y in zip(pred, pos, strict=True))
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def evaluate(rows: list[tuple[str, bool, bool, Scores | None]], folds: int, seeds: list[int]) -> dict[str, Any]:
    groups = [r[0] for r in rows]
    pos = [r[1] for r in rows]
    preds = {name: [r[2] or (r[3] is not None and rule(r[3])) for r in rows] for name, rule in RULES.items()}
    per: dict[str, list[float]] = {n: [] for n in RULES}
    delta: dict[str, list[float]] = {n: [] for n in RULES}
    for seed in seeds:
        fold_of = assign_folds(groups, pos, folds, seed)
        for k in range(folds):
            idx = [i for i, g in enumerate(groups) if fold_of[g] == k]
            ys = [pos[i] for i in idx]
            base = f1([preds["today (kept on topic)"][i] for i in idx], ys)
            for n in RULES:
                v = f1([preds[n][i] for i in idx], ys)
                per[n].append(v)
                delta[n].append(v - base)
    return {"captures": len(rows), "home_kept": sum(r[3] is not None for r in rows),
            "rules": {n: {"f1_whole": round(f1(preds[n], pos), 4),
                          "flipped": sum(p != r[2] for p, r in zip(preds[n], rows, strict=True)),
                          "flipped_off_topic": sum(p != r[2] and r[1] for p, r in zip(preds[n], rows, strict=True)),
                          "cv_f1_mean": round(statistics.mean(per[n]), 4),
                          "cv_f1_sd": round(statistics.stdev(per[n]), 4),
                          "cv_delta_mean": round(statistics.mean(delta[n]), 4),
                          "cv_delta_sd": round(statistics.stdev(delta[n]), 4)} for n in RULES}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scans", nargs="+", type=Path)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    seeds = [int(s) for s in a.seeds.split(",")]
    report = {}
    for scan in a.scans:
        res = evaluate(rows_of(scan), a.folds, seeds)
        report[scan.name] = res
        print(f"## {scan.name}: {res['captures']} captures, {res['home_kept']} kept on topic by the home-page rule")
        print("| rule | F1 whole | flipped (of them off topic) | CV F1 mean ± sd | CV ΔF1 vs today mean ± sd |")
        print("|---|--:|--:|--:|--:|")
        for n, r in res["rules"].items():
            print(f"| {n} | {r['f1_whole']:.3f} | {r['flipped']} ({r['flipped_off_topic']}) | "
                  f"{r['cv_f1_mean']:.3f} ± {r['cv_f1_sd']:.3f} | {r['cv_delta_mean']:+.3f} ± {r['cv_delta_sd']:.3f} |")
    if a.json:
        a.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
