"""DOI landing pages in the markup patterns of seven platforms, each across redesigns.

Not copies of anyone's pages: each template keeps what a platform's real
article pages have in the places that matter to the ``doi`` profile -- the
element that holds the abstract, the one that holds the body, and the chrome
around and *inside* them, written the way the platform writes it (class and
id names as on Literatum/Atypon, HighWire Drupal, Silverchair, ScienceDirect,
Springer Nature, OJS 3 and MSP's table-layout mathematics journals; the
region names LOCKSS's hash filters exclude).  Chrome is written to look like
prose on purpose: a footer sentence about "ways to support" the society and
its "governance", a share bar, a "rights and permissions" paragraph, a
metrics sentence, related works with their abstracts -- the blocks a redesign
changes while the record stays, which the profile must not read as the
article's paragraphs.

``page(platform, article, version, box=..., show_doi=...)``: ``version`` 0 is
the 2019 design, 1 a 2022 redesign, 2 a 2026 redesign (menus reordered and
renamed -- "Governance" becomes "Advisory Board", "Ways to Support" goes,
"Publishing Services" moves, "Rights & Permissions" and "Share" come and go --,
new copyright year, new class names where the platform renamed them, other
related works, other metrics).  ``box`` adds the box the platform puts beside
the abstract (highlights, graphical abstract, key points, plain-language
summary, significance); ``show_doi=False`` a page that never shows its DOI.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from datetime import UTC, datetime
from typing import Any

from tests import doi_pages as dp
from tests.doi_pages import Article, e
from watcher.config import EngineConfig
from watcher.doi.profile import decide_doi
from watcher.fingerprint import fingerprint
from watcher.model import Capture, Fingerprint
from watcher.store.codec import decode_fingerprint, encode_fingerprint

YEARS = (2019, 2022, 2026)
PLATFORMS = ("atypon", "highwire", "silverchair", "sciencedirect", "springer", "ojs", "msp")
FULL_TEXT = {"atypon": True, "highwire": True, "silverchair": True, "sciencedirect": True, "springer": True,
             "ojs": False, "msp": False}
BOX = {"atypon": "Graphical Abstract", "highwire": "Significance", "silverchair": "Key Points",
       "sciencedirect": "Highlights", "springer": "Editor's summary", "ojs": "Plain Language Summary",
       "msp": "Highlights"}


def menu(v: int) -> list[str]:
    return [["About", "Governance", "Ways to Support", "Publishing Services", "Contact"],
            ["About", "Advisory Board", "Contact", "Publishing Services", "Rights & Permissions"],
            ["Publishing Services", "About us", "Advisory Board", "Share", "Contact"]][v % 3]


def links(items: list[str]) -> str:
    return "".join(f'<li><a href="/{e(i.lower().replace(" ", "-"))}">{e(i)}</a></li>' for i in items)


def org_prose(org: str, v: int) -> str:
    """The society's sentence in the footer or side column: prose, and reworded in each redesign."""
    return [f"{org} is a nonprofit publisher run by and for the research community; read about our governance "
            "and the ways to support our mission of making mathematics and science available to everyone.",
            f"{org} is a not for profit publisher governed by an advisory board of working researchers, and "
            "every journal we publish is edited by members of the community it serves around the world.",
            f"our publishing services are open to learned societies and institutions; {org} works with the "
            "advisory board to keep article charges low and to keep the archive open for the long term."][v % 3]


def copyright_line(org: str, v: int) -> str:
    return f"© Copyright {YEARS[v % 3]} {org}. All rights reserved. Privacy policy, terms of use and accessibility."


def share_prose(v: int) -> str:
    return ["share this article with your colleagues by email or on social media, or copy the link to the "
            "article to your clipboard to paste it anywhere you like",
            "you can share a read only version of this article with anyone you like by sending them the "
            "shareable link below, even if they do not have a subscription",
            "readers of this journal can now send a copy of any article to a colleague through the new "
            "sharing service, which replaces the old link and email buttons on every article page"][v % 3]


def rights_prose(v: int) -> str:
    return ["" if v % 3 == 2 else
            "to reuse this article in whole or in part for commercial purposes please request permission "
            "through the rights and permissions service of the copyright clearance center"][0]


def metrics_prose(a: Article, v: int) -> str:
    rng = random.Random(f"metrics-{a.doi}-{v}")
    return (f"this article has been accessed {rng.randint(200, 90000)} times and cited by {rng.randint(0, 300)} "
            f"other articles in the literature, and its altmetric attention score is {rng.randint(1, 400)}")


