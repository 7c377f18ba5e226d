"""A section's address stands for the section, as a home page stands for the site.

A seed such as ``/world/egypt`` lists the site's stories on a subject: every story renews, and a
new title template may drop the words the old one had.  Read as an article's address (a deep
page), such a history read "page replaced" at each renewal; gold's home pages put at a section's
address (``/news/world/``) scored F1 0.31 that way, against 0.79 at their own (0.77 read as
sections).  Real engine, real SQLite store; documents made here (tests/fixtures/textgen.py).
"""

from __future__ import annotations

from pathlib import Path

from tests.fixtures import textgen
from tests.fixtures.captures import cap
from tests.fixtures.streams import batch_as_stream
from watcher.profiles.seedkind import seed_kind

SECTION = "http://www.guardian.co.uk/world/egypt"
ARTICLE = "http://www.guardian.co.uk/world/2011/jan/28/egypt-protests-live-updates"


def _listing(topics: list[str], seed: int, title: str) -> bytes:
    return textgen.html([*textgen.document(topics, 250, seed), "guardian.co.uk world news egypt"], title)


def test_a_section_whose_stories_all_renewed_is_on_topic_an_article_replaced_is_not(tmp_path: Path) -> None:
    assert seed_kind(SECTION) == "site" and seed_kind(ARTICLE) == "page"
    before = _listing(["law", "river"], 1, "guardian.co.uk")
    renewed = _listing(["law", "music", "garden", "space"], 9, "guardian.co.uk")  # every story new
    parked = textgen.html(["This domain is for sale. Buy this domain today."], "guardian.co.uk")
    section = batch_as_stream([cap(0, before, url=SECTION), cap(1, renewed, url=SECTION),
                                cap(2, parked, url=SECTION)], tmp_path / "s")
    assert section[1].status == "on-topic" and "replaced" not in section[1].checks, section[1].reason
    assert section[2].status == "off-topic"  # a parked domain is off topic wherever the seed points
    # the same captures under an article's address: another text, the article replaced
    article = batch_as_stream([cap(0, before, url=ARTICLE), cap(1, renewed, url=ARTICLE)], tmp_path / "a")
    assert article[1].status == "off-topic" and "replaced" in article[1].checks, article[1].reason


def test_a_section_address_that_serves_another_subject_is_off_topic(tmp_path: Path) -> None:
    """A live blog at a section-like address ("/liveblog/egypt") renews its entries under its title:
    on topic.  Another article put at its address names another subject in its title: replaced,
    as at an article's address.  A new template that keeps the section's name is the section."""
    url = "http://blogs.aljazeera.net/liveblog/egypt"
    live = _listing(["law", "river"], 1, "Egypt live blog | Al Jazeera Blogs")
    entries = _listing(["law", "music", "garden", "space"], 9, "Egypt live blog | Al Jazeera Blogs")
    restyled = _listing(["river", "music", "garden"], 4, "Egypt | Live blog | Al Jazeera")
    other = _listing(["cooking", "space"], 7, "Syria: army shells Homs as talks stall | Al Jazeera Blogs")
    r = batch_as_stream([cap(i, p, url=url) for i, p in enumerate((live, entries, restyled, other))], tmp_path)
    assert [v.status for v in r] == ["on-topic", "on-topic", "on-topic", "off-topic"], [v.reason for v in r]
    assert "section" in r[1].reason and "replaced" in r[3].checks and "title words kept" in r[3].reason
    # A section renamed over its beat's stories (its text shares the beat's words, cosine 0.30 or
    # more) is the section renamed, not another page: gold's home pages put at a section's address
    # had read "replaced" at every change of name (F1 0.488 against 0.768 with this line).
    renamed = _listing(["law", "river", "music"], 11, "Middle East news and comment | Al Jazeera Blogs")
    r2 = batch_as_stream([cap(0, live, url=url), cap(1, renamed, url=url)], tmp_path / "renamed")
    cos = r2[1].measures["cosine"].score
    assert cos is not None and cos >= 0.3 and r2[1].status == "on-topic", (cos, r2[1].reason)


def test_an_article_that_redirects_to_a_section_is_gone(tmp_path: Path) -> None:
    """A moved article redirects to its new address; one that sends its readers to a section (or the
    home page) is gone, and the reason names which."""
    article = _listing(["law", "river"], 1, "Egypt protests turn violent | guardian.co.uk")
    moved = cap(1, b"", url=ARTICLE, status=301, headers={"Location": SECTION})
    r = batch_as_stream([cap(0, article, url=ARTICLE), moved], tmp_path)
    assert r[1].status == "off-topic" and "redirects to a section of the site" in r[1].reason, r[1].reason
