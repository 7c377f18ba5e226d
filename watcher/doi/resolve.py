"""Resolve a DOI to its landing page and record how.

One place for every network call of a check (the guarded HTTP client,
:class:`~watcher.net.http.HttpFetcher`, and the render pool), so the
hardening of that client applies here unchanged:

1. the handle API of the configured resolver
   (``{resolver_url}api/handles/<doi>``): its ``responseCode`` (1 found, 100
   handle not found) and the ``URL`` values registered for the DOI;
2. ``GET {resolver_url}<doi>`` and every hop after it, one request at a time
   so each hop's status is kept: HTTP redirects, then ``<meta
   http-equiv=refresh>`` and JavaScript redirect pages (``location=...``);
3. ``HEAD`` of the landing URL the GET reached (``doi.head_check``),
   following its redirects: its status and final URL are kept next to the
   GET chain, and a disagreement is flagged (:func:`head_disagreement`);
4. a landing page that is a script-built shell (little text, several
   scripts: :func:`watcher.acquire.render.wants_render`'s rule), or one that
   answered with a bot challenge the last time, is rendered by Chromium
   (``browser`` is then true).

Publishers answer HEAD, GET and browsers differently (a HEAD refused with
403 or 405 where GET gets the article, a HEAD redirected to a login or
cookie page, a page only a browser gets past), so the method of every hop,
the HEAD answer and whether a browser was used are part of the record.  HEAD
is sent after GET, not before, so it never delays the observation and is
skipped when the host asked to slow down (429/503) or the GET found nothing
(404/410); it goes through the same guarded client and per-host politeness.  ``429`` and
``503`` carry ``Retry-After``: :attr:`Resolution.retry_after_s` passes it to
the scheduler's per-host politeness.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from ..acquire.render import RenderPool, count_scripts, quick_word_count
from ..config import Config
from ..errors import AcquireError
from ..extract.decode import decode
from ..extract.html import read_html
from ..fingerprint import host_of, site_of
from ..model import REDIRECT_STATUSES
from ..net.http import HttpFetcher
from ..pagekinds import detect_page_kind
from .ident import doi_url
from .importers import retry_after_s

log = logging.getLogger(__name__)

Outcome = str  # one of OUTCOMES
#: Every outcome a check records (metrics labels are pre-registered from it): ``dns_error`` is a host name
#: that does not resolve (the resolver's or a landing page's), ``error`` a bug in the check itself.
OUTCOMES = ("resolved", "redirected_elsewhere", "not_found", "blocked", "timeout", "dns_error", "server_error",
            "invalid_doi", "error")
MAX_PAGE_REDIRECTS = 3  # meta refresh / JavaScript hops after the HTTP ones


@dataclass(slots=True)
class Hop:
    url: str
    status: int | None
    method: str  # GET, meta-refresh, javascript, browser
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"url": self.url, "status": self.status, "method": self.method, "seconds": round(self.seconds, 4)}


@dataclass(slots=True)
class HeadCheck:
    """The ``HEAD`` answer for the landing URL (following redirects)."""

    url: str
    status: int | None = None
    final_url: str | None = None
    redirects: int = 0
    seconds: float = 0.0
    error: str | None = None  # the client's reason slug and message, when HEAD got no answer

    def as_dict(self) -> dict[str, Any]:
        return {"method": "HEAD", "url": self.url, "status": self.status, "final_url": self.final_url,
                "redirects": self.redirects, "seconds": round(self.seconds, 4), "error": self.error}


def head_disagreement(head: HeadCheck, get_status: int | None, get_url: str | None) -> str | None:
    """Why HEAD and GET disagree about the landing page, or None when they agree.

    They disagree when one succeeds (2xx) and the other does not (HEAD 405 or
    403 while GET got 200, or the reverse), when the status differs otherwise,
    or when HEAD ends at another URL than GET (a redirect only HEAD gets)."""
    if head.error is not None or head.status is None or get_status is None:
        return None
    h_ok, g_ok = 200 <= head.status < 300, 200 <= get_status < 300
    if h_ok != g_ok:
        return f"HEAD answered {head.status}, GET {get_status}"
    if not h_ok and head.status != get_status:
        return f"HEAD answered {head.status}, GET {get_status}"
    if get_url and head.final_url and head.final_url.rstrip("/") != get_url.rstrip("/"):
        return f"HEAD ends at {head.final_url[:200]}, GET at {get_url[:200]}"
    return None


@dataclass(slots=True)
class Resolution:
    """What one check saw: the chain, the final answer, and its outcome."""

    doi: str
    outcome: Outcome = "resolved"
    reason: str = ""
    handle_code: int | None = None
    handle_urls: list[str] = field(default_factory=list)
    hops: list[Hop] = field(default_factory=list)
    final_url: str | None = None
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    raw_body: bytes | None = None  # the unrendered answer, when a browser rendered the page
    browser: bool = False
    seconds: float = 0.0
    retry_after_s: float | None = None
    request_headers: dict[str, str] = field(default_factory=dict)
    head: HeadCheck | None = None
    head_disagrees: str | None = None

    @property
    def content_type(self) -> str | None:
        return self.headers.get("Content-Type") or self.headers.get("content-type")

    def chain(self) -> dict[str, Any]:
        """The resolution chain as events and check records carry it."""
        return {"handle": {"responseCode": self.handle_code, "urls": self.handle_urls},
                "hops": [h.as_dict() for h in self.hops], "final_url": self.final_url, "status": self.status,
                "browser": self.browser, "method": self.hops[-1].method if self.hops else None,
                "redirects": max(0, len(self.hops) - 1),
                "head": self.head.as_dict() if self.head is not None else None,
                "head_disagrees": self.head_disagrees}


class DoiResolver:
    """Resolves DOIs through ``cfg.doi.resolver_url`` with ``fetcher`` (and ``render``, when given)."""

    def __init__(self, cfg: Config, fetcher: HttpFetcher, render: RenderPool | None = None) -> None:
        self.cfg = cfg
        self.fetcher = fetcher
        self.render = render

    async def handle(self, doi: str, res: Resolution) -> None:
        url = self.cfg.doi.resolver_url.rstrip("/") + "/api/handles/" + doi_url(doi, "").lstrip("/")
        try:
            got = await self.fetcher.fetch(url, headers={"Accept": "application/json"}, max_bytes=1_000_000)
            doc = json.loads(got.body.decode("utf-8", "replace")) if got.body else {}
        except (AcquireError, ValueError) as exc:
            log.debug("handle API for %s: %s", doi, exc)
            return
        if isinstance(doc, dict):
            code = doc.get("responseCode")
            res.handle_code = code if isinstance(code, int) else None
            for v in doc.get("values") or []:
                if isinstance(v, dict) and v.get("type") == "URL":
                    value = (v.get("data") or {}).get("value")
                    if isinstance(value, str):
                        res.handle_urls.append(value)

    async def resolve(self, doi: str, *, expected_url: str | None = None, use_browser: bool = False) -> Resolution:
        """Resolve ``doi``; never raises for network trouble (it becomes the outcome)."""
        res = Resolution(doi=doi, request_headers={"User-Agent": self.fetcher.cfg.user_agent})
        started = time.perf_counter()
        try:
            await self.handle(doi, res)
            if res.handle_code == 100:
                res.outcome, res.reason = "not_found", "the resolver does not know this DOI (handle responseCode 100)"
                return res
            await self._follow(doi_url(doi, self.cfg.doi.resolver_url), res)
            if self.cfg.doi.head_check and res.final_url and res.status not in (404, 410, 429, 503):
                await self._head(res)
            if res.status is not None and (200 <= res.status < 300 or (use_browser and res.status in (403, 429, 503))):
                await self._maybe_render(res, force=use_browser)
            self._classify(res, expected_url)
        except AcquireError as exc:
            res.outcome = {"timeout": "timeout", "dns": "dns_error"}.get(exc.reason, "server_error")
            res.reason = f"{exc.reason}: {exc}"
        finally:
            # the resolution's latency: the handle API, the GET chain and any rendering, not the HEAD
            res.seconds = time.perf_counter() - started - (res.head.seconds if res.head is not None else 0.0)
        return res

    async def _head(self, res: Resolution) -> None:
        """HEAD the landing URL the GET reached (see the module docstring); never fails the check."""
        assert res.final_url is not None
        head = HeadCheck(res.final_url)
        t0 = time.perf_counter()
        try:
            got = await self.fetcher.fetch(res.final_url, method="HEAD")
            head.status, head.final_url, head.redirects = got.status, got.url, len(got.redirects)
        except AcquireError as exc:
            head.error = f"{exc.reason}: {exc}"
            log.debug("HEAD %s: %s", res.final_url, exc)
        head.seconds = time.perf_counter() - t0
        res.head = head
        res.head_disagrees = head_disagreement(head, res.status, res.final_url)
        if res.head_disagrees:
            log.info("DOI %s: HEAD and GET disagree: %s", res.doi, res.head_disagrees)

    async def _follow(self, start: str, res: Resolution) -> None:
        url, page_hops, method = start, 0, "GET"
        while True:
            if len(res.hops) > self.fetcher.cfg.max_redirects + MAX_PAGE_REDIRECTS:
                raise AcquireError(f"more than {len(res.hops) - 1} redirects from {start}", reason="too_many_redirects")
            t0 = time.perf_counter()
            got = await self.fetcher.fetch(url, follow_redirects=False)
            res.hops.append(Hop(url, got.status, method, time.perf_counter() - t0))
            res.final_url, res.status, res.headers, res.body = got.url, got.status, dict(got.headers), got.body
            location = got.headers.get("Location")
            if got.status in REDIRECT_STATUSES and location:
                url, method = urljoin(url, location.strip()), "GET"
                continue
            if got.status in (429, 503):
                res.retry_after_s = retry_after_s(got.headers.get("Retry-After"), 0.0) or None
            if not (200 <= got.status < 300) or page_hops >= MAX_PAGE_REDIRECTS:
                return
            nxt = self._page_redirect(got.body, got.headers.get("Content-Type"), url)
            if nxt is None:
                return
            url, method = nxt
            page_hops += 1

    @staticmethod
    def _page_redirect(body: bytes, content_type: str | None, base: str) -> tuple[str, str] | None:
        """A meta-refresh or JavaScript redirect of a stub page (little text)."""
        if not body or b"<" not in body[:4096] or quick_word_count(body) > 60:
            return None
        html, _ = decode(body[:200_000], content_type, "windows-1252")
        doc = read_html(html)
        if doc.refresh_url:
            return urljoin(base, doc.refresh_url), "meta-refresh"
        if doc.js_redirect:
            return urljoin(base, doc.js_redirect), "javascript"
        return None

    async def _maybe_render(self, res: Resolution, *, force: bool) -> None:
        if self.render is None or res.final_url is None or "html" not in (res.content_type or "text/html").lower():
            return
        rc = self.cfg.render
        shell = quick_word_count(res.body) <= rc.auto_max_words and count_scripts(res.body) >= rc.auto_min_scripts
        if not (force or shell):
            return
        try:
            html, seconds = await self.render.render(res.final_url)
        except AcquireError as exc:
            log.info("render of %s failed: %s", res.final_url, exc)
            return
        res.raw_body, res.body, res.browser = res.body, html, True
        res.headers = {**res.headers, "Content-Type": "text/html; charset=utf-8"}
        res.hops.append(Hop(res.final_url, res.status, "browser", seconds))

    @staticmethod
    def _challenge(res: Resolution) -> bool:
        """A bot challenge answered as an error (403, 429, 503): the title or the
        start of a short page says so.  Pages answered 200 are judged on their
        fingerprint (its page kind) by the monitor, with no second parse here."""
        head = res.body[:20_000]
        if b"<" not in head[:2000]:
            return False
        html, _ = decode(head, res.content_type, "windows-1252")
        doc = read_html(html)
        pk = detect_page_kind(doc.title, doc.headings, doc.text, len(doc.text.split()), None)
        if pk is not None and pk.kind == "bot-challenge":
            res.outcome, res.reason = "blocked", f"bot challenge ({pk.where}: {pk.evidence})"
            return True
        return False

    def _classify(self, res: Resolution, expected_url: str | None) -> None:
        s = res.status
        if s is None:
            res.outcome, res.reason = "server_error", "no answer"
            return
        if s in (404, 410):
            res.outcome, res.reason = "not_found", f"HTTP {s} at {res.final_url}"
            return
        if s >= 400 and self._challenge(res):
            return
        if res.browser and s >= 400:  # the browser got past what answered the plain request
            s = 200
        if s == 429 or s >= 500:
            res.outcome, res.reason = "server_error", f"HTTP {s}" + (
                f" (Retry-After {res.retry_after_s:.0f} s)" if res.retry_after_s else "")
            return
        if s >= 400:
            res.outcome, res.reason = "server_error" if s >= 500 else "blocked" if s in (401, 403) else "not_found", \
                f"HTTP {s}"
            return
        registered = expected_url or (res.handle_urls[0] if res.handle_urls else None)
        final_site = site_of(host_of(res.final_url or ""))
        if registered and site_of(host_of(registered)) != final_site:
            res.outcome = "redirected_elsewhere"
            res.reason = f"final domain {host_of(res.final_url or '')} is not the registered {host_of(registered)}"
            return
        res.outcome, res.reason = "resolved", f"HTTP {s} after {max(0, len(res.hops) - 1)} redirects"
