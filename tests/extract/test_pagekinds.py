"""Page kinds: a phrase counts where it stands as the page's own notice, not where a page reports
or mentions it.  The mentions below are the ones found on gold's on-topic pages and on the real
newspaper pages (quoted or paraphrased); the notices are the platforms' and CMSs' own wording."""

from __future__ import annotations

import tarfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from tests.fixtures import cms_pages, textgen
from tests.fixtures.captures import cap
from watcher.config import EngineConfig
from watcher.engine import Engine
from watcher.model import Capture
from watcher.pagekinds import detect_page_kind


def _kind(title: str, headings: list[str], text: str) -> str | None:
    found = detect_page_kind(title, headings, text, len(text.split()))
    return found.kind if found else None


MENTIONS: list[tuple[str, list[str], str]] = [
    # a headline's kicker (gold: amnesty.ie's and newtactics.org's home pages)
    ("Human Rights Centre", ["Access Denied- Thousands of Palestinians are being denied access to water"], "News"),
    ("Events", [], "Upcoming\nCOMING SOON: Nov 28 to Dec 4\nSixteen days of activism"),
    ("Under construction: Egypt's new parliament building opens its doors", [], "Report"),
    ("Notes", [], "Part one of the series\nMore coming soon!"),  # a post's last line (pixelmonkey.org)
    ("Cairo", ["Elections coming soon, the council says"], "News"),
    # headlines that say it of something else
    ("Activist's Twitter account suspended | News", [], "Report"),
    ("Mobile service unavailable in Tahrir - Ahram Online", [], "Report"),
    ("Subsidised bread no longer available in Cairo bakeries", [], "Report"),
    ("New Suez Canal under construction", ["New Suez Canal under construction"], "Report"),
    # words of a sentence (gold: therightsexposureproject.com's home page; slate.com; parsely.com)
    ("Campaign", [], "The campaign will include a web page, still under construction, and a booklet containing "
                     "guidance for women to defend their rights in court and before the police"),
    ("Cables", [], "The cable offers more capacity and more redundancy, and the next one, now under construction, "
                   "parallels a good chunk of the old route between Malaysia and Egypt"),
    # a search box's hint (foxnews.com's page, ngopulse.org's on gold)
    ("News", ["Use the search box to find what you're looking for"], "Top stories"),
    ("NGO Pulse", [], "Search\nCan't find what you're looking for?\nNews"),
    ("Analytics", [], "This issue has been resolved for iOS, with a fix for Android coming soon, and publishers "
                      "may see an increase in mobile traffic from the app over the next weeks"),
    ("Ministry", [], "Cairo. The ministry said on Tuesday that its website had been hacked by a group calling "
                     "itself the Egyptian Cyber Army, and that access denied to officials was restored at noon."),
    # a Latin phrase inside another word (gold: Czech "předsedou", Indonesian "sedot"; a link)
    ("Ombudsman", [], "Společně s předsedou soudcovské unie"),
    ("Berita", [], "Korupsi sedot perhatian menjelang pemilu"),
    ("Links", [], "Visit jordan.com for travel advice"),
]


@pytest.mark.parametrize(("title", "headings", "text"), MENTIONS)
def test_a_page_that_reports_or_mentions_a_notice_is_not_one(title: str, headings: list[str], text: str) -> None:
    assert _kind(title, headings, text) is None


NOTICES: list[tuple[str, list[str], str, str]] = [
    # WordPress's default themes and common CMSs: the notices the lists lacked
    ("Activist Blog", ["Oops! That page can’t be found."], "It looks like nothing was found", "soft-404"),
    ("Activist Blog", [], "The page you requested could not be found. Try a search.", "soft-404"),
    ("Facebook", [], "The page you requested was not found. You may have clicked an expired link.", "soft-404"),
    ("فيسبوك", [], "الصفحة التي طلبتها غير موجودة", "soft-404"),
    # a kicker that is itself followed by a notice
    ("Site", [], "Error 404: The page you requested could not be found", "soft-404"),
    # a notice in a long line that it opens, and a sentence-long notice (Fox News's 404 heading)
    ("acda", [], "This site is not available at the current time. Email info@example.org for more details "
                 "about the organisation, its work, its members, its reports, and how to reach us.", "suspended"),
    ("Fox News", ["It seems you clicked on a bad link and stumbled upon our 404 page"], "What should I do now?",
     "soft-404"),
    # the phrase and its site after a colon
    ("Page Not Found: Details", [], "Culture Trends", "soft-404"),
    ("Hacked By Mr.Black", [], "Greetz to all", "defaced"),
    ("Riverside Rights", [], "This website has been hacked by Team X", "defaced"),
    ("Riverside Rights", ["Website Coming Soon"], "Stay tuned", "under-construction"),
    ("Error: Access Denied", [], "You don't have permission", "bot-challenge"),
    ("503 Service Unavailable", [], "", "database-error"),
    ("Facebook", [], "Sorry, this content is no longer available", "soft-404"),
    ("Riverside Rights", ["Our website is currently under construction"], "", "under-construction"),
    ("Riverside Rights", [], "Your account has been suspended", "suspended"),
    ("wwhr | UNDER CONSTRUCTION", [], "Women for Women's Human Rights " * 60, "under-construction"),
    ("Domain parking", [], "sedoparking.com: this domain may be for sale", "parked"),
    # WordPress's default themes' 404 under a title that names the site alone (a Dallas Morning News
    # blog's 404 on the newspaper pages: "This is somewhat embarrassing, isn’t it?" and "It seems we
    # can’t find what you’re looking for"; Twenty Fourteen's "nothing was found at this location")
    ("Dallas Morning News", ["This is somewhat embarrassing, isn’t it?"], "Recent Posts", "soft-404"),
    ("Dallas Morning News", [], "It seems we can’t find what you’re looking for. Perhaps searching, or one of "
                                "the links below, can help.\nRecent Posts", "soft-404"),
    ("Activist Blog", ["Not Found"], "It looks like nothing was found at this location. Maybe try a search?",
     "soft-404"),
]


