"""The paragraphs of the scholarly record: which blocks of a landing page are what a citation points at.

A DOI cites a work, not the page around it.  When a platform redesigns, the
menus ("Governance" renamed "Advisory Board"), the footer (a new copyright
year), the share bar and the "related articles" list change while the
abstract and the body stay; read as the article's paragraphs, that chrome made
a redesign look like an edited article.  So the record's paragraphs are only
those of two regions:

- **the abstract**: the blocks the page's own declaration of its abstract
  (``citation_abstract``, ``dc.description``, JSON-LD ``abstract``,
  ``og:description``) matches by shingle containment; else the element marked
  as the abstract (``class``/``id``/``itemprop``/``role=doc-abstract``); else
  the blocks after a heading that reads "Abstract" or "Summary";
- **the body**, where the page shows it: the element under ``<article>``,
  ``<main>``, ``role=main`` or ``itemprop=articleBody`` with the most prose
  outside chrome; else the element whose own paragraphs hold the most text
  (readability's rule).

Inside them, chrome never counts: elements named as navigation, header,
footer, sidebar, share bar, related works, metrics, cookie banner... by
semantic tag, ARIA role or class/id word (the vocabulary, with the LOCKSS
hash filters' per-platform region names, is data:
``watcher/data/doi_chrome.yaml``), and blocks that are mostly link text (a
menu written as a paragraph).  What is the page's frame is never chrome: an
element that holds most of the page's text, or that holds the abstract or
the body.

Boxes beside the abstract (highlights, graphical abstract, key points, a
plain-language summary) are a summary of the work the platform may show or
not: they are taken out of the record and named (:attr:`RecordText.boxes`), so
the profile reads their coming and going as layout, never as an edited
abstract.

When neither region is found the record falls back to the page's main
container, still without chrome and link lists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import lxml.html
import yaml

from .html import normalise_ws

_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*", re.U)
PARAGRAPH_MIN_WORDS = 15
MAX_PARAGRAPHS = 200
LINK_LIST_SHARE = 0.5  # a block whose link text is this share of its text is a link list, never a paragraph
FRAME_SHARE = 0.5  # an element holding more of the page's text than this is its frame, never chrome
DECLARED_MATCH = 0.6  # containment that makes a block the declared abstract's (either way round)
DECLARED_MIN_WORDS = 8
BODY_MIN_WORDS = 250  # prose outside the abstract and chrome that is a body shown on the page
BODY_SHARE = 0.8  # the body region holds this share of that prose
_CHROME_TAGS = frozenset({"nav", "header", "footer", "aside", "menu", "form", "dialog"})
_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "toolbar", "menu",
                           "menubar", "dialog", "alertdialog", "tablist"})
_LEAF_TAGS = ("p", "blockquote", "li", "dd", "div", "section", "td")
_BLOCKS = frozenset({"p", "div", "section", "li", "ul", "ol", "table", "blockquote", "dd", "dl", "article",
                     "h1", "h2", "h3", "h4", "h5", "h6", "td", "tr"})
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_ABSTRACT_HEADING = re.compile(r"^\s*(abstract|summary|résumé|resume|zusammenfassung|resumen|riassunto|abstrakt)"
                               r"\s*[:.]?\s*$", re.I)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_COMMENTS = re.compile(r"(^|[\s-])comments?($|[\s-])")


def _norm_name(text: str) -> str:
    """A class/id string as lower-case hyphenated tokens ("citedBySection" -> "cited-by-section")."""
    return _CAMEL.sub("-", text).replace("_", "-").lower()


def _word_re(names: list[str]) -> re.Pattern[str]:
    alts = sorted({re.escape(_norm_name(n)) for n in names}, key=len, reverse=True)
    return re.compile(r"(?:^|[\s-])(" + "|".join(alts) + r")(?=$|[\s-])")


@dataclass(frozen=True)
class _Vocabulary:
    chrome: re.Pattern[str]
    modifier: re.Pattern[str]
    box_names: tuple[tuple[str, re.Pattern[str]], ...]
    box_headings: dict[str, str]
    chrome_headings: frozenset[str]


@lru_cache(maxsize=1)
def vocabulary() -> _Vocabulary:
    """The chrome and box vocabulary of ``watcher/data/doi_chrome.yaml`` (read once)."""
    doc: dict[str, Any] = yaml.safe_load(
        resources.files("watcher").joinpath("data/doi_chrome.yaml").read_text(encoding="utf-8"))
    words = [str(w) for w in doc["chrome_words"]]
    for names in (doc.get("platforms") or {}).values():
        words += [str(n) for n in names]
    mods = [str(m) for m in doc.get("modifiers") or []]
    beside = doc["beside_abstract"]
    boxes = tuple((str(k), _word_re([str(v) for v in vs])) for k, vs in beside["names"].items())
    headings = {" ".join(_words_of(str(h))): str(k) for k, hs in beside["headings"].items() for h in hs}
    chrome_headings = frozenset(" ".join(_words_of(str(h))) for h in doc.get("chrome_headings") or [])
    return _Vocabulary(_word_re(words), re.compile(r"(?:^|[\s-])(" + "|".join(map(re.escape, mods)) + r")-$"),
                       boxes, headings, chrome_headings)


def _words_of(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _attrs(el: lxml.html.HtmlElement) -> str:
    cls, ident = el.get("class"), el.get("id")
    return _norm_name(f"{cls or ''} {ident or ''}".strip()) if cls or ident else ""


def _named_chrome(attrs: str, voc: _Vocabulary) -> bool:
    if not attrs or len(attrs) > 200:
        return False
    return any(not voc.modifier.search(attrs[:m.start(1)]) for m in voc.chrome.finditer(attrs))


def _is_chrome(el: lxml.html.HtmlElement, voc: _Vocabulary) -> bool:
    """Chrome by semantic tag, ARIA role, class/id word, or the heading of its section."""
    tag = el.tag
    if tag in _CHROME_TAGS:
        return True
    role = el.get("role")
    if role and role.strip().lower() in _CHROME_ROLES:
        return True
    if _named_chrome(_attrs(el), voc):
        return True
    if tag in ("section", "div") and len(el):
        title = el.get("data-title")
        if title is None:
            first = el[0]
            title = first.text_content() if first.tag in _HEADINGS else None
        return title is not None and " ".join(_words_of(title)) in voc.chrome_headings
    return False


def _text(el: lxml.html.HtmlElement) -> str:
    return normalise_ws(" ".join(el.itertext()))


def prose(text: str) -> bool:
    """A paragraph of prose: enough words, most of them not capitalised (an
    author list, a menu or a table of names is not a paragraph)."""
    ws = _WORD.findall(text)
    if len(ws) < PARAGRAPH_MIN_WORDS:
        return False
    return sum(1 for w in ws if w[:1].isupper()) <= 0.5 * len(ws)


def link_list(el: lxml.html.HtmlElement, text: str) -> bool:
    """Mostly link text: a menu, a list of related works or of share targets, however it is marked up."""
    if not text:
        return False
    linked = sum(len(normalise_ws(a.text_content())) for a in el.iter("a"))
    return linked >= LINK_LIST_SHARE * len(text)


def _leaves(root: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """Blocks read one by one: wrappers (a div or section holding other blocks) are read through."""
    out = []
    for el in root.iter(*_LEAF_TAGS):
        if el.tag in ("div", "section", "td") and any(c.tag in _BLOCKS for c in el.iterdescendants()):
            continue
        out.append(el)
    return out


def _shingles(tokens: list[str], size: int = 4) -> set[str]:
    if not tokens:
        return set()
    return {" ".join(tokens[i:i + size]) for i in range(max(1, len(tokens) - size + 1))}


def _box_name(el: lxml.html.HtmlElement, voc: _Vocabulary) -> str | None:
    """The kind of box beside the abstract that ``el`` is, by its class/id or its own heading."""
    attrs = _attrs(el)
    if attrs and len(attrs) <= 200:
        for name, pat in voc.box_names:
            if pat.search(attrs):
                return name
    first = next((c for c in el.iterchildren() if isinstance(c.tag, str)), None)
    if first is not None and first.tag in _HEADINGS:
        return voc.box_headings.get(" ".join(_words_of(first.text_content())))
    return None


@dataclass(frozen=True)
class RecordText:
    """The record's text as the page shows it (see the module docstring)."""

    main_text: str
    paragraphs: tuple[str, ...]
    abstract: str  # the abstract region's text ("" when none was found)
    boxes: tuple[str, ...]  # kinds of boxes beside the abstract, in page order
    regions: tuple[str, ...]  # which regions were found: "abstract", "body", else "page"


