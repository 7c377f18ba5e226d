"""Decoding, cleaning and extraction of archived pages."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import pytest

from tests.fixtures import textgen
from watcher.canonical import original_url, surt_prefix, url_key
from watcher.config import CanonicalConfig, EngineConfig, TokenConfig
from watcher.engine import Engine, behaviour_of
from watcher.extract import decode as decode_module
from watcher.extract.decode import choose_encoding, decode, prescan
from watcher.extract.html import read_html
from watcher.fingerprint import fingerprint, host_of, words
from watcher.model import Capture
from watcher.pagekinds import detect_page_kind
from watcher.sources import read_labels

ARABIC = "منظمة حقوق الإنسان تدافع عن حرية التعبير في كل مكان"


def test_wrong_http_charset_on_utf8_bytes() -> None:
    data = f"<html><body><p>{ARABIC}</p></body></html>".encode()
    text, enc = decode(data, "text/html; charset=iso-8859-1")
    assert enc == "utf-8"
    assert ARABIC in text


def test_meta_charset_windows_1256() -> None:
    data = (f'<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1256">'
            f"</head><body><p>{ARABIC}</p></body></html>").encode("cp1256")
    text, enc = decode(data, "text/html")
    assert enc == "cp1256"
    assert ARABIC in text


def test_undeclared_legacy_encoding_is_detected() -> None:
    russian = "Права человека и свобода слова защищаются нашей организацией каждый день. " * 5
    text, enc = decode(f"<p>{russian}</p>".encode("cp1251"), None)
    assert "Права человека" in text, enc


def test_bom_wins_and_bad_bytes_never_raise() -> None:
    text, enc = decode(b"\xef\xbb\xbf<p>caf\xc3\xa9</p>", "text/html; charset=latin-1")
    assert enc == "utf-8" and "café" in text
    text, _ = decode(b"<p>\xff\xfe\xfa broken \x81\x8d</p>", "text/html; charset=utf-8")
    assert "broken" in text
    assert choose_encoding(b"plain ascii") == "utf-8"


SPANISH = "La organización defiende los derechos humanos en la región y publica su información según la ley"


@pytest.mark.parametrize("declared", ['<meta charset="utf-8">', ""])
def test_utf8_page_with_stray_legacy_bytes_is_read_as_utf8(declared: str) -> None:
    """A UTF-8 template around a few windows-1252 bytes (gold's desdecuba.com: "Generación"
    beside "inglés") is UTF-8 with stray bytes, not a legacy page: detection guessed
    windows-1252 and turned every accented word of the page into mojibake."""
    data = (f"<html><head>{declared}</head><body><p>{SPANISH}</p>".encode()
            + "<p>Versión en inglés © 2012</p></body></html>".encode("cp1252"))
    text, enc = decode(data)
    assert enc == "utf-8"
    assert SPANISH in text and "Versión en inglés © 2012" in text


def test_utf8_in_another_script_with_one_stray_byte_is_not_a_legacy_page() -> None:
    """Gold's Nepali page (UTF-8, one stray byte, declared utf-8) was read as cp866."""
    nepali = "नागरिकको जीउधनको सुरक्षा प्रति गम्भीर चिन्ता " * 20
    data = f'<html><head><meta charset="utf-8"></head><body><p>{nepali}</p>'.encode() + b"<p>\x96</p></html>"
    text, enc = decode(data)
    assert enc == "utf-8" and nepali.strip() in text and "\u2013" in text


@pytest.mark.parametrize("codec", ["cp1256", "cp1251", "cp1252"])
def test_legacy_pages_are_not_taken_for_utf8(codec: str) -> None:
    sample = {"cp1256": ARABIC, "cp1251": "Права человека и свобода слова защищаются каждый день",
              "cp1252": "Société générale: réunion à Genève, élection présidentielle"}[codec]
    text, enc = decode(f"<html><body><p>{sample} </p></body></html>".encode(codec) * 5)
    assert enc != "utf-8" and sample in text


