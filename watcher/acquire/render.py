"""JavaScript rendering with Debian's Chromium through Playwright (:class:`RenderPool`).

Some pages build their content in the browser; their raw HTML holds only
scripts.  Rendering is expensive, so :func:`wants_render` limits it to
configured hosts/URL patterns and to pages that look script-built (tiny
extracted text, many ``<script>`` tags).

SSRF: the browser is as untrusted-URL-driven as the live fetcher.  Chromium
is started with ``--host-resolver-rules=MAP * ~NOTFOUND`` so it cannot
resolve or reach any host on its own; every http(s) request of every page is
intercepted (``context.route``) and performed by driftline's guarded
:class:`~watcher.net.http.HttpFetcher`, which checks every redirect hop.
(Chromium does not route the hops of a redirect it was handed by
``route.fulfill``, so redirects are followed by the fetcher; the page's own
redirect chain is resolved before navigation so that the document gets its
final URL and relative links resolve correctly.)  Refused addresses are
aborted; WebSockets are mocked (never connected); service workers are
blocked.

Archived captures (:meth:`RenderPool.render_archived`): the captured
document is handed to Chromium as it was archived and every other request is
answered by an :class:`~watcher.acquire.archived.ArchiveResolver` (the
capture's WARC file, the archive's raw replay), never by the network; what the
archive lacks is a 404.

Robustness: pages are pooled and reused; when Chromium dies (crash, OOM
kill) the next render relaunches it and retries once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
import time
from collections.abc import Iterable
from datetime import datetime
from functools import lru_cache
from urllib.parse import urlsplit

from playwright.async_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    Request,
    Route,
    WebSocketRoute,
    async_playwright,
)
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from ..config import LiveFetchConfig, RenderConfig
from ..errors import AcquireError, BlockedAddressError, RenderError
from ..events.model import CaptureEvent
from ..model import Capture
from ..net.http import DEFAULT_DECOMPRESS_RATIO, FetchResult, HttpFetcher
from ..net.netguard import AddressPolicy
from .archived import ArchiveResolver
from .sandbox import LaunchPlan, plan_launch, unsandboxed

log = logging.getLogger(__name__)

# --no-sandbox is added only when render.sandbox says so (see .sandbox).
CHROMIUM_ARGS = (
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)
# Response headers that describe aiohttp's transfer, not the (decoded) body handed to Chromium.
_DROP_RESPONSE = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"})
_DROP_REQUEST = frozenset({"host", "content-length", "connection", "accept-encoding"})
_SCRIPT_TAG = re.compile(rb"<script\b", re.IGNORECASE)


_INVISIBLE = re.compile(rb"<(script|style|noscript|template)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(rb"<[^>]*>")
_WORD = re.compile(rb"[^\s<>&;]+")


def quick_word_count(html: bytes) -> int:
    """Rough number of visible words (scripts, styles and tags removed).

    Only for deciding whether a page is script-built; the engine's extraction
    is the real word count.
    """
    visible = _TAG.sub(b" ", _INVISIBLE.sub(b" ", html[:2_000_000]))
    return len(_WORD.findall(visible))


def count_scripts(html: bytes | str) -> int:
    """Number of ``<script`` tags (a cheap signal that a page is built by JavaScript)."""
    data = html.encode("utf-8", "replace") if isinstance(html, str) else html
    return len(_SCRIPT_TAG.findall(data))


@lru_cache(maxsize=64)
def _patterns(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


def wants_render(
    event: CaptureEvent | None, capture: Capture, text_word_count: int, script_count: int, cfg: RenderConfig
) -> bool:
    """Whether ``capture`` should be re-obtained by rendering its URL in Chromium.

    True for HTML captures whose host is in ``cfg.hosts`` (subdomains
    included) or whose URL matches one of ``cfg.url_patterns``, and, with
    ``cfg.auto``, for pages with at most ``auto_max_words`` words of text and
    at least ``auto_min_scripts`` script tags.
    """
    if not cfg.enabled:
        return False
    ctype = (capture.content_type or (event.mimetype if event else None) or "text/html").lower()
    if "html" not in ctype:
        return False
    url = capture.url or (event.url if event else "")
    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return False
    for wanted in cfg.hosts:
        w = wanted.lower().strip(".")
        if host == w or host.endswith("." + w):
            return True
    if any(p.search(url) for p in _patterns(tuple(cfg.url_patterns))):
        return True
    return cfg.auto and text_word_count <= cfg.auto_max_words and script_count >= cfg.auto_min_scripts


def rendered_capture(capture: Capture, html: bytes) -> Capture:
    """``capture`` with its content replaced by the rendered DOM.

    The digest stays the crawler's (or the raw payload's): the verdict id is
    built from it, and a re-delivered event must map to the same verdict even
    though two renders of one page rarely serialise byte-identically.
    """
    return dataclasses.replace(
        capture,
        content=html,
        content_type="text/html; charset=utf-8",
        digest=capture.effective_digest,
        source=f"{capture.source or 'unknown'}+render",
    )


@dataclasses.dataclass
class _Archived:
    """What one archived render serves: the captured document and a resolver for the rest."""

    url: str
    document: FetchResult
    resolver: ArchiveResolver
    when: datetime
    served: int = 0
    missing: int = 0
    screenshot: bytes | None = None  # taken when set to b"" (screenshot_archived)


@dataclasses.dataclass
class _PageState:
    """Per pooled page (one context each): set while an archived render runs on it."""

    archived: _Archived | None = None


_Pooled = tuple[int, BrowserContext, Page, _PageState]


class RenderPool:
    """A Chromium browser with ``cfg.pages`` reusable pages; restarts itself when Chromium dies.

    ``allow`` is the SSRF allow-list (an :class:`AddressPolicy` or CIDRs, as
    ``acquire.allow_addresses``); ``fetch`` the limits for the page's
    requests (size cap, timeout, User-Agent), default ``LiveFetchConfig()``.
    """

    def __init__(
        self,
        cfg: RenderConfig,
        allow: AddressPolicy | Iterable[str] = (),
        *,
        fetch: LiveFetchConfig | None = None,
        max_decompress_ratio: float = DEFAULT_DECOMPRESS_RATIO,
    ) -> None:
        self.cfg = cfg
        self.policy = allow if isinstance(allow, AddressPolicy) else AddressPolicy(allow)
        self.fetch_cfg = fetch or LiveFetchConfig()
        self.fetcher = HttpFetcher(self.fetch_cfg, self.policy, per_host_delay_s=0.0,
                                   max_decompress_ratio=max_decompress_ratio)
        self.restarts = 0
        self.blocked_requests = 0
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._generation = 0
        self._idle: list[_Pooled] = []
        self._sem = asyncio.Semaphore(max(1, cfg.pages))
        self._lock = asyncio.Lock()
        self._closed = False
        self._prefetched: dict[str, FetchResult] = {}
        self._plan: LaunchPlan | None = None

    async def __aenter__(self) -> RenderPool:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Launch Chromium now (otherwise the first render does)."""
        await self._ensure_browser()

    @property
    def browser(self) -> Browser | None:
        return self._browser

    async def _ensure_browser(self, *, force: bool = False) -> Browser:
        async with self._lock:
            if self._closed:
                raise RenderError("render pool is closed", reason="render_closed")
            if self._browser is not None and self._browser.is_connected() and not force:
                return self._browser
            if self._browser is not None:
                log.warning("Chromium is gone (generation %d); relaunching", self._generation)
                self.restarts += 1
                old, self._browser = self._browser, None
                self._idle.clear()
                with contextlib.suppress(PlaywrightError):
                    await old.close()
            if self._pw is None:
                self._pw = await async_playwright().start()
            self._browser = await self._launch(self._pw)
            self._generation += 1
            log.info("Chromium launched (generation %d)", self._generation)
            return self._browser

    async def _launch(self, pw: Playwright) -> Browser:
        """Launch as :func:`plan_launch` says; under ``auto``, a sandboxed launch that fails falls back
        to ``--no-sandbox`` (logged as a warning), under ``on`` it is an error."""
        if self._plan is None:
            self._plan = plan_launch(self.cfg)
            log.info("%s", self._plan.description)
        plan = self._plan
        try:
            # chromium_sandbox: Playwright adds --no-sandbox itself unless told otherwise
            return await pw.chromium.launch(executable_path=plan.executable, args=[*CHROMIUM_ARGS, *plan.args],
                                            headless=True, chromium_sandbox=plan.sandboxed)
        except PlaywrightError as exc:
            if plan.sandboxed and self.cfg.sandbox == "auto":
                first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else repr(exc)
                plan.cleanup()
                self._plan = unsandboxed(self.cfg, f"the sandboxed launch failed: {first}")
                log.warning("%s", self._plan.description)
                return await self._launch(pw)
            msg = f"cannot launch Chromium at {self.cfg.executable_path} ({plan.description}): {exc}"
            raise RenderError(msg, reason="render_launch") from None

    @property
    def sandboxed(self) -> bool | None:
        """Whether Chromium runs with its sandbox (None before the first launch)."""
        return None if self._plan is None else self._plan.sandboxed

    async def _take_page(self) -> _Pooled:
        browser = await self._ensure_browser()
        while self._idle:
            gen, ctx, page, state = self._idle.pop()
            if gen == self._generation and not page.is_closed():
                return gen, ctx, page, state
        ctx = await browser.new_context(
            user_agent=self.fetch_cfg.user_agent, service_workers="block", accept_downloads=False
        )
        state = _PageState()

        async def route(route: Route, request: Request) -> None:
            await self._route(route, request, state)

        await ctx.route("**/*", route)
        await ctx.route_web_socket(re.compile(".*"), _mock_websocket)
        page = await ctx.new_page()
        return self._generation, ctx, page, state

    async def _discard(self, ctx: BrowserContext | None) -> None:
        if ctx is None:
            return
        with contextlib.suppress(PlaywrightError):
            await ctx.close()

    async def render(self, url: str) -> tuple[bytes, float]:
        """Render ``url``; returns (the DOM serialised as UTF-8 HTML, seconds taken).

        Raises :class:`BlockedAddressError` for refused addresses and
        :class:`RenderError` (``render_timeout`` after ``cfg.timeout_s``,
        ``render_failed`` otherwise).
        """
        self.policy.check_url(url)
        return await self._render(url, None)

    async def render_archived(
        self, url: str, document: FetchResult, resolver: ArchiveResolver, when: datetime
    ) -> tuple[bytes, float]:
        """Render an archived capture of ``url``: ``document`` is what was
        captured, every other request is answered by ``resolver`` at ``when``
        (404 when it has nothing); nothing is fetched from the network."""
        return await self._render(url, _Archived(url, document, resolver, when))

    async def screenshot_archived(
        self, url: str, document: FetchResult, resolver: ArchiveResolver, when: datetime
    ) -> bytes:
        """A PNG of the viewport of an archived capture rendered as :meth:`render_archived` does
        (every request answered from the archive, nothing from the network): the curator's view."""
        archived = _Archived(url, document, resolver, when, screenshot=b"")
        await self._render(url, archived)
        return archived.screenshot or b""

    async def _render(self, url: str, archived: _Archived | None) -> tuple[bytes, float]:
        started = time.perf_counter()
        async with self._sem:
            for attempt in (1, 2):
                gen = self._generation
                ctx: BrowserContext | None = None
                try:
                    gen, ctx, page, state = await self._take_page()
                    state.archived = archived
                    async with asyncio.timeout(self.cfg.timeout_s):
                        if archived is not None:
                            html = await self._render_on(page, url)
                            if archived.screenshot is not None:
                                archived.screenshot = await page.screenshot(type="png")
                        else:
                            final = await self._prefetch(url)
                            try:
                                html = await self._render_on(page, final)
                            finally:
                                self._prefetched.pop(final, None)
                except (TimeoutError, PlaywrightTimeoutError):
                    await self._discard(ctx)
                    msg = f"rendering {url[:200]} took over {self.cfg.timeout_s}s"
                    raise RenderError(msg, reason="render_timeout") from None
                except PlaywrightError as exc:
                    await self._discard(ctx)
                    if "ERR_BLOCKED_BY_CLIENT" in str(exc):
                        raise BlockedAddressError(f"rendering {url[:200]}: the page address is refused") from None
                    browser = self._browser
                    dead = browser is None or not browser.is_connected() or gen != self._generation
                    if attempt == 1 and (dead or _looks_closed(exc)):
                        log.warning("render of %s hit a dead browser/page (%s); retrying", url[:200], str(exc)[:200])
                        # Relaunch unless another render already did (generation moved on).
                        await self._ensure_browser(force=gen == self._generation)
                        continue
                    msg = f"rendering {url[:200]} failed: {str(exc)[:300]}"
                    raise RenderError(msg, reason="render_failed") from None
                state.archived = None
                if archived is not None:
                    log.debug("archived render of %s: %d requests answered from the archive, %d not archived",
                              url[:200], archived.served, archived.missing)
                self._idle.append((gen, ctx, page, state))
                return html.encode("utf-8"), time.perf_counter() - started
        raise RenderError(f"rendering {url[:200]} failed after a browser restart", reason="render_failed")

    async def _prefetch(self, url: str) -> str:
        """Resolve the document's redirect chain (every hop guarded); returns the final URL.

        The final response is kept for the route handler, so the document is
        fetched once.
        """
        try:
            result = await self.fetcher.fetch(url, timeout_s=min(self.fetch_cfg.timeout_s, self.cfg.timeout_s))
        except AcquireError as exc:
            if exc.reason == "timeout":
                raise TimeoutError from None
            raise
        self._prefetched[result.url] = result
        return result.url

    async def _render_on(self, page: Page, url: str) -> str:
        await page.goto(url, wait_until="load", timeout=self.cfg.timeout_s * 1000)
        if self.cfg.settle_s > 0:
            # Long-polling pages never go idle: then take the DOM as it is.
            with contextlib.suppress(PlaywrightTimeoutError):
                await page.wait_for_load_state("networkidle", timeout=self.cfg.settle_s * 1000)
        return await page.content()

    async def _route(self, route: Route, request: Request, state: _PageState) -> None:
        """Perform the page's request with the guarded fetcher (or, rendering an
        archived capture, take it from the archive) and hand the answer to Chromium."""
        url = request.url
        if not url.lower().startswith(("http://", "https://")):
            await route.continue_()  # data:, blob:, about: never touch the network
            return
        if state.archived is not None:
            await self._route_archived(route, request, state.archived)
            return
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROP_REQUEST}
        prefetched = self._prefetched.pop(url, None) if request.is_navigation_request() else None
        try:
            result = prefetched or await self.fetcher.fetch(
                url,
                method=request.method,
                headers=headers,
                data=request.post_data_buffer,
                timeout_s=min(self.fetch_cfg.timeout_s, self.cfg.timeout_s),
            )
        except BlockedAddressError as exc:
            self.blocked_requests += 1
            log.warning("render: blocked request: %s", exc)
            await _quietly(route.abort("blockedbyclient"))
            return
        except AcquireError as exc:
            log.info("render: request %s failed (%s)", url[:200], exc.reason)
            await _quietly(route.abort("timedout" if exc.reason == "timeout" else "failed"))
            return
        out = {k: v for k, v in result.headers.items() if k.lower() not in _DROP_RESPONSE}
        await _quietly(route.fulfill(status=result.status, headers=out, body=result.body))

    async def _route_archived(self, route: Route, request: Request, archived: _Archived) -> None:
        url = request.url
        result: FetchResult | None
        if request.is_navigation_request() and request.frame.parent_frame is None and url == archived.url:
            result = archived.document
        elif request.method not in ("GET", "HEAD"):
            result = None  # an archive answers reads only
        else:
            try:
                result = await archived.resolver.resolve(url, archived.when)
            except Exception as exc:  # a route must always be answered, or the page waits for it
                log.warning("render: archive lookup of %s failed: %r", url[:200], exc)
                result = None
        if result is None:
            archived.missing += 1
            await _quietly(route.fulfill(status=404, body=b"", headers={"Content-Type": "text/plain"}))
            return
        archived.served += 1
        out = {k: v for k, v in result.headers.items() if k.lower() not in _DROP_RESPONSE}
        await _quietly(route.fulfill(status=result.status, headers=out, body=result.body))

    async def close(self) -> None:
        """Close pages, Chromium, the Playwright driver and the fetcher."""
        async with self._lock:
            self._closed = True
            self._idle.clear()
            if self._browser is not None:
                with contextlib.suppress(PlaywrightError):
                    await self._browser.close()
                self._browser = None
            if self._pw is not None:
                await self._pw.stop()
                self._pw = None
            if self._plan is not None:
                self._plan.cleanup()
                self._plan = None
        await self.fetcher.close()


def _looks_closed(exc: PlaywrightError) -> bool:
    text = str(exc).lower()
    return "closed" in text or "crash" in text or "disconnected" in text


async def _quietly(coro: object) -> None:
    """Await a route action; the page may be gone by now, which is fine."""
    try:
        await coro  # type: ignore[misc]
    except PlaywrightError as exc:
        log.debug("route action after page close: %s", exc)


def _mock_websocket(ws: WebSocketRoute) -> None:
    """Never connect a page's WebSocket: without connect_to_server it stays mocked."""
    log.debug("render: WebSocket %s mocked (not connected)", ws.url[:200])
