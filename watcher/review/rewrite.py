"""Archived HTML and CSS with every URL pointed at the review server, so nothing is fetched elsewhere.

Why: an archived page names its images, styles, fonts and frames by their live-web URLs.  Loaded as it
is, the curator's browser would ask the live site for them (telling it the curator's address, and
showing today's files as if archived).  Each such URL -- absolute, or relative to the page (or its
``<base>``) -- is rewritten to the review server's resource route, which answers from the capture's
WARC file or configured archive, or with a 404.  The Content-Security-Policy the server sends with
every archived document is the guarantee (no origin but the server's own); the rewrite is what lets
the archived subresources show at all.

Also dropped: ``<base>`` (resolved here), ``<script>`` (the frame runs none), ``<meta
http-equiv=refresh>``, DNS-prefetch, preconnect and prerender hints (they open connections outside
the CSP's reach), ``ping`` attributes; form targets point nowhere.  Links (``<a href>``) go to the
resource route too: following one inside the frame shows the archived page, if the capture's WARC
holds it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from urllib.parse import urljoin

import lxml.html
from lxml import etree

log = logging.getLogger(__name__)

Local = Callable[[str], str]  # an absolute http(s) URL -> the review server's route for it

_URL_ATTRS = ("src", "href", "poster", "data", "background", "longdesc", "cite", "icon", "manifest", "lowsrc",
              "dynsrc", "codebase", "xlink:href", "{http://www.w3.org/1999/xlink}href")
_NOWHERE_ATTRS = ("action", "formaction")
_SRCSET_ATTRS = ("srcset", "imagesrcset")
_DROP_RELS = frozenset({"dns-prefetch", "preconnect", "prerender"})
_CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)""", re.IGNORECASE)
_CSS_IMPORT = re.compile(r"""@import\s+(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)


def _target(value: str, base: str, local: Local) -> str:
    """Where a URL found in the page points after the rewrite: data: kept, http(s) to the server, the
    rest (javascript:, mailto:, other schemes) nowhere."""
    value = value.strip()
    if not value or value.startswith("#"):
        return value
    low = value[:16].lower()
    if low.startswith("data:") or low.startswith("about:"):
        return value
    absolute = urljoin(base, value)
    if absolute[:8].lower().startswith(("http://", "https://")):
        return local(absolute)
    return "#"


def rewrite_css(text: str, base: str, local: Local) -> str:
    """``url(...)`` and ``@import "..."`` pointed at the server."""

    def url(m: re.Match[str]) -> str:
        raw = next((g for g in m.groups() if g is not None), "")
        return f'url("{_target(raw, base, local)}")'

    def imp(m: re.Match[str]) -> str:
        raw = m.group(1) if m.group(1) is not None else m.group(2)
        return f'@import "{_target(raw, base, local)}"'

    return _CSS_IMPORT.sub(imp, _CSS_URL.sub(url, text))


def _srcset(value: str, base: str, local: Local) -> str:
    out = []
    for cand in value.split(","):
        parts = cand.strip().split(None, 1)
        if parts:
            out.append(" ".join([_target(parts[0], base, local), *parts[1:]]))
    return ", ".join(out)


def rewrite_html(text: str, base: str, local: Local, *, whole: bool = True) -> str:
    """The page with every URL it would load pointed at the server (see the module's docstring);
    ``whole``: with the page's doctype."""
    try:
        doc = lxml.html.document_fromstring(text)
    except ValueError:  # a str with an XML encoding declaration
        doc = lxml.html.document_fromstring(text.encode("utf-8"))
    except etree.ParserError:
        return "<!doctype html><html><body></body></html>"
    for b in doc.iter("base"):
        href = b.get("href")
        if href:
            base = urljoin(base, href.strip())
            break
    drop = []
    for el in doc.iter():
        if not isinstance(el.tag, str):
            continue  # comments, processing instructions
        tag = el.tag.lower()
        if tag in ("base", "script"):  # scripts never run in the sandboxed frame: no URL of theirs is kept
            drop.append(el)
            continue
        if tag == "meta" and (el.get("http-equiv") or "").strip().lower() == "refresh":
            drop.append(el)
            continue
        if tag == "link" and _DROP_RELS & set((el.get("rel") or "").lower().split()):
            drop.append(el)
            continue
        for name in _URL_ATTRS:
            value = el.get(name)
            if value is not None:
                el.set(name, _target(value, base, local))
        for name in _NOWHERE_ATTRS:
            if el.get(name) is not None:
                el.set(name, "#")
        for name in _SRCSET_ATTRS:
            value = el.get(name)
            if value is not None:
                el.set(name, _srcset(value, base, local))
        if el.get("ping") is not None:
            del el.attrib["ping"]
        style = el.get("style")
        if style:
            el.set("style", rewrite_css(style, base, local))
        if tag == "style" and el.text:
            el.text = rewrite_css(el.text, base, local)
        srcdoc = el.get("srcdoc")
        if srcdoc:
            el.set("srcdoc", rewrite_html(srcdoc, base, local, whole=False))
    for el in drop:
        el.drop_tree()
    html: str = lxml.html.tostring(doc.getroottree() if whole else doc, encoding="unicode", method="html")
    return html
