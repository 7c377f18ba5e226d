#!/usr/bin/env python3
"""The ``doi`` profile on landing pages of seven platforms across redesigns (tests/fixtures/doi_platforms.py).

Why: a publisher's redesign that keeps the article must never read as drift,
while an edited abstract, a replaced body paragraph, a different article and a
bot wall keep their classes.  Each case is a baseline and a later capture of
one DOI, judged by ``decide_doi`` against the fresh baseline and against the
baseline as the store keeps it (sketches only); counted per platform, so the
spread across platforms shows, not only the total.

Cases: ``redesign`` (2019 -> 2022, 2019 -> 2026, 2022 -> 2026 designs: menus,
footer, share bar, rights, related works, metrics, copyright year changed),
``box`` (a box beside the abstract removed or added in a redesign),
``no-doi`` (a page that never shows its DOI, watched under one), and the
classes that must not move: ``edited abstract`` -> drifted, ``body paragraph``
-> drifted, ``replaced`` -> replaced, ``bot challenge`` -> blocked.

    PYTHONPATH=. python bench/doi_platform_eval.py [--seeds 6]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fixtures import doi_platforms as pl
from tests.fixtures.doi_platforms import EXPECTED, run


def table(got: dict[tuple[str, str], Counter[str]]) -> str:
    lines = ["| case | " + " | ".join(pl.PLATFORMS) + " | all |", "|---|" + "--:|" * (len(pl.PLATFORMS) + 1)]
    for kind, want in EXPECTED.items():
        row, tot_ok, tot = [], 0, 0
        for p in pl.PLATFORMS:
            c = got.get((kind, p), Counter())
            ok, n = sum(v for k, v in c.items() if k in want), sum(c.values())
            tot_ok, tot = tot_ok + ok, tot + n
            row.append(f"{ok}/{n}" if n else "-")
        lines.append(f"| {kind} ({'/'.join(sorted(want))}) | " + " | ".join(row) + f" | **{tot_ok}/{tot}** |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=6, help="articles per platform")
    ap.add_argument("--misses", type=int, default=10, help="misses to print")
    args = ap.parse_args()
    res = run(args.seeds)
    sys.stdout.write(table(res["got"]) + "\n")
    for m in res["misses"][: args.misses]:
        sys.stdout.write("MISS " + " | ".join(m)[:400] + "\n")
    sys.stdout.write(f"{len(res['misses'])} misses\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
