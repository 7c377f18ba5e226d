#!/usr/bin/env python3
"""The text profile on real pages: a replaced paragraph against a real re-download.

Why: the text profile promises that a replaced paragraph drifts and that a
re-download with small changes does not.  Made documents (tests/engine/test_step.py)
keep that promise; this measures it on the newspaper pages
(``shared/data/pages/newspaper-pages.tar.gz``), where the page around the
article (menus, "most popular" lists, related links) changes between
downloads too.  Two kinds of pairs, each scored through the one scoring step
(``Engine.scan_history``, a two-capture history, ``--profile text``):

- **re-downloads**: each fixture folder's consecutive versions, as stored (no
  label: most are the same article with the page around it changed; some are
  the site's error page, which the text profile calls off topic);
- **re-download, one word replaced**: the same pairs with one word of an article paragraph
  of the newer version replaced by a word of the site's other article that the page does not
  have, the shape of a synonym: must be ``drifted``, whatever else the page changed;
- **paragraph inserted**: the same page with one of ``<site>2``'s paragraphs put inside its
  article (before a paragraph other than the first): nothing of the baseline is gone, yet the
  text no longer reads as cited, so ``drifted`` too;
- **paragraph replaced**: the newest version of ``<site>1`` with one article
  paragraph (a ``<p>`` of 25 words or more among the siblings of the page's
  largest run of paragraphs) replaced by one of ``<site>2``'s, chosen with a
  fixed seed: a change the text profile must call ``drifted``.

Printed: the change classes of both kinds, and how far the longest run of the
baseline's words whose 5-shingles are all missing from the capture separates
them: where the text profile's "a paragraph gone" line (``TEXT_RUN_WORDS``)
sits among the lengths it could take.

The text profile reads the page's main content by default (``extract.main_content: auto``);
``--whole-page`` measures it on the whole page, as it read before.

``--flat DIR`` scores a folder of pages that have no versions (the trafilatura cache in
``shared/data/pages``, German, English and French): each page with one article paragraph
replaced by one of the next page's, the positives only.

usage: text_paragraph_eval.py [--pages TAR_OR_DIR | --flat DIR] [--whole-page] [--seed N]
"""

from __future__ import annotations

import argparse
import collections
import itertools
import random
import re
import sys
import tarfile
import tempfile
from collections.abc import Iterator
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


def replaced(page: bytes, other: bytes, rng: random.Random, insert: bool = False) -> bytes | None:
    """``page`` with one article paragraph replaced by one of ``other``'s (None: no such paragraph);
    ``insert``: one of ``other``'s put before an article paragraph other than the first, inside the
    article's run of paragraphs."""
    from watcher.extract.decode import decode

    try:  # parsed as driftline reads the pages, written back in ASCII (character references), so
        # the page reads the same whatever charset it declares: only the paragraph changes
        ra, ro = (lxml.html.fromstring(decode(x, "text/html")[0]) for x in (page, other))
    except (ValueError, lxml.etree.ParserError):
        return None
    mine = _article_paragraphs(ra)
    theirs = [p for p in ro.iter("p") if len(p.text_content().split()) >= 25]
    if len(mine) < 2 or not theirs:
        return None
    target = rng.choice(mine[1:] if insert else mine)
    new = lxml.html.fromstring(lxml.html.tostring(rng.choice(theirs), encoding="unicode"))
    if insert:
        target.addprevious(new)
    else:
        parent = target.getparent()
        assert parent is not None
        parent.replace(target, new)
    return bytes(lxml.html.tostring(ra, encoding="us-ascii"))


