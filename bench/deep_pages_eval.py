#!/usr/bin/env python3
"""A second labelled collection, built from real pages: deep-page seeds whose article is replaced.

Why: the shared gold collection is almost all home pages (8 of its 2,000
comparisons are deep pages), yet on a held-out collection more than half of
the off-topic captures were deep-link seeds that later served another article
of the same site (the title keeps the site's name, the cosine drops).  The
deep-page rule cannot be checked on the shared gold; this builds a collection
of that shape from ``shared/data/pages/newspaper-pages.tar.gz`` (real news and
magazine pages, 2013-2018, several scripts) and scores driftline, with grouped
cross-validation by TimeMap, beside OTMT's cosine at its default 0.12.

The collection (one TimeMap per fixture folder with two or more versions, or
with a sibling ``<site>2``), labelled by these judgements, stated here so that
they can be disputed:

- a version of the fixture's article is **on topic**; the article is the
  subject most of the folder's versions carry (the first segment of its
  title);
- a version that is the site's error page (title or first heading: "404 |
  Vanity Fair", "PAGE NOT FOUND", "OpenURI::HTTPError"), or that carries
  another subject (another article, the site's home or section page) is
  **off topic**;
- the sibling folder's article (``<site>2``), appended after the versions, is
  **off topic**: another article under the same address (the held-out case),
  unless it is the same article (one pair of the fixture set is);
- versions that are the article's *comment feed* ("Comments on: ...") or
  empty (no words) are left out: a curator could call them either way.

Captures are one month apart in the folder's file order; every seed is a deep
page (``http://<site>/news/2015/<folder>``).

``--site-titles`` writes every capture with its ``<title>`` set to the site's
name ("Bloomberg"), after labelling: the shape of sites that title every page
so, where only the text and the page's own headline (``og:title``) are left to
tell one article from another; ``--retitled`` keeps each TimeMap's first title
(a site that turned to such titles after the baseline); ``--foreign-names``
titles them with an Arabic name that no rule ties to the address; ``--no-headlines``
removes ``og:title`` and ``citation_title`` (pages that declare no headline); ``--no-addresses``
removes ``rel="canonical"`` and ``og:url`` (pages that declare no address of their own);
``--echo-addresses`` makes every capture declare the seed's own address (a site that declares
whatever address was asked for, or an address reused for another article); ``--moved-addresses``
makes the first capture declare the seed's address and every later one its article's address in
another scheme (``/a/<fixture>``: a site that moved its articles to new addresses after the
baseline, the old address still serving them); ``--logo-headings`` turns every first-level
heading into a second-level one and puts the site's name, in three words, in the only ``<h1>``
(older templates' logo heading); ``--site-headlines`` declares the site's name, in three words,
as every page's ``og:title`` (themes that fill it with the site's name); ``--tagline-titles``,
with ``--site-titles``, titles every page with the site's name and a tagline of six words;
``--section-addresses`` makes every capture declare the section above the seed (``/news/``).

usage: deep_pages_eval.py [--pages TAR_OR_DIR] [--otmt VENV] [--seeds 0,1,2] [--keep DIR]
                          [--site-titles [--retitled] [--foreign-names] [--tagline-titles]] [--no-headlines]
                          [--no-addresses | --echo-addresses | --moved-addresses | --section-addresses]
                          [--logo-headings] [--site-headlines]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
PAGES = SHARED / "data" / "pages" / "newspaper-pages.tar.gz"
GOLD2WARC = SHARED / "tools" / "gold2warc.py"
OTMT_SETUP = SHARED / "tools" / "otmt-offline.sh"
T0 = datetime(2013, 1, 1, tzinfo=UTC)

# Judgements on titles and first headings (see the module docstring).
_ERROR = re.compile(r"^\s*(404\b|page not found|oops)|not found\s*[:|]|httperror at /", re.I)
_LEFT_OUT_TITLE = re.compile(r"^\s*comments on:", re.I)


def _title(html: bytes) -> str:
    m = re.search(rb"<title[^>]*>(.*?)</title>", html, re.I | re.S)
    text = (m.group(1) if m else b"").decode("utf-8", "replace")
    text = re.sub(r"&#8217;|&#39;", "'", text)
    return " ".join(text.split())


def _is_error(html: bytes) -> bool:
    """The site's error page: its title or its first heading says so ("404 | Vanity Fair", an
    <h1>PAGE NOT FOUND</h1> under the home page's title: one of the first three headings)."""
    heads = [" ".join(re.sub(r"<[^>]+>", " ", h.decode("utf-8", "replace")).split())
             for h in re.findall(rb"<h1[^>]*>(.*?)</h1>", html, re.I | re.S)[:3]]
    return bool(_ERROR.search(_title(html)) or any(_ERROR.search(h) for h in heads))


def _subject(title: str) -> str:
    """The title's first segment, lowercased: "Sensex ends flat | Reuters" -> "sensex ends flat"."""
    return re.split(r"\s+[|:\-–—]\s+|\s*\|\s*", title.strip().lower())[0][:60]