class _Page:
    def __init__(self, root: lxml.html.HtmlElement, voc: _Vocabulary) -> None:
        self.root = root
        self.voc = voc
        body = root.find(".//body")
        self.body = body if body is not None else root
        whole = len(self.body.text_content())
        self.frame_chars = FRAME_SHARE * whole
        self.chrome: set[lxml.html.HtmlElement] = set()
        for el in self.body.iter():
            if not isinstance(el.tag, str) or el is self.body:
                continue
            if _is_chrome(el, voc) and (len(el.text_content()) <= self.frame_chars
                                        or _COMMENTS.search(_attrs(el))):
                self.chrome.add(el)

    def in_chrome(self, el: lxml.html.HtmlElement, stop: set[lxml.html.HtmlElement]) -> bool:
        """True when ``el`` or an ancestor below the protected elements ``stop`` is chrome."""
        node: lxml.html.HtmlElement | None = el
        while node is not None and node not in stop:
            if node in self.chrome:
                return True
            node = node.getparent()
        return False


def _take_boxes(root: lxml.html.HtmlElement, voc: _Vocabulary) -> list[str]:
    """Drop the boxes beside the abstract from ``root``; their kinds, in page order.  A box inside
    chrome (a sidebar's "highlights" of other works) is the chrome's, not the record's; the page's
    frame (an ASP.NET ``<form>`` around everything) is no chrome."""
    found: list[str] = []
    whole = len(root.text_content())
    for el in list(root.iter("div", "section", "aside", "figure", "ul", "ol")):
        if el.getparent() is None:
            continue
        name = _box_name(el, voc)
        if name is not None and len(el.text_content()) <= FRAME_SHARE * whole \
                and not any(_is_chrome(a, voc) and len(a.text_content()) <= FRAME_SHARE * whole
                            for a in el.iterancestors()):
            found.append(name)
            el.drop_tree()
    return list(dict.fromkeys(found))


