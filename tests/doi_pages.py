"""Generated DOI landing pages in the layouts of several publisher platforms.

Not copies of anyone's pages: each layout reproduces what matters to the doi
profile on that kind of platform -- where the metadata lives (Highwire
``citation_*``, Dublin Core, schema.org JSON-LD, ``og:``), how the abstract
and full text are marked up, and how much chrome surrounds them (navigation,
cookie banners, "related articles" sidebars with other works' abstracts,
metrics that change every day, comment threads).  ``version`` is a redesign:
new chrome, new class names, other menus, other meta order, sometimes JSON-LD
added or ``og:`` removed; the record stays.

Layouts: ``highwire`` (HighWire/Drupal journals: full text), ``atypon``
(Literatum: abstract plus full text under ``hlFld-*`` classes), ``elsevier``
(the DOM a script-built ScienceDirect-like page has once rendered: JSON-LD,
hashed class names), ``ojs`` (Open Journal Systems: Dublin Core, abstract,
PDF galley), ``zenodo`` (a repository record: JSON-LD Dataset/ScholarlyArticle,
files table, view counts).  Plus the pages that stand in front of or
instead of a record: bot challenges, cookie walls, 404s, parked domains.
"""

from __future__ import annotations

import html as _html
import json
import random
import zlib
from dataclasses import dataclass, replace

from tests.pdfgen import assemble_pdf


def _w(text: str) -> list[str]:
    return text.split()


SCIENCE = _w(
    "protein cell membrane receptor signalling pathway kinase expression gene transcription regulation "
    "mutation variant cohort patient clinical trial outcome mortality incidence prevalence exposure risk "
    "model simulation estimate parameter dataset sample measurement instrument calibration sensor spectrum "
    "temperature pressure climate precipitation drought soil nitrogen carbon emission flux ocean sediment "
    "species population habitat diversity forest canopy pollinator predator prey abundance migration "
    "network graph algorithm optimisation convergence gradient inference posterior likelihood bayesian "
    "regression classifier training validation benchmark accuracy robustness fairness language corpus "
    "policy institution governance market labour wage inequality household survey interview ethnography "
    "material alloy polymer crystal lattice catalyst electrode battery voltage conductivity thermal "
    "quantum photon laser cavity resonance lattice spin magnetic field phase transition entropy "
    "neuron cortex synapse memory cognition attention behaviour stimulus response imaging microscopy "
    "enzyme metabolite pathway lipid glucose insulin inflammation antibody vaccine pathogen infection "
    "virus bacterial resistance antibiotic genome sequencing assembly annotation phylogeny evolution"
)
GLUE = _w("the of and in to with for on by from this that these we our was were is are which across between "
        "under within using after during than")
FIRST = _w("Jane Amir Li Sofia Kwame Elena Raj Marta Tomás Yuki Ingrid Olu Chen Fatima Pierre Ana Lars Mei Dmitri "
         "Grace Hassan Nadia Paolo Sven Aiko")
LAST = _w("Smith Okafor Zhang García Müller Rossi Kowalski Tanaka Haddad Novak Silva Johansson Dubois Khan Ivanova "
        "Nguyen Kim Moreau Fischer Hernández Costa Petrov Andersen Osei Yilmaz")
JOURNALS = ("Journal of Applied Ecology Studies", "Annals of Molecular Signalling", "Computational Methods Letters",
            "Review of Social Inquiry", "Physical Materials Reports")


def sentence(rng: random.Random, n: int) -> str:
    ws = [rng.choice(GLUE) if i % 3 == 1 else rng.choice(SCIENCE) for i in range(n)]
    return " ".join(ws).capitalize() + "."


def para(rng: random.Random, words: int) -> str:
    out, left = [], words
    while left > 0:
        n = min(left, rng.randint(12, 24))
        out.append(sentence(rng, n))
        left -= n
    return " ".join(out)


@dataclass(frozen=True)
class Article:
    doi: str
    title: str
    authors: tuple[str, ...]
    abstract: str
    body: tuple[str, ...]
    date: str
    journal: str
    comments: tuple[str, ...] = ()