def site_name(host: str) -> str:
    """The name a site would title every page with: its host's first label, as words
    ("Bloomberg", "Arabic Html 1"), or the address where that label is short ("Al.com")."""
    host = host.removeprefix("www.")
    label = host.split(".")[0]
    if len(label) < 4:
        return host.capitalize()
    return " ".join(w.capitalize() for w in re.split(r"[\W_]+", label) if w)


_HEADLINE_META = re.compile(rb"<meta\b[^>]*(?:og:title|citation_title)[^>]*>", re.I)
_ADDRESS_TAGS = re.compile(rb"<meta\b[^>]*og:url[^>]*>|<link\b[^>]*\bcanonical\b[^>]*>", re.I)


# The six words some sites add to their name in every title.
TAGLINE = "News and Views from Around the World"

# A site's name that no rule can tie to the address: an Arabic name ("The News Portal") on a Latin one.
FOREIGN_SITE_NAME = "بوابة الأخبار"


# The switches (what a site's software may write on every page), each a keyword of build() and a
# command-line flag (``site_titles`` is ``--site-titles``); the module docstring says what each does.
SWITCHES: dict[str, str] = {
    "site_titles": "title every capture with the site's name (labels from the real titles)",
    "retitled": "with --site-titles: the first capture of each TimeMap keeps its real title",
    "foreign_names": "with --site-titles: an Arabic site name that no rule ties to the address",
    "tagline_titles": "with --site-titles: the site's name and a six-word tagline in every title",
    "no_headlines": "remove og:title and citation_title from every capture (pages that declare no headline)",
    "no_addresses": "remove rel=canonical and og:url from every capture (pages that declare no address)",
    "echo_addresses": "every capture declares the seed's own address as rel=canonical",
    "moved_addresses": "the first capture declares the seed's address, later ones /a/<fixture>",
    "section_addresses": "every capture declares the section above the seed (/news/)",
    "logo_headings": "every <h1> becomes <h2>; the site's name in three words is the only <h1>",
    "site_headlines": "every page's og:title is the site's name in three words",
}


def _insert_after(body: bytes, tag: bytes, snippet: bytes) -> bytes:
    """``snippet`` right after the first match of ``tag`` (an opening tag's pattern), else first."""
    m = re.search(tag, body, re.I)
    at = m.end() if m else 0
    return body[:at] + snippet + body[at:]


def build(pages: Path, out: Path, **switches: bool) -> dict[str, int]:
    """Write a gold-format directory (labels.tsv, html/<id>/<date>.html); return label counts.
    ``switches``: keywords of :data:`SWITCHES` (the module docstring); labels always come from the
    real pages, before any switch rewrites them."""
    unknown = set(switches) - set(SWITCHES)
    if unknown:
        raise TypeError(f"unknown switches: {', '.join(sorted(unknown))}")
    on = {name: bool(switches.get(name)) for name in SWITCHES}
    html_root = pages / "html"
    folders = sorted(p for p in html_root.iterdir() if p.is_dir())
    names = {p.name for p in folders}
    rows: list[tuple[int, str, str, int]] = []
    counts = {"on": 0, "off": 0, "left_out": 0, "timemaps": 0}
    tm = 0
    for folder in folders:
        files = sorted(folder.glob("*.html"))
        m = re.match(r"^(.*?)(\d)$", folder.name)
        sibling = f"{m.group(1)}2" if m and m.group(2) == "1" else None
        other = sorted((html_root / sibling).glob("*.html"))[-1:] if sibling and sibling in names else []
        if len(files) < 2 and not other:
            continue
        versions = [(f, f.read_bytes()) for f in files]
        kept = [(f, b) for f, b in versions if not _LEFT_OUT_TITLE.search(_title(b)) and _title(b)]
        counts["left_out"] += len(versions) - len(kept)
        articles = [_subject(_title(b)) for _, b in kept if not _is_error(b)]
        if not articles:
            continue
        main = max(set(articles), key=lambda s: (articles.count(s), -articles.index(s)))
        labelled = [(b, 1 if not _is_error(b) and _subject(_title(b)) == main else 0, folder.name) for _, b in kept]
        # the sibling is another article, unless the fixture set holds the same article twice
        labelled += [(b, 1 if _subject(_title(b)) == main else 0, f.parent.name)
                     for f, b in ((f, f.read_bytes()) for f in other)]
        if len(labelled) < 2:
            continue
        tm += 1
        counts["timemaps"] += 1
        site = m.group(1) if m else folder.name
        host = site if "." in site else site + ".example"
        url = f"http://{host}/news/2015/{folder.name}"
        (out / "html" / str(tm)).mkdir(parents=True)
        for i, (body, label, source) in enumerate(labelled):
            date = (T0 + timedelta(days=30 * i)).strftime("%Y%m%d%H%M%S")
            if on["site_titles"] and (i > 0 or not on["retitled"]):
                name = FOREIGN_SITE_NAME if on["foreign_names"] else site_name(host)
                name += f" - {TAGLINE}" if on["tagline_titles"] else ""
                body = re.sub(rb"<title[^>]*>.*?</title>", f"<title>{name}</title>".encode(), body,
                              count=1, flags=re.I | re.S)
            if on["no_headlines"]:
                body = _HEADLINE_META.sub(b"", body)
            if on["logo_headings"]:
                body = re.sub(rb"<(/?)h1\b", rb"<\1h2", body, flags=re.I)
                body = _insert_after(body, rb"<body\b[^>]*>", f"<h1>{site_name(host)} News Online</h1>".encode())
            if on["site_headlines"]:
                body = _HEADLINE_META.sub(b"", body)
                body = _insert_after(body, rb"<head\b[^>]*>",
                                     f'<meta property="og:title" content="{site_name(host)} News Online">'.encode())
            declares = on["echo_addresses"] or on["moved_addresses"] or on["section_addresses"]
            if on["no_addresses"] or declares:
                body = _ADDRESS_TAGS.sub(b"", body)
            if declares and body.strip():  # an empty capture stays empty
                declared = (f"http://{host}/news/" if on["section_addresses"]
                            else f"http://{host}/a/{source}" if on["moved_addresses"] and i > 0 else url)
                body = _insert_after(body, rb"<head\b[^>]*>", f'<link rel="canonical" href="{declared}">'.encode())
            (out / "html" / str(tm) / f"{date}.html").write_bytes(body)
            rows.append((tm, date, f"http://wayback.archive-it.org/9999/{date}/{url}", label))
            counts["on" if label else "off"] += 1
    with (out / "labels.tsv").open("w", encoding="utf-8") as fh:
        fh.write("id\tdate\tURI\tlabel\n")
        for r in rows:
            fh.write("\t".join(map(str, r)) + "\n")
    return counts