def test_a_stray_byte_does_not_make_a_page_drift() -> None:
    """One capture of a UTF-8 page gains a windows-1252 copyright sign: it read as "text replaced"
    (containment 0.17) while every accented word became mojibake."""
    body = "".join(f"<p>{SPANISH} número {i}.</p>" for i in range(12))
    page = (f'<html><head><meta charset="utf-8"><title>Derechos humanos en la región</title></head>'
            f"<body>{body}<p>Copyright</p></body></html>").encode()
    stray = page.replace(b"Copyright", b"\xa9 Copyright \x96 2012")
    caps = [Capture(url="http://example.org/", timestamp=datetime(2012, 1 + i, 1), content=c,
                    content_type="text/html") for i, c in enumerate((page, stray))]
    verdicts = Engine(EngineConfig()).scan_history("k", caps).verdicts
    assert [v.change for v in verdicts] == ["baseline", "minor"], [v.reason for v in verdicts]


def test_undeclared_legacy_pages_of_gold_decode_as_declared(gold_dir: Path) -> None:
    """Every gold page that declares a legacy charset, with the declaration removed, decodes to
    the same text by detection (chardetng, hinted by the address's TLD).  uchardet got 38 of
    them wrong: English pages with curly quotes as DOS code pages (cp865), Arabic ones as
    cp1251, Western ones as cp852 or Mac Latin-2."""
    tlds = {row.id: host_of(original_url(row.uri)).rpartition(".")[2] for row in read_labels(gold_dir)}
    declaration = re.compile(rb"""(?i)charset\s*=\s*["']?[\w-]+""")
    checked, wrong = 0, []
    for page in sorted((gold_dir / "html").glob("*/*.html")):
        data = page.read_bytes()
        declared = prescan(data)
        if not data or declared in (None, "utf-8") or choose_encoding(data) != declared:
            continue
        bare = declaration.sub(b"", data[:4096]) + data[4096:]
        if not any(b > 0x7F for b in bare):
            continue
        checked += 1
        text, enc = decode(bare, None, "cp1252", tlds[page.parent.name])
        if text != decode(bare, f"text/html; charset={declared}")[0]:
            wrong.append((page.parent.name, page.name, declared, enc))
    assert checked >= 250 and not wrong, (checked, wrong)


@pytest.mark.parametrize("tld", ["eg", "EG", "xn--wgbh1c", "مصر", "com.", "", "1", "a.b", None])
def test_any_tld_hint_is_safe(tld: str | None) -> None:
    """chardetng panics on a TLD with upper case, a period or non-ASCII: such hints are mended
    (lower case, punycode) or dropped, never passed."""
    arabic = f"<html><body><p>{ARABIC}</p></body></html>".encode("cp1256")
    text, enc = decode(arabic, None, "cp1252", tld)
    assert ARABIC in text and enc == "cp1256"


def test_punctuation_that_every_windows_code_page_shares_is_not_guessed_at() -> None:
    """An undeclared page whose only non-ASCII bytes are « » © and curly quotes (gold's syriahr.com,
    its Arabic in numeric entities) reads the same in any Windows code page; chardetng alone read
    « » as ISO-8859-2's "Ť ť"."""
    data = "<html><body><p>«&#1573;&#1606;» &#1587;&#1610; © 2012</p></body></html>".encode("cp1252")
    text, _ = decode(data, None, "cp1252", "com")
    assert "«&#1573;&#1606;» &#1587;&#1610; © 2012" in text
    for byte in decode_module._WINDOWS_PUNCTUATION:
        assert len({bytes([byte]).decode(f"cp125{i}") for i in range(9)}) == 1, hex(byte)


def test_detection_answers_only_what_a_browser_decodes() -> None:
    """An undeclared page is decoded as a browser would: chardetng answers WHATWG encodings only."""
    web = {"cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "cp874",
           "iso8859-2", "iso8859-4", "iso8859-5", "iso8859-6", "iso8859-7", "iso8859-8", "iso8859-13",
           "koi8-r", "koi8-u", "cp866", "mac-cyrillic", "gb18030", "big5hkscs", "cp932", "euc_jp", "iso2022_jp",
           "cp949"}
    samples = [ARABIC, "Права человека", "Société générale à Genève", "שלום עולם", "Ελληνικά", "ภาษาไทย",
               "日本語のテキスト", "中文文本内容", "한국어 텍스트"]
    for sample in samples:
        for codec in ("cp1256", "cp1251", "cp1252", "cp1255", "cp1253", "cp874", "shift_jis", "gb18030", "cp949"):
            try:
                data = f"<html><body><p>{sample} {sample}</p></body></html>".encode(codec)
            except UnicodeEncodeError:
                continue
            assert choose_encoding(data) in web | {"utf-8"}, (sample, codec)