def _declared_blocks(leaves: list[lxml.html.HtmlElement], declared: str) -> list[lxml.html.HtmlElement]:
    dw = _words_of(declared)
    if len(dw) < DECLARED_MIN_WORDS:
        return []
    ds = _shingles(dw)
    out = []
    for el in leaves:
        bs = _shingles(_words_of(el.text_content()))
        if len(bs) < 2:
            continue
        common = len(bs & ds)
        if common / len(bs) >= DECLARED_MATCH or common / len(ds) >= DECLARED_MATCH:
            out.append(el)
    return out


_ABSTRACT_NAME = re.compile(r"(?:^|[\s-])abstracts?(?=$|[\s-])")


def _marked_abstract(page: _Page) -> lxml.html.HtmlElement | None:
    """The first element outside chrome that names itself the abstract: a class or id word
    ("abstract", "abstractSection", "article__abstract", "hlFld-Abstract"), ``itemprop`` abstract
    or description, or ``role=doc-abstract`` (boxes beside it are already out of the page)."""
    for el in page.body.iter("div", "section", "article", "p", "span", "blockquote"):
        marked = (el.get("itemprop") in ("abstract", "description") or el.get("role") == "doc-abstract"
                  or _ABSTRACT_NAME.search(_attrs(el)) is not None)
        if marked and not page.in_chrome(el, set()) and len(_words_of(el.text_content())) >= DECLARED_MIN_WORDS:
            return el
    return None


def _headed_abstract(page: _Page) -> list[lxml.html.HtmlElement]:
    """The blocks after a heading that reads "Abstract" (until the next heading)."""
    for h in page.body.iter(*_HEADINGS, "strong", "b"):
        if not _ABSTRACT_HEADING.match(h.text_content() or "") or page.in_chrome(h, set()):
            continue
        node = h
        while node is not None and node.getnext() is None and node.getparent() is not page.body:
            node = node.getparent()  # a heading wrapped in its own div: read its parent's siblings
        out: list[lxml.html.HtmlElement] = []
        sib = node.getnext() if node is not None else None
        while sib is not None and sib.tag not in _HEADINGS:
            if isinstance(sib.tag, str):
                out.append(sib)
            sib = sib.getnext()
        if out:
            return out
    return []