def article(seed: int, *, full_text: bool = True, journal: int | None = None) -> Article:
    rng = random.Random(f"article-{seed}")
    title = " ".join(w.capitalize() if i == 0 else w for i, w in
                     enumerate(sentence(rng, rng.randint(7, 13)).rstrip(".").split()))
    authors = tuple(f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(rng.randint(2, 6)))
    body = tuple(para(rng, rng.randint(60, 140)) for _ in range(rng.randint(6, 11))) if full_text else ()
    return Article(
        doi=f"10.{5000 + seed % 7}/j.{2015 + seed % 10}.{seed:05d}",
        title=title,
        authors=authors,
        abstract=para(rng, rng.randint(120, 220)),
        body=body,
        date=f"{2015 + seed % 10}-{1 + seed % 12:02d}-{1 + seed % 27:02d}",
        journal=JOURNALS[(journal if journal is not None else seed) % len(JOURNALS)],
    )


def replace_paragraph(a: Article, index: int, seed: int = 99) -> Article:
    rng = random.Random(f"replacement-{seed}")
    body = list(a.body)
    body[index] = para(rng, len(body[index].split()))
    return replace(a, body=tuple(body))


def edit_abstract(a: Article, seed: int = 7) -> Article:
    """Replace one sentence in the middle of the abstract."""
    rng = random.Random(f"abstract-edit-{seed}")
    sents = a.abstract.split(". ")
    i = len(sents) // 2
    sents[i] = sentence(rng, len(sents[i].split())).rstrip(".")
    return replace(a, abstract=". ".join(sents))


def with_comments(a: Article, n: int) -> Article:
    rng = random.Random(f"comments-{a.doi}")
    return replace(a, comments=tuple(para(rng, rng.randint(20, 60)) for _ in range(n)))


def e(text: str) -> str:
    return _html.escape(text, quote=True)


# -- chrome ---------------------------------------------------------------------

def _rng(a: Article, version: int, what: str) -> random.Random:
    return random.Random(f"{what}-{a.doi}-{version}")


def nav(version: int) -> str:
    items = [["Home", "Journals", "Subjects", "About", "Contact"], ["Browse", "Latest issue", "Archive", "Submit",
             "Subscribe", "Sign in"], ["Explore", "Collections", "For authors", "For librarians", "Help"],
             ["Research", "News & Comment", "Current issue", "Alerts", "Log in", "Register"]][version % 4]
    return "<ul>" + "".join(f'<li><a href="/{i.lower().replace(" ", "-")}">{e(i)}</a></li>' for i in items) + "</ul>"


def related(a: Article, version: int) -> str:
    """Other works' titles and snippets: long enough to look like paragraphs."""
    rng = _rng(a, version, "related")
    out = []
    for _ in range(3 + version % 3):
        other = article(rng.randint(10_000, 99_999), full_text=False)
        out.append(f'<li><a href="/doi/{e(other.doi)}">{e(other.title)}</a><p>{e(other.abstract[:300])}</p></li>')
    return "<ul>" + "".join(out) + "</ul>"


def metrics(a: Article, version: int) -> str:
    rng = _rng(a, version, "metrics")
    return (f"<span>{rng.randint(100, 90000)} views</span> <span>{rng.randint(0, 900)} downloads</span> "
            f"<span>Cited by {rng.randint(0, 300)}</span>")


def footer(version: int) -> str:
    texts = ["© 2019 The Publisher. All rights reserved. Privacy policy. Terms of use. Accessibility.",
             "Copyright 2021 Publisher Ltd. Registered in England No. 1234567. Cookies. Contact us. Sitemap.",
             "© 2024 Publisher Group. Part of the Publisher family. Privacy. Legal. Modern slavery statement.",
             "Published by the Society. ISSN 1234-5678 (online). Follow us on social media. Careers. Press."]
    return f"<p>{texts[version % 4]}</p>"