def test_nul_and_control_characters_removed() -> None:
    data = b"<ht\x00ml><bo\x00dy><p>Hu\x00man rig\x01hts\x0b report</p></body></html>"
    cfg = EngineConfig(tokens=TokenConfig(keep_text=True))
    fp = fingerprint(Capture(url="http://x.org/", timestamp=datetime(2020, 1, 1), content=data), cfg)
    assert fp.text is not None and "Human rights report" in fp.text


def test_unclosed_noscript_does_not_swallow_the_page() -> None:
    html = ("<html><body><noscript><p>Please enable JavaScript<div>"
            "<h1>Annual report</h1><p>The commission published its findings on detention.</p></body></html>")
    doc = read_html(html)
    assert "commission published its findings" in doc.text
    escaped = "<noscript>&lt;img src=x&gt;</noscript><p>Visible text stays</p>"
    assert read_html(escaped).text == "Visible text stays"


@pytest.mark.parametrize("banner", [
    '<div id="wm-ipp"><p>The Wayback Machine has 57 captures</p></div>',
    '<div id="webArchiveInfobox"><p>This is an archived page of the UK Government Web Archive</p></div>',
    '<div id="PRONIBANNER"><p>PRONI web archive banner text</p></div>',
])
def test_archive_banners_removed(banner: str) -> None:
    html = f"<html><body>{banner}<p>Original article text about water rights.</p></body></html>"
    text = read_html(html).text
    assert "Original article text" in text
    assert "Wayback" not in text and "archived page" not in text and "PRONI" not in text


def test_archive_is_banner_only_when_site_is_archive_is() -> None:
    page = ('<html><head><meta property="og:site_name" content="archive.is"></head><body>'
            '<div id="HEADER">archive.is saved from</div><table id="hashtags"><tr><td>#tag</td></tr></table>'
            "<p>Body text survives.</p></body></html>")
    text = read_html(page).text
    assert "saved from" not in text and "#tag" not in text and "Body text survives." in text
    own = '<html><body><div id="HEADER">Site header kept</div><p>Body</p></body></html>'
    assert "Site header kept" in read_html(own).text
    assert read_html("<p>[ARCHIVED CONTENT] Press release</p>").text == "Press release"


ARTICLE = textgen.paragraph("law", 120, 1)


@pytest.mark.parametrize("frame", [
    '<form method="post" action="./default.aspx" id="aspnetForm">{}</form>',  # ASP.NET wraps every page
    '<div class="header-wrap">{}</div>',  # a template that names its page wrapper after its header
    '<div class="widget Blog" id="Blog1">{}</div>',  # Blogger's posts
    '<div class="share-zone">{}<div class="share-buttons">Share on Facebook</div></div>',  # franceculture.fr
])
def test_main_content_keeps_the_frame_the_article_sits_in(frame: str) -> None:
    """Boilerplate removal drops what is named as menus, headers and asides, but never the element
    that holds most of the page's text: before, an ASP.NET page lost every word (60 of 402 gold
    pages kept none)."""
    body = ('<div class="nav"><a href="/">Home</a> <a href="/about">About us</a></div>'
            f"<h1>Annual report</h1><p>{ARTICLE}</p><div class=\"footer\">Copyright the commission</div>")
    doc = read_html(f"<html><body>{frame.format(body)}</body></html>", main_content=True)
    assert ARTICLE in doc.text
    assert "About us" not in doc.text and "Copyright" not in doc.text and "Share on" not in doc.text


