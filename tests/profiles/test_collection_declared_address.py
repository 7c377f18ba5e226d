"""The address a page declares for itself (``rel="canonical"``, ``og:url``): which page it says it is.

A deep page whose titles name no subject (a site that titles every page with its name, and no
headline or heading of the article's own) was judged by its text alone: a live blog or a section
page that renewed its stories read "page replaced", and another article of the site that shares the
site's words read as the same page.  The page's declared address says which page it is, before its
first heading and its text.  Real engine, real SQLite store; documents made here (tests/fixtures/textgen.py).
"""

from __future__ import annotations

from pathlib import Path

from tests.fixtures import textgen
from tests.fixtures.captures import cap
from tests.fixtures.streams import batch_as_stream
from watcher.config import EngineConfig
from watcher.engine import Engine
from watcher.fingerprint import ADDRESS_MAX_CHARS, declared_address
from watcher.model import Verdict
from watcher.store.codec import decode_fingerprint, encode_fingerprint

SITE = "english.ahram.org.eg"
DEEP = f"http://{SITE}/News/12345.aspx"
NAV = "Ahram Online news politics sport"


def _page(topics: list[str], seed: int, declared: str | None, how: str = "canonical") -> bytes:
    """An article of a site that titles every page with its name; the first heading is the name too
    (no heading of the article's own), so only the text and the declared address are left."""
    page = textgen.html([*textgen.document(topics, 250, seed), NAV], "Ahram Online")
    if declared is None:
        return page
    tag = (f'<link rel="canonical" href="{declared}">' if how == "canonical"
           else f'<meta property="og:url" content="{declared}">')
    return page.replace(b"<head>", b"<head>" + tag.encode(), 1)


def _pair(a: bytes, b: bytes, tmp_path: Path, profile: str = "collection") -> Verdict:
    if profile == "collection":
        return batch_as_stream([cap(0, a, url=DEEP), cap(1, b, url=DEEP)], tmp_path)[1]
    eng = Engine(EngineConfig(profile=profile))
    return eng.scan_history("k", [cap(0, a, url=DEEP), cap(1, b, url=DEEP)]).verdicts[1]


def test_the_declared_address_is_read_through_archives_and_bounded() -> None:
    base = "http://wayback.archive-it.org/2358/20110301000000/http://english.ahram.org.eg/News/1.aspx"
    assert declared_address("/News/1.aspx", DEEP) == "eg,org,ahram,english)/news/1.aspx"
    assert declared_address("https://www.english.ahram.org.eg/News/1.aspx/", DEEP) == \
        "eg,org,ahram,english)/news/1.aspx"  # scheme, www and a trailing slash are one address
    assert declared_address("/2358/20110301000000/http://english.ahram.org.eg/News/1.aspx", base) == \
        "eg,org,ahram,english)/news/1.aspx"  # a replay's rewritten link names the original
    assert declared_address("", DEEP) == "" and declared_address("javascript:void(0)", DEEP) == ""
    slug = "/".join(["مصر-الثورة-ميدان-التحرير"] * 6)
    long_a, long_b = declared_address(f"/{slug}/1", DEEP), declared_address(f"/{slug}/2", DEEP)
    assert len(long_a) == ADDRESS_MAX_CHARS and long_a != long_b  # bounded, still one key per address
    eng = Engine(EngineConfig())
    fp = eng.fingerprint(cap(0, _page(["law"], 1, "/News/1.aspx", how="og"), url=DEEP))
    assert fp.address == "eg,org,ahram,english)/news/1.aspx"
    back = decode_fingerprint(encode_fingerprint(fp, keep_text=False, keep_shingles=False))
    assert back.address == fp.address  # a baseline keeps it
    assert eng.fingerprint(cap(0, _page(["law"], 1, None), url=DEEP)).address == ""


def test_a_deep_page_that_declares_itself_is_the_same_page_whatever_its_text(tmp_path: Path) -> None:
    """A live blog or a section page under a title that names only the site renews its text: under
    the same declared address (its own, not the one asked for) it is the page the curator chose (on
    topic), where the text alone called it replaced."""
    own = f"http://{SITE}/news/2011/egypt-law-live"
    before = _page(["law", "river"], 1, own)
    renewed = _page(["law", "music", "garden", "space"], 9, own)  # every story new, on the same beat
    v = _pair(before, renewed, tmp_path / "a")
    assert v.status == "on-topic" and "replaced" not in v.checks, v.reason
    cont, cos = v.measures["containment"].score, v.measures["cosine"].score
    assert cont is not None and cont < 0.2 and cos is not None and 0.1 <= cos < 0.3
    # without the declarations, the text decides, as before: "another text"
    old = _pair(_page(["law", "river"], 1, None), _page(["law", "music", "garden", "space"], 9, None),
                tmp_path / "b")
    assert old.status == "off-topic" and "another text" in old.reason
    # a text that shares almost nothing (cosine under the identity line, 0.10) is another article,
    # even under the address the page still declares: sites that declare whatever was asked for
    other = _pair(before, _page(["music", "garden"], 9, own), tmp_path / "c")
    assert other.status == "off-topic" and "address the page still declares" in other.reason, other.reason