def _driftline(*args: str) -> str:
    cmd = [sys.executable, "-m", "watcher.cli", *args]
    res = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    if res.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)}: exit {res.returncode}\n{res.stderr[-2000:]}")
    return res.stdout


def _summary_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith(("| default", "| cosine", "| tfintersection",
                                                              "| what", "|---"))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=Path, default=PAGES, help="newspaper-pages.tar.gz or its unpacked directory")
    ap.add_argument("--otmt", type=Path, metavar="VENV", help="also score OTMT's cosine (installed if missing)")
    ap.add_argument("--seeds", default="0,1,2", help="fold seeds of the grouped cross-validation")
    ap.add_argument("--folds", type=int, default=5)
    for name, help_text in SWITCHES.items():
        ap.add_argument("--" + name.replace("_", "-"), action="store_true", help=help_text)
    ap.add_argument("--keep", type=Path, help="write the collection here (kept) instead of a temporary directory")
    a = ap.parse_args()
    if not a.pages.exists():
        print(f"skipped: {a.pages} not found (the newspaper pages live in ../shared/data/pages)")
        return 0
    work = Path(tempfile.mkdtemp(prefix="deep-pages-"))
    try:
        pages = a.pages
        if pages.is_file():
            with tarfile.open(pages) as tf:
                tf.extractall(work / "src", filter="data")
            pages = next(p.parent for p in (work / "src").rglob("html") if p.is_dir())
        coll = a.keep or work / "collection"
        if coll.exists():
            shutil.rmtree(coll)
        coll.mkdir(parents=True)
        counts = build(pages, coll, **{name: getattr(a, name) for name in SWITCHES})
        print(f"collection: {counts['timemaps']} TimeMaps, {counts['on']} on topic, {counts['off']} off topic, "
              f"{counts['left_out']} versions left out (comment feeds, empty)")
        result = work / "driftline.json"
        _driftline("scan", str(coll), "-o", str(result), "--no-progress")
        for seed in a.seeds.split(","):
            print(f"\n## driftline, grouped {a.folds}-fold CV by TimeMap, fold seed {seed}")
            print("\n".join(_summary_lines(_driftline("eval", str(coll), str(result), "--folds", str(a.folds),
                                                      "--seed", seed))))
        if a.otmt:
            exe = a.otmt / "bin" / "detect_off_topic"
            if not exe.exists():
                subprocess.run(["bash", str(OTMT_SETUP), str(a.otmt)], check=True)
            warc = work / "coll.warc.gz"
            subprocess.run([sys.executable, str(GOLD2WARC), str(coll), str(warc)], check=True, capture_output=True)
            out = work / "otmt.json"
            subprocess.run([str(exe), "-i", f"warc={warc}", "-o", str(out), "-d", str(work / "otmt-work"),
                            "-tm", "cosine=0.12"], cwd=work, check=True, capture_output=True)
            print("\n## OTMT, cosine at its default 0.12 (same collection)")
            print("\n".join(ln for ln in _driftline("eval", str(coll), str(out)).splitlines()
                            if ln.strip().startswith(("F1", "precision", "recall", "|", "micro", "TimeMap"))))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