@pytest.mark.parametrize("block", [
    '<div class="elementor-widget-wrap"><div class="elementor-widget-container">{}</div></div>',  # a page builder
    '<section class="TestReport__Section TestReport__Section--Ads">{}</section>',  # BEM: "with ads in it"
    '<section class="o-section o-section--has-ads">{}</section>',
])
def test_names_that_describe_a_content_block_do_not_drop_it(block: str) -> None:
    """A page builder calls every block a widget (Elementor), and a modifier ("--Ads", "--has-ads")
    says what is in a section, not that it is an ad: the article in them stays (German and fashion
    sites of the trafilatura pages lost it).  The sidebar and its widgets still go."""
    side = ('<div id="sidebar" class="widget-area"><div class="widget widget_recent_entries">Recent posts: '
            'other entries on this weblog</div></div><div class="widget BlogArchive">Archive by month</div>')
    # three such blocks, each under half of the page's text (chip.de has six sections "--Ads")
    parts = [textgen.paragraph("law", 120, i) for i in range(3)]
    blocks = "".join(block.format(f"<p>{x}</p>") for x in parts)
    page = f"<html><body><h1>Annual report</h1>{blocks}{side}</body></html>"
    text = read_html(page, main_content=True).text
    assert all(x in text for x in parts) and "Recent posts" not in text and "Archive by month" not in text


def test_main_content_drops_a_comment_thread_longer_than_the_article() -> None:
    thread = "".join(f"<p>{textgen.paragraph('music', 60, i)}</p>" for i in range(6))
    page = (f"<html><body><h1>Annual report</h1><p>{ARTICLE}</p>"
            f'<div id="comments" class="comments">{thread}</div></body></html>')
    text = read_html(page, main_content=True).text
    assert ARTICLE in text and textgen.paragraph("music", 60, 0) not in text


@pytest.mark.parametrize("wrapper", [
    '<div class="box article"><div class="article-header"><h1>Report</h1>{}</div></div>',  # nypost.com
    '<div class="detail_widget widget">{}</div>',  # a Bengali news site
    '<aside class="rightColumn"><div class="slideshow">{}</div></aside>',  # bhg.com's slideshow
    '<article><footer class="meta-data"><div class="transcript">{}</div></footer></article>',  # upworthy
])
def test_main_content_keeps_the_article_body_whatever_its_containers_are_named(wrapper: str) -> None:
    """The element whose own paragraphs hold the most text is the article body, and neither it nor
    a container of it is boilerplate, whatever the template named them: removal by names alone
    dropped the article on 17 newspaper pages (an "article-header" wrapper, a "widget", an
    ``<aside>`` column, a ``<footer>`` holding a transcript).  The menus and lists around still go."""
    article = "".join(f"<p>{textgen.paragraph('law', 40, i)}</p>" for i in range(4))
    # the lists around outweigh the article, so no frame rule keeps its container
    most_read = "".join(f"<p>Most read: {textgen.paragraph('music', 50, i)}</p>" for i in range(2))
    menus = (f'<nav><a href="/">Home</a> <a href="/about">About us</a> {textgen.paragraph("space", 60, 1)}</nav>'
             f'<div class="sidebar">{most_read}</div><div class="footer">Copyright the newspaper '
             f'{textgen.paragraph("cooking", 40, 2)}</div>')
    text = read_html(f"<html><body>{menus}{wrapper.format(article)}</body></html>", main_content=True).text
    assert all(textgen.paragraph("law", 40, i) in text for i in range(4))
    assert "About us" not in text and "Most read" not in text and "Copyright" not in text


def test_main_content_that_keeps_almost_nothing_reads_the_whole_page() -> None:
    """Where the removal leaves fewer words than a stub of a longer page, the extraction failed
    (the article sat in blocks named after a header and a widget, each under half the page:
    17 of the 449 newspaper pages, 10 of gold's 2,182), and judging the page on what is left
    would judge it on nothing: the whole page is read.  A page that is a stub stays one."""
    halves = [textgen.paragraph("law", 40, 1), textgen.paragraph("river", 40, 2), textgen.paragraph("law", 40, 3)]
    page = (f'<html><body><div class="page-header">{halves[0]}</div><div class="detail_widget widget">'
            f'{halves[1]}</div><div class="detail_widget widget">{halves[2]}</div>'
            '<div class="footer">Copyright the commission</div></body></html>')
    text = read_html(page, main_content=True).text
    assert all(h in text for h in halves) and "Copyright" in text  # the whole page, as without removal
    assert text == read_html(page).text
    stub = '<html><body><div class="nav">Home About</div><p>Moved to our new address.</p></body></html>'
    assert read_html(stub, main_content=True).text == "Moved to our new address."


def test_whitespace_normalised() -> None:
    a = read_html("<p>Human   rights\n\n\n   defenders</p>").text
    b = read_html("<p>Human rights</p>\n<p>defenders</p>").text.replace("\n", " ")
    assert a == "Human rights defenders" == b


