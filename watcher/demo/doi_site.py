"""The demo's publisher site: five DOIs whose landing pages change between checks.

A journal platform in the shape of a large commercial host (abstract and full
text under ``article-section`` classes, menus, a share bar, a rights
paragraph, metrics, related works with their abstracts, a footer about the
society's governance).  Each DOI tells one story over three checks:

==================  =========================================================================
redesign            the platform is redesigned twice (menus renamed, footer reworded, new
                    copyright year, the "Highlights" box beside the abstract dropped): layout
edited abstract     redesigned, then a sentence of the abstract is rewritten: drifted
replaced article    redesigned, then the DOI lands on another article: replaced
lapsed domain       redesigned, then the journal's domain lapses and is parked: gone
bot wall            a bot challenge answers every check after the first: blocked (an alert
                    after two in a row)
==================  =========================================================================

All text written for driftline.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from html import escape

from .pages import render_parked

PREFIX = "10.55555"
JOURNAL = "Journal of Field and Laboratory Studies"
SOCIETY = "The Society for Field Studies"


@dataclass(frozen=True)
class DemoArticle:
    doi: str
    title: str
    authors: tuple[str, ...]
    abstract: str
    body: tuple[str, ...] = ()
    highlights: tuple[str, ...] = ()


FLOODPLAIN = DemoArticle(
    f"{PREFIX}/jfls.2019.0114",
    "Seasonal flooding and invertebrate recovery on restored floodplain meadows",
    ("Maren Holt", "Tobias Okafor", "Lin Chen"),
    "We followed invertebrate communities on six floodplain meadows for five years after their embankments were "
    "lowered and their drains blocked. Meadows that held water for more than three weeks after a winter flood "
    "recovered mayfly and caddisfly larvae within two seasons, while meadows that drained within days did not "
    "differ from unrestored controls. Turbidity below the restored reaches fell by about a third. The length of "
    "winter inundation, rather than the area restored, predicted recovery, which suggests that small sites can "
    "contribute when they are allowed to stay wet.",
    ("Restored meadows were sampled monthly by trained volunteers at fixed stations along each reach, using the "
     "same kick-net protocol and the same identification keys throughout the study, so that differences between "
     "years reflect the river and not the observers.",
     "Inundation was logged with pressure sensors at the lowest point of each meadow and checked against "
     "photographs taken from fixed posts; the number of days with standing water after each flood was the "
     "main explanatory variable in every model we fitted.",
     "Recovery was fastest where cattle grazed the meadows in late summer, which kept the sward open and the "
     "margins of the pools free of rank vegetation, and slowest where the meadows were left ungrazed."),
    ("Meadows wet for three weeks or more regained mayfly larvae within two seasons",
     "Turbidity below restored reaches fell by about a third",
     "Duration of flooding predicted recovery better than restored area"),
)
TIMBER = DemoArticle(
    f"{PREFIX}/jfls.2020.0231",
    "A sparse solver for coupled heat and moisture transport in timber walls",
    ("Ada Ferreira", "Jonas Weber"),
    "Timber frame walls fail when moisture accumulates behind the vapour control layer during cold months. We "
    "present a finite volume solver for the coupled transport of heat and moisture that exploits the banded "
    "structure of the wall's discretisation, and we validate it against two years of sensor data from a test "
    "building. The solver reproduces the measured relative humidity at the sheathing to within four percent "
    "and runs a full year of hourly weather in under a second. It is fast enough to screen many wall designs "
    "against many climates before a building is designed in detail.",
    ("The wall is divided into layers of uniform material, and each layer into cells whose width follows the "
     "steepest gradients expected in winter, so that the sheathing and the insulation are resolved more "
     "finely than the cladding and the air gap behind it.",
     "Because each cell exchanges heat and moisture only with its two neighbours, the linear system at each time "
     "step is banded and can be solved in time proportional to the number of cells, which is what makes "
     "screening thousands of designs feasible on an ordinary laptop."),
)
TIMBER_EDITED = replace(TIMBER, abstract=TIMBER.abstract.replace(
    "The solver reproduces the measured relative humidity at the sheathing to within four percent",
    "The solver overestimates the measured relative humidity at the sheathing by up to twelve percent"))
LIBRARIES = DemoArticle(
    f"{PREFIX}/jfls.2021.0087",
    "Measuring reading stamina in primary school libraries",
    ("Priya Nair", "Owen Gallagher", "Sara Lindqvist"),
    "Reading stamina, the time a child keeps reading a chosen book without prompting, is often discussed by "
    "teachers but rarely measured. We observed four hundred pupils in twelve school libraries during free "
    "reading sessions across one school year and recorded how long each child read before stopping. Stamina "
    "rose steadily through the year in libraries with a regular weekly session and a librarian who helped "
    "children choose books, and stayed flat where sessions were irregular. We describe a simple observation "
    "sheet that teachers can use to track stamina themselves.",
)
ESTUARY = DemoArticle(
    f"{PREFIX}/jfls.2022.0150",
    "Tidal mixing and nitrate uptake in a shallow estuary",
    ("Hugo Marchetti", "Ines Duarte"),
    "Nitrate from farmland reaches the sea through estuaries, where part of it is taken up by algae and "
    "bacteria before it leaves. We measured nitrate along a shallow estuary over twenty tidal cycles and "
    "combined the measurements with a simple mixing model to estimate how much was removed. Removal was "
    "highest on neap tides, when water stayed longest over the mudflats, and fell sharply on spring tides. "
    "Over a year the estuary removed roughly a fifth of the nitrate that entered it, most of it in summer.",
)
SPHERE = DemoArticle(
    f"{PREFIX}/jfls.2023.0042",
    "Error bounds for randomised quadrature on the sphere",
    ("Elif Kaya", "Daniel Brooks"),
    "Integrals over the sphere appear in climate models, acoustics and computer graphics, and they are often "
    "estimated by averaging a function over randomly placed points. We prove error bounds for a family of "
    "randomised rules that place points in cells of equal area and jitter them within each cell. For smooth "
    "functions the error decreases markedly faster than for independent random points, and the bound holds "
    "for every number of points rather than only in the limit. Numerical experiments confirm that the bounds "
    "are close to the errors observed in practice.",
)
OTHER = DemoArticle(
    f"{PREFIX}/jfls.2024.0311",
    "Volunteer retention in community archaeology projects",
    ("Ruth Abara",),
    "Community archaeology depends on volunteers who return season after season. We surveyed volunteers of "
    "nine projects and followed them for three years to see who stayed. Volunteers who were given a defined "
    "role, such as finds washing or recording, were twice as likely to return as those who dug wherever they "
    "were needed, and projects that shared their results in public talks kept more of their volunteers.",
)

MENUS = (("Journals", "About", "Governance", "Ways to Support", "Publishing Services", "Contact"),
         ("Journals", "About", "Advisory Board", "Contact", "Publishing Services", "Rights & Permissions"),
         ("Publishing Services", "Journals", "About us", "Advisory Board", "Share", "Contact"))
YEARS = (2019, 2023, 2026)
FOOTERS = (
    f"{SOCIETY} is a learned society run by its members; read about our governance and the ways to support "
    "our journals, which keep fieldwork from every discipline in print and online.",
    f"{SOCIETY} is governed by an advisory board of working researchers, and every one of our journals is "
    "edited by members of the community it serves.",
    f"our publishing services are open to other learned societies; {SOCIETY} and its advisory board keep "
    "article charges low and the archive open for the long term.",
)


def _links(items: tuple[str, ...]) -> str:
    return "".join(f'<li><a href="/{escape(i.lower().replace(" ", "-"))}">{escape(i)}</a></li>' for i in items)


def landing_page(a: DemoArticle, version: int, *, highlights: bool = True) -> str:
    """``a``'s landing page in the 2019 (0), 2023 (1) or 2026 (2) design of the platform."""
    v = version % 3
    e = escape
    meta = "".join([f'<meta name="citation_title" content="{e(a.title)}">',
                    *[f'<meta name="citation_author" content="{e(x)}">' for x in a.authors],
                    f'<meta name="citation_journal_title" content="{e(JOURNAL)}">',
                    f'<meta name="citation_doi" content="{e(a.doi)}">',
                    f'<meta property="og:description" content="{e(a.abstract[:180])}...">'])
    box = ""
    if a.highlights and highlights:
        box = ('<section class="article-section__abstract highlights"><h2>Highlights</h2><ul>'
               + "".join(f"<li>{e(h)}</li>" for h in a.highlights) + "</ul></section>")
    body = "".join(f'<section class="article-section__content"><h2>{i}.</h2><p>{e(p)}</p></section>'
                   for i, p in enumerate(a.body, 1))
    share = ["share this article with colleagues by email or on social media, or copy its link to paste "
             "anywhere you like", "send a read only copy of this article to anyone, even without a subscription",
             ""][v]
    rights = "" if v == 2 else ("to reuse this article in whole or in part please request permission through "
                                "the rights and permissions service of the publisher")
    related = "".join(f'<li><a href="/doi/{e(o.doi)}">{e(o.title)}</a><p>{e(o.abstract[:240])}</p></li>'
                      for o in (LIBRARIES, ESTUARY, SPHERE, FLOODPLAIN)[v: v + 2] if o.doi != a.doi)
    side = ["publicationContentRight", "article-row-right", "sidebar"][v]
    html = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{e(a.title)} | {e(JOURNAL)}'
            f'</title>{meta}</head><body><div class="pb-page"><header class="header"><ul class="menubar">'
            f'{_links(MENUS[v])}</ul></header><main class="content"><article class="article">'
            f'<h1 class="citation__title">{e(a.title)}</h1><div class="loa-authors">{e(", ".join(a.authors))}</div>'
            f'<div class="epub-section">{e(JOURNAL)} · <a class="doi" href="https://doi.org/{e(a.doi)}">'
            f'https://doi.org/{e(a.doi)}</a></div><div class="article-tools"><p>{share}</p><p>{rights}</p></div>'
            f'{box if v == 0 else ""}<section class="article-section__abstract"><h2>Abstract</h2><p>{e(a.abstract)}'
            f'</p></section>{box if v else ""}<div class="article-section__full">{body}</div>'
            f'<div class="article-metrics"><p>this article has been downloaded {120 + 37 * v} times and cited by '
            f'{v} other articles</p></div></article><div class="{side}"><section class="related"><h3>Related</h3>'
            f'<ul>{related}</ul></section></div></main><div class="footer"><p>{e(FOOTERS[v])}</p>'
            f'<p>© Copyright {YEARS[v]} {e(SOCIETY)}. All rights reserved.</p></div></div></body></html>')
    return html


