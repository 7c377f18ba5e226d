"""Do cosine, containment and tfintersection behave alike across scripts?

For every language found in the shared pages, versions of one page (same
article) should score high and two different articles of one site low, with
the same thresholds whatever the script.  Prints one table per tokenisation:
``before`` (the tokeniser driftline had before watcher/text.py: ``[^\\W_]+``
lowercased words, raw justext stop lists, character bigrams) and ``after``
(watcher/text.py, what the engine runs now).  Everything else -- extraction,
language, shingle size, measures -- is the engine's, at its defaults.

Pairs:

- ``news`` (``pages/newspaper-pages.tar.gz``): *versions* are the later files
  of a fixture folder against its first file, skipping the site's own
  not-found pages (a recognised page kind: a different page, not a version);
  *different* is ``<site>1`` against ``<site>2`` (two articles of one site)
  and ``japanese_article`` against ``japanese_article2``.
- ``news-edit``: the languages with a single page in that set get a
  *synthetic* version (15 % of the page's text blocks deleted, seeded), so
  every script has a row.  Marked as such; it tests the tokeniser's
  stability, not real-world churn.
- ``gold`` (``goldstandard-1068.tar.gz``): per language of the baseline,
  curator-labelled on-topic captures against the TimeMap's first capture
  (*versions*) and off-topic ones (*different*).

Terms are the engine's (stop list and its cap, the ``tokens.max_terms`` most
frequent), and the cosine is its TF cosine, as ``driftline compare`` runs it.
Skips (exit 0, with the reason) when the shared data is absent.

    .venv/bin/python bench/script_bench.py [--data ../shared/data] [--gold-max 20] [--main-content]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tarfile
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import lxml.html

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from watcher import lang  # noqa: E402
from watcher import measures as ms  # noqa: E402
from watcher.config import TokenConfig, load_config  # noqa: E402
from watcher.engine import Engine  # noqa: E402
from watcher.fingerprint import shingle_hashes, terms_of, top_terms, words  # noqa: E402
from watcher.model import Capture, Fingerprint  # noqa: E402

Pair = tuple[str, str, str, Fingerprint, Fingerprint]  # (source, kind, language, base, cur)

# -- the tokeniser before watcher/text.py, kept here to measure the change ----
_OLD_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*", re.U)
_OLD_NS = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_OLD_NO_SPACE = re.compile(f"[{_OLD_NS}]")
_OLD_SPLIT = re.compile(f"([{_OLD_NS}]+)")
_DIGITS = re.compile(r"^[\d\W_]+$")


def old_words(text: str) -> list[str]:
    toks = [t.lower() for t in _OLD_WORD.findall(text)]
    out: list[str] = []
    for t in toks:
        if len(t) > 2 and _OLD_NO_SPACE.search(t):
            for run in _OLD_SPLIT.split(t):
                if run and _OLD_NO_SPACE.match(run) and len(run) > 2:
                    out.extend(run[i:i + 2] for i in range(len(run) - 1))
                elif run:
                    out.append(run)
        else:
            out.append(t)
    return out


def old_stops(code: str | None) -> frozenset[str]:
    name = lang._JUSTEXT_NAMES.get(code or "")
    if not name:
        return frozenset()
    import justext

    return frozenset(w.lower() for w in justext.get_stoplist(name))


def old_terms(tokens: Sequence[str], code: str | None) -> list[str]:
    stops = old_stops(code)
    return [t for t in tokens if t not in stops and (len(t) > 1 or _OLD_NO_SPACE.match(t)) and not _DIGITS.match(t)]


def retokenise(fp: Fingerprint, how: str, tokens: TokenConfig) -> Fingerprint:
    """``fp`` with terms and shingles from tokeniser ``how`` (before/after)."""
    text = fp.text or ""
    if how == "before":
        toks = old_words(text)
        terms = old_terms(toks, fp.language)
    else:
        toks = words(text, fp.language)
        terms = terms_of(toks, fp.language, stop=True, stem=False, stop_max=tokens.stop_words_max)
    hashes = shingle_hashes(toks, tokens.shingle_size)
    return replace(fp, term_freqs=top_terms(Counter(terms), tokens.max_terms),
                   shingles=frozenset(int(h) for h in hashes),
                   shingle_count=len(hashes))


# -- pairs -------------------------------------------------------------------
def _capture(content: bytes) -> Capture:
    return Capture(url="http://example.org/a", timestamp=datetime(2020, 1, 1, tzinfo=UTC), content=content,
                   content_type="text/html")


def _edited(content: bytes, seed: int, share: float = 0.15) -> bytes:
    """The page with ``share`` of its text-bearing leaf blocks deleted."""
    doc = lxml.html.fromstring(content)
    blocks = [e for e in doc.iter("p", "li", "h1", "h2", "h3", "h4", "td", "span", "a", "div")
              if len(e) == 0 and (e.text or "").strip()]
    rnd = random.Random(seed)
    for e in rnd.sample(blocks, int(len(blocks) * share)):
        parent = e.getparent()
        if parent is not None:
            e.drop_tree()
    return bytes(lxml.html.tostring(doc, encoding="utf-8"))


def news_pairs(root: Path, fpr: Callable[[bytes], Fingerprint]) -> Iterable[Pair]:
    folders = {d.name: sorted(d.glob("*.html")) for d in sorted((root / "html").iterdir()) if d.is_dir()}
    first = {name: fpr(files[0].read_bytes()) for name, files in folders.items() if files}
    for name, files in folders.items():
        base = first[name]
        if not base.term_freqs:
            continue
        if base.page_kind:
            # the first stored version was the site's not-found page: take the first real one
            real = [fpr(f.read_bytes()) for f in files]
            kept = [f for f in real if not f.page_kind]
            if not kept:
                continue
            base, rest = kept[0], kept[1:]
        else:
            rest = [fpr(f.read_bytes()) for f in files[1:]]
        for cur in rest:
            if not cur.page_kind and cur.term_freqs and cur.digest != base.digest:
                yield "news", "version", base.language or "-", base, cur
        if len(files) == 1 and base.language not in ("en", None):
            cur = fpr(_edited(files[0].read_bytes(), seed=len(name)))
            yield "news-edit", "version", base.language or "-", base, cur
        other = first.get(name[:-1] + "2") if name.endswith("1") else None
        if other is not None and other.term_freqs and other.text != base.text:
            yield "news", "different", base.language or "-", base, other
    if "japanese_article" in first and "japanese_article2" in first:
        yield "news", "different", "ja", first["japanese_article"], first["japanese_article2"]


def gold_pairs(root: Path, eng: Engine, per_language: int) -> Iterable[Pair]:
    from watcher.sources.gold import iter_gold

    used: Counter[str] = Counter()
    for _hist, caps in iter_gold(str(root)):
        if len(caps) < 2:
            continue
        first = eng.fingerprint(caps[0])
        if used[first.language or "-"] >= per_language:
            continue  # enough TimeMaps of this language: spare the fingerprinting
        fps = [first] + [eng.fingerprint(c) for c in caps[1:]]
        ok = [(c, f) for c, f in zip(caps, fps, strict=True) if f.term_freqs]
        if len(ok) < 2:
            continue
        base = ok[0][1]
        code = base.language or "-"
        used[code] += 1
        for c, f in ok[1:]:
            if f.digest != base.digest:
                yield "gold", "version" if c.label == 1 else "different", code, base, f


# -- table -------------------------------------------------------------------
def score(base: Fingerprint, cur: Fingerprint) -> tuple[float, float, float]:
    ctx = ms.Context()
    return (ms.cosine(base, cur, ctx) or 0.0, ms.containment(base, cur, ctx) or 0.0,
            ms.tfintersection(base, cur, ctx) or 0.0)


def _fmt(xs: list[float], agg: Callable[[list[float]], float], digits: int = 3) -> str:
    return f"{statistics.fmean(xs):.{digits}f}/{agg(xs):.{digits}f}" if xs else "-"


def table(pairs: Sequence[Pair], how: str, tokens: TokenConfig) -> str:
    rows: dict[tuple[str, str], dict[str, list[tuple[float, float, float]]]] = defaultdict(lambda: defaultdict(list))
    for source, kind, code, b, c in pairs:
        s = score(retokenise(b, how, tokens), retokenise(c, how, tokens))
        rows[(code, source)][kind].append(s)
    out = [f"tokeniser: {how}  (mean/min over versions, mean/max over different articles)", "",
           "| lang | source | n ver | cosine ver | containment ver | tfint ver | n diff | cosine diff "
           "| containment diff | tfint diff |",
           "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for (code, source), kinds in sorted(rows.items(), key=lambda kv: (kv[0][0] != "en", kv[0])):
        v, d = kinds.get("version", []), kinds.get("different", [])
        cells = [str(len(v))] + [_fmt([x[i] for x in v], min, 1 if i == 2 else 3) for i in range(3)]
        cells += [str(len(d))] + [_fmt([x[i] for x in d], max, 1 if i == 2 else 3) for i in range(3)]
        out.append(f"| {code} | {source} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--gold-max", type=int, default=20, help="TimeMaps per language from the gold standard")
    ap.add_argument("--main-content", action="store_true",
                    help="extract the main content only (extract.main_content) instead of the whole page text")
    args = ap.parse_args(argv)
    news_tar = args.data / "pages" / "newspaper-pages.tar.gz"
    gold_tar = args.data / "goldstandard-1068.tar.gz"
    if not news_tar.exists():
        print(f"skipped: no {news_tar} (the shared data is absent; --data DIR)", file=sys.stderr)
        return 0
    cfg = load_config().engine
    # retokenise() reads the extracted text, which the engine keeps only when asked.
    cfg = cfg.model_copy(update={"tokens": cfg.tokens.model_copy(update={"keep_text": True})})
    if args.main_content:
        cfg = cfg.model_copy(update={"extract": cfg.extract.model_copy(update={"main_content": True})})
    eng = Engine(cfg)

    def fpr(content: bytes) -> Fingerprint:
        return eng.fingerprint(_capture(content))

    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(news_tar) as tf:
            tf.extractall(tmp, filter="data")
        pairs: list[Pair] = list(news_pairs(Path(tmp) / "newspaper-pages", fpr))
        if gold_tar.exists() and args.gold_max > 0:
            with tarfile.open(gold_tar) as tf:
                tf.extractall(tmp, filter="data")
            pairs += gold_pairs(Path(tmp) / "goldstandard-1068", eng, args.gold_max)
    for how in ("before", "after"):
        print(table(pairs, how, cfg.tokens))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