def test_cjk_text_becomes_bigrams() -> None:
    assert words("人权观察", None) == ["人权", "权观", "观察"]


@pytest.mark.parametrize(("a", "b"), [
    ("http://www.Example.org:80/path/?b=2&a=1", "https://example.org/path?a=1&b=2"),
    ("HTTP://EXAMPLE.ORG", "http://example.org/"),
    ("http://example.org/x?utm_source=feed", "http://example.org/x"),
])
def test_canonical_keys_group_spellings(a: str, b: str) -> None:
    assert url_key(a) == url_key(b)
    assert url_key(a).startswith("org,example)")


def test_canonical_options_are_configurable() -> None:
    strict = CanonicalConfig(strip_www=False, ignore_scheme=False)
    assert url_key("http://www.example.org/", strict) != url_key("https://example.org/", strict)
    assert url_key("http://example.org/a?x=1") != url_key("http://example.org/a?x=2")
    assert url_key("http://example.org/a#comments") == url_key("http://example.org/a")
    assert url_key("http://twitter.com/#!/alaa") != url_key("http://twitter.com/#!/monasosh")  # hashbang: content
    # the dropped parameters are each configuration's own (read once per configuration), in any case
    rev = CanonicalConfig(drop_query_params=("REV",))
    assert url_key("http://example.org/a?rev=3&b=1", rev) == url_key("http://example.org/a?b=1", rev)
    assert url_key("http://example.org/a?rev=3&b=1") != url_key("http://example.org/a?b=1")
    assert url_key("http://example.org/a?utm_source=x", rev) != url_key("http://example.org/a?utm_source=x")
    assert url_key("http://example.org//a//b", strict) == "http://(org,example)/a/b"
    assert url_key("http://www3.example.org/?", strict) == "http://(org,example,www3)/"
    assert url_key("http://www3.example.org/?") == "org,example)/"


def test_original_url_and_surt_prefix() -> None:
    uri_m = "http://wayback.archive-it.org/1068/20111013000640/http://acda.co/"
    assert original_url(uri_m) == "http://acda.co/"
    assert original_url("https://web.archive.org/web/20120103014326id_/http://example.org/") == "http://example.org/"
    assert surt_prefix("http://www.example.co.uk/page") == "http://(uk,co,example,"