def test_the_address_that_was_asked_for_is_no_evidence(tmp_path: Path) -> None:
    """A page declares the address it was fetched at whatever it holds when that address is reused
    for another article (a live blog's address that later serves another story), and on sites that
    echo the request: both captures declaring the seed's own address say nothing the address did
    not, and the text decides, as without declarations.  Read as "the same page", another article
    under a site-name title stayed on topic (the bench's ``--echo-addresses``: F1 0.69, 0.94 now)."""
    before = _page(["law", "river"], 1, DEEP)
    other = _page(["law", "music", "garden", "space"], 9, DEEP)  # another story, some shared beat
    v = _pair(before, other, tmp_path / "a")
    cont, cos = v.measures["containment"].score, v.measures["cosine"].score
    assert cont is not None and cont < 0.2 and cos is not None and 0.1 <= cos < 0.3
    assert v.status == "off-topic" and "another text" in v.reason, v.reason
    # the same address in another spelling (https, www., a trailing slash, a replay's rewriting)
    echoed = f"https://www.{SITE}/News/12345.aspx/"
    w = _pair(_page(["law", "river"], 1, echoed), _page(["law", "music", "garden", "space"], 9, echoed),
              tmp_path / "b")
    assert w.status == "off-topic" and "another text" in w.reason, w.reason
    # a section above the seed, declared on every article, names no page of its own either
    section = f"http://{SITE}/News/"
    u = _pair(_page(["law", "river"], 1, section), _page(["law", "music", "garden", "space"], 9, section),
              tmp_path / "d")
    assert u.status == "off-topic" and "another text" in u.reason, u.reason
    # a text that keeps its words under the echoed address stays on topic, as without declarations
    kept = _pair(before, _page(["law", "river"], 5, DEEP), tmp_path / "c")
    assert kept.status == "on-topic", kept.reason


def test_a_deep_page_that_declares_another_address_is_another_page(tmp_path: Path) -> None:
    """Another article of the site on the same beat keeps many of its words (cosine over the text
    profile's "another text" line): under a title that names only the site it read as the same
    page.  It declares its own address: another page, off topic.  A page that declares the site's
    home page is the home page served at the article's address."""
    a = _page(["law", "river"], 1, f"http://{SITE}/News/12345.aspx")
    beat = _page(["law", "music"], 9, f"http://{SITE}/News/67890.aspx")
    v = _pair(a, beat, tmp_path / "a")
    assert v.status == "off-topic" and "replaced" in v.checks
    assert "declares another address" in v.reason and "news/67890.aspx" in v.reason, v.reason
    cos = v.measures["cosine"].score
    assert cos is not None and cos >= 0.3  # the text alone would not call it another text
    same_beat = _pair(_page(["law", "river"], 1, None), _page(["law", "music"], 9, None), tmp_path / "b")
    assert same_beat.status == "on-topic"  # without declarations: the text keeps it, as before
    home = _pair(a, _page(["law", "music"], 9, f"http://{SITE}/"), tmp_path / "c")
    assert home.status == "off-topic" and "the site's home page" in home.reason, home.reason
    # the text profile reads it too: another page, not the cited text reworded
    t = _pair(a, beat, tmp_path, profile="text")
    assert t.status == "off-topic" and "another page" in t.reason, t.reason


def test_a_declared_address_is_no_evidence_where_it_names_no_page_of_its_own(tmp_path: Path) -> None:
    """Sites that declare their home page on every page say nothing of which page a capture is: the
    text decides, as without declarations.  An article moved to a new address under its kept
    headline is the same article, as a kept title is, and the text that stayed keeps it on topic."""
    root = f"http://{SITE}/"
    v = _pair(_page(["law", "river"], 1, root), _page(["law", "music"], 9, f"http://{SITE}/News/2.aspx"),
              tmp_path / "a")
    assert v.status == "on-topic", v.reason  # as without declarations (the same-beat pair above)
    moved = _pair(_page(["law", "river"], 1, f"http://{SITE}/News/12345.aspx"),
                  _page(["law", "river"], 1, f"https://www.{SITE}/news/2011/egypt-law-river"), tmp_path / "b")
    assert moved.status == "on-topic" and moved.change == "minor", moved.reason  # the text is unchanged
    titled = textgen.html([*textgen.document(["law", "river"], 250, 1), NAV], "Egypt law reform | Ahram Online")
    retitled = textgen.html([*textgen.document(["law", "river"], 250, 5), NAV], "Egypt law reform | Ahram Online")
    kept = _pair(titled.replace(b"<head>", b'<head><link rel="canonical" href="/News/1.aspx">'),
                 retitled.replace(b"<head>", b'<head><link rel="canonical" href="/news/egypt-law-reform">'),
                 tmp_path / "c")
    assert kept.status == "on-topic", kept.reason  # the title names its subject and keeps it
