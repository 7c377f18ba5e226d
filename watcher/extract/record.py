"""The scholarly record of a landing page: metadata plus the main text.

Metadata, in the order a value is trusted (the first vocabulary that gives a
field wins):

1. ``citation_*`` (Highwire Press tags; what Google Scholar reads, so nearly
   every publisher platform writes them: HighWire, Atypon, OJS, Zenodo,
   Elsevier's ScienceDirect, ...);
2. Dublin Core (``dc.*``, ``DC.*``, ``dcterms.*``; OJS, DSpace, EPrints);
3. schema.org JSON-LD of a scholarly type (``ScholarlyArticle``, ``Dataset``,
   ``Book``...; Zenodo, figshare, Dryad and many journals);
4. ``og:`` meta (title and description only: social cards are written for
   any page, so they never make a page scholarly on their own).

Main text: what a citation points at, the abstract and the body where the
page shows it, without the site's chrome (menus, footers, share bars, related
works, metrics, cookie banners, comments) and without the boxes a platform
puts beside the abstract (highlights, key points): :mod:`watcher.extract.scholarly`
says which blocks those are.  Long paragraphs (prose of at least
:data:`watcher.extract.scholarly.PARAGRAPH_MIN_WORDS` words) are sampled one by one, so the profile can
say that a paragraph changed rather than that "the page" did.  The DOIs the
page shows anywhere (``body_dois``) are read from the whole page: a DOI in the
citation line above the abstract is shown, though it is not the record's text.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator, Mapping
from typing import Any

import lxml.html
import xxhash

from ..model import ScholarlyRecord
from .html import find_dois, normalise_ws, parse_tree
from .scholarly import record_text

log = logging.getLogger(__name__)

SHINGLE = 4
MAIN_SAMPLE = 1024  # bottom-k hashes of the main text's shingles kept in a stored record
PARAGRAPH_SAMPLE = 8  # hashes kept per paragraph
MAX_ABSTRACT_CHARS = 8000
SCHOLARLY_TYPES = frozenset({
    "scholarlyarticle", "medicalscholarlyarticle", "article", "techarticle", "report", "thesis", "book", "chapter",
    "dataset", "softwaresourcecode", "creativework", "collection", "publicationissue", "publicationvolume",
    "conferencepaper", "preprint", "review", "musicrecording", "presentationdigitaldocument",
})
_SCHOLARLY_HINT = re.compile(
    r'"@type"\s*:\s*\[?\s*"(?:' + "|".join(
        ("ScholarlyArticle", "MedicalScholarlyArticle", "Dataset", "Book", "Chapter", "Thesis", "Report",
         "TechArticle", "SoftwareSourceCode", "CreativeWork", "Collection", "Article")) + r')"',
    re.I,
)
_META_PREFIXES = ("citation_", "dc.", "dcterms.", "og:", "prism.", "eprints.", "bepress_citation_")
_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*", re.U)
_DROP = ("script", "style", "noscript", "template", "svg", "head", "select", "object", "embed", "iframe", "button")


def looks_scholarly(meta_keys: Any, raw_html: str, dois: Any) -> bool:
    """Cheap test run before the record's own parse: scholarly meta, a DOI, or
    JSON-LD of a scholarly type.  Keeps the cost off ordinary crawl captures."""
    if dois:
        return True
    if any(str(k).startswith(("citation_", "dc.", "prism.", "dcterms.")) for k in meta_keys):
        return True
    return bool(_SCHOLARLY_HINT.search(raw_html[:500_000]))


def words(text: str) -> list[str]:
    """Lowercased words without bare numbers: reference markers ("[12]"), counters and dates change
    in redesigns without the text changing."""
    return [w.lower() for w in _WORD.findall(text) if not w.isdigit()]


def shingle_hashes(tokens: list[str], size: int = SHINGLE) -> set[int]:
    """64-bit hashes of the word ``size``-shingles (a text shorter than ``size`` is one shingle)."""
    if not tokens:
        return set()
    n = max(1, len(tokens) - size + 1)
    return {xxhash.xxh3_64_intdigest(" ".join(tokens[i:i + size]).encode("utf-8", "surrogatepass")) for i in range(n)}


def bottom_k(hashes: set[int] | frozenset[int], k: int) -> tuple[int, ...]:
    return tuple(sorted(hashes)[:k])


# -- metadata -----------------------------------------------------------------

def _meta(root: lxml.html.HtmlElement) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for m in root.iter("meta"):
        name = (m.get("name") or m.get("property") or "").strip().lower()
        content = normalise_ws(m.get("content") or "")
        if (name.startswith(_META_PREFIXES) or name == "description") and content:
            out.setdefault(name, []).append(content[:MAX_ABSTRACT_CHARS])
    return out


def _walk_jsonld(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, list):
        for x in node:
            yield from _walk_jsonld(x)
    elif isinstance(node, dict):
        yield node
        for key in ("@graph", "mainEntity", "hasPart"):
            if key in node:
                yield from _walk_jsonld(node[key])


def _types(node: Mapping[str, Any]) -> list[str]:
    t = node.get("@type")
    vals = t if isinstance(t, list) else [t]
    return [str(v).rsplit("/", 1)[-1] for v in vals if isinstance(v, str)]


def _jsonld(root: lxml.html.HtmlElement) -> list[dict[str, Any]]:
    """Scholarly objects of the page's JSON-LD blocks (malformed blocks skipped)."""
    out: list[dict[str, Any]] = []
    for s in root.xpath('//script[contains(translate(@type, "LDJSON", "ldjson"), "ld+json")]'):
        text = (s.text or "").strip()
        if not text:
            continue
        try:
            data = json.loads(text)
        except ValueError:
            try:  # a trailing comma or several objects in one block: keep what parses
                data = json.loads(re.sub(r",\s*([}\]])", r"\1", text))
            except ValueError:
                continue
        out.extend(n for n in _walk_jsonld(data) if any(t.lower() in SCHOLARLY_TYPES for t in _types(n)))
    return out