@pytest.mark.parametrize(("title", "text", "kind"), [
    ("Domain for sale", "This domain may be for sale. Buy this domain.", "parked"),
    ("Account Suspended", "This account has been suspended. Contact your hosting provider.", "suspended"),
    ("", "Error establishing a database connection", "database-error"),
    ("404 Not Found", "The requested URL was not found on this server.", "soft-404"),
    ("Apache2 Ubuntu Default Page: It works", "It works!", "under-construction"),
    ("Just a moment...", "Checking your browser before accessing the site.", "bot-challenge"),
    ("Página no encontrada", "Lo sentimos", "soft-404"),
    ("404 | Vanity Fair", "Fashion Culture Hollywood", "soft-404"),
    ("Maintenance Mode", "Currently undergoing scheduled maintenance. Please try back soon.", "under-construction"),
    ("", "Briefly unavailable for scheduled maintenance. Check back in a minute.", "under-construction"),
    ("", "SITIO NO DISPONIBLE", "suspended"),
    ("Log into Facebook | Facebook", "You must log in to continue. Email or phone Password", "login-wall"),
    ("Login • Instagram", "Log in to see photos and videos from friends.", "login-wall"),
    ("Protected", "These Tweets are protected. Only confirmed followers have access.", "login-wall"),
    ("مدونة", "يجب عليك تسجيل الدخول لمشاهدة هذه الصفحة", "login-wall"),
    # Arabic written without hamza or dots on taa marbuta, with harakat or tatweel: one phrase
    ("عذرا، الصفحه غير موجوده", "", "soft-404"),
    ("الموقع قيد الانشاء", "", "under-construction"),
    ("", "الصَّفْحَة غير مـوجـودة", "soft-404"),
    ("YouTube", "This video has been removed by the user. Sorry about that.", "soft-404"),
    ("Facebook", "This content isn't available right now. The link you followed may be broken.", "soft-404"),
    ("Blogger", "Blog not found. Sorry, the blog you were looking for does not exist.", "soft-404"),
    # The platforms' and CMSs' own notices, as activist and news collections of 2010-2014 hold them
    ("تسجيل الدخول إلى فيسبوك | فيسبوك", "", "login-wall"),
    ("", "سجل الدخول لمشاهدة المزيد على فيسبوك", "login-wall"),
    ("Facebook", "This content is currently unavailable. The page you requested cannot be displayed", "soft-404"),
    ("", "هذا المحتوى غير متوفر حاليًا. ربما يكون الرابط الذي اتبعته معطلاً", "soft-404"),
    ("YouTube", "This channel is not available.", "soft-404"),
    ("YouTube", "هذا الفيديو غير متاح.", "soft-404"),
    ("Twitter / Over capacity", "Twitter is over capacity. Please wait a moment and try again.", "database-error"),
    ("", "This page is temporarily unavailable. Please try again later.", "database-error"),  # transient
    ("تويتر / الحساب معلق", "", "suspended"),
    ("", "تم إيقاف هذا الحساب", "suspended"),
    ("WordPress.com", "This blog has been archived or suspended in accordance with our Terms of Service.", "soft-404"),
    ("خطأ 404", "", "soft-404"),
    ("", "عذراً، لم يتم العثور على الصفحة المطلوبة", "soft-404"),
    ("", "الصفحة التي تبحث عنها غير موجودة أو تم نقلها", "soft-404"),
    ("", "Erreur. Cette page n'existe pas.", "soft-404"),
    ("", "هذا النطاق معروض للبيع", "parked"),
    ("", "خطأ في الاتصال بقاعدة البيانات", "database-error"),
    ("الموقع تحت الصيانة", "سنعود قريبًا", "under-construction"),
    # typographic apostrophes, as the platforms write them: Twitter's 404 of 2010-2016 and LinkedIn's
    ("Twitter / ?", "Sorry, that page doesn\u2019t exist! You can search Twitter using the search box below.",
     "soft-404"),
    ("", "This page doesn\u2019t exist", "soft-404"),
    ("", "Sorry, we couldn\u2019t find that page.", "soft-404"),
    ("Not Found", "Sorry, but you are looking for something that isn't here.", "soft-404"),  # WordPress's Kubrick
    ("", "الموقع مغلق مؤقتا للصيانة", "under-construction"),
    ("", "activists.wordpress.com is no longer available. The authors have deleted this site.", "suspended"),
    ("Vimeo", "Sorry, this video does not exist.", "soft-404"),
    ("YouTube", "This user account has been terminated.", "soft-404"),
    ("Ustream", "This channel is no longer available.", "soft-404"),
    ("Flickr", "Sorry, this photo is no longer available.", "soft-404"),
    ("Content Not Found", "The page you requested cannot be displayed right now. It may be temporarily "
     "unavailable, the link you clicked on may have expired, or you may not have permission to view this page.",
     "soft-404"),
    # a platform that will not serve the crawler's client
    ("Update Your Browser | Facebook", "", "bot-challenge"),
    ("Facebook", "You\u2019re using a web browser that isn\u2019t supported by Facebook.", "bot-challenge"),
    ("", "You\u2019re Temporarily Blocked. It looks like you were misusing this feature.", "bot-challenge"),
    ("ERROR: The request could not be satisfied", "403 ERROR. The request could not be satisfied.", "database-error"),
])
def test_page_kinds(title: str, text: str, kind: str) -> None:
    found = detect_page_kind(title, [], text, len(text.split()))
    assert found is not None and found.kind == kind


def test_a_public_page_with_a_login_link_is_not_a_login_wall() -> None:
    """Nearly every page offers "Log in" or "Sign up"; only a page that withholds its content says you
    must log in to see it."""
    text = "Log in or Sign up. Women's rights group statement on the trial. Join us on Saturday. Log in"
    assert detect_page_kind("Women's Rights Group | Facebook", ["Log in"], text, len(text.split())) is None


@pytest.mark.parametrize("title", ["Welcome to Facebook - Log In, Sign Up or Learn More", "Welcome to Twitter",
                                   "Welcome to Twitter - Login or Sign up"])
