"""One lxml parse per HTML capture: clean, read features, extract text.

Everything later stages need from the markup (title, headings, ``citation_*``
meta, DOIs, script count, site name, the visible text) is read from the same
tree, so no measure ever re-parses HTML.  Text comes from the same tree too, in one C-level walk
(:mod:`watcher.extract.blocktext`; inscriptis' layout took half of a capture's CPU).
"""

from __future__ import annotations

import itertools
import logging
import re
import threading
from dataclasses import dataclass, field

import lxml.etree
import lxml.html

from .blocktext import BREAK_MARK, block_text

log = logging.getLogger(__name__)

_NOSCRIPT_BLOCK = re.compile(r"<noscript\b[^>]*>.*?</noscript\s*>", re.I | re.S)
_NOSCRIPT_TAG = re.compile(r"</?noscript\b[^>]*>", re.I)
# Runs of spaces that are not a single " " already (which would be replaced by itself: a page's
# every word gap was one substitution, a tenth of reading a page).
_SPACES = "\t\r\f\v\u00a0\u2000-\u200b\u3000"  # besides " "
_WS = re.compile(f"[{_SPACES}][ {_SPACES}]*| [ {_SPACES}]+")
DOI_RE = re.compile(r"\b(10\.\d{4,9}/[^\s\"'<>&]+)", re.I)
_JS_REDIRECT = re.compile(
    r"""(?:window\.|document\.|top\.|self\.)?location(?:\.href)?\s*=\s*\\?["']([^"'\\]+)\\?["']"""
    r"""|location\.(?:replace|assign)\(\s*\\?["']([^"'\\]+)\\?["']""",
    re.I,
)
_XML_DECL = re.compile(r"^<\?xml[^>]*>")
# A Wayback replay of a redirect (the Internet Archive's, OpenWayback's, Archive-It's) is the archive's
# notice, not the site's page: "Got an HTTP 301 response at crawl time ... Redirecting to ... Impatient?",
# with a script that follows the link after a few seconds; OpenWayback's "Loading ... as close to the
# date ... as is available ... Impatient?" sends a request on to the nearest capture.  Two markers, so
# an article quoting one line is not one.
_REPLAY_REDIRECT = re.compile(r"Got an HTTP (30[0-8]) response at crawl time|(as close to the date)", re.I)
_IMPATIENT = re.compile(r"""<a\b[^>]*\bhref\s*=\s*["']([^"']+)["'][^>]*>\s*Impatient\?\s*</a>""", re.I)
# A Wayback replay's own page where it has no capture to show (a memento excluded later, or one
# whose download failed): the archive's words, not the page's.  The Internet Archive's wording since
# 2013; OpenWayback's ResourceNotInArchiveException page ("Resource Not In Archive" / "The Resource
# you requested is not in this archive.", its HTMLError.jsp and WaybackUI messages, which national
# libraries' and Archive-It's older replays serve); pywb's not_found.html ("URL Not Found" / "The url
# ... could not be found in this collection.").
_REPLAY_MISSING = re.compile(r"has not archived that URL|doesn't have that page archived|"
                             r"This URL has been excluded from the Wayback Machine|"
                             r"Page cannot be (?:crawled or )?displayed due to robots\.txt|"
                             r"The Resource you requested is not in this archive|"
                             r"could not be found in this collection", re.I)
_ARCHIVED_PREFIX = re.compile(r"^\s*\[ARCHIVED CONTENT\]\s*", re.I)

# Archive banners: ids/classes of elements archives inject into replayed pages.
_BANNER_IDS = ("wm-ipp", "wm-ipp-base", "wm-ipp-print", "donato", "webArchiveInfobox", "PRONIBANNER",
               "_wm_toolbar", "wb_header", "archiveit-banner", "wm-btns")
# ``[@id]`` first: an element without an id (most) is passed over after one attribute lookup
# instead of one per banner id (4x faster over the shared pages, the same elements)
_BANNER_XPATH = lxml.etree.XPath("//*[@id][" + " or ".join(f'@id="{b}"' for b in _BANNER_IDS) + "]")
# What a page holding a banner holds (an id that holds another, "wm-ipp-base", is found by it):
# each is a search of the whole page.
_BANNER_HINTS = tuple(b for b in (*_BANNER_IDS, "HEADER")
                      if not any(o != b and o in b for o in (*_BANNER_IDS, "HEADER")))