def cookie_prose(v: int) -> str:
    return ["we use cookies to give you the best experience on our website and to measure how it is used; by "
            "continuing to browse you agree to our use of cookies as described in our cookie policy",
            "this website stores cookies on your device to remember your preferences and to analyse traffic; "
            "you can change your cookie settings at any time in the privacy centre of the site"][v % 2]


def related(a: Article, v: int) -> list[tuple[str, str]]:
    rng = random.Random(f"related-{a.doi}-{v}")
    out = []
    for _ in range(3):
        other = dp.article(rng.randint(20_000, 99_999), full_text=False)
        out.append((other.title, other.abstract[:320]))
    return out


def meta(a: Article, v: int, show_doi: bool, *, dc: bool = False, abstract_meta: bool = False) -> str:
    m = [f'<meta name="citation_title" content="{e(a.title)}">',
         *[f'<meta name="citation_author" content="{e(x)}">' for x in a.authors],
         f'<meta name="citation_publication_date" content="{a.date.replace("-", "/")}">',
         f'<meta name="citation_journal_title" content="{e(a.journal)}">']
    if show_doi:
        m.append(f'<meta name="citation_doi" content="{e(a.doi)}">')
    if abstract_meta:
        m.append(f'<meta name="citation_abstract" content="{e(a.abstract)}">')
    if dc:
        m += [f'<meta name="DC.Title" content="{e(a.title)}">',
              f'<meta name="DC.Description" content="{e(a.abstract)}">']
    m.append(f'<meta property="og:description" content="{e(a.abstract[:200])}...">')
    if v % 2:
        m.reverse()
    return "".join(m)


def doc(head: str, body: str, title: str) -> str:
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title>{head}</head>'
            f"<body>{body}</body></html>")


def doi_line(a: Article, show_doi: bool) -> str:
    return f'<a class="doi" href="https://doi.org/{e(a.doi)}">https://doi.org/{e(a.doi)}</a>' if show_doi else ""


def box_items(a: Article) -> str:
    """The box's content: bullets drawn from the abstract's sentences (what a highlights list is)."""
    sents = [s for s in a.abstract.split(". ") if len(s.split()) > 6][:3]
    return "".join(f"<li>{e(s)}.</li>" for s in sents)


# -- platforms ----------------------------------------------------------------------------------

def atypon(a: Article, v: int, box: bool, show_doi: bool) -> str:
    org = "The Society for Applied Research"
    box_html = (f'<section class="article-section__abstract graphical-abstract" id="section-2-en"><h2>Graphical '
                f'Abstract</h2><div class="article-section__content"><p>{e(a.abstract.split(". ")[0])}.</p>'
                f'<ul>{box_items(a)}</ul></div></section>') if box else ""
    sections = "".join(f'<section class="article-section__content" id="sec{i}"><h2>{i}. Section</h2>'
                       f'<p>{e(p)}</p></section>' for i, p in enumerate(a.body, 1))
    tools = (f'<div class="{["article-tools", "epub-tools", "coolBar"][v]}"><p>{share_prose(v)}</p>'
             f'<p>{rights_prose(v)}</p></div>')
    side = "".join(f'<li><a href="/doi/x{i}">{e(t)}</a><p>{e(s)}</p></li>' for i, (t, s) in enumerate(related(a, v)))
    body = (f'<div class="pb-page"><header class="header"><ul class="menubar">{links(menu(v))}</ul></header>'
            f'<main class="content"><div class="page-body pagefulltext"><article class="article">'
            f'<div class="citation"><h1 class="citation__title">{e(a.title)}</h1>'
            f'<div class="loa-authors">{", ".join(e(x) for x in a.authors)}</div>'
            f'<div class="epub-section">First published: {a.date} {doi_line(a, show_doi)}</div></div>{tools}'
            f'<div class="article__body">{box_html if v % 2 == 0 else ""}'
            f'<section class="article-section__abstract" id="section-1-en"><h2>Abstract</h2>'
            f'<div class="article-section__content"><p>{e(a.abstract)}</p></div></section>'
            f'{box_html if v % 2 == 1 else ""}<section class="article-section__full">{sections}</section></div>'
            f'<div class="article-metrics"><p>{metrics_prose(a, v)}</p></div></article>'
            f'<div class="{["publicationContentRight", "article-row-right", "sidebar"][v]}">'
            f'<section class="related"><h3>Related</h3><ul>{side}</ul></section></div></div></main>'
            f'<div class="footer"><p>{org_prose(org, v)}</p><ul>{links(menu(v + 1))}</ul>'
            f'<p>{copyright_line(org, v)}</p></div></div>')
    return doc(meta(a, v, show_doi, dc=True), body, f"{a.title} - {a.journal} - Literatum")