def test_a_platform_front_door_is_not_a_page_kind(title: str) -> None:
    """A seed the crawler never reached ("twitter.com/#!/name": the fragment is dropped, twitter.com
    is fetched) shows the platform's front door at every capture, its first included: as a page
    kind, the whole history would be off topic with no baseline.  It is judged against itself
    instead; where a front door replaces the page, the text measures see the page go."""
    text = "Find out what's happening, right now, with the people and organizations you care about. Sign up"
    assert detect_page_kind(title, [], text, len(text.split())) is None
    url = "http://www.facebook.com/pages/We-are-all-Khaled-Said/123456"
    page = textgen.html([textgen.paragraph("law", 200, 1), textgen.paragraph("river", 150, 2)],
                        "We are all Khaled Said | Facebook")
    door = textgen.html([text], title)
    caps = [Capture(url=url, timestamp=datetime(2011, 2 + i, 1), content=c, content_type="text/html")
            for i, c in enumerate((page, door, page))]
    assert [v.status for v in Engine(EngineConfig()).scan_history("k", caps).verdicts] == \
        ["on-topic", "off-topic", "on-topic"]
    doors = [Capture(url=url, timestamp=datetime(2011, 2 + i, 1), content=door, content_type="text/html")
             for i in range(3)]
    assert [v.change for v in Engine(EngineConfig()).scan_history("k", doors).verdicts] == \
        ["baseline", "unchanged", "unchanged"]


@pytest.mark.parametrize("title", [
    "السلطات تحجب موقع الجزيرة وتغلق حسابات ناشطين",  # the authorities block Al Jazeera's site: news, not a notice
    "مشروع الطريق الدائري قيد التطوير",  # the ring road is under development
    "Hospital over capacity as flu spreads",
    "Activists say the blocked site is still not available in Egypt",
    "تمت إزالة الفيديو من يوتيوب بعد ساعات من نشره",  # the video was removed from YouTube: a report
    "لم يتم العثور على الملف الخاص بالقضية",  # the case file was not found
])
def test_headlines_about_blocking_or_maintenance_are_not_notices(title: str) -> None:
    """A news headline that reports a block, an outage or works is the page's subject, not a notice
    about the page itself: the Arabic phrases need the notice's own wording ("this account", "the
    site is under maintenance")."""
    text = "تقرير عن الحدث. " * 150
    assert detect_page_kind(title, [], text, len(text.split())) is None


def test_a_script_inside_a_heading_is_not_what_the_heading_says() -> None:
    """Headings are read without the scripts and styles inside them, for the page kinds as for the
    headline: an ad slot's code that mentions "page not found" does not make a soft 404."""
    html = ("<html><head><title>Rights Watch</title></head><body><h1><script>var msg = 'Page not found';"
            "</script>Annual report on detention</h1><h2><style>.x{}</style>Findings</h2>"
            "<p>" + "The report documents the cases. " * 20 + "</p></body></html>")
    doc = read_html(html)
    assert doc.headings == ["Annual report on detention", "Findings"]
    assert doc.h1 == ["Annual report on detention"]
    fp = fingerprint(Capture(url="http://example.org/report", timestamp=datetime(2020, 1, 1),
                             content=html.encode(), content_type="text/html"), EngineConfig())
    assert fp.page_kind is None


def test_long_article_mentioning_an_error_is_not_a_soft_404() -> None:
    text = "The report says the page not found error confused readers. " + "Rights advocacy work continues. " * 80
    assert detect_page_kind("Annual report on access", [], text, len(text.split())) is None


@pytest.mark.parametrize(("seq", "behaviour"), [
    (["baseline", "on-topic", "on-topic"], "Always On"),
    (["baseline", "on-topic", "off-topic", "off-topic"], "Step Function On"),
    (["off-topic", "off-topic", "on-topic"], "Step Function Off"),
    (["baseline", "off-topic", "on-topic", "off-topic"], "Oscillating"),
    (["off-topic", "off-topic"], "Always Off"),
    (["empty", "empty"], "Empty"),
])
def test_behaviour_classes(seq: list[str], behaviour: str) -> None:
    assert behaviour_of(seq) == behaviour