def cookie_banner(version: int) -> str:
    return ("<p>We use cookies to improve your experience on our website and to show you relevant advertising. "
            "By clicking accept all cookies you agree to the storing of cookies on your device.</p>"
            "<button>Accept all cookies</button><button>Cookie settings</button>") if version % 2 == 0 else \
           "<p>This site uses cookies. Manage your consent preferences at any time in the privacy centre.</p>"


def comments(a: Article, cls: str) -> str:
    if not a.comments:
        return ""
    inner = "".join(f'<li class="comment"><p class="comment-body">{e(c)}</p></li>' for c in a.comments)
    return f'<section class="{cls}"><h2>Comments ({len(a.comments)})</h2><ol>{inner}</ol></section>'


def citation_meta(a: Article, version: int, *, pdf: bool = True) -> list[str]:
    m = [f'<meta name="citation_title" content="{e(a.title)}">',
         *[f'<meta name="citation_author" content="{e(x)}">' for x in a.authors],
         f'<meta name="citation_publication_date" content="{a.date.replace("-", "/")}">',
         f'<meta name="citation_journal_title" content="{e(a.journal)}">',
         f'<meta name="citation_doi" content="{e(a.doi)}">']
    if pdf:
        m.append(f'<meta name="citation_pdf_url" content="https://pub.example/doi/pdf/{e(a.doi)}">')
    if version % 3 == 1:
        m.append(f'<meta name="citation_abstract" content="{e(a.abstract)}">')
    if version % 2 == 1:
        m.reverse()
    return m


def dc_meta(a: Article, upper: bool = True) -> list[str]:
    p = "DC" if upper else "dc"
    return [f'<meta name="{p}.Title" content="{e(a.title)}">',
            *[f'<meta name="{p}.Creator.PersonalName" content="{e(x)}">' for x in a.authors],
            f'<meta name="{p}.Identifier.DOI" content="{e(a.doi)}">',
            f'<meta name="{p}.Date.created" content="{a.date}">',
            f'<meta name="{p}.Description" xml:lang="en" content="{e(a.abstract)}">',
            f'<meta name="{p}.Source" content="{e(a.journal)}">']


def og_meta(a: Article) -> list[str]:
    return [f'<meta property="og:title" content="{e(a.title)}">',
            f'<meta property="og:description" content="{e(a.abstract[:200])}...">',
            '<meta property="og:type" content="article">']


def jsonld(a: Article, typ: str = "ScholarlyArticle") -> str:
    doc = {"@context": "https://schema.org", "@type": typ, "headline": a.title, "name": a.title,
           "author": [{"@type": "Person", "name": x} for x in a.authors], "datePublished": a.date,
           "description": a.abstract, "identifier": {"@type": "PropertyValue", "propertyID": "DOI",
                                                     "value": f"https://doi.org/{a.doi}"},
           "isPartOf": {"@type": "Periodical", "name": a.journal}}
    return f'<script type="application/ld+json">{json.dumps(doc)}</script>'


def page(head: list[str], body: str, title: str, lang: str = "en") -> str:
    return (f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><title>{e(title)}</title>'
            + "".join(head) + f"</head><body>{body}</body></html>")


def body_paras(a: Article, tag: str = "p", cls: str = "") -> str:
    c = f' class="{cls}"' if cls else ""
    return "".join(f"<{tag}{c}>{e(p)}</{tag}>" for p in a.body)


# -- layouts ------------------------------------------------------------------------

def highwire(a: Article, version: int = 0) -> str:
    head = citation_meta(a, version) + (og_meta(a) if version % 2 == 0 else []) + \
        ([jsonld(a)] if version >= 2 else [])
    sections = "".join(f'<div class="section" id="sec-{i}"><h2>Section {i}</h2><p>{e(p)}</p></div>'
                       for i, p in enumerate(a.body, 1))
    body = (f'<header class="site-header"><div class="logo">{e(a.journal)}</div><nav>{nav(version)}</nav></header>'
            f'<div class="cookie-banner">{cookie_banner(version)}</div>'
            f'<div id="page" class="page-v{version}"><div class="main-column"><article class="article fulltext-view">'
            f'<h1 class="highwire-cite-title">{e(a.title)}</h1>'
            f'<div class="highwire-cite-authors">{", ".join(e(x) for x in a.authors)}</div>'
            f'<div class="highwire-cite-metadata">{e(a.journal)} {a.date} doi: {e(a.doi)}</div>'
            f'<div class="section abstract" id="abstract-1"><h2>Abstract</h2><p>{e(a.abstract)}</p></div>'
            f'{sections}{comments(a, "comments")}</article></div>'
            f'<aside class="sidebar"><div class="article-metrics">{metrics(a, version)}</div>'
            f'<div class="related-articles"><h3>Related articles</h3>{related(a, version)}</div></aside></div>'
            f'<footer class="site-footer">{footer(version)}</footer>')
    return page(head, body, f"{a.title} | {a.journal}")