def highwire(a: Article, v: int, box: bool, show_doi: bool) -> str:
    org = "The Medical Society"
    box_html = (f'<div class="section significance" id="sec-sig"><h2>Significance</h2>'
                f'<p>{e(" ".join(a.abstract.split(". ")[:2]))}.</p></div>') if box else ""
    secs = "".join(f'<div class="section" id="sec-{i}"><h2>Section {i}</h2><p>{e(p)}</p></div>'
                   for i, p in enumerate(a.body, 1))
    rel = "".join(f'<div class="highwire-cite"><a href="/c/{i}">{e(t)}</a><p>{e(s)}</p></div>'
                  for i, (t, s) in enumerate(related(a, v)))
    body = (f'<div id="page"><div class="region region-header"><div class="pane-menu-block">'
            f'<ul class="menu">{links(menu(v))}</ul></div></div>'
            f'<div class="cookie-notice"><p>{cookie_prose(v)}</p></div>'
            f'<div class="panel-panel panel-region-content"><div class="pane-highwire-article-citation">'
            f'<h1 class="highwire-cite-title">{e(a.title)}</h1><div class="highwire-cite-authors">'
            f'{", ".join(e(x) for x in a.authors)}</div><div class="highwire-cite-metadata">{doi_line(a, show_doi)}'
            f'</div></div><div class="pane-highwire-markup"><div class="article fulltext-view">'
            f'<div class="section abstract" id="abstract-1"><h2>Abstract</h2><p>{e(a.abstract)}</p></div>'
            f'{box_html}{secs}</div></div>'
            f'<div class="panels-ajax-tab-container"><p>{metrics_prose(a, v)}</p></div>'
            f'<div class="pane-highwire-node-pager"><p>{share_prose(v)}</p></div></div>'
            f'<div class="panel-region-sidebar-right"><div class="pane-related">{rel}</div></div>'
            f'<div class="region region-footer"><p>{org_prose(org, v)}</p><p>{copyright_line(org, v)}</p></div></div>')
    return doc(meta(a, v, show_doi, abstract_meta=v % 3 == 1), body, f"{a.title} | {a.journal}")


def silverchair(a: Article, v: int, box: bool, show_doi: bool) -> str:
    org = "Oxford-like University Press"
    box_html = (f'<section class="abstract key-points"><h3>Key Points</h3><p>{e(a.abstract.split(". ")[0])}. '
                f'{e(a.abstract.split(". ")[1])}.</p></section>') if box else ""
    paras = "".join(f'<h2 class="section-title">Section {i}</h2><p class="chapter-para">{e(p)}</p>'
                    for i, p in enumerate(a.body, 1))
    rel = "".join(f'<div class="related-article"><a href="/r/{i}">{e(t)}</a><div class="snippet">{e(s)}</div>'
                  f'</div>' for i, (t, s) in enumerate(related(a, v)))
    body = (f'<div class="master-container"><div class="widget-SitePageHeader"><div class="site-nav">'
            f'<ul>{links(menu(v))}</ul></div></div><div class="page-column-wrap"><div class="content-main" '
            f'id="ContentColumn"><div class="widget-ArticleTopInfo"><h1 class="wi-article-title">{e(a.title)}</h1>'
            f'<div class="al-authors-list">{", ".join(e(x) for x in a.authors)}</div>'
            f'<div class="ww-citation-primary">{doi_line(a, show_doi)}</div></div>'
            f'<div class="widget-ArticleFulltext" data-widgetname="ArticleFulltext">'
            f'<section class="abstract"><h2 class="abstract-title">Abstract</h2><p class="chapter-para">'
            f'{e(a.abstract)}</p></section>{box_html}{paras}</div>'
            f'<div class="widget-ArticleLevelMetrics"><p>{metrics_prose(a, v)}</p></div>'
            f'<div class="article-share"><p>{share_prose(v)}</p></div></div>'
            f'<div class="widget-RelatedContent page-column--right">{rel}</div></div>'
            f'<div class="widget-SitePageFooter"><p>{org_prose(org, v)}</p><p>{copyright_line(org, v)}</p>'
            f'<ul>{links(menu(v + 2))}</ul></div></div>')
    return doc(meta(a, v, show_doi), body, f"{a.title} | {a.journal} | Oxford Academic-like")