def test_a_page_of_too_many_nodes_is_read_without_layout_and_noted() -> None:
    """The cost of one page is bounded, not only its bytes: past MAX_LAYOUT_NODES the text comes from
    lxml without inscriptis's per-node objects, and the fingerprint says it was cut."""
    from watcher.extract.html import MAX_LAYOUT_NODES

    n = MAX_LAYOUT_NODES + 10
    page = ("<html><body>" + "".join(f"<div><span>w{i}</span></div>" for i in range(n // 2)) + "</body></html>")
    doc = read_html(page)
    assert doc.capped is not None and "nodes" in doc.capped
    fp = fingerprint(Capture(url="http://x.org/", timestamp=datetime(2020, 1, 1), content=page.encode()),
                     EngineConfig())
    assert fp.error == "truncated" and fp.word_count == n // 2


def test_frames_of_finds_a_frameset_after_stray_text_and_never_an_iframe() -> None:
    """A frameset document with stray text before its <frameset> parses with the frameset inside
    <body>: still a frameset, main frame first.  An <iframe> is part of a page, not a frameset."""
    from watcher.extract.html import frames_of, parse_tree

    stray = parse_tree('<html><head><title>x</title></head>Loading...<frameset cols="20%,*">'
                       '<frame src="menu.html"><frame src="main.html"></frameset></html>')
    assert stray is not None and stray.find("body/frameset") is not None
    assert frames_of(stray) == ["main.html", "menu.html"]
    page = parse_tree("<html><body><p>Our work.</p><iframe src='map.html'></iframe></body></html>")
    assert page is not None and frames_of(page) == []


def test_the_utf8_share_counts_the_bytes_the_sequence_pattern_matches() -> None:
    """decode._in_utf8_sequences (two C-level passes) counts what the well-formed-UTF-8 pattern
    matches, on text in several scripts with bytes cut, replaced and inserted at random."""
    import random

    from watcher.extract import decode as dec

    rnd = random.Random(7)
    text = ("Café – «déjà vu» 東京 مرحبا Привет 😀 \U0010fffd ok " * 40).encode("utf-8")
    tried = 0
    for _ in range(300):
        data = bytearray(text)
        for _ in range(rnd.randrange(1, 30)):
            data[rnd.randrange(len(data))] = rnd.choice(b"\x80\xbf\xc0\xc3\xdf\xe0\xe2\xed\xef\xf0\xf4\xf5\xff\xa0")
        cut = bytes(data[:rnd.randrange(1, len(data))])
        high = dec._high_bytes(cut)
        assert dec._in_utf8_sequences(cut, high) == sum(len(m) for m in dec._UTF8_SEQ.findall(cut))
        tried += 1
    assert tried == 300


@pytest.mark.parametrize("charset", ["utf-8", "windows-1252", "windows-1256", "iso-8859-2", "koi8-r",
                                     "shift_jis", "gb18030", "euc-kr", "iso-2022-jp", "cp037", "utf-16-le"])
def test_decoding_removes_every_control_character_whatever_the_codec(charset: str) -> None:
    """decode() skips its pass over the text where the bytes hold no control byte and the codec
    makes control characters of control bytes only; EBCDIC (cp037) and UTF-16 do not, and take
    the pass: the text is the same either way."""
    import random

    from watcher.extract import decode as dec

    rnd = random.Random(charset)
    sample = "Café – 東京 مرحبا Привет ok\tline\r\n".encode()
    for _ in range(60):
        data = bytearray(sample * 3)
        for _ in range(rnd.randrange(0, 6)):
            data[rnd.randrange(len(data))] = rnd.randrange(256)
        text, enc = dec.decode(bytes(data), f"text/html; charset={charset}")
        assert text == dec.strip_controls(bytes(data).decode(enc, dec._errors(enc))), (charset, bytes(data))


def test_whitespace_is_normalised_as_the_two_patterns_did() -> None:
    """normalise_ws by lines equals the substitution of ``\\s*\\n\\s*`` it replaced, on random runs
    of every kind of whitespace (no-break, ideographic, zero-width, line separators, controls)."""
    import random
    import re

    from watcher.extract.html import _WS, normalise_ws

    rnd = random.Random(11)
    pieces = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\xa0", "\u2000", "\u200b", "\u3000", "\x1c", "\x85",
              "\u2028", "\u202f", "a", "bc", " \n ", "\n\n"]
    for _ in range(2000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randrange(0, 40)))
        assert normalise_ws(text) == re.sub(r"\s*\n\s*", "\n", _WS.sub(" ", text)).strip(), repr(text)