_INVISIBLE = ("script", "style", "noscript", "template", "svg", "head", "select", "object", "embed")
_BOILERPLATE_TAGS = ("nav", "header", "footer", "aside", "form", "menu")
_BOILERPLATE_ATTR = re.compile(
    r"(^|[\s_-])(nav|navbar|navigation|menu|sidebar|side-bar|footer|header|breadcrumb|cookie|banner|"
    r"advert|ads?|social|share|comments?|related|widget|subscribe|newsletter|masthead|skip)(?=[\s_-]|$)",
    re.I,
)
# A word in a modifier describes the element, it does not name it: BEM's "Section--Ads",
# "o-section--has-ads" (an article section with ads in it); and a page builder's blocks are all
# "widgets" (Elementor's "elementor-widget-container"), as Blogger's posts are ("widget Blog").
_MODIFIER = re.compile(r"(--|(?:^|[\s_-])(?:has|with|no)[-_]|elementor-)$", re.I)
_BLOGGER_POSTS = re.compile(r"(^|\s)Blog(\s|$)")
# A comment thread follows the content and never wraps it: dropped even when it holds most of the page's
# text.  Other names ("share-zone", "related-wrap") that hold most of the text are wrappers.
_APPENDED = frozenset({"comment", "comments"})


@dataclass(slots=True)
class HtmlDoc:
    """What one parse of one page yields."""

    text: str = ""
    title: str = ""
    headings: list[str] = field(default_factory=list)
    h1: list[str] = field(default_factory=list)  # first-level headings (Fingerprint.heading)
    site_name: str = ""
    meta: dict[str, list[str]] = field(default_factory=dict)
    dois: set[str] = field(default_factory=set)
    script_count: int = 0
    frames: list[str] = field(default_factory=list)  # a <frameset>'s frames, the main one first (frames_of)
    refresh_url: str | None = None
    js_redirect: str | None = None
    lang_attr: str | None = None
    capped: str | None = None  # what the per-page bounds cut (MAX_LAYOUT_NODES, MAX_TEXT_CHARS)
    declared: str = ""  # the address the page gives itself: <link rel="canonical">, else og:url (as written)
    # a replay's redirect notice: the status the crawler got and where it pointed (replay_redirect_of)
    replay_redirect: tuple[int | None, str | None] | None = None
    # share of the visible words inside links and page furniture (boilerplate_share); None: no text
    boilerplate_share: float | None = None


# A DOI names a work, never an image, style sheet or script: a date in an asset's path
# (".../10.2011/photo.jpg") matches the DOI pattern and would read as one lost when the photo changes.
_ASSET = re.compile(r"\.(?:jpe?g|png|gif|svg|webp|ico|bmp|css|js)$", re.I)


# DOI_RE without its leading word boundary: a pattern that opens with a literal is searched for that
# literal first (26 times faster on whole pages); the boundary is checked on each match instead.
_DOI_SCAN = re.compile(r"10\.\d{4,9}/[^\s\"'<>&]+")


def _doi_matches(text: str) -> list[str]:
    """What ``DOI_RE.findall(text)`` returns, searched by its literal start."""
    out: list[str] = []
    pos = 0
    while (m := _DOI_SCAN.search(text, pos)) is not None:
        start = m.start()
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            pos = start + 1  # no word boundary here: a match may still start inside this one
            continue
        out.append(m.group(0))
        pos = m.end()
    return out


def find_dois(text: str) -> set[str]:
    """The DOIs in ``text``, lower-cased, without trailing punctuation (or the backslash of an
    escaped quote in a script's string) or asset paths."""
    found = (d.rstrip(".,;)]\\").lower() for d in _doi_matches(text))
    return {d for d in found if not _ASSET.search(d)}


def normalise_ws(text: str) -> str:
    """Collapse runs of spaces per line and blank lines: archives differ in
    whitespace (minified vs original), which must not count as change."""
    # Then every run of whitespace holding a newline becomes one newline, and the ends go: the
    # same as substituting ``\s*\n\s*`` and stripping (``str.strip`` strips what ``\s`` matches),
    # done by lines, where the pattern made an attempt at every space of the page.
    return "\n".join(filter(None, map(str.strip, _WS.sub(" ", text).split("\n"))))