def challenge_page() -> str:
    return ('<!DOCTYPE html><html><head><title>Just a moment...</title></head><body><div class="main-wrapper">'
            "<h1>Checking if the site connection is secure</h1><p>journal.example needs to review the security of "
            "your connection before proceeding.</p><noscript>Enable JavaScript and cookies to continue</noscript>"
            '<div id="challenge-stage"></div><p>Ray ID: 8c1d2e3f4a5b</p><p>Performance &amp; security by '
            "Cloudflare</p></div></body></html>")


def parked_page() -> str:
    return render_parked("fieldstudies-journal.org", ["Journal Subscription", "Online Degrees", "Field Trips"],
                         2026, "dmn-4471")


@dataclass(frozen=True)
class Story:
    name: str
    article: DemoArticle
    pages: tuple[tuple[str, int], ...]  # (HTML, HTTP status) served at each check
    expected: tuple[str, ...]  # the change class of each check


def stories() -> list[Story]:
    """The five DOIs of the demo, each with its pages and the class each check should get."""
    return [
        Story("redesign", FLOODPLAIN, ((landing_page(FLOODPLAIN, 0), 200),
                                       (landing_page(FLOODPLAIN, 1, highlights=False), 200),
                                       (landing_page(FLOODPLAIN, 2, highlights=False), 200)),
              ("baseline", "layout", "layout")),
        Story("edited abstract", TIMBER, ((landing_page(TIMBER, 0), 200), (landing_page(TIMBER, 1), 200),
                                          (landing_page(TIMBER_EDITED, 2), 200)),
              ("baseline", "unchanged", "drifted")),
        Story("replaced article", LIBRARIES, ((landing_page(LIBRARIES, 0), 200), (landing_page(LIBRARIES, 1), 200),
                                              (landing_page(OTHER, 2), 200)),
              ("baseline", "unchanged", "replaced")),
        Story("lapsed domain", ESTUARY, ((landing_page(ESTUARY, 0), 200), (landing_page(ESTUARY, 1), 200),
                                         (parked_page(), 200)),
              ("baseline", "unchanged", "gone")),
        Story("bot wall", SPHERE, ((landing_page(SPHERE, 0), 200), (challenge_page(), 403), (challenge_page(), 403)),
              ("baseline", "blocked", "blocked")),
    ]
