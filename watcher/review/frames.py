"""Archived documents and their subresources for the curator's browser, from the archive only.

Why a route of its own: the archived frame shows the page as captured, and a page's images, styles and
fonts are part of that.  They are answered by the review server from where the capture was read -- the
capture's WARC file (the record of that URL nearest the capture's time, redirects followed inside the
file), then the WARC files written just after and before it in its folder, or its archive's raw
replay when the URI-M is under ``review.archives`` -- and with a 404 otherwise; never from the live
web.  Every document served carries :func:`archived_csp`: no origin
but the review server's own, no scripts, no forms, sandboxed, so a URL the rewrite missed is refused
by the browser itself.  The screenshots use the same resolvers (:func:`resolver_for`).
"""

from __future__ import annotations

import functools
import logging
import os
import re
from datetime import datetime
from urllib.parse import urlencode

from ..acquire.archived import ArchiveResolver, ChainResolver, ReplayResolver, WarcFileResolver, WarcIndexCache
from ..model import REDIRECT_STATUSES
from ..net.http import FetchResult, HttpFetcher
from .access import Access, Refused
from .content import ArchiveOnly
from .rewrite import Local, rewrite_css, rewrite_html

log = logging.getLogger(__name__)

_WAYBACK = re.compile(r"^(https?://.+?)/(\d{14})(?:[a-z]{2}_)?/(https?://.+)$")
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
                    "X-DNS-Prefetch-Control": "off"}


def archived_csp(origin: str, *, nested: bool = False) -> str:
    """The policy of every archived document: subresources from the review server only (``origin``,
    its own scheme://host:port, and 'self'), nothing else; no script, form, plugin or base change.
    The frames of the detail view may be framed by the review page only; a document the archived page
    frames itself (``nested``) has a sandboxed, origin-less frame as parent, which no source matches."""
    own = f"'self' {origin}"
    return (f"sandbox; default-src 'none'; img-src {own} data:; style-src {own} 'unsafe-inline'; "
            f"font-src {own} data:; media-src {own} data:; frame-src {own}; script-src 'none'; "
            "object-src 'none'; connect-src 'none'; form-action 'none'; base-uri 'none'"
            + ("" if nested else f"; frame-ancestors {own}"))


def local_route(vid: str, which: str) -> Local:
    """The server's resource route for one capture's subresources."""

    def local(url: str) -> str:
        return f"/archived/{vid}/res?" + urlencode({"which": which, "url": url})

    return local


class _Nothing:
    """No archive behind the capture (a gold file): every subresource is missing."""

    async def resolve(self, url: str, when: datetime) -> FetchResult | None:
        return None


class _NoRedirect:
    """A redirect the archive could not follow inside itself ends as missing: a browser handed a 3xx
    would follow it on its own, to the live web."""

    def __init__(self, inner: ArchiveResolver) -> None:
        self.inner = inner

    async def resolve(self, url: str, when: datetime) -> FetchResult | None:
        result = await self.inner.resolve(url, when)
        if result is None or result.status in REDIRECT_STATUSES or 300 <= result.status < 400:
            return None
        return result


def resolver_for(access: Access, locator: str | None, uri_m: str | None, index: WarcIndexCache,
                 fetcher: HttpFetcher | None) -> ArchiveResolver:
    """What answers a capture's subresources: its own WARC file (when under the operator's roots), its
    archive's raw replay (when the URI-M is under ``review.archives``), or nothing."""
    resolvers: list[ArchiveResolver] = []
    if locator and locator.startswith("warc:"):
        raw, _, off = locator[5:].rpartition("#")
        try:
            own = access.warc(raw, int(off) if off.isdigit() else 0)
            resolvers.append(WarcFileResolver(own, index))
            resolvers += [WarcFileResolver(p, index) for p in _neighbours(own, access)]
        except Refused as exc:
            log.warning("review: refused to read a capture's WARC: %s", exc)
    m = _WAYBACK.match(uri_m or "")
    if m and fetcher is not None and access.archive_of(uri_m or "") is not None:
        resolvers.append(ReplayResolver(m.group(1), ArchiveOnly(fetcher, access)))  # type: ignore[arg-type]
    if not resolvers:
        return _Nothing()
    return _NoRedirect(ChainResolver(resolvers))


_WARC_NAME = re.compile(r"\.(?:w?arc)(?:\.gz)?$", re.IGNORECASE)


def _neighbours(path: str, access: Access) -> list[str]:
    """The WARC files written just after and just before ``path`` in its folder (by name): a crawler
    rolls over to a new file mid-page, so a page's subresources may sit in the next file."""
    folder, name = os.path.split(path)
    names = _warc_names(folder, _mtime(folder))
    if name not in names:
        return []
    i = names.index(name)
    out = []
    for j in (i + 1, i - 1):
        if 0 <= j < len(names):
            try:
                out.append(access.warc(os.path.join(folder, names[j])))
            except Refused:
                continue
    return out


def _mtime(folder: str) -> int:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return 0


@functools.lru_cache(maxsize=16)
def _warc_names(folder: str, mtime_ns: int) -> list[str]:
    """The WARC/ARC file names of ``folder``, sorted (cached while the folder is unchanged)."""
    try:
        return sorted(n for n in os.listdir(folder) if _WARC_NAME.search(n))
    except OSError:
        return []


def document(body: bytes, content_type: str | None, url: str, local: Local) -> tuple[bytes, str]:
    """A served archived response: HTML and CSS with their URLs pointed at the server, the rest as is."""
    from ..extract.decode import decode

    ctype = (content_type or "").split(";")[0].strip().lower()
    if ctype in ("text/html", "application/xhtml+xml") or (not ctype and body.lstrip()[:1] == b"<"):
        text, _ = decode(body, content_type)
        return rewrite_html(text, url, local).encode("utf-8"), "text/html; charset=utf-8"
    if ctype == "text/css":
        text, _ = decode(body, content_type)
        return rewrite_css(text, url, local).encode("utf-8"), "text/css; charset=utf-8"
    return body, ctype or "application/octet-stream"


async def resource(resolver: ArchiveResolver, url: str, when: datetime) -> FetchResult | None:
    """``url`` as archived nearest ``when`` (http(s) only), or None."""
    if not url.lower().startswith(("http://", "https://")):
        return None
    try:
        return await resolver.resolve(url, when)
    except Exception as exc:  # a bad record or an archive error: missing, and the server goes on
        log.info("review: archived %s unavailable: %s", url[:200], type(exc).__name__)
        return None