def _name(v: Any) -> str:
    if isinstance(v, str):
        return normalise_ws(v)
    if isinstance(v, dict):
        if v.get("name"):
            return _name(v["name"])
        return normalise_ws(" ".join(str(v.get(k, "")) for k in ("givenName", "familyName")))
    if isinstance(v, list) and v:
        return _name(v[0])
    return ""


def _names(v: Any) -> list[str]:
    items = v if isinstance(v, list) else [v]
    return [n for n in (_name(x) for x in items) if n]


def _first(*vals: Any) -> str:
    for v in vals:
        if isinstance(v, list):
            v = v[0] if v else ""
        if isinstance(v, str) and v.strip():
            return normalise_ws(v)
    return ""


def _doi_in(*vals: Any) -> str | None:
    for v in vals:
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, dict):
                x = x.get("value") or x.get("@id") or x.get("url")
            if isinstance(x, str):
                found = sorted(find_dois(x), key=x.lower().find)
                if found:
                    return found[0]
    return None


def author_key(name: str) -> str:
    """A name reduced for matching across vocabularies: "Smith, Jane A." and
    "Jane A. Smith" both give the family name ``smith`` (the longest word of
    the part before a comma, else the last word)."""
    name = name.strip()
    part = name.split(",")[0] if "," in name else (name.split()[-1] if name.split() else "")
    ws = words(part)
    return max(ws, key=len) if ws else ""


# -- main text ----------------------------------------------------------------

def _main(root: lxml.html.HtmlElement, declared_abstract: str) -> tuple[str, tuple[str, ...], str, tuple[str, ...]]:
    """(main text, the record's paragraphs, abstract shown on the page, boxes beside it): the
    regions of the scholarly record without the site's chrome (:mod:`watcher.extract.scholarly`)."""
    rt = record_text(root, declared_abstract)
    return rt.main_text, rt.paragraphs, rt.abstract, rt.boxes


def record_of(raw_html: str, meta_keys: Any, dois: Any) -> ScholarlyRecord | None:
    """The record of an HTML capture when it looks scholarly (:func:`looks_scholarly`), else ``None``:
    the one call the fingerprint makes."""
    return extract_record(raw_html) if looks_scholarly(meta_keys, raw_html, dois) else None