def _clean_markup(html: str) -> str:
    # <noscript> with unclosed or escaped markup can swallow the rest of a
    # document: drop closed blocks (fallback content) and stray tags.
    if "noscript" in html or "NOSCRIPT" in html:
        html = _NOSCRIPT_BLOCK.sub(" ", html)
        html = _NOSCRIPT_TAG.sub(" ", html)
    if BREAK_MARK in html:
        # the block text's line-break mark (a noncharacter, never meant for interchange): a page's
        # own is a space, as the tokenizer reads it, not a line break of the walk's
        html = html.replace(BREAK_MARK, " ")
    return html


_PARSERS = threading.local()


def _parser() -> lxml.html.HTMLParser:
    """This thread's HTML parser (an lxml parser is reused, never shared between threads).  Every
    element is an ``HtmlElement`` through lxml's C-level default lookup: lxml.html's own lookup
    calls Python for each element the walks touch (for the form and input classes, which nothing
    here reads), an eighth of reading a page."""
    parser: lxml.html.HTMLParser | None = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = lxml.html.HTMLParser(recover=True, remove_comments=True, remove_pis=True, collect_ids=False)
        parser.set_element_class_lookup(lxml.etree.ElementDefaultClassLookup(
            element=lxml.html.HtmlElement, comment=lxml.html.HtmlComment, pi=lxml.html.HtmlProcessingInstruction,
            entity=lxml.html.HtmlEntity))
        _PARSERS.parser = parser
    return parser


def parse_tree(html: str) -> lxml.html.HtmlElement | None:
    html = _clean_markup(html)
    if not html.strip():
        return None
    try:
        html = _XML_DECL.sub("", html.lstrip(), count=1)
        root = lxml.html.document_fromstring(html, parser=_parser())
    except (lxml.etree.ParserError, ValueError) as exc:
        log.debug("lxml could not parse document: %s", exc)
        return None
    if not isinstance(root, lxml.html.HtmlElement):  # pragma: no cover - lxml returns HtmlElement
        return None
    return root


def text_of(el: lxml.html.HtmlElement) -> str:
    """``el.text_content()``, by lxml's C-level text serialiser: the same string (checked on the
    1.49 million elements of the gold and shared pages), without the XPath evaluation that
    ``text_content`` runs per call, which was most of the cost of the per-link word counts."""
    return str(lxml.etree.tostring(el, method="text", encoding=str, with_tail=False))


def _drop(el: lxml.html.HtmlElement) -> None:
    parent = el.getparent()
    if parent is not None:
        el.drop_tree()


def remove_banners(root: lxml.html.HtmlElement, site_name: str) -> int:
    """Remove archive banners; return how many elements were removed."""
    removed = 0
    for el in _BANNER_XPATH(root):
        _drop(el)
        removed += 1
    if "archive.is" in site_name.lower() or "archive.today" in site_name.lower():
        for el in root.xpath('//*[@id="HEADER"] | //table[@id="hashtags"] | //*[@id="hashtags"]'):
            _drop(el)
            removed += 1
    return removed


def _boilerplate_name(attrs: str) -> str | None:
    """The boilerplate word that names an element (its class, id or role), lower case; None when
    no word does, or only modifiers carry one."""
    for m in _BOILERPLATE_ATTR.finditer(attrs):
        word = m.group(2).lower()
        if _MODIFIER.search(attrs[:m.start(2)]) or (word == "widget" and _BLOGGER_POSTS.search(attrs)):
            continue
        return word
    return None


# An element holding more of the page's text than this is the page's frame, not boilerplate.
BOILERPLATE_MAX_SHARE = 0.5
# Main content of fewer words than a stub (fingerprint.STUB_MAX_WORDS) out of a longer page is a
# failed extraction, not an article.
MAIN_CONTENT_MIN_WORDS = 20


# The article body: the element whose own paragraphs hold the most text, when they hold this many
# characters (some 80 words) or more.
ARTICLE_MIN_CHARS = 500