@pytest.mark.parametrize(("title", "headings", "text", "kind"), NOTICES)
def test_notices_still_read_as_their_kind(title: str, headings: list[str], text: str, kind: str) -> None:
    assert _kind(title, headings, text) == kind


def test_a_short_news_article_reporting_a_hack_is_a_baseline_and_stays_on_topic() -> None:
    """A deep page is read by its main content: a news brief is short enough for the body rule, and
    its title is a headline.  Read as a notice, the article would never be a baseline and every
    capture of it would be off topic; it is the seed's subject."""
    url = "http://english.example-news.com/news/2011/egypt-ministry-website-hacked"
    brief = ("CAIRO. The interior ministry said on Tuesday that its website had been hacked by a group calling "
             "itself the Egyptian Cyber Army. Under construction: a new site, the ministry added, will open soon. "
             + textgen.paragraph("law", 90, 3))
    title = "Access denied: Egypt ministry website hacked by activists"
    first = textgen.html([brief], title)
    later = textgen.html([brief, textgen.paragraph("law", 30, 4)], title)
    caps = [Capture(url=url, timestamp=datetime(2011, 2 + i, 1), content=c, content_type="text/html", status=200)
            for i, c in enumerate((first, later))]
    engine = Engine(EngineConfig())
    fp = engine.fingerprint(caps[0], seed_url=url)
    assert fp.word_count < 250 and fp.page_kind is None
    verdicts = engine.scan_history("k", caps).verdicts
    assert [v.change for v in verdicts] == ["baseline", "minor"], [v.reason for v in verdicts]


# -- a page-kind phrase decides only where it is the page (issue 39) ------------------------------------

HOME = "http://www.riverside-rights.org/"
POST = "http://www.riverside-rights.org/2012/03/court-hears-the-appeal.html"


def _fingerprint_kind(content: bytes, url: str = HOME) -> str | None:
    engine = Engine(EngineConfig())
    return engine.fingerprint(cap(0, content, url=url), seed_url=url).page_kind


@pytest.mark.parametrize(("lang", "url"), [("en", HOME), ("ar", HOME), ("en", POST), ("ar", POST)])
def test_an_empty_loop_under_a_featured_summary_is_not_a_soft_404(lang: str, url: str) -> None:
    """The held-out case: a WordPress theme's "Nothing Found ... It seems we can't find what you're
    looking for" block below a featured article's ~200-word summary, short enough for the body
    rule.  The block is the theme's, beside the page's own text: no page kind."""
    page = cms_pages.wp_home_featured_empty_loop(lang)
    assert _fingerprint_kind(page, url) is None
    # the notice itself is read (the same block alone is the page: below)
    assert _fingerprint_kind(cms_pages.wp_home_empty_loop(lang), url) == "soft-404"


@pytest.mark.parametrize("build", [cms_pages.blogger_post_no_comments, cms_pages.joomla_article_with_search])
def test_a_comment_block_or_a_search_module_beside_a_post_is_not_a_soft_404(build: Callable[[], bytes]) -> None:
    """A short post (under 250 words with the blog's chrome) whose comment block or search module
    says "the page you are looking for" / "Page not found in the menu?": no page kind."""
    assert _fingerprint_kind(build()) is None


@pytest.mark.parametrize("build", [cms_pages.wp_home_empty_loop, cms_pages.wp_404, cms_pages.blogger_missing_post,
                                   cms_pages.drupal_404])