def extract_record(html: str) -> ScholarlyRecord | None:
    """The record of one HTML landing page; ``None`` when the page has no text
    and no metadata at all.  Never raises on bad markup."""
    root = parse_tree(html)
    if root is None:
        return None
    meta = _meta(root)
    ld = _jsonld(root)

    def g(name: str, default: list[str] | None = None) -> list[str] | None:
        """Values of ``name``; Dublin Core names also with qualifiers (``DC.Creator.PersonalName``)."""
        if name in meta:
            return meta[name]
        if name.startswith(("dc.", "dcterms.")):
            vals = [v for k, vs in meta.items() if k.startswith(name + ".") for v in vs]
            return vals or default
        return default
    sources = []
    if any(k.startswith(("citation_", "bepress_citation_", "prism.")) for k in meta):
        sources.append("citation")
    if any(k.startswith(("dc.", "dcterms.")) for k in meta):
        sources.append("dc")
    if ld:
        sources.append("schema.org")
    j: dict[str, Any] = ld[0] if ld else {}
    title = _first(g("citation_title"), g("bepress_citation_title"), g("dc.title"), g("dcterms.title"),
                   j.get("headline"), j.get("name"), g("og:title") if sources else None)
    authors = g("citation_author") or g("bepress_citation_author") or g("dc.creator") or g("dcterms.creator") \
        or _names(j.get("author") or j.get("creator"))
    listed = g("citation_authors")
    if not authors and listed:
        authors = [a.strip() for a in re.split(r";", listed[0]) if a.strip()]
    doi = _doi_in(g("citation_doi"), g("bepress_citation_doi"), g("prism.doi"), g("dc.identifier"),
                  g("dcterms.identifier"), j.get("identifier"), j.get("@id"), j.get("sameAs"), j.get("url"))
    date = _first(g("citation_publication_date"), g("citation_date"), g("citation_online_date"), g("dc.date"),
                  g("dcterms.issued"), g("dcterms.date"), j.get("datePublished")) or None
    container = _first(g("citation_journal_title"), g("citation_conference_title"), g("citation_publisher"),
                       g("dc.publisher"), g("dcterms.publisher"), _name(j.get("isPartOf")), _name(j.get("publisher")))
    declared = _first(g("citation_abstract"), g("dcterms.abstract"), g("dc.description"), g("dcterms.description"),
                      j.get("abstract"), j.get("description"))
    shown = _first(declared, g("og:description"), g("description"))
    for el in list(root.iter(*_DROP)):
        if el.getparent() is not None:
            el.drop_tree()
    page_text = " ".join(root.itertext())
    page_dois = find_dois(page_text[:200_000])  # the DOIs the page shows, wherever it shows them
    # Where a baseline's record text is looked for: the whole page, so that a paragraph this version
    # shows outside the regions read as its record (another platform's markup) is still shown.
    page_sh = shingle_hashes(words(page_text))
    main_text, paras, body_abstract, boxes = _main(root, shown)
    abstract = _first(declared, body_abstract, g("og:description") if sources else None,
                      g("description") if sources else None)
    if "og:title" in meta and not sources and title:
        sources.append("og")
    tokens = words(main_text)
    if not tokens and not sources:
        return None
    sh = shingle_hashes(tokens)
    return ScholarlyRecord(
        title=title[:500],
        authors=tuple(a[:200] for a in authors[:200]),
        abstract=abstract[:MAX_ABSTRACT_CHARS],
        doi=doi,
        date=date,
        container=container[:300],
        sources=tuple(sources),
        schema_types=tuple(dict.fromkeys(t for n in ld for t in _types(n)))[:10],
        main_digest=xxhash.xxh3_64_hexdigest(" ".join(tokens).encode("utf-8", "surrogatepass")),
        main_sample=bottom_k(sh, MAIN_SAMPLE),
        paragraphs=tuple(bottom_k(shingle_hashes(words(p)), PARAGRAPH_SAMPLE) for p in paras),
        main_shingles=frozenset(sh | page_sh),
        body_dois=frozenset(page_dois),
        boxes=boxes,
    )