def _body_region(page: _Page, abstract: set[lxml.html.HtmlElement]) -> lxml.html.HtmlElement | None:
    """The deepest element holding :data:`BODY_SHARE` of the prose outside chrome and the abstract
    of the page's marked article (``itemprop=articleBody``, else ``<article>``, else ``<main>``;
    else the whole page), when that prose is a body (:data:`BODY_MIN_WORDS`); ``None`` on a
    landing page that shows no body.  Why the deepest: the body's own container, not the page
    around it, so that prose the vocabulary does not name (a reworded sentence in a side column)
    stays out."""
    totals: dict[lxml.html.HtmlElement, int] = {}
    for leaf in _leaves(page.body):
        if leaf in abstract or page.in_chrome(leaf, set()):
            continue
        t = _text(leaf)
        if not prose(t) or link_list(leaf, t):
            continue
        n = len(_WORD.findall(t))
        for el in (leaf, *leaf.iterancestors()):
            totals[el] = totals.get(el, 0) + n
            if el is page.body:
                break
    universe = page.body
    for xp in ('.//*[@itemprop="articleBody"]', ".//article", './/*[@role="main"] | .//main'):
        marked = [el for el in page.body.xpath(xp) if totals.get(el, 0) >= BODY_MIN_WORDS]
        if marked:  # what the page marks as its article first: teasers of other works can outweigh a body
            universe = max(marked, key=lambda el: totals[el])
            break
    whole = totals.get(universe, 0)
    if whole < BODY_MIN_WORDS:
        return None
    best, depth = universe, 0
    inside = {universe, *universe.iterdescendants()}
    for el, n in totals.items():
        if n >= BODY_SHARE * whole and el in inside and el.tag not in ("p", "li", "dd", "blockquote"):
            d = sum(1 for _ in el.iterancestors())
            if d > depth:
                best, depth = el, d
    return best


def record_text(root: lxml.html.HtmlElement, declared_abstract: str) -> RecordText:
    """The record's paragraphs, main text, shown abstract and boxes of a parsed page (scripts and
    styles already dropped).  ``declared_abstract`` is the abstract the page's metadata declares
    ("" when none).  Takes the boxes beside the abstract out of ``root``."""
    voc = vocabulary()
    boxes = _take_boxes(root, voc)
    page = _Page(root, voc)
    leaves = [el for el in _leaves(page.body) if not page.in_chrome(el, set())]
    # outside chrome only: a site-wide description can also sit in the footer or a promotion
    declared = _declared_blocks(leaves, declared_abstract) if declared_abstract else []
    marked = _marked_abstract(page)
    ab_blocks: list[lxml.html.HtmlElement] = declared
    if marked is not None and (not declared or all(marked in b.iterancestors() or b is marked for b in declared)):
        ab_blocks = [marked]  # the whole marked abstract: a truncated og:description matches its first block only
    if not ab_blocks:
        ab_blocks = _headed_abstract(page)
    ab_set = {x for b in ab_blocks for x in (b, *b.iterdescendants())}
    body = _body_region(page, ab_set)
    regions: list[str] = []
    paras: list[str] = []
    seen: set[lxml.html.HtmlElement] = set()

    def read(region: lxml.html.HtmlElement, skip: set[lxml.html.HtmlElement]) -> list[str]:
        out = []
        for leaf in _leaves(region) or [region]:  # an inline region (a <span itemprop>) is one block
            if leaf in seen or leaf in skip or page.in_chrome(leaf, {region}):
                continue
            seen.add(leaf)
            t = _text(leaf)
            if t and not link_list(leaf, t):
                out.append(t)
        return out

    ab_texts: list[str] = []
    for b in ab_blocks:
        ab_texts += read(b, set())
    abstract = re.sub(r"^(abstract|summary)\s*[:.]?\s*", "", normalise_ws(" ".join(ab_texts)), flags=re.I)
    if ab_texts:
        regions.append("abstract")
    body_texts: list[str] = read(body, ab_set) if body is not None else []
    if body is not None:
        regions.append("body")
    if not regions:  # neither region: the page's main container, still without chrome and link lists
        regions.append("page")
        body_texts = read(_container(page), set())
    for t in (*ab_texts, *body_texts):
        if prose(t):
            paras.append(t)
        if len(paras) >= MAX_PARAGRAPHS:
            break
    main = normalise_ws(" ".join((*ab_texts, *body_texts)))
    return RecordText(main, tuple(paras), abstract, tuple(boxes), tuple(regions))


def _container(page: _Page) -> lxml.html.HtmlElement:
    for xp in ('.//*[@itemprop="articleBody"]', ".//article", './/*[@role="main"]', ".//main"):
        found = [el for el in page.body.xpath(xp) if not page.in_chrome(el, set())]
        if found:
            return max(found, key=lambda el: len(el.text_content()))
    return page.body


def box_change(before: tuple[str, ...], after: tuple[str, ...]) -> str | None:
    """Words for boxes beside the abstract that appeared or went (``None``: the same boxes)."""
    gone = [b for b in before if b not in after]
    came = [b for b in after if b not in before]
    parts = []
    if gone:
        parts.append(f"{' and '.join(gone)} box{'es' if len(gone) > 1 else ''} beside the abstract removed")
    if came:
        parts.append(f"{' and '.join(came)} box{'es' if len(came) > 1 else ''} beside the abstract added")
    return "; ".join(parts) + " (not the abstract: its text kept)" if parts else None