def atypon(a: Article, version: int = 0) -> str:
    head = citation_meta(a, version + 1) + dc_meta(a, upper=version % 2 == 0) + og_meta(a)
    body_sections = "".join(f'<div class="NLM_sec NLM_sec_level_1"><h2 class="sectionHeading">{i}. Section</h2>'
                            f'<p class="NLM_para">{e(p)}</p></div>' for i, p in enumerate(a.body, 1))
    tools = '<div class="article-tools"><a>Download PDF</a> <a>Cite</a> <a>Share</a> <a>Permissions</a></div>'
    body = (f'<div class="pb-page"><div class="header-wrapper"><div class="menubar">{nav(version + 1)}</div>'
            f'<div class="search-box"><form><input name="q"><button>Search</button></form></div></div>'
            f'<main id="main-content" class="content"><div class="page-body pagefulltext">'
            f'<div class="citation"><h1 class="citation__title">{e(a.title)}</h1>'
            f'<ul class="loa">{"".join(f"<li>{e(x)}</li>" for x in a.authors)}</ul>'
            f'<div class="epub-section">First published: {a.date} https://doi.org/{e(a.doi)}</div></div>{tools}'
            f'<article class="article-section article-section__full"><div class="hlFld-Abstract">'
            f'<h2 class="article-section__title">{"Abstract" if version % 2 == 0 else "Summary"}</h2>'
            f'<div class="abstractSection abstractInFull"><p>{e(a.abstract)}</p></div></div>'
            f'<div class="hlFld-Fulltext">{body_sections}</div>{comments(a, "comments-section")}</article></div>'
            f'<div class="sidebar-right"><div class="metrics-widget">{metrics(a, version)}</div>'
            f'<section class="related">{related(a, version)}</section></div></main>'
            f'<div class="footer">{footer(version + 1)}</div></div>')
    return page(head, body, f"{a.title} - {a.journal} - Wiley-like Online Library")


def elsevier(a: Article, version: int = 0) -> str:
    """The DOM once the page's scripts built it (what rendering captures)."""
    h = zlib.crc32(f"{a.doi}{version}".encode())
    cls = [f"sc-{(h >> (i * 3)) & 0xFFFFF:x}" for i in range(8)]
    head = [jsonld(a), *og_meta(a), f'<meta name="citation_pii" content="S{h:010d}">',
            f'<meta name="dc.identifier" content="doi:{e(a.doi)}">']
    secs = "".join(f'<section id="s{i:04d}" class="{cls[3]}"><h2 class="{cls[4]}">{i}. Results</h2>'
                   f'<div class="{cls[5]}" id="p{i:04d}">{e(p)}</div></section>' for i, p in enumerate(a.body, 1))
    body = (f'<div id="app"><div class="{cls[0]}"><header class="{cls[1]} global-header">{nav(version + 2)}</header>'
            f'<div class="{cls[2]}" role="main"><div class="Publication"><h2 class="{cls[6]}">{e(a.journal)}'
            f'</h2></div><h1 class="title-text">{e(a.title)}</h1>'
            f'<div class="author-group">{"".join(f"<a class={cls[7]}><span>{e(x)}</span></a>" for x in a.authors)}'
            f'</div><a class="doi" href="https://doi.org/{e(a.doi)}">https://doi.org/{e(a.doi)}</a>'
            f'<div class="abstract author" id="abs0010"><h2>Abstract</h2><div id="as0010"><p>{e(a.abstract)}</p>'
            f'</div></div><div id="body">{secs}</div>{comments(a, "comments")}</div>'
            f'<div class="u-show-from-lg sidebar related-content">{related(a, version)}</div>'
            f'<div class="cookie-notice">{cookie_banner(version + 1)}</div>'
            f'<footer class="{cls[1]}-footer">{footer(version + 2)}</footer></div></div>'
            '<script>window.__PRELOADED_STATE__ = {"article": {}};</script><script src="/app.js"></script>'
            '<script src="/vendor.js"></script><script src="/analytics.js"></script>')
    return page(head, body, f"{a.title} - ScienceDirect-like")


