"""What a site's template puts on every page names no article: a logo heading, a site-wide og:title.

A deep page whose titles name no subject (the site's name on every page) and that declares no
headline is judged by its first-level heading.  Older templates put the site's name in the one
``<h1>`` and the headline lower: that heading is "kept" on every page, and another article under
the address read as the same subject (the bench's ``--logo-headings``: F1 0.36).  A heading kept
over another text is the template's, so the text decides; a heading kept over a text that keeps
its words still keeps the page.  Themes that fill ``og:title`` with the site's name do the same to
the declared headline (``--site-headlines``: 0.64 with real titles, 0.35 with site-name titles):
one headline under two titles that each name an article is the template's, and the titles decide.
A title that is the site's name and a tagline on every page (``--tagline-titles``: 0.24) is the
template's too where it is kept over another text and the pages' own headings or addresses can
tell (then 0.86); without them it keeps the page, as a live blog's kept title over rolled entries
(tests/profiles/test_collection_subjects.py).  Real engine, real SQLite store, batch equal to the stream.
"""

from __future__ import annotations

from pathlib import Path

from tests.fixtures import textgen
from tests.fixtures.captures import cap
from tests.fixtures.streams import batch_as_stream
from watcher.model import Verdict

DEEP = "http://english.ahram.org.eg/News/12345.aspx"
NAME = "Ahram Online"  # every page's title
LOGO = "Al-Ahram Weekly Online Edition"  # every page's one <h1>: longer than the title, not in it


def _article(topics: list[str], seed: int, h1: str = LOGO, title: str = NAME, og_title: str = "") -> bytes:
    paras = "\n".join(f"<p>{p}</p>" for p in textgen.document(topics, 250, seed))
    og = f'<meta property="og:title" content="{og_title}">' if og_title else ""
    return (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{title}</title>{og}</head>"
            f"<body><h1>{h1}</h1><h2>{topics[0].title()} story of the day</h2>{paras}</body></html>").encode()


def _pair(a: bytes, b: bytes, tmp_path: Path) -> Verdict:
    return batch_as_stream([cap(0, a, url=DEEP), cap(1, b, url=DEEP)], tmp_path)[1]


def test_a_logo_heading_kept_over_another_text_is_no_evidence(tmp_path: Path) -> None:
    other = _pair(_article(["law", "river"], 1), _article(["music", "garden"], 9), tmp_path / "a")
    cont, cos = other.measures["containment"].score, other.measures["cosine"].score
    assert cont is not None and cont < 0.2 and cos is not None and cos < 0.3  # another text
    assert other.status == "off-topic" and "another text" in other.reason, other.reason
    # the same article crawled again keeps its words: the kept heading is no reason to doubt it
    again = _pair(_article(["law", "river"], 1), _article(["law", "river"], 1), tmp_path / "b")
    assert again.status == "on-topic", again.reason


def test_a_heading_that_names_the_article_still_speaks(tmp_path: Path) -> None:
    """Where the <h1> is the article's headline, a changed one still says "another subject" and a
    kept one over a text that keeps its words keeps the page on topic."""
    base = _article(["law", "river"], 1, h1="Egypt court rules on the new river law")
    renamed = _pair(base, _article(["law", "river"], 5, h1="Cairo music festival opens in the garden"),
                    tmp_path / "a")
    assert renamed.status == "off-topic" and "another subject" in renamed.reason, renamed.reason
    kept = _pair(base, _article(["law", "river"], 1, h1="Egypt court rules on the new river law"), tmp_path / "b")
    assert kept.status == "on-topic", kept.reason


SITE_OG = "Ahram Online News Portal"  # the theme's og:title on every page


def test_a_site_wide_headline_gives_way_to_titles_that_name_articles(tmp_path: Path) -> None:
    base = _article(["law", "river"], 1, title=f"Egypt court rules on the new river law | {NAME}", og_title=SITE_OG)
    other = _article(["law", "music"], 9, title=f"Cairo music festival opens in the old garden | {NAME}",
                     og_title=SITE_OG)
    v = _pair(base, other, tmp_path / "a")
    assert v.status == "off-topic" and "another subject" in v.reason and "title words" in v.reason, v.reason
    # the same article under an edited title keeps its words: on topic
    edited = _article(["law", "river"], 1, title=f"Egypt court rules on new river law, appeal set | {NAME}",
                      og_title=SITE_OG)
    assert _pair(base, edited, tmp_path / "b").status == "on-topic"
    # titles that are the site's name and the site-wide og:title: the text decides
    text = _pair(_article(["law", "river"], 1, og_title=SITE_OG), _article(["music", "garden"], 9, og_title=SITE_OG),
                 tmp_path / "c")
    assert text.status == "off-topic" and "another text" in text.reason, text.reason


def test_an_article_headline_kept_under_a_site_name_title_still_speaks(tmp_path: Path) -> None:
    """A site that turned to titling every page with its name keeps the article's og:title: the
    headline, kept, still names the article (the title names nothing of its own)."""
    head = "Egypt court rules on the new river law after long appeal"
    base = _article(["law", "river"], 1, h1=head, title=f"Court rules on river law | {NAME}", og_title=head)
    later = _article(["law", "river"], 4, h1=head, og_title=head)
    v = _pair(base, later, tmp_path / "a")
    assert v.status == "on-topic", v.reason


TAGLINE = f"{NAME} - News and Views from Egypt and the Arab World"  # every page's title


def test_a_site_title_with_a_tagline_names_no_article(tmp_path: Path) -> None:
    # another text under it: the text decides (no heading of the article's own: the logo's)
    other = _pair(_article(["law", "river"], 1, title=TAGLINE), _article(["music", "garden"], 9, title=TAGLINE),
                  tmp_path / "a")
    assert other.status == "off-topic" and "another text" in other.reason, other.reason
    # ... and the pages' own headings speak then
    base = _article(["law", "river"], 1, h1="Egypt court rules on the new river law", title=TAGLINE)
    v = _pair(base, _article(["music", "garden"], 9, h1="Cairo music festival opens in the old garden",
                             title=TAGLINE), tmp_path / "b")
    assert v.status == "off-topic" and "heading words kept" in v.reason, v.reason
    # the same article under it, its heading kept: on topic
    same = _pair(base, _article(["law", "river"], 1, h1="Egypt court rules on the new river law", title=TAGLINE),
                 tmp_path / "c")
    assert same.status == "on-topic", same.reason