def sciencedirect(a: Article, v: int, box: bool, show_doi: bool) -> str:
    org = "Elsevier-like B.V."
    box_html = (f'<div class="abstract author-highlights" id="abs0005"><h2 class="section-title">Highlights</h2>'
                f'<div id="abss0005"><ul class="list">{box_items(a)}</ul></div></div>') if box else ""
    secs = "".join(f'<section id="sec{i}"><h2 class="u-h4">{i}. Results</h2><div class="u-margin-s-bottom" '
                   f'id="p{i:04d}">{e(p)}</div></section>' for i, p in enumerate(a.body, 1))
    rel = "".join(f'<li><a href="/science/article/pii/S{i}">{e(t)}</a><div class="abstract-preview">{e(s)}</div>'
                  f'</li>' for i, (t, s) in enumerate(related(a, v)))
    body = (f'<div id="app"><div class="App"><header class="gh-header"><ul>{links(menu(v))}</ul></header>'
            f'<div class="Article" role="main"><div class="article-wrapper"><article class="col-lg-12">'
            f'<h1 class="Head"><span class="title-text">{e(a.title)}</span></h1><div class="AuthorGroups">'
            f'{"".join(f"<span class=author>{e(x)}</span>" for x in a.authors)}</div>'
            f'<div class="ArticleIdentifierLinks">{doi_line(a, show_doi)}</div>'
            f'<div class="Abstracts u-font-serif">{box_html}<div class="abstract author" id="abs0010">'
            f'<h2 class="section-title">Abstract</h2><div id="abss0010"><p>{e(a.abstract)}</p></div></div></div>'
            f'<div class="Body u-font-serif" id="body"><div>{secs}</div></div>'
            f'<div class="Footnotes"><p>{rights_prose(v)}</p></div></article></div>'
            f'<aside class="RelatedContent u-show-from-lg"><h2>Recommended articles</h2><ul>{rel}</ul></aside>'
            f'<div class="PlumX"><p>{metrics_prose(a, v)}</p></div></div>'
            f'<footer class="els-footer"><p>{org_prose(org, v)}</p><p>{copyright_line(org, v)}</p></footer>'
            f'<div class="cookie-notice"><p>{cookie_prose(v)}</p></div></div></div>')
    return doc(meta(a, v, show_doi), body, f"{a.title} - ScienceDirect-like")


def springer(a: Article, v: int, box: bool, show_doi: bool) -> str:
    org = "Springer-like Nature"
    box_html = (f'<section class="c-article-editor-summary" data-title="Editor\'s summary"><h2>Editor\'s summary'
                f'</h2><p>{e(" ".join(a.abstract.split(". ")[:2]))}.</p></section>') if box else ""
    secs = "".join(f'<section data-title="Section {i}"><div class="c-article-section" id="Sec{i}-section">'
                   f'<h2 class="c-article-section__title">Section {i}</h2><div class="c-article-section__content">'
                   f'<p>{e(p)}</p></div></div></section>' for i, p in enumerate(a.body, 1))
    rec = "".join(f'<article class="c-article-recommendations-card"><h3>{e(t)}</h3><p>{e(s)}</p></article>'
                  for t, s in related(a, v))
    body = (f'<header class="c-header"><nav><ul>{links(menu(v))}</ul></nav></header>'
            f'<div class="c-site-messages"><p>{cookie_prose(v)}</p></div>'
            f'<main class="c-article-main-column u-float-left" id="main-content"><article lang="en">'
            f'<div class="c-article-header"><h1 class="c-article-title">{e(a.title)}</h1>'
            f'<ul class="c-article-author-list">{"".join(f"<li>{e(x)}</li>" for x in a.authors)}</ul>'
            f'<p class="c-bibliographic-information__value">{doi_line(a, show_doi)}</p></div>'
            f'<div class="c-article-metrics-bar__wrapper"><p>{metrics_prose(a, v)}</p></div>'
            f'<div class="c-article-body"><section aria-labelledby="Abs1" data-title="Abstract" lang="en">'
            f'<div class="c-article-section" id="Abs1-section"><h2 class="c-article-section__title" id="Abs1">'
            f'Abstract</h2><div class="c-article-section__content" id="Abs1-content"><p>{e(a.abstract)}</p></div>'
            f'</div></section>{box_html}<div class="main-content">{secs}</div>'
            f'<section data-title="Rights and permissions"><div class="c-article-section" id="rightslink-section">'
            f'<h2 class="c-article-section__title">Rights and permissions</h2><div class="c-article-section__content">'
            f'<p>{rights_prose(v)}</p></div></div></section>'
            f'<div class="c-article-share-box"><p>{share_prose(v)}</p></div></div></article></main>'
            f'<aside class="c-article-extras"><div class="c-article-recommendations">{rec}</div></aside>'
            f'<footer class="c-footer"><p>{org_prose(org, v)}</p><p>{copyright_line(org, v)}</p></footer>')
    return doc(meta(a, v, show_doi), body, f"{a.title} | {a.journal}")