def ojs(a: Article, version: int = 0) -> str:
    head = dc_meta(a) + citation_meta(a, version, pdf=True) + \
        [f'<meta name="generator" content="Open Journal Systems 3.{version}.0.{version + 2}">']
    body = (f'<div class="pkp_structure_page"><header class="pkp_structure_head" id="headerNavigationContainer">'
            f'<div class="pkp_site_name">{e(a.journal)}</div><nav class="pkp_navigation_primary_wrapper">'
            f'{nav(version)}</nav></header><div class="pkp_structure_content has_sidebar">'
            f'<div class="pkp_structure_main" role="main"><article class="obj_article_details">'
            f'<h1 class="page_title">{e(a.title)}</h1><ul class="authors">'
            f'{"".join(f"<li><span class=name>{e(x)}</span></li>" for x in a.authors)}</ul>'
            f'<div class="item doi"><span class="label">DOI:</span> <a href="https://doi.org/{e(a.doi)}">'
            f'https://doi.org/{e(a.doi)}</a></div><section class="item abstract"><h2 class="label">Abstract</h2>'
            f'<p>{e(a.abstract)}</p></section>{comments(a, "comments")}'
            f'<div class="item galleys"><ul class="value galleys_links"><li><a class="obj_galley_link pdf">PDF</a>'
            f'</li></ul></div><div class="item published"><span class="label">Published</span> {a.date}</div>'
            f'</article></div><div class="pkp_structure_sidebar left" role="complementary">'
            f'<div class="pkp_block block_information">{metrics(a, version)}</div></div></div>'
            f'<div class="pkp_structure_footer_wrapper" role="contentinfo">{footer(version)}</div></div>')
    return page(head, body, f"{a.title} | {a.journal}")


def zenodo(a: Article, version: int = 0) -> str:
    typ = "Dataset" if version % 2 else "ScholarlyArticle"
    head = [jsonld(a, typ), *citation_meta(a, version, pdf=False), *og_meta(a)]
    files = "".join(f"<tr><td>data_{i}.csv</td><td>{(i + 1) * 1.7:.1f} MB</td><td>md5:{zlib.crc32(bytes([i])):x}"
                    "</td></tr>" for i in range(2 + version % 3))
    body = (f'<div class="ui container"><div class="ui menu">{nav(version + 3)}</div>'
            f'<div class="ui grid"><div class="eleven wide column"><section id="record-info">'
            f'<span class="ui label">Published {a.date}</span> <span class="ui label">{typ}</span>'
            f'<span class="ui label">Open</span></section><section id="record-title-section">'
            f'<h1 id="record-title">{e(a.title)}</h1><section id="creatibutors">'
            f'{"".join(f"<span class=creatibutor-name>{e(x)}</span>; " for x in a.authors)}</section></section>'
            f'<section id="description" class="rel-mt-2"><h2 class="sr-only">Description</h2>'
            f'<div class="description"><p>{e(a.abstract)}</p></div></section>'
            f'<section id="record-files"><table class="ui table">{files}</table></section></div>'
            f'<aside class="five wide column sidebar"><div class="ui statistics">{metrics(a, version)}</div>'
            f'<div class="ui segment"><h3>Versions</h3><p>Version {version + 1} 10.5281/zenodo.{version + 100}</p>'
            f'</div><div class="ui segment"><h3>DOI</h3><p>{e(a.doi)}</p></div></aside></div>'
            f'<footer id="rdm-footer-element">{footer(version + 3)}</footer></div>')
    return page(head, body, f"{a.title} | Zenodo-like")


