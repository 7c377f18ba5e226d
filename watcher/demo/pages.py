"""HTML templates of the demo sites: a real site's structure, written here.

Why realistic structure: the point of the demo is that driftline does not
flag a page whose article stayed while everything around it (ads, dates,
comment threads, "related links", news tickers) changed, and that it does
flag the page that was replaced.  That only shows if the pages carry the
boilerplate real pages carry: navigation, header, breadcrumbs, sidebar,
comments, footer, cookie banner.  Every word is written for driftline; no
third-party page is copied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape


@dataclass(frozen=True, slots=True)
class Comment:
    author: str
    date: str
    text: str


@dataclass(frozen=True, slots=True)
class SitePage:
    """One rendering of a site page (one capture's worth of content)."""

    lang: str
    site_name: str
    tagline: str
    title: str
    nav: Sequence[str]
    breadcrumb: Sequence[str]
    heading: str
    byline: str
    sections: Sequence[tuple[str, Sequence[str]]]  # (sub-heading or "", paragraphs)
    sidebar_title: str
    sidebar_items: Sequence[str]
    related_title: str
    related: Sequence[str]
    ad: tuple[str, str]  # (label, text)
    comments_title: str
    comments: Sequence[Comment]
    footer_lines: Sequence[str]
    cookie_text: str
    theme: str = "#1d4e89"
    extra_head: str = ""
    labels: dict[str, str] = field(default_factory=dict)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")[:40] or "page"


def render_site(p: SitePage) -> str:
    """The full HTML document of one capture of a content page."""
    e = escape
    nav = "\n".join(f'        <li><a href="/{_slug(item)}/">{e(item)}</a></li>' for item in p.nav)
    crumbs = " &rsaquo; ".join(f'<a href="/{_slug(c)}/">{e(c)}</a>' for c in p.breadcrumb)
    body: list[str] = []
    for sub, paras in p.sections:
        if sub:
            body.append(f'      <h2 id="{_slug(sub)}">{e(sub)}</h2>')
        body.extend(f"      <p>{e(para)}</p>" for para in paras)
    side = "\n".join(f'        <li><a href="/news/{_slug(s)}/">{e(s)}</a></li>' for s in p.sidebar_items)
    related = "\n".join(f'        <li><a href="/{_slug(r)}/">{e(r)}</a></li>' for r in p.related)
    comments = "\n".join(
        f'      <li class="comment"><p class="meta"><strong>{e(c.author)}</strong> &middot; '
        f'<time>{e(c.date)}</time></p><p>{e(c.text)}</p></li>'
        for c in p.comments
    )
    footer = "\n".join(f"      <p>{e(line)}</p>" for line in p.footer_lines)
    reply = p.labels.get("reply", "Leave a reply")
    send = p.labels.get("send", "Post comment")
    search = p.labels.get("search", "Search")
    return f"""<!DOCTYPE html>
<html lang="{p.lang}">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{e(p.title)}</title>
  <meta name="description" content="{e(p.tagline)}">
  <link rel="stylesheet" href="/assets/css/site.css?v=4.2">
  <style>header.site{{background:{p.theme};color:#fff}} .ad{{border:1px solid #ccc;padding:8px}}</style>
  <script src="/assets/js/menu.js" defer></script>
  <script>window.dataLayer=window.dataLayer||[];function gtag(){{dataLayer.push(arguments);}}</script>{p.extra_head}
</head>
<body class="page">
  <div id="cookie-banner" role="dialog"><p>{e(p.cookie_text)}</p><button>OK</button></div>
  <header class="site">
    <a class="logo" href="/"><img src="/assets/img/logo.svg" alt="{e(p.site_name)}"></a>
    <p class="site-name">{e(p.site_name)}</p>
    <p class="tagline">{e(p.tagline)}</p>
    <form class="search" action="/search"><input name="q" placeholder="{e(search)}"><button>{e(search)}</button></form>
    <nav class="main">
      <ul>
{nav}
      </ul>
    </nav>
  </header>
  <div class="breadcrumb">{crumbs}</div>
  <div class="wrap">
    <main>
    <article>
      <h1>{e(p.heading)}</h1>
      <p class="byline">{e(p.byline)}</p>
{chr(10).join(body)}
    </article>
    <section id="comments">
      <h3>{e(p.comments_title)}</h3>
      <ol class="comments">
{comments}
      </ol>
      <form class="reply"><h4>{e(reply)}</h4><textarea name="comment"></textarea><button>{e(send)}</button></form>
    </section>
    </main>
    <aside class="sidebar">
      <div class="ad"><span class="ad-label">{e(p.ad[0])}</span><p>{e(p.ad[1])}</p></div>
      <h3>{e(p.sidebar_title)}</h3>
      <ul>
{side}
      </ul>
      <h3>{e(p.related_title)}</h3>
      <ul>
{related}
      </ul>
    </aside>
  </div>
  <footer class="site">
{footer}
  </footer>
</body>
</html>
"""


def render_parked(domain: str, searches: Sequence[str], year: int, ref: str) -> str:
    """A registrar's parked / for-sale page, as domain marketplaces serve them."""
    items = "\n".join(f'      <li><a href="/search?q={escape(s)}&amp;ref={ref}">{escape(s)}</a></li>' for s in searches)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{escape(domain)} is for sale | Buy this domain</title>
  <meta name="robots" content="noindex">
  <script src="https://parking-cdn.example.net/caf.js"></script>
</head>
<body>
  <div class="banner"><h1>{escape(domain)}</h1><p>This domain may be for sale!</p>
    <a class="cta" href="/inquire?d={escape(domain)}">Inquire about this domain</a></div>
  <div class="ads">
    <h2>Related Searches</h2>
    <ul>
{items}
    </ul>
    <p class="sponsored">Sponsored listings</p>
  </div>
  <footer><p>&copy; {year} Domain Parking Services. All rights reserved. <a href="/privacy">Privacy Policy</a></p>
    <p>The sale of this domain name is not affiliated with any previous owner. Ref {ref}</p></footer>
</body>
</html>
"""


def render_suspended(request_id: str, server: str) -> str:
    """The web host's "account suspended" page that replaces a hosted site."""
    return f"""<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <title>Account Suspended</title>
  <link rel="stylesheet" href="/cgi-sys/css/suspended.css">
</head>
<body>
  <div class="container">
    <img src="/img-sys/warning.png" alt="">
    <h1>Account Suspended</h1>
    <p>This Account has been suspended.</p>
    <p>Contact your hosting provider for more information.</p>
    <p class="small">Request ID {escape(request_id)} &middot; {escape(server)}</p>
  </div>
</body>
</html>
"""


def render_db_error(site_name: str) -> str:
    """A CMS database-connection error served with status 200 (a soft error)."""
    return f"""<!DOCTYPE html>
<html lang="es">
<head>
  <meta charset="utf-8">
  <title>Error de la base de datos</title>
</head>
<body id="error-page">
  <div class="wp-die-message"><h1>Error establishing a database connection</h1>
  <p>{escape(site_name)}: no se ha podido conectar con el servidor de la base de datos.</p></div>
</body>
</html>
"""


def render_blog(site_name: str, title: str, heading: str, byline: str, paragraphs: Sequence[str],
                nav: Sequence[str], offers: Sequence[str]) -> str:
    """The new owner's affiliate blog that took over an expired domain."""
    body = "\n".join(f"    <p>{escape(p)}</p>" for p in paragraphs)
    navs = " | ".join(f'<a href="/{_slug(n)}/">{escape(n)}</a>' for n in nav)
    offer = "\n".join(f'    <li><a rel="sponsored" href="/go/{_slug(o)}">{escape(o)}</a></li>' for o in offers)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{escape(title)}</title>
  <script async src="/ads/autoads.js"></script>
</head>
<body>
  <div class="top"><span class="brand">{escape(site_name)}</span> <nav>{navs}</nav></div>
  <article class="post">
    <h1>{escape(heading)}</h1>
    <div class="byline">{escape(byline)}</div>
{body}
  </article>
  <aside><h3>Top offers</h3>
  <ul>
{offer}
  </ul></aside>
  <footer>Affiliate disclosure: we may earn a commission from links on this page.</footer>
</body>
</html>
"""