def test_the_cms_error_pages_stay_soft_404s(build: Callable[[], bytes]) -> None:
    """The other side: the themes' own 404s and an empty loop that is the whole page (menus, widgets
    and footer are no text of the page's own) are still soft 404s, in the title or in the body."""
    assert _fingerprint_kind(build()) == "soft-404"


def test_the_notice_s_block_must_hold_the_page() -> None:
    """The line itself: a notice in the body decides with help text beside it (a sentence or two), not
    with a text of the page's own (60 words and more that outweigh the block); a second heading
    likewise.  The title and the main heading decide alone."""
    notice = "It seems we can’t find what you’re looking for. Perhaps searching can help."
    help_text = "Please check the address for typos, or return to the home page and use the menu above."
    own = textgen.paragraph("law", 120, 3)
    assert _kind("Site", [], f"Menu\n{notice}\n{help_text}") == "soft-404"
    assert _kind("Site", [], f"Menu\n{own}\n{notice}") is None
    assert _kind("Site", ["Site", "Page not found"], f"Page not found\n{help_text}") == "soft-404"
    assert _kind("Site", ["Site", "Page not found"], f"{own}\nPage not found") is None
    assert _kind("Site", ["Page not found"], f"{own}\nPage not found") == "soft-404"
    assert _kind("Page not found | Site", [], own) == "soft-404"


@pytest.mark.shared
def test_the_real_not_found_pages_stay_soft_404s(shared_data: Path, tmp_path: Path) -> None:
    """The newspaper pages' own "not found" versions (later replaced by their article) are read as
    soft 404s under the rule, read whole and by their main content, and no article is."""
    from watcher.extract.html import read_html
    from watcher.fingerprint import words

    with tarfile.open(shared_data / "pages" / "newspaper-pages.tar.gz") as tf:
        tf.extractall(tmp_path, filter="data")
    found: dict[bool, list[str]] = {False: [], True: []}
    for f in sorted(tmp_path.rglob("*.html")):
        for main in (False, True):
            doc = read_html(f.read_text("utf-8", "replace"), main_content=main)
            pk = detect_page_kind(doc.title, doc.headings, doc.text, len(words(doc.text, None)))
            if pk is not None:
                found[main].append(f.parent.name)
    # every error-page version of the fixtures (24 files in 9 folders), and nothing else, both readings
    expected = {"dallasnews.com1": 3, "details.com1": 2, "foxnews.com1": 1, "nj.com1": 2, "pe.com1": 3,
                "talkingpointsmemo.com1": 3, "vanityfair.com1": 3, "vanityfair.com2": 3, "vogue.com2": 1}
    for main in (False, True):
        assert {k: found[main].count(k) for k in set(found[main])} == expected, (main, found[main])


def test_a_history_of_a_home_page_with_an_empty_loop_has_a_baseline_and_stays_on_topic() -> None:
    """The held-out history (25 false positives): its first capture was read as a soft 404, so no
    baseline was ever set and every capture was off topic.  Read by the rule, the first capture is
    the baseline and the later ones (the summary of another featured article) are on topic."""
    caps = [cap(i, cms_pages.wp_home_featured_empty_loop("ar", seed=i), url=HOME) for i in range(3)]
    verdicts = Engine(EngineConfig()).scan_history("k", caps).verdicts
    assert verdicts[0].change == "baseline", verdicts[0].reason
    assert [v.status for v in verdicts[1:]] == ["on-topic", "on-topic"], [v.reason for v in verdicts]


def _ungated_first(units: list[str]) -> tuple[str, str] | None:
    """_first as it was before its literal gates: every kind's pattern on every unit."""
    from watcher import pagekinds

    for kind in pagekinds._ORDER:
        for unit in units:
            for m in pagekinds._COMPILED[kind].finditer(unit):
                if pagekinds._notice(unit, m):
                    return kind, m.group(0)[:80]
    return None


def _samples() -> list[str]:
    rows: list[tuple[str, list[str], str] | tuple[str, list[str], str, str]] = [*MENTIONS, *NOTICES]
    units = [u for row in rows for u in (row[0], *row[1], *row[2].splitlines())]
    # as a shouting or title-cased template writes them, and with the Turkish dotted capital I
    # (which case-folds to "i" and a combining dot)
    return [v for u in units for v in (u, u.upper(), u.title(), u.upper().replace("I", "\u0130"))]


def test_the_literal_gates_find_every_notice_the_patterns_find() -> None:
    from watcher import pagekinds

    units = [pagekinds._fold(u) for u in _samples()]
    found = 0
    for unit in units:
        want = _ungated_first([unit])
        assert pagekinds._first([unit]) == want, unit
        found += want is not None
    assert pagekinds._first(units) == _ungated_first(units)
    assert found > 40  # the notices (and their case variants) are found, not only the mentions refused