def _article_paragraphs(root: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The ``<p>`` of 25 words or more among the siblings of the page's largest run of paragraphs."""
    body = collections.Counter(p.getparent() for p in root.iter("p")).most_common(1)
    return [p for p in root.iter("p") if body and p.getparent() is body[0][0] and len(p.text_content().split()) >= 25]


def one_word(page: bytes, other: bytes, rng: random.Random) -> bytes | None:
    """``page`` with one word of an article paragraph (six letters or more) replaced by a word of
    ``other``'s that ``page`` does not have: the shape of a synonym, one word for another in place
    (None: no such word).  The bytes are edited in place (a word found once in the page), so the
    page keeps its encoding and markup."""
    from watcher.text import tokens

    try:
        ra, ro = lxml.html.fromstring(page), lxml.html.fromstring(other)
    except (ValueError, lxml.etree.ParserError):
        return None
    have = set(tokens(ra.text_content()))
    new = sorted({w for w in tokens(ro.text_content()) if w.isascii() and w.isalpha() and len(w) >= 6} - have)
    words = sorted({w for p in _article_paragraphs(ra) for w in re.findall(r"\b[A-Za-z]{6,}\b", p.text or "")
                    if len(re.findall(rb"\b" + w.encode() + rb"\b", page)) == 1})
    if not words or not new:
        return None
    word = rng.choice(words).encode()
    return re.sub(rb"\b" + word + rb"\b", rng.choice(new).encode(), page, count=1)


def pairs(pages: Path, seed: int, flat: bool = False) -> Iterator[tuple[str, str, bytes, bytes]]:
    """(kind, fixture name, baseline, capture) of every pair measured: each re-download followed by
    the same pair with one word replaced (where a word is found), then each site's paragraph
    replaced.  ``flat``: ``pages`` is a folder of pages without versions (the trafilatura cache),
    each with one article paragraph replaced by one of the next page's (in name order)."""
    rng = random.Random(seed)
    word_rng = random.Random(seed + 1000)  # its own, so the paragraphs chosen stay those of earlier runs
    insert_rng = random.Random(seed + 2000)
    if flat:
        files = sorted(pages.glob("*.htm*"))
        for i, f in enumerate(files):
            page = f.read_bytes()
            new = replaced(page, files[(i + 1) % len(files)].read_bytes(), rng)
            if new is not None:
                yield "paragraph replaced", f.stem, page, new
        return
    for d in sorted(p for p in pages.iterdir() if p.is_dir()):
        files = sorted(d.glob("*.html"))
        other = d.with_name(d.name[:-1] + {"1": "2", "2": "1"}.get(d.name[-1], "-"))
        donor = sorted(other.glob("*.html"))[-1].read_bytes() if other.is_dir() else None
        for a, b in itertools.pairwise(files):
            yield "re-download", d.name, a.read_bytes(), b.read_bytes()
            swapped = one_word(b.read_bytes(), donor, word_rng) if donor is not None else None
            if swapped is not None:
                yield "re-download, one word replaced", d.name, a.read_bytes(), swapped
        if d.name.endswith("1") and donor is not None:
            new = replaced(files[-1].read_bytes(), donor, rng)
            if new is not None:
                yield "paragraph replaced", d.name, files[-1].read_bytes(), new
            new = replaced(files[-1].read_bytes(), donor, insert_rng, insert=True)
            if new is not None:
                yield "paragraph inserted", d.name, files[-1].read_bytes(), new


def main() -> int:
    from watcher.config import EngineConfig, ExtractConfig
    from watcher.engine import Engine
    from watcher.model import Capture
    from watcher.profiles.text import TEXT_RUN_WORDS, lost_run
    from watcher.state import HistoryState

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=Path, default=PAGES, help="newspaper-pages.tar.gz or its unpacked directory")
    ap.add_argument("--whole-page", action="store_true", help="keep the boilerplate (extract.main_content: false)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--flat", type=Path, metavar="DIR",
                    help="pages without versions instead (the unpacked trafilatura cache): replaced paragraphs only")
    args = ap.parse_args()
    extract = ExtractConfig(main_content=False) if args.whole_page else ExtractConfig()
    engine = Engine(EngineConfig(profile="text", extract=extract))

    def score(a: bytes, b: bytes, name: str) -> tuple[str, int]:
        url = f"http://{name.rstrip('12')}/news/2015/{name}"
        caps = [Capture(url=url, timestamp=T0 + timedelta(days=30 * i), content=c, content_type="text/html",
                        status=200) for i, c in enumerate((a, b))]
        # each page fingerprinted once, then the one scoring step (what scan_history folds)
        fa, fb = (engine.fingerprint(c, seed_url=url) for c in caps)
        state = engine.score_next("h", HistoryState(), caps[0], fa, url)[1]
        change = engine.score_next("h", state, caps[1], fb, url)[0].change
        return change, lost_run(fa.tokens or (), fb.tokens or (), engine.config.tokens.shingle_size)

    rows: list[tuple[str, str, int]] = []
    word_pairs: list[tuple[str, str]] = []  # (the re-download's change, the same with one word replaced)
    with tempfile.TemporaryDirectory() as tmp:
        source = pairs(args.flat, args.seed, flat=True) if args.flat is not None \
            else pairs(_html_dir(_pages_dir(args.pages, Path(tmp))), args.seed)
        plain = ""
        for kind, name, a, b in source:
            change, run = score(a, b, name)
            rows.append((kind, change, run))
            if kind == "re-download":
                plain = change
            elif kind == "re-download, one word replaced":
                word_pairs.append((plain, change))
    print(f"text profile, {'whole page' if args.whole_page else 'main content (the default)'}, seed {args.seed}\n")
    print("| pairs | n | unchanged | minor | drifted | off-topic | other |\n|---|--:|--:|--:|--:|--:|--:|")
    for kind in ("re-download", "re-download, one word replaced", "paragraph replaced", "paragraph inserted"):
        c = collections.Counter(ch for k, ch, _ in rows if k == kind)
        n = sum(c.values())
        main = [c[x] for x in ("unchanged", "minor", "drifted", "off-topic")]
        print(f"| {kind} | {n} | " + " | ".join(map(str, main)) + f" | {n - sum(main)} |")
    kept = [w for p, w in word_pairs if p in ("unchanged", "minor")]
    print(f"\nOne word replaced in a re-download the profile judged unchanged or minor: "
          f"{sum(w == 'drifted' for w in kept)} of {len(kept)} drifted "
          f"({', '.join(f'{k} {v}' for k, v in sorted(collections.Counter(kept).items()))})")
    pos = [r for k, ch, r in rows if k == "paragraph replaced"]
    neg = [r for k, ch, r in rows if k == "re-download" and ch in ("unchanged", "minor", "drifted")]
    print(f"\nPairs with a run of N or more of the baseline's words gone (the text profile's line: N = "
          f"{TEXT_RUN_WORDS}):\n")
    print("| N | paragraph replaced | re-downloads judged on topic |\n|--:|--:|--:|")
    for n in RUNS:
        print(f"| {n} | {sum(r >= n for r in pos)} / {len(pos)} | {sum(r >= n for r in neg)} / {len(neg)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
