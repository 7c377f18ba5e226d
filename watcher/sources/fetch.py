"""Fetch raw mementos over HTTP, following every kind of redirect archives use.

Why our own loop instead of urllib's redirect handling: archives redirect in
three ways -- HTTP 3xx, JavaScript pages (Internet Archive's
``window.location.replace(...)`` / ``document.location.href = ...``) and
``<meta http-equiv="refresh">`` -- and the whole chain must be recorded in
``Capture.redirects`` and bounded by ``scan.follow_redirects``.  Every hop of
a Wayback-style URI-M is rewritten to its raw (``id_``) form, so the bytes
are the archived page, not a replay with banners and rewritten links.

Batch use only: blocking urllib in a small thread pool, no event loop needed.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from ..extract.encoding import decode_body

USER_AGENT = "driftline/0.1 (batch TimeMap scan)"

_WAYBACK = re.compile(r"^(https?://[^/]+/(?:[^/]+/)*?)(\d{14})(?:[a-z]{2}_)?/(.+)$")
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


def raw_uri_m(uri: str) -> str:
    """Wayback-style URI-M with ``id_`` after the 14-digit timestamp (raw capture)."""
    m = _WAYBACK.match(uri)
    if not m:
        return uri
    return f"{m.group(1)}{m.group(2)}id_/{m.group(3)}"


def in_archive(current: str, target: str) -> str:
    """Keep a redirect inside the archive: a raw capture that redirects to an
    original (live-web) URL is resolved through the same archive and time."""
    m = _WAYBACK.match(current)
    if not m or _WAYBACK.match(target):
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


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())


def _decode_body(body: bytes, encoding: str | None, max_bytes: int) -> bytes:
    """The body with its declared Content-Encoding undone, bounded (a bomb is
    never inflated: see :mod:`watcher.extract.encoding`).  A body that does not
    decode cleanly is returned as received; the fingerprint decodes it again
    under the configured caps and records why it failed."""
    if not encoding:
        return body
    decoded = decode_body(body, {"Content-Encoding": encoding}, max_bytes=max_bytes)
    return decoded.content if decoded.note in (None, "truncated") else body


def _content_encoding(headers: dict[str, str]) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == "content-encoding"), None)


def http_get(url: str, timeout_s: float, max_bytes: int) -> tuple[int, dict[str, str], bytes]:
    """One GET without redirect following; HTTP errors return their status."""
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip"})
    try:
        with _OPENER.open(req, timeout=timeout_s) as resp:
            headers = dict(resp.headers.items())
            body = resp.read(max_bytes)
            return int(resp.status), headers, _decode_body(body, _content_encoding(headers), max_bytes)
    except urllib.error.HTTPError as exc:
        headers = dict(exc.headers.items()) if exc.headers else {}
        body = exc.read(max_bytes) if exc.fp is not None else b""
        return int(exc.code), headers, _decode_body(body, _content_encoding(headers), max_bytes)


def _hops(chain: list[str], current: str) -> tuple[str, ...]:
    """The redirect chain from the first URI to the last one fetched (empty: no redirect)."""
    return (*chain, current) if chain else ()


def fetch_raw(uri_m: str, *, timeout_s: float, max_redirects: int, max_bytes: int) -> FetchResult:
    """Fetch the raw capture behind ``uri_m``, following HTTP, JavaScript and
    meta-refresh redirects up to ``max_redirects`` hops.  Never raises:
    failures come back with ``content=None`` and a short ``error`` slug."""
    current = raw_uri_m(uri_m)
    chain: list[str] = []
    seen = {current}
    status: int | None = None
    headers: dict[str, str] = {}
    while True:
        try:
            status, headers, body = http_get(current, timeout_s, max_bytes)
        except TimeoutError:
            return FetchResult(current, None, None, {}, _hops(chain, current), error="timeout")
        except urllib.error.URLError as exc:
            reason = "timeout" if isinstance(exc.reason, TimeoutError) else "connection"
            return FetchResult(current, None, None, {}, _hops(chain, current), error=reason)
        except (OSError, ValueError) as exc:
            slug = f"fetch_{type(exc).__name__.lower()}"
            return FetchResult(current, None, None, {}, _hops(chain, current), error=slug)
        target: str | None = None
        if 300 <= status < 400:
            target = next((v for k, v in headers.items() if k.lower() == "location"), None)
            if target is None:
                return FetchResult(current, None, status, headers, _hops(chain, current),
                                   error="redirect_without_location")
        elif status < 300:
            ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "") or ""
            if "html" in ctype.lower() or not ctype:
                target = html_redirect(body)
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
