"""Every fingerprint of a fixed set of pages, pinned: a change that alters how any page is read fails here.

Why: speed work replaces how a page is read (parser lookups, block text, tokens, language, shingles)
and must leave every output the same unless it says otherwise.  A/B runs over the shared pages show
that once; this keeps it shown.  The pages are the project's own (the fixtures' templates: blog and
CMS themes, publisher platforms, Facebook's BigPipe, text variants) plus small pages here for
scripts, encodings and markup the templates do not cover, each read both ways (whole page and main
content) with the scholarly record and the words kept, so every field is computed.

The pins hold for the reading libraries they were recorded with (lxml and its libxml2, numpy,
py3langid, xxhash, python-simhash, chardetng-py, PyStemmer, justext): under other versions the test
skips and says so, since a new libxml2 may parse a page differently without any change here.  To record the pins
again after a change that is meant to alter readings (list the changed pages and why in the
change):  ``DRIFTLINE_RECORD_PINS=1 pytest tests/extract/test_fingerprint_pins.py``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import multiprocessing
import os
from collections.abc import Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import lxml.etree
import pytest

from tests.fixtures import bigpipe, cms_pages, doi_platforms, textcases, textgen
from watcher.config import load_config
from watcher.fingerprint import fingerprint
from watcher.model import Capture, Fingerprint

PINS = Path(__file__).with_name("fingerprint_pins.json")
GOLD_PINS = Path(__file__).with_name("fingerprint_pins_gold.json")  # 12 hex digits a page (100 KB, not 250)
LIBRARIES = ("lxml", "lxml_html_clean", "numpy", "py3langid", "xxhash", "python-simhash", "chardetng-py", "PyStemmer",
             "justext")


def libraries() -> dict[str, str]:
    found = {name: version(name) for name in LIBRARIES}
    found["libxml2"] = ".".join(map(str, lxml.etree.LIBXML_VERSION))
    return found


def _html(title: str, body: str, lang: str = "en", head: str = "", charset: str = "utf-8") -> str:
    return (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="{charset}"><title>{title}</title>{head}'
            f"</head><body>{body}</body></html>")


def _small_pages() -> Iterator[tuple[str, bytes, str | None]]:
    """(name, bytes, Content-Type) of pages for paths the templates do not take."""
    para = " ".join(textgen.paragraph("law", 80, 3).split())
    yield "arabic", _html("مرصد حقوق الإنسان", "<h1>تقرير جديد عن المعتقلين</h1><p>"
                          + "أصدرت المنظمة اليوم تقريرا عن أوضاع المعتقلين في السجون ويطالب التقرير بالإفراج "
                          * 6 + "</p><p>الأُمَّةُ والإِنسانُ ١٢٣ 2024</p>", "ar").encode(), None
    yield "hebrew", _html("זכויות אדם", "<p>" + "הארגון פרסם היום דוח חדש על מצב העצירים בבתי הכלא " * 6
                          + "</p>", "he").encode(), None
    yield "russian-cp1251", _html("Права человека", "<p>" + "Организация опубликовала сегодня доклад о "
                                  "положении заключённых в тюрьмах страны " * 6 + "</p>", "ru",
                                  charset="windows-1251").encode("cp1251"), None
    yield "chinese", _html("人权观察", "<p>" + "该组织今天发布了一份关于监狱中被拘留者状况的报告。" * 8
                           + "</p>", "zh").encode(), None
    japanese = "団体は本日、刑務所に収容されている人々の状況に関する報告書を発表した。"
    yield "japanese-sjis", _html("人権ウォッチ", "<p>" + japanese * 6 + "</p>", "ja",
                                 charset="shift_jis").encode("shift_jis"), None
    yield "greek-turkish-mixed", _html("İnsan Hakları", "<p>" + "İSTANBUL'da Örgüt bugün cezaevlerindeki "
                                       "tutukluların durumuna ilişkin bir rapor yayımladı. " * 4
                                       + "Ο οργανισμός δημοσίευσε σήμερα έκθεση. " * 3 + "</p>", "tr").encode(), None
    yield "hindi-combining", _html("मानवाधिकार", "<p>" + "संगठन ने आज जेलों में बंदियों की स्थिति पर एक रिपोर्ट जारी की। " * 6
                                   + "e\u0301te\u0301 cafe\u0301</p>", "hi").encode(), None
    yield "utf16-bom", _html("Riverside Rights", f"<p>{para}</p>").encode("utf-16"), "text/html; charset=utf-16"
    yield "latin1-undeclared", (f"<html><head><title>Caf\xe9 des droits</title></head><body><p>{para} "
                                "d\xe9tenus \xe0 la prison</p></body></html>").encode("latin-1"), "text/html"
    yield "control-bytes", (f"<html><body><p>{para}\x01\x02\x0b</p>\x00<p>tail \x1f words</p></body></html>"
                            ).encode(), "text/html"
    yield "table-layout", _html("Ledger", "<table><tr><td>River</td><td>Flood</td></tr>"
                                "<tr><td colspan=2>" + para + "</td></tr></table><ul><li>one</li><li>two</li></ul>"
                                ).encode(), None
    yield "hidden-and-scripts", _html("Hidden", f"<div style='display:none'>secret words here</div>"
                                      f"<div hidden>more hidden</div><script>var x='not text';</script>"
                                      f"<noscript><p>Enable scripts please</p></noscript><template><p>stamp</p>"
                                      f"</template><p>{para}</p><style>p{{color:red}}</style>").encode(), None
    yield "replay-banner", _html("Archived", '<div id="wm-ipp-base"><div id="wm-ipp">Wayback Machine banner '
                                 "captures timeline</div></div><!-- END WAYBACK TOOLBAR INSERT -->"
                                 f"<p>{para}</p>").encode(), None
    yield "frames", (b"<html><head><title>Frames</title></head><frameset><frame src='a.html'>"
                     b"<frame src='b.html'></frameset></html>"), "text/html"
    yield "js-redirect", _html("Moving", "<script>window.location.href='https://example.org/new';</script>"
                               "<p>Redirecting</p>").encode(), None
    yield "soft-404", _html("Page not found", "<h1>404 Not Found</h1><p>The page you requested could not be "
                            "found on this server.</p>").encode(), None
    yield "doi-in-text", _html("Article", f"<p>{para} See https://doi.org/10.1234/abc.5678 and "
                               "doi:10.5555/xyz-12.</p>").encode(), None
    yield "boilerplate", _html("Site", "<nav><a href='/'>Home</a> <a href='/about'>About us</a> <a>News</a></nav>"
                               f"<header>Riverside header</header><main><article><h1>Headline</h1><p>{para}</p>"
                               "</article></main><aside>Related stories list</aside><footer>Copyright 2024 "
                               "Riverside. All rights reserved. Privacy policy.</footer>").encode(), None
    yield "empty", b"", "text/html"
    yield "plain-text", (para + "\n\n" + para[::-1]).encode(), "text/plain"
    yield "astral", _html("Emoji", f"<p>{para} \U0001F600 \U00010348\U00010349 𝐀𝐁𝐂 words</p>").encode(), None


def pages() -> Iterator[tuple[str, bytes, str | None]]:
    for topics in (["river", "law"], ["music", "garden", "space"], ["cooking"]):
        yield "textgen-" + "-".join(topics), textgen.html(textgen.document(topics)), None
    yield "textgen-typos", textgen.html([textgen.typos(p) for p in textgen.document(["law", "river"])]), None
    for name, (a, b) in sorted(textcases.text_pairs().items()):
        yield f"textcase-{name}-a", a, None
        yield f"textcase-{name}-b", b, None
    yield "cms-wp-featured-en", cms_pages.wp_home_featured_empty_loop(), None
    yield "cms-wp-featured-ar", cms_pages.wp_home_featured_empty_loop(lang="ar"), None
    yield "cms-wp-empty-loop", cms_pages.wp_home_empty_loop(), None
    yield "cms-wp-404", cms_pages.wp_404(), None
    yield "cms-blogger-missing", cms_pages.blogger_missing_post(), None
    yield "cms-blogger-no-comments", cms_pages.blogger_post_no_comments(), None
    yield "cms-drupal-404", cms_pages.drupal_404(), None
    yield "cms-joomla-search", cms_pages.joomla_article_with_search(), None
    yield "bigpipe-plain", bigpipe.plain(), None
    yield "bigpipe-hidden", bigpipe.bigpipe(), None
    for platform in doi_platforms.PLATFORMS:
        article = doi_platforms.article(platform, 1)
        yield f"doi-{platform}", doi_platforms.page(platform, article, box=True).encode(), None
    yield from _small_pages()


def summary(fp: Fingerprint) -> str:
    """A SHA-256 over every field of ``fp`` in a canonical form (sets sorted, bytes as hex)."""

    def canon(value: Any) -> Any:
        if isinstance(value, bytes):
            return value.hex()
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: canon(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, frozenset | set):
            return sorted(canon(v) for v in value)
        if isinstance(value, Mapping):
            return sorted((str(k), canon(v)) for k, v in value.items())
        if isinstance(value, tuple | list):
            return [canon(v) for v in value]
        return value

    fields = {f.name: canon(getattr(fp, f.name)) for f in dataclasses.fields(fp)}
    return hashlib.sha256(json.dumps(fields, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def readings() -> dict[str, str]:
    cfg = load_config(overrides={}).engine
    out: dict[str, str] = {}
    for name, body, content_type in pages():
        for main in (False, True):
            cap = Capture(url="http://riverside.example.org/rights/report", content=body,
                          timestamp=datetime(2024, 5, 1, tzinfo=UTC), status=200,
                          content_type=content_type or "text/html; charset=utf-8")
            fp = fingerprint(cap, cfg, record=True, words_kept=True, main_content=main)
            out[f"{name}/{'main' if main else 'whole'}"] = summary(fp)
    return out


def _check(got: dict[str, str], path: Path) -> None:
    if os.environ.get("DRIFTLINE_RECORD_PINS"):
        path.write_text(json.dumps({"libraries": libraries(), "pins": got}, indent=1, sort_keys=True) + "\n")
        pytest.skip(f"recorded {len(got)} pins in {path.name}")
    pinned = json.loads(path.read_text())
    if pinned["libraries"] != libraries():
        changed = {k: (v, libraries().get(k)) for k, v in pinned["libraries"].items() if libraries().get(k) != v}
        pytest.skip(f"pins recorded under other reading libraries (pinned, installed): {changed}")
    assert set(got) == set(pinned["pins"]), f"page set changed: {sorted(set(got) ^ set(pinned['pins']))}"
    changed_pages = sorted(k for k in got if got[k] != pinned["pins"][k])
    assert not changed_pages, (f"{len(changed_pages)} of {len(got)} readings changed: {changed_pages[:40]}; if "
                               "meant, record again (module docstring) and say which and why in the change")


def test_every_reading_is_the_pinned_one() -> None:
    got = readings()
    assert len(got) >= 90, f"only {len(got)} readings: the page set shrank"
    _check(got, PINS)


def _gold_pins(paths: list[Path]) -> list[str]:
    """The pins of ``paths`` (a worker's share of the gold)."""
    cfg = load_config(overrides={}).engine
    return [summary(fingerprint(Capture(url="http://example.org/", content=path.read_bytes(), status=200,
                                        timestamp=datetime(2012, 1, 1, tzinfo=UTC), content_type="text/html"),
                                cfg, record=False))[:12] for path in paths]


def test_every_gold_page_reads_as_pinned(gold_dir: Path) -> None:
    """The 2,302 real pages of the shared gold standard, read as ``driftline scan`` reads them (the
    default profile's reading, words not kept): real markup takes paths no built page does.  Two
    processes (the readings do not depend on the process; half the suite's time)."""
    paths = sorted(gold_dir.glob("html/*/*.html"))
    shares = [paths[i::2] for i in range(2)]
    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as pool:
        pins = list(pool.map(_gold_pins, shares))
    got = {f"{path.parent.name}/{path.name}": pin for share, found in zip(shares, pins, strict=True)
           for path, pin in zip(share, found, strict=True)}
    assert len(got) == 2302, f"{len(got)} gold pages, not 2,302"
    _check(got, GOLD_PINS)