def ojs(a: Article, v: int, box: bool, show_doi: bool) -> str:
    org = "The Open Journal Collective"
    box_html = (f'<section class="item plain-language-summary"><h2 class="label">Plain Language Summary</h2>'
                f'<p>{e(" ".join(a.abstract.split(". ")[:2]))}.</p></section>') if box else ""
    doi_item = (f'<section class="item doi"><h2 class="label">DOI:</h2><span class="value">{doi_line(a, True)}'
                f'</span></section>') if show_doi else ""
    body = (f'<div class="pkp_structure_page"><header class="pkp_structure_head" id="headerNavigationContainer">'
            f'<div class="pkp_site_name">{e(a.journal)}</div><nav class="pkp_navigation_primary_wrapper">'
            f'<ul>{links(menu(v))}</ul></nav></header><div class="pkp_structure_content has_sidebar">'
            f'<div class="pkp_structure_main" role="main"><article class="obj_article_details">'
            f'<h1 class="page_title">{e(a.title)}</h1><section class="item authors"><ul class="authors">'
            f'{"".join(f"<li><span class=name>{e(x)}</span></li>" for x in a.authors)}</ul></section>{doi_item}'
            f'<section class="item abstract"><h2 class="label">Abstract</h2><p>{e(a.abstract)}</p></section>'
            f'{box_html}<div class="item downloads_chart"><p>{metrics_prose(a, v)}</p></div>'
            f'<div class="item copyright"><p>{rights_prose(v)}</p><p>{copyright_line(org, v)}</p></div>'
            f'</article></div><div class="pkp_structure_sidebar left" role="complementary">'
            f'<div class="pkp_block block_information"><p>{org_prose(org, v)}</p></div></div></div>'
            f'<div class="pkp_structure_footer_wrapper" role="contentinfo"><p>{org_prose(org, v + 1)}</p></div></div>')
    return doc(meta(a, v, show_doi, dc=True), body, f"{a.title} | {a.journal}")


def msp(a: Article, v: int, box: bool, show_doi: bool) -> str:
    """A mathematics journal host in MSP's table layout: no <article>, no <main>, the abstract after an
    ``<h5>Abstract</h5>``, the journal's menu and the publisher's sentences in a side column; the 2026
    redesign renames every region (none of its names is in the chrome vocabulary)."""
    org = "Mathematical Sciences Publishers"
    box_html = (f'<div class="{["highlights", "highlights", "summary-box"][v]}"><h5>Highlights</h5>'
                f'<ul>{box_items(a)}</ul></div>') if box else ""
    ids = [("masthead-area", "activity-area", "content-area", "footer-area"),
           ("masthead-area", "activity-area", "content-area", "footer-area"),
           ("top-strip", "left-column", "centre-column", "bottom-strip")][v]
    journal_menu = links(["About the journal", "Editorial board", "Subscriptions", "Submission guidelines",
                          "Author index", "To appear", "Other MSP journals"][: 5 + v])
    side = (f'<td id="{ids[1]}" class="activity-column"><div class="activity-title">The Journal</div>'
            f'<ul>{journal_menu}</ul><div class="activity-title">Publisher</div><ul>{links(menu(v))}</ul>'
            f'<p>{org_prose(org, v)}</p></td>')
    content = (f'<td id="{ids[2]}"><div class="title">{e(a.title)}</div><div class="author">'
               f'{", ".join(e(x) for x in a.authors)}</div><p>{e(a.journal)}, vol. {v + 300}, '
               f'{doi_line(a, show_doi)}</p>{box_html if v != 1 else ""}<h5>Abstract</h5><p class="noindent">'
               f'{e(a.abstract)}</p>{box_html if v == 1 else ""}<h5>Keywords</h5><div class="keywords">'
               f'{e(", ".join(a.abstract.split()[3:9]))}</div><h5>Milestones</h5><p>Received: 1 March {a.date[:4]}'
               f' Accepted: 2 June {a.date[:4]}</p><p>{share_prose(v)}</p></td>')
    body = (f'<table id="{ids[0]}"><tr><td><a href="/">MSP</a></td><td><ul>{links(menu(v + 1))}</ul></td></tr>'
            f'</table><table class="main"><tr>{side if v != 2 else ""}{content}{side if v == 2 else ""}</tr></table>'
            f'<table id="{ids[3]}"><tr><td><p>{org_prose(org, v + 1)}</p><p>{copyright_line(org, v)}</p>'
            f'</td></tr></table>')
    return doc(meta(a, v, show_doi), body, f"{a.journal}: {a.title}")


