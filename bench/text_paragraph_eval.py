#!/usr/bin/env python3
"""The text profile on real pages: a replaced paragraph against a real re-download.

Why: the text profile promises that a replaced paragraph drifts and that a
re-download with small changes does not.  Made documents (tests/test_step.py)
keep that promise; this measures it on the newspaper pages
(``shared/data/pages/newspaper-pages.tar.gz``), where the page around the
article (menus, "most popular" lists, related links) changes between
downloads too.  Two kinds of pairs, each scored through the one scoring step
(``Engine.scan_history``, a two-capture history, ``--profile text``):

- **re-downloads**: each fixture folder's consecutive versions, as stored (no
  label: most are the same article with the page around it changed; some are
  the site's error page, which the text profile calls off topic);
- **paragraph replaced**: the newest version of ``<site>1`` with one article
  paragraph (a ``<p>`` of 25 words or more among the siblings of the page's
  largest run of paragraphs) replaced by one of ``<site>2``'s, chosen with a
  fixed seed: a change the text profile must call ``drifted``.

Printed: the change classes of both kinds, and how far the longest run of the
baseline's consecutive word 5-shingles missing from the capture (in words)
separates them: the length a "paragraph gone" rule would need.

usage: text_paragraph_eval.py [--pages TAR_OR_DIR] [--main-content] [--seed N]
"""

from __future__ import annotations

import argparse
import collections
import itertools
import random
import sys
import tarfile
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lxml.etree
import lxml.html

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
PAGES = REPO.parent / "shared" / "data" / "pages" / "newspaper-pages.tar.gz"
T0 = datetime(2015, 1, 1, tzinfo=UTC)
RUNS = (10, 15, 20, 25, 30, 40, 60)


def _pages_dir(src: Path, tmp: Path) -> Path:
    if src.is_dir():
        return next(p for p in [src, *src.rglob("html")] if (p / "html").is_dir() or p.name == "html")
    with tarfile.open(src) as tf:
        tf.extractall(tmp, filter="data")
    return next(p for p in tmp.rglob("html") if p.is_dir())


def _html_dir(pages: Path) -> Path:
    return pages if pages.name == "html" else pages / "html"


def longest_lost_run(base: tuple[str, ...], cur: tuple[str, ...], k: int = 5) -> int:
    """Words in the longest run of the baseline's consecutive k-shingles that the capture lacks (L
    replaced words take L + k - 1 shingles with them)."""
    def grams(t: tuple[str, ...]) -> list[str]:
        return [" ".join(t[i:i + k]) for i in range(max(1, len(t) - k + 1))]
    have = set(grams(cur))
    run = best = 0
    for g in grams(base):
        run = run + 1 if g not in have else 0
        best = max(best, run)
    return max(1, best - k + 1) if best else 0


def replaced(page: bytes, other: bytes, rng: random.Random) -> bytes | None:
    """``page`` with one article paragraph replaced by one of ``other``'s (None: no such paragraph)."""
    try:
        ra, ro = lxml.html.fromstring(page), lxml.html.fromstring(other)
    except (ValueError, lxml.etree.ParserError):
        return None
    body = collections.Counter(p.getparent() for p in ra.iter("p")).most_common(1)
    mine = [p for p in ra.iter("p") if body and p.getparent() is body[0][0] and len(p.text_content().split()) >= 25]
    theirs = [p for p in ro.iter("p") if len(p.text_content().split()) >= 25]
    if len(mine) < 2 or not theirs:
        return None
    target = rng.choice(mine)
    parent = target.getparent()
    assert parent is not None
    parent.replace(target, lxml.html.fromstring(lxml.html.tostring(rng.choice(theirs))))
    return bytes(lxml.html.tostring(ra, encoding="utf-8"))


def main() -> int:
    from watcher.config import EngineConfig, ExtractConfig
    from watcher.engine import Engine
    from watcher.model import Capture

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=Path, default=PAGES, help="newspaper-pages.tar.gz or its unpacked directory")
    ap.add_argument("--main-content", action="store_true", help="remove boilerplate first (extract.main_content)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    engine = Engine(EngineConfig(profile="text", extract=ExtractConfig(main_content=args.main_content)))

    def score(a: bytes, b: bytes, name: str) -> tuple[str, int]:
        url = f"http://{name.rstrip('12')}/news/2015/{name}"
        caps = [Capture(url=url, timestamp=T0 + timedelta(days=30 * i), content=c, content_type="text/html",
                        status=200) for i, c in enumerate((a, b))]
        change = engine.scan_history("h", caps).verdicts[1].change
        fa, fb = (engine.fingerprint(c) for c in caps)
        return change, longest_lost_run(fa.tokens or (), fb.tokens or ())

    rng = random.Random(args.seed)
    rows: list[tuple[str, str, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        html = _html_dir(_pages_dir(args.pages, Path(tmp)))
        for d in sorted(p for p in html.iterdir() if p.is_dir()):
            files = sorted(d.glob("*.html"))
            for a, b in itertools.pairwise(files):
                rows.append(("re-download", *score(a.read_bytes(), b.read_bytes(), d.name)))
            sibling = d.with_name(d.name[:-1] + "2")
            if d.name.endswith("1") and sibling.is_dir():
                page = files[-1].read_bytes()
                new = replaced(page, sorted(sibling.glob("*.html"))[-1].read_bytes(), rng)
                if new is not None:
                    rows.append(("paragraph replaced", *score(page, new, d.name)))
    print(f"text profile, {'main content' if args.main_content else 'whole page'}, seed {args.seed}\n")
    print("| pairs | n | unchanged | minor | drifted | off-topic | other |\n|---|--:|--:|--:|--:|--:|--:|")
    for kind in ("re-download", "paragraph replaced"):
        c = collections.Counter(ch for k, ch, _ in rows if k == kind)
        n = sum(c.values())
        main = [c[x] for x in ("unchanged", "minor", "drifted", "off-topic")]
        print(f"| {kind} | {n} | " + " | ".join(map(str, main)) + f" | {n - sum(main)} |")
    pos = [r for k, ch, r in rows if k == "paragraph replaced"]
    neg = [r for k, ch, r in rows if k == "re-download" and ch in ("unchanged", "minor")]
    print("\nA rule \"drifted when a run of N or more of the baseline's words is gone\":\n")
    print("| N | paragraph replaced caught | re-downloads now unchanged or minor flagged |\n|--:|--:|--:|")
    for n in RUNS:
        print(f"| {n} | {sum(r >= n for r in pos)} / {len(pos)} | {sum(r >= n for r in neg)} / {len(neg)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
