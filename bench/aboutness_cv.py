#!/usr/bin/env python3
"""Does collection aboutness or the LSI cosine help?  Grouped CV on the shared gold.

Why: both measures were proposed (AlNoamany et al., OTMT) and never shipped; a
measure may vote only where held-out folds say it helps.  This script

1. scans the gold directory once with every measure reported (``driftline
   scan``), unless ``--result`` names such a scan;
2. fingerprints every capture (``Engine.fingerprint``) and computes, per
   TimeMap, OTMT's LSI cosine to the first valid capture (seeded, exact SVD);
3. per fold, builds the collection centroid from the *training* folds'
   baselines only, and scores every capture's aboutness (a training TimeMap
   with its own baseline left out of the centroid, so training scores look
   like held-out ones), its drop from its own baseline's aboutness, and its
   baseline's aboutness (the flag for TimeMaps whose first capture is off
   topic);
4. runs ``watcher.crossval`` for several seeds: each measure alone, each as an
   extra OR-voter on the shipped verdict (``default OR m < t``) and inside the
   re-tuned verdict rule, against the default verdict.

usage: aboutness_cv.py [--gold DIR] [--result SCAN.json] [--folds 5] [--seeds 0,1,2] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from watcher.collection import aboutness, collection_centroid, first_valid, lsi_cosines  # noqa: E402
from watcher.config import Config, PolicyConfig  # noqa: E402
from watcher.crossval import Column, Rule, cross_validate, format_cv  # noqa: E402
from watcher.engine import Engine  # noqa: E402
from watcher.evaluate import match_results  # noqa: E402
from watcher.measures import REGISTRY  # noqa: E402
from watcher.model import Fingerprint, ts14  # noqa: E402
from watcher.sources.gold import iter_gold  # noqa: E402

SHARED_GOLD = REPO.parent / "shared" / "data" / "goldstandard-1068.tar.gz"
VOTING = ("tfintersection", "wordcount")


def _fingerprint_history(item: tuple[str, list[Any]]) -> tuple[str, list[tuple[str, Fingerprint]], int | None,
                                                              list[float | None]]:
    """(TimeMap id, [(date, slim fingerprint)], first valid index, LSI cosines)."""
    history, caps = item
    eng = Engine(Config().engine)
    fps = [eng.fingerprint(c) for c in caps]
    slim = [replace(fp, shingles=None, tokens=None, text=None, minhash=b"") for fp in fps]
    base = first_valid(slim)
    lsi: list[float | None] = lsi_cosines(slim, base) if base is not None else [None] * len(slim)
    return history.removeprefix("gold:"), [(ts14(c.timestamp), fp) for c, fp in zip(caps, slim, strict=True)], \
        base, lsi


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gold", type=Path, help="gold directory (default: extract the shared one)")
    ap.add_argument("--result", type=Path, help="a scan of it with every measure reported (default: scan now)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path, help="write every figure here")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="aboutness-cv-"))
    gold = args.gold
    if gold is None:
        with tarfile.open(SHARED_GOLD) as tar:
            tar.extractall(tmp, filter="data")
        gold = tmp / "goldstandard-1068"
    result = args.result
    t0 = time.perf_counter()
    if result is None:
        result = tmp / "scan.json"
        every = ",".join(n for n in REGISTRY if n not in VOTING)
        subprocess.run([sys.executable, "-m", "watcher.cli", "scan", str(gold), "--report", every, "--no-progress",
                        "-o", str(result)], check=True, cwd=REPO)
    t_scan = time.perf_counter() - t0

    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        per_tm = list(pool.map(_fingerprint_history, iter_gold(str(gold)), chunksize=4))
    t_fp = time.perf_counter() - t0

    matched = match_results(gold, result)
    row_of = {(g.id, g.date): i for i, (g, _) in enumerate(matched.pairs)}
    n = len(matched.pairs)
    lsi_col = np.full(n, np.nan)
    caps_of: dict[str, list[tuple[int, Fingerprint]]] = {}
    base_of: dict[str, Fingerprint] = {}
    for tid, caps, base, lsi in per_tm:
        if base is not None:
            base_of[tid] = caps[base][1]
        for (date, fp), score in zip(caps, lsi, strict=True):
            i = row_of.get((tid, date))
            if i is None:
                continue
            caps_of.setdefault(tid, []).append((i, fp))
            if score is not None:
                lsi_col[i] = score
    groups = [g.id for g, _ in matched.pairs]

    def fold_columns(fold: int, test: np.ndarray) -> dict[str, Column]:
        test_tms = {groups[i] for i in np.flatnonzero(test)}
        cen = collection_centroid(b for tid, b in base_of.items() if tid not in test_tms)
        ab, drop, first = (np.full(n, np.nan) for _ in range(3))
        for tid, rows in caps_of.items():
            own = base_of.get(tid)
            excl = own if tid not in test_tms else None
            b_score = aboutness(own, cen, exclude=excl) if own is not None else None
            for i, fp in rows:
                s = aboutness(fp, cen, exclude=excl)
                if s is not None:
                    ab[i] = s
                    if b_score is not None:
                        drop[i] = s - b_score
                if b_score is not None:
                    first[i] = b_score
        return {"aboutness": (ab, "below", "fraction"), "aboutness_drop": (drop, "below", "fraction"),
                "first_aboutness": (first, "below", "fraction"), "lsi": (lsi_col, "below", "fraction")}

    new = ("aboutness", "aboutness_drop", "first_aboutness", "lsi")
    rules = [Rule("default", "default"),
             Rule("verdict re-tuned: checks OR any(tfintersection, wordcount)", "verdict", VOTING, True),
             Rule("cosine", "measure", ("cosine",))]
    rules += [Rule(m, "measure", (m,)) for m in new]
    rules += [Rule(f"default OR {m}", "verdict", (m,), with_default=True) for m in new]
    rules += [Rule(f"verdict re-tuned + {m}", "verdict", (*VOTING, m), True) for m in ("aboutness", "lsi")]

    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    out: dict[str, Any] = {"scan_s": round(t_scan, 1), "fingerprint_s": round(t_fp, 1), "seeds": {}}
    t0 = time.perf_counter()
    for seed in seeds:
        rep = cross_validate(matched, args.folds, seed, voting=VOTING, policy=PolicyConfig(), rules=rules,
                             labels_path=str(gold), result_path=str(result), fold_columns=fold_columns)
        out["seeds"][seed] = rep.to_json()
        if seed == seeds[0]:
            print(format_cv(rep))
    out["cv_s"] = round(time.perf_counter() - t0, 1)

    print(f"\nAcross seeds {seeds} ({args.folds} folds each): F1 per held-out fold, mean ± sd over all "
          f"{args.folds * len(seeds)} folds; micro F1 per seed; TimeMap-level F1 per seed\n")
    print("| rule | fold F1 mean ± sd [min, max] | micro F1 per seed | TimeMap F1 per seed |")
    print("|---|---|---|---|")
    for k, rule in enumerate(rules):
        fold_f1 = [f["f1"] for s in seeds for f in out["seeds"][s]["rules"][k]["folds"]]
        micro = ", ".join(f"{out['seeds'][s]['rules'][k]['micro']['f1']:.3f}" for s in seeds)
        tml = ", ".join(f"{out['seeds'][s]['rules'][k]['timemap']['f1']:.3f}" for s in seeds)
        print(f"| {rule.name} | {np.mean(fold_f1):.3f} ± {np.std(fold_f1, ddof=1):.3f} "
              f"[{min(fold_f1):.3f}, {max(fold_f1):.3f}] | {micro} | {tml} |")
    print(f"\nscan {t_scan:.0f} s, fingerprints + LSI {t_fp:.0f} s, cross-validation {out['cv_s']:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
