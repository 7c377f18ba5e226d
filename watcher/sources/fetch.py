"""Fetch raw mementos over HTTP, following every kind of redirect archives use.

Why our own loop instead of the client's redirect handling: archives redirect
in three ways -- HTTP 3xx, JavaScript pages (Internet Archive's
``window.location.replace(...)`` / ``document.location.href = ...``) and
``<meta http-equiv="refresh">`` -- and the whole chain must be recorded in
``Capture.redirects`` and bounded by ``scan.follow_redirects``.  Every hop of
a Wayback-style URI-M is rewritten to its raw (``id_``) form, so the bytes
are the archived page, not a replay with banners and rewritten links.

Every request goes through driftline's one guarded HTTP client
(:class:`~watcher.net.http.HttpFetcher`): URI-Ms come from a remote
TimeMap, i.e. from someone else, so they pass the address guard
(``acquire.allow_addresses`` admits a local archive), and bodies are capped
in size, decompressed size, decompression ratio and time.  Batch callers are
synchronous; :func:`run_batch` runs the client's coroutines for them.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urljoin, urlsplit

from ..archive.replay import WAYBACK, is_archived_response, raw_replay_uri
from ..config import Config, LiveFetchConfig
from ..errors import AcquireError
from ..net.http import HttpFetcher
from ..net.netguard import AddressPolicy

_JS_REDIRECT = re.compile(
    r"""(?:window|document)\.location(?:\.href)?\s*(?:=|\.replace\s*\(|\.assign\s*\()\s*["']([^"']+)["']""",
    re.IGNORECASE,
)
_META_TAG = re.compile(r"<meta\b[^>]*>", re.IGNORECASE)
_HTTP_EQUIV_REFRESH = re.compile(r"""http-equiv\s*=\s*["']?refresh["']?""", re.IGNORECASE)
_META_CONTENT = re.compile(r"""content\s*=\s*(["'])(.*?)\1""", re.IGNORECASE | re.DOTALL)
_REFRESH_URL = re.compile(r"""^\s*(\d*)(?:\.\d*)?\s*[;,]\s*(?:url\s*=\s*)?["']?([^"'\s>]+)""", re.IGNORECASE)
# A refresh after a long delay is a periodic reload (news pages), not a redirect.
_REFRESH_MAX_DELAY_S = 30
_TAG = re.compile(r"<script\b.*?</script>|<style\b.*?</style>|<[^>]+>", re.IGNORECASE | re.DOTALL)
# A JavaScript redirect page is small and says little; a real page that
# happens to contain a location assignment is neither.
_JS_PAGE_MAX_BYTES = 16_384
_JS_PAGE_MAX_TEXT = 600
_T = TypeVar("_T")

# One Wayback parser for the whole code base (watcher.archive.replay).
raw_uri_m = raw_replay_uri


def in_archive(current: str, target: str) -> str:
    """Keep a redirect inside the archive: a raw capture that redirects to an
    original (live-web) URL is resolved through the same archive and time."""
    m = WAYBACK.match(current)
    if not m or WAYBACK.match(target):
        return target
    cur_host = urlsplit(current).netloc
    if urlsplit(target).netloc == cur_host:
        return target
    return f"{m.group(1)}{m.group(2)}id_/{target}"


def _visible_text_len(html: str) -> int:
    return len(" ".join(_TAG.sub(" ", html).split()))


def html_redirect(body: bytes) -> str | None:
    """Target of a JavaScript redirect page or a meta refresh, or None."""
    head = body[:_JS_PAGE_MAX_BYTES * 4].decode("utf-8", errors="replace")
    for tag in _META_TAG.findall(head[:65_536]):
        if _HTTP_EQUIV_REFRESH.search(tag):
            content = _META_CONTENT.search(tag)
            if content:
                m = _REFRESH_URL.match(content.group(2))
                if m and int(m.group(1) or 0) <= _REFRESH_MAX_DELAY_S:
                    return m.group(2)
    if len(body) <= _JS_PAGE_MAX_BYTES:
        m = _JS_REDIRECT.search(head)
        if m and _visible_text_len(head) <= _JS_PAGE_MAX_TEXT:
            return m.group(1).replace("\\/", "/")  # JSON-style escaped slashes (Internet Archive)
    return None


@dataclass(frozen=True, slots=True)
class FetchResult:
    url: str
    content: bytes | None
    status: int | None
    headers: dict[str, str]
    redirects: tuple[str, ...]
    error: str | None = None

    @property
    def content_type(self) -> str | None:
        for k, v in self.headers.items():
            if k.lower() == "content-type":
                return v
        return None


def batch_fetcher(cfg: Config) -> HttpFetcher:
    """The guarded client for batch reads: ``acquire.live``'s limits with the
    scan's timeout, the extractor's size cap, no per-host delay."""
    live = LiveFetchConfig.model_validate({
        **cfg.acquire.live.model_dump(),
        "timeout_s": cfg.scan.timemap_timeout_s,
        "max_bytes": cfg.engine.extract.max_bytes,
        "max_redirects": cfg.scan.follow_redirects,
    })
    return HttpFetcher(live, AddressPolicy(cfg.acquire.allow_addresses), per_host_delay_s=0.0,
                       max_decompress_ratio=cfg.engine.extract.max_decompress_ratio)


def run_batch(cfg: Config, work: Callable[[HttpFetcher], Awaitable[_T]]) -> _T:
    """Run ``work`` with a fresh batch client in an event loop of its own (batch code is synchronous)."""

    async def main() -> _T:
        fetcher = batch_fetcher(cfg)
        try:
            return await work(fetcher)
        finally:
            await fetcher.close()

    return asyncio.run(main())


def _error_slug(exc: AcquireError) -> str:
    return {"connect": "connection"}.get(exc.reason, exc.reason)


def _hops(chain: list[str], current: str) -> tuple[str, ...]:
    """The redirect chain from the first URI to the last one fetched (empty: no redirect)."""
    return (*chain, current) if chain else ()


async def fetch_raw(fetcher: HttpFetcher, uri_m: str, *, max_redirects: int) -> FetchResult:
    """Fetch the raw capture behind ``uri_m``, following HTTP, JavaScript and
    meta-refresh redirects up to ``max_redirects`` hops.  Never raises:
    failures come back with ``content=None`` and a short ``error`` slug
    (``timeout``, ``connection``, ``blocked_address``, ``too_large``...)."""
    current = raw_uri_m(uri_m)
    chain: list[str] = []
    seen = {current}
    while True:
        try:
            res = await fetcher.fetch(current, follow_redirects=False)
        except AcquireError as exc:
            return FetchResult(current, None, None, {}, _hops(chain, current), error=_error_slug(exc))
        status, headers, body = res.status, dict(res.headers), res.body
        target: str | None = None
        if 300 <= status < 400:
            target = res.headers.get("Location")
            if target is None:
                return FetchResult(current, None, status, headers, _hops(chain, current),
                                   error="redirect_without_location")
        elif status < 300:
            ctype = res.headers.get("Content-Type") or ""
            if "html" in ctype.lower() or not ctype:
                target = html_redirect(body)
        elif is_archived_response(res.headers):
            return FetchResult(current, body, status, headers, _hops(chain, current))  # e.g. an archived 404
        else:
            return FetchResult(current, None, status, headers, _hops(chain, current), error=f"http_{status}")
        if target is None:
            return FetchResult(current, body, status, headers, _hops(chain, current))
        nxt = raw_uri_m(in_archive(current, urljoin(current, target.strip())))
        if nxt in seen:
            if 300 <= status < 400:
                return FetchResult(current, None, status, headers, _hops(chain, current), error="redirect_loop")
            return FetchResult(current, body, status, headers, _hops(chain, current))  # a page refreshing itself
        if len(chain) >= max_redirects:
            return FetchResult(current, None, status, headers, _hops(chain, current), error="too_many_redirects")
        chain.append(current)
        seen.add(nxt)
        current = nxt