TEMPLATES = {"atypon": atypon, "highwire": highwire, "silverchair": silverchair, "sciencedirect": sciencedirect,
             "springer": springer, "ojs": ojs, "msp": msp}


def page(platform: str, a: Article, version: int = 0, *, box: bool = False, show_doi: bool = True) -> str:
    return TEMPLATES[platform](a, version, box, show_doi)


def article(platform: str, seed: int) -> Article:
    return dp.article(1000 + seed * 17 + PLATFORMS.index(platform), full_text=FULL_TEXT[platform])


# -- the cases: a baseline and a later capture of one DOI, and the classes they must get ----------------

CFG = EngineConfig()
T0 = datetime(2026, 1, 1, tzinfo=UTC)
KEPT = frozenset({"unchanged", "minor", "layout"})
EXPECTED = {"redesign": KEPT, "box": frozenset({"layout"}), "no-doi": KEPT, "edited abstract": {"drifted"},
            "body paragraph": {"drifted"}, "replaced": {"replaced"}, "bot challenge": {"blocked"}}
MADE_UP = "10.99999/never-shown"


def fp(page: str, status: int = 200) -> Fingerprint:
    return fingerprint(Capture(url="https://pub.example/doi/x", timestamp=T0, content=page.encode(),
                               content_type="text/html", status=status), CFG)


def stored(f: Fingerprint) -> Fingerprint:
    return decode_fingerprint(encode_fingerprint(f, keep_text=False, keep_shingles=False))


def cases(seeds: int) -> list[tuple[str, str, str, str, str, str | None]]:
    """(platform, kind, what, baseline page, later page, watched DOI)."""
    out: list[tuple[str, str, str, str, str, str | None]] = []
    for seed in range(seeds):
        for p in PLATFORMS:
            a = article(p, seed)
            box = seed % 2 == 1
            for v0, v1 in ((0, 1), (0, 2), (1, 2)):
                out.append((p, "redesign", f"v{v0}->v{v1}", page(p, a, v0, box=box), page(p, a, v1, box=box),
                            a.doi))
            out.append((p, "box", "removed", page(p, a, 0, box=True), page(p, a, 1 + seed % 2), a.doi))
            out.append((p, "box", "added", page(p, a, 0), page(p, a, 1 + seed % 2, box=True), a.doi))
            for v0, v1 in ((0, 1), (0, 2)):
                out.append((p, "no-doi", f"v{v0}->v{v1}", page(p, a, v0, show_doi=False),
                            page(p, a, v1, show_doi=False), MADE_UP))
            out.append((p, "edited abstract", "v0->v1", page(p, a, 0), page(p, dp.edit_abstract(a, seed), 1),
                        a.doi))
            if a.body:
                out.append((p, "body paragraph", "v0->v2", page(p, a, 0),
                            page(p, dp.replace_paragraph(a, 2, seed), 2), a.doi))
            other = article(p, seed + 500)
            out.append((p, "replaced", "v0->v1", page(p, a, 0), page(p, other, 1), a.doi))
            out.append((p, "bot challenge", f"challenge {seed % 3}", page(p, a, 0), dp.challenge(seed % 3), a.doi))
    return out


def run(seeds: int) -> dict[str, Any]:
    got: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    misses: list[tuple[str, str, str, str, str]] = []
    for p, kind, what, base, cur, doi in cases(seeds):
        b, c = fp(base), fp(cur, status=403 if kind == "bot challenge" and "1" in what else 200)
        for form, baseline in (("fresh", b), ("stored", stored(b))):
            d = decide_doi(baseline, c, CFG, None, doi=doi)
            got[(kind, p)][d.change] += 1
            if d.change not in EXPECTED[kind]:
                misses.append((p, kind, what, form, f"{d.change}: {d.reason}"))
    return {"got": got, "misses": misses}