LAYOUTS = {"highwire": highwire, "atypon": atypon, "elsevier": elsevier, "ojs": ojs, "zenodo": zenodo}
FULL_TEXT = {"highwire": True, "atypon": True, "elsevier": True, "ojs": False, "zenodo": False}


# -- what stands instead of a record ------------------------------------------------------

def challenge(version: int = 0) -> str:
    if version % 3 == 0:
        return page([], '<div class="main-wrapper"><h1>Checking if the site connection is secure</h1><p>'
                    "pub.example needs to review the security of your connection before proceeding.</p>"
                    '<noscript>Enable JavaScript and cookies to continue</noscript><div id="challenge-stage"></div>'
                    "<p>Ray ID: 8a1b2c3d4e5f</p><p>Performance &amp; security by Cloudflare</p></div>",
                    "Just a moment...")
    if version % 3 == 1:
        return page([], "<h1>Access Denied</h1><p>You don't have permission to access this resource on this server."
                    "</p><p>Reference #18.4e2f1002.1700000000.1a2b3c</p>", "Access Denied")
    return page([], "<h1>Pardon Our Interruption</h1><p>As you were browsing something about your browser made us "
                "think you were a bot. To regain access, please make sure that cookies and JavaScript are enabled "
                "before reloading the page.</p>", "Pardon Our Interruption")


def consent_wall(version: int = 0) -> str:
    return page([], "<div class='consent'><h1>Before you continue</h1><p>We use cookies and data to deliver and "
                "maintain our services, measure audience engagement and personalise content and ads.</p>"
                "<button>Reject all</button><button>Accept all</button><a>More options</a></div>",
                "Before you continue" if version % 2 == 0 else "Cookie consent | Publisher")


def not_found(version: int = 0) -> str:
    return page([], f"<header>{nav(version)}</header><h1>Page not found</h1><p>Sorry, the page you were looking for "
                f"has moved or no longer exists.</p><footer>{footer(version)}</footer>", "Page not found | Publisher")


def parked(version: int = 0) -> str:
    return page([], "<h1>pub-example.com</h1><p>This domain is for sale! Inquire about this domain.</p>"
                "<h2>Related searches</h2><ul><li>Journal Subscription</li><li>Online Courses</li></ul>"
                "<p>Privacy policy. Sponsored listings.</p>", "pub-example.com - This domain is for sale")


def homepage(version: int = 0) -> str:
    """A publisher's home page: what a DOI pointing at a removed article often lands on."""
    a = article(5000 + version, full_text=False)
    return page(og_meta(a), f"<header>{nav(version)}</header><main><h1>Welcome to the Publisher</h1>"
                f"<p>Latest research across our journals.</p>{related(a, version)}</main>"
                f"<footer>{footer(version)}</footer>", "Publisher - Home")


def pdf_bytes(lines: list[str]) -> bytes:
    """A minimal valid PDF with one page of text (pypdf reads it back)."""
    text_ops = "BT /F1 10 Tf 40 800 Td 12 TL " + " ".join(
        "(" + ln.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") '" for ln in lines) + " ET"
    stream = text_ops.encode("latin-1", "replace")
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> "
            b"/Contents 5 0 R >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream"]
    return assemble_pdf(objs)


def article_pdf(a: Article, revision: int = 0) -> bytes:
    """The article as a PDF; ``revision`` > 0 changes the producer line only (new checksum, same text)."""
    lines = [a.title, ", ".join(a.authors), f"doi:{a.doi}", *_wrap(a.abstract), *[ln for p in a.body[:3]
                                                                                    for ln in _wrap(p)]]
    if revision:
        lines.append(f"Downloaded {2020 + revision}-01-01")
    return pdf_bytes(lines)


def _wrap(text: str, width: int = 90) -> list[str]:
    out, cur = [], ""
    for w in text.split():
        if len(cur) + len(w) + 1 > width:
            out.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    return [*out, cur] if cur else out