def _article_body(root: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """The element whose own ``<p>`` children hold the most text (readability's core idea), outside
    comment threads; ``None`` when no element holds :data:`ARTICLE_MIN_CHARS`.  Why: templates put
    the article inside elements named as boilerplate ("article-header", "detail_widget", an
    ``<aside>`` column, a ``<footer>`` holding a transcript), and removal by names alone dropped
    the article with them."""
    sums: dict[lxml.html.HtmlElement, int] = {}
    for p in root.iter("p"):
        parent = p.getparent()
        if parent is not None:
            sums[parent] = sums.get(parent, 0) + len(text_of(p))
    ranked = sorted(sums.items(), key=lambda kv: -kv[1])
    # What the page marks as its article (<article>, <main>, schema.org's articleBody) is asked first:
    # a "most read" list of summaries can outweigh a short article.
    marked = [(el, n) for el, n in ranked
              if any(a.tag in ("article", "main") or a.get("itemprop") == "articleBody"
                     for a in (el, *el.iterancestors()))]
    for group in (marked, ranked):
        for el, n in group:
            if n < ARTICLE_MIN_CHARS:
                break
            names = (" ".join(filter(None, (a.get("class"), a.get("id")))) for a in (el, *el.iterancestors()))
            if not any(_boilerplate_name(x) in _APPENDED for x in names if x):
                return el
    return None


# Every class, id and role value below an element, in document order (an element's own in the
# order written), each a string that knows its element.  Asked of <body> itself: "//body//*" made
# libxml2 expand "//" twice over every node of the page.
_NAME_ATTRS = lxml.etree.XPath("descendant::*/@class | descendant::*/@id | descendant::*/@role")


def _named_elements(root: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The elements under ``<body>`` whose class, id or role holds a boilerplate word, in document
    order: what :func:`remove_boilerplate` may drop.  Why by attribute value: the pattern cannot
    match across the space that joins an element's values, so a value that holds no word rules its
    element's part out in one C-level search, where building and searching every named element's
    joined names in Python was about 4 % of a fingerprint read by main content."""
    out: list[lxml.html.HtmlElement] = []
    search = _BOILERPLATE_ATTR.search
    for body in root.iter("body"):
        for value in _NAME_ATTRS(body):
            if search(value):
                el = value.getparent()
                if not out or out[-1] is not el:
                    out.append(el)
    return out


def remove_boilerplate(root: lxml.html.HtmlElement, whole: str | None = None) -> bool:
    """Cheap main-content extraction: drop navigation, headers, footers,
    asides, forms and elements whose class/id name them as such.

    Far cheaper than justext or trafilatura (which cost 1-2 s/MB) and enough
    to remove the parts of a page that change without the content changing.

    An element that holds more than :data:`BOILERPLATE_MAX_SHARE` of the
    page's text is kept whatever its name: boilerplate is the smaller part
    around the content, and what holds most of the text is the frame the
    content sits in (ASP.NET wraps every page in one ``<form>``; templates
    name whole-page wrappers "header-wrap" or "page-ads"), whose removal left
    no words on 60 of 402 gold pages and 72 of 432 newspaper pages.  A
    comment thread is dropped whatever its size: it never wraps the article.

    Returns False where the removal kept fewer than :data:`MAIN_CONTENT_MIN_WORDS` words of a
    page that has more: the extraction failed (the article sat in a container named
    "detail_widget" or "page-header"), and judging the page on what is left would judge it on
    nothing.  The caller reads the whole page then (:func:`read_html`).  ``whole``: the page's
    text as the tree stands, when the caller read it already (:func:`boilerplate_share` does).
    """
    if whole is None:
        whole = root.text_content()
    limit = BOILERPLATE_MAX_SHARE * len(whole)
    body = _article_body(root)
    keep = set(body.iterancestors()) | {body} if body is not None else set()

    def frame(el: lxml.html.HtmlElement) -> bool:
        return el in keep or len(text_of(el)) > limit

    for el in list(root.iter(*_BOILERPLATE_TAGS)):
        if el.getparent() is not None and not frame(el):
            _drop(el)
    for el in _named_elements(root):
        if el.getparent() is None:
            continue
        attrs = " ".join(filter(None, (el.get("class"), el.get("id"), el.get("role"))))
        if el.tag in ("body", "main", "article") or len(attrs) > 200:
            continue
        word = _boilerplate_name(attrs)
        if word is not None and ((word in _APPENDED and el not in keep) or not frame(el)):
            _drop(el)
    return len(root.text_content().split()) >= MAIN_CONTENT_MIN_WORDS or \
        len(whole.split()) < MAIN_CONTENT_MIN_WORDS


# Bounds on the cost of one page, not only on its bytes: a page of very many nodes (a 19 MB page of
# small elements took a consumer to 1.6 GB under inscriptis' per-node layout objects) gets lxml's
# plain text instead of the block walk,
# and text past MAX_TEXT_CHARS is cut.  Both are recorded (HtmlDoc.capped).
MAX_LAYOUT_NODES = 60_000
MAX_TEXT_CHARS = 2_000_000


def _frame_share(el: lxml.html.HtmlElement) -> float:
    """The share of its frameset a frame (or a nested frameset) takes, from the frameset's ``rows``
    or ``cols``: ``*`` the rest (all of it, as far as ranking goes), ``N%`` its share, a size in
    pixels little (a fixed bar: a menu, a banner)."""
    parent = el.getparent()
    if parent is None or parent.tag != "frameset":
        return 1.0
    # a frameset splits one way: the attribute with several sizes (some set both, the other "*")
    rows, cols = (parent.get("rows") or "").split(","), (parent.get("cols") or "").split(",")
    sizes = rows if len(rows) > 1 or len(cols) <= 1 else cols
    at = [c for c in parent if c.tag in ("frame", "frameset")].index(el)
    spec = sizes[at].strip() if at < len(sizes) else "*"
    if spec.endswith("*"):
        return 1.0
    if spec.endswith("%"):
        try:
            return min(1.0, max(0.0, float(spec[:-1]) / 100.0))
        except ValueError:
            return 0.0
    return 0.01


def frames_of(root: lxml.html.HtmlElement) -> list[str]:
    """A frameset page's frame addresses, the main frame first: the one that takes the most of the
    window through nested framesets ("top", "contents", "main", "bottom": the ``*`` one), the
    first of equals.  Empty when the page is no frameset (an ``<iframe>`` is part of a page)."""
    if root.find("frameset") is None and root.find("body/frameset") is None:
        return []  # a frameset document's <frameset> is the root's child (or body's, after stray text)
    ranked = []
    for i, frame in enumerate(root.iter("frame")):
        src = (frame.get("src") or "").strip()
        if not src or src.lower().startswith(("about:", "javascript:", "data:")):
            continue  # an empty frame holds no page
        share, el = 1.0, frame
        while el is not None and el.tag in ("frame", "frameset"):
            share *= _frame_share(el)
            el = el.getparent()
        ranked.append((-share, i, src))
    return [src for _, _, src in sorted(ranked)][:20]


def _strip_banners(root: lxml.html.HtmlElement, html: str, banners: bool, site_name: str) -> None:
    if banners and any(b in html for b in _BANNER_HINTS):
        remove_banners(root, site_name)


# Text here is the page's furniture, whatever the template names it: links, and the HTML5 regions
# for navigation, headers, footers and asides.
_FURNITURE = ("a", "nav", "header", "footer", "aside", "menu")


def boilerplate_share(root: lxml.html.HtmlElement, whole: str | None = None) -> float | None:
    """The share of the page's visible words that sit in links or in navigation, header, footer
    and aside regions: the boilerplate score of Schäfer and Bildhauer's crawl study at page level
    (a page that is mostly link lists and furniture yields little text per fetch).  Read from the
    markup, not the main-content extraction, so every page and profile gets the same score.  The
    outermost furniture elements are found by a C-level walk filtered by tag that skips each
    one's subtree, never by an XPath over ancestors (a quarter of a page's parse) nor by asking
    each element for its ancestors (a fifth of this function).  ``whole``: ``root``'s text, when
    the caller read it already."""
    total = len((root.text_content() if whole is None else whole).split())
    if total == 0:
        return None
    furniture = 0
    walk = lxml.etree.iterwalk(root, events=("start",), tag=_FURNITURE)
    for _, el in walk:
        furniture += len(text_of(el).split())
        walk.skip_subtree()  # the outermost only: a link in a menu is counted with the menu
    return round(min(1.0, furniture / total), 4)


def _drop_invisible(root: lxml.html.HtmlElement) -> None:
    # The text walk would hide them anyway; dropped first, so no count or feature reads them either.
    for el in list(root.iter(*_INVISIBLE)):
        _drop(el)


def _whole(html: str, banners: bool, site_name: str) -> lxml.html.HtmlElement | None:
    """``html`` parsed again, banners and invisible elements removed as :func:`read_html` does: the
    whole page, for where main content was asked for and its extraction failed (parsed again only
    then: a copy of every tree beforehand would cost every page)."""
    root = parse_tree(html)
    if root is not None:
        _strip_banners(root, html, banners, site_name)
        _drop_invisible(root)
    return root


def replay_redirect_of(html: str) -> tuple[int | None, str | None] | None:
    """The crawl-time status (``None`` for a replay's own hop to the nearest capture) and target (its
    "Impatient?" link, a replay address) of a Wayback replay's redirect notice, or ``None`` for any
    other page.  Why: downloaded without running its script, a memento of a redirect is that notice,
    whose words are the archive's; judged as a page, a home page that moved to https read off topic
    at every later crawl."""
    head = html[:200_000]
    code = _REPLAY_REDIRECT.search(head)
    if code is None:
        return None
    link = _IMPATIENT.search(head)
    if link is None:
        return None
    return (int(code.group(1)) if code.group(1) else None), link.group(1).strip() or None


def replay_missing_of(text: str) -> str | None:
    """The line of a replay's own page that says it has no capture of the address ("The Wayback
    Machine has not archived that URL"), or ``None``; the caller asks it of short pages only."""
    m = _REPLAY_MISSING.search(text)
    return m.group(0) if m else None


def read_html(html: str, *, banners: bool = True, main_content: bool = False) -> HtmlDoc:
    """Parse ``html`` once and read every feature; never raises."""
    doc = HtmlDoc()
    if "Impatient?" in html:
        doc.replay_redirect = replay_redirect_of(html)
        if doc.replay_redirect is not None:
            return doc  # the archive's notice: nothing of the page is in it
    root = parse_tree(html)
    if root is None:
        return doc
    head_meta: dict[str, list[str]] = {}
    canonical = ""
    for m in root.iter("meta", "link"):  # one walk of the tree for both
        if m.tag == "link":
            if not canonical and "canonical" in (m.get("rel") or "").lower().split():
                canonical = (m.get("href") or "").strip()
            continue
        name = (m.get("name") or m.get("property") or "").strip().lower()
        content = (m.get("content") or "").strip()
        equiv = (m.get("http-equiv") or "").strip().lower()
        if equiv == "refresh" and content:
            mm = re.search(r"url\s*=\s*['\"]?([^'\">]+)", content, re.I)
            if mm:
                doc.refresh_url = mm.group(1).strip()
        if name and content:
            head_meta.setdefault(name, []).append(content[:500])
    doc.meta = {k: v for k, v in head_meta.items()
                if k.startswith(("citation_", "dc.", "og:", "prism.")) or k in ("description", "keywords", "generator")}
    doc.site_name = (head_meta.get("og:site_name") or [""])[0]
    doc.declared = (canonical or (head_meta.get("og:url") or [""])[0])[:1000]
    title_el = root.find(".//title")
    if title_el is not None:
        doc.title = normalise_ws(title_el.text_content())[:300]
    if not doc.title:
        doc.title = (head_meta.get("og:title") or head_meta.get("citation_title") or [""])[0][:300]
    doc.lang_attr = root.get("lang") or root.get("xml:lang")
    doc.script_count = sum(1 for _ in root.iter("script"))
    doc.frames = frames_of(root)
    _strip_banners(root, html, banners, doc.site_name)
    for h in root.iter("h1", "h2"):
        # its words only: a script or a style inside a heading is not what the heading says
        t = normalise_ws(" ".join(h.xpath(".//text()[not(ancestor::script or ancestor::style)]")))[:300]
        if t:
            doc.headings.append(t)
            if h.tag == "h1":
                doc.h1.append(t)
        if len(doc.headings) >= 20:
            break
    _drop_invisible(root)
    whole = root.text_content()  # read once for both: the tree does not change between them
    doc.boilerplate_share = boilerplate_share(root, whole)
    if main_content and not remove_boilerplate(root, whole):
        whole = _whole(html, banners, doc.site_name)  # the extraction failed: the whole page
        root = root if whole is None else whole
    walked = block_text(root, MAX_LAYOUT_NODES)
    if walked is None:
        nodes = sum(1 for _ in root.iter())
        doc.capped = f"{nodes} nodes > {MAX_LAYOUT_NODES}: plain text, no layout"
        text = " ".join(itertools.islice(root.itertext(), 4 * MAX_LAYOUT_NODES))
    else:
        text = walked
    if len(text) > MAX_TEXT_CHARS:
        doc.capped = (doc.capped + "; " if doc.capped else "") + f"text cut at {MAX_TEXT_CHARS} characters"
        text = text[:MAX_TEXT_CHARS]
    text = normalise_ws(text)
    if banners:
        text = _ARCHIVED_PREFIX.sub("", text)
    doc.text = text
    if len(text) < 400:
        m = _JS_REDIRECT.search(html[:200_000])
        if m:
            doc.js_redirect = (m.group(1) or m.group(2) or "").strip() or None
    dois = find_dois(html[:2_000_000])
    for vals in doc.meta.values():
        for v in vals:
            dois.update(find_dois(v))
    doc.dois = dois
    return doc
