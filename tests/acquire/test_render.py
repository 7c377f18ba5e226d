"""Rendering with real Chromium: script-built pages, SSRF routing, timeouts, crash recovery."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import pytest_asyncio
from aiohttp import WSMsgType, web

from tests.fixtures.browser import chromium_browser_pids
from tests.fixtures.webserver import serve
from watcher.acquire import Acquirer, RenderPool, count_scripts, quick_word_count, rendered_capture, wants_render
from watcher.config import AcquireConfig, Config, LiveFetchConfig, RenderConfig
from watcher.errors import BlockedAddressError, RenderError
from watcher.events import CaptureEvent
from watcher.model import Capture

SCRIPT_PAGE = b"""<!doctype html><html><head><title>app</title>
<script src="/static/a.js"></script><script src="/static/b.js"></script>
<script>
setTimeout(function () {
  document.body.innerHTML = '<main><h1>Quarterly report</h1><p>' + PARTS.join(' ') + '</p></main>';
}, 50);
</script></head><body><div id="app">Loading</div></body></html>"""


# One event loop for the module: the session-scoped Chromium pool lives in the session loop,
# and the servers the browser talks to must run in the same loop.
session_loop = pytest.mark.asyncio(loop_scope="session")


@pytest_asyncio.fixture(loop_scope="session")
async def app_site() -> AsyncIterator[tuple[str, dict[str, int]]]:
    counts = {"secret": 0, "ws": 0, "slow": 0}

    async def page(request: web.Request) -> web.Response:
        return web.Response(body=SCRIPT_PAGE, content_type="text/html")

    async def script_a(request: web.Request) -> web.Response:
        return web.Response(text="var PARTS = ['built', 'by', 'javascript'];", content_type="application/javascript")

    async def script_b(request: web.Request) -> web.Response:
        return web.Response(text="PARTS.push('kumquat');", content_type="application/javascript")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("/app/")

    async def probe(request: web.Request) -> web.Response:
        """A page on an allowed host that tries to reach a refused one (img, fetch) and a WebSocket."""
        target = request.query["target"]
        ws = request.query["ws"]
        html = f"""<html><body><p>probe page</p><img src="{target}/img">
<script>fetch("{target}/fetch").catch(function(){{}});
try {{ new WebSocket("{ws}"); }} catch (e) {{}}</script></body></html>"""
        return web.Response(text=html, content_type="text/html")

    async def ws_handler(request: web.Request) -> web.WebSocketResponse:
        counts["ws"] += 1
        sock = web.WebSocketResponse()
        await sock.prepare(request)
        async for msg in sock:
            if msg.type == WSMsgType.CLOSE:
                break
        return sock

    async def hanging(request: web.Request) -> web.Response:
        counts["slow"] += 1
        await asyncio.sleep(30)
        return web.Response(text="")

    async def slow_page(request: web.Request) -> web.Response:
        body = '<html><body>x<script src="/hang.js"></script></body></html>'
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/app/", page)
    app.router.add_get("/static/a.js", script_a)
    app.router.add_get("/static/b.js", script_b)
    app.router.add_get("/moved", moved)
    app.router.add_get("/probe", probe)
    app.router.add_get("/ws", ws_handler)
    app.router.add_get("/hang.js", hanging)
    app.router.add_get("/slow", slow_page)
    async with serve(app) as base:
        yield base, counts


@pytest_asyncio.fixture(loop_scope="session")
async def secret_site() -> AsyncIterator[tuple[str, list[str]]]:
    """A server on 127.0.0.2: loopback, but outside the tests' allow-list (127.0.0.1/32)."""
    hits: list[str] = []

    async def anything(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="secret")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", anything)
    async with serve(app, host="127.0.0.2") as base:
        yield base, hits


@pytest.mark.browser
@session_loop
async def test_script_built_page_renders(render_pool_session: RenderPool, app_site: tuple[str, dict[str, int]]) -> None:
    base, _ = app_site
    cfg = Config(acquire=AcquireConfig(order=("live",), allow_addresses=("127.0.0.1/32",),
                                       live=LiveFetchConfig(per_host_delay_s=0.0)))
    async with Acquirer(cfg) as acq:
        raw = await acq.get(CaptureEvent(url=base + "/app/", timestamp=datetime(2024, 1, 1, tzinfo=UTC)))
    assert raw.content is not None and b"kumquat" not in raw.content and b"Loading" in raw.content
    assert count_scripts(raw.content) == 3

    html, seconds = await render_pool_session.render(base + "/app/")
    text = html.decode("utf-8")
    assert "Quarterly report" in text and "built by javascript kumquat" in text
    assert "Loading" not in text
    assert 0 < seconds < 15
    rendered = rendered_capture(raw, html)
    assert rendered.content == html and rendered.digest == raw.effective_digest and rendered.source == "live+render"
    # pages are reused: a second render works on the same pool
    again, _ = await render_pool_session.render(base + "/moved")  # redirect resolved before navigation
    assert b"built by javascript kumquat" in again


@pytest.mark.browser
@session_loop
async def test_acquirer_renders_script_built_live_pages(
    render_pool_session: RenderPool, app_site: tuple[str, dict[str, int]]
) -> None:
    base, _ = app_site
    cfg = Config(acquire=AcquireConfig(order=("live",), allow_addresses=("127.0.0.1/32",),
                                       live=LiveFetchConfig(per_host_delay_s=0.0)))
    seen: list[str] = []
    async with Acquirer(cfg, on_fetch=lambda s, t: seen.append(s), renderer=render_pool_session) as acq:
        cap = await acq.get(CaptureEvent(url=base + "/app/", timestamp=datetime(2024, 1, 1, tzinfo=UTC)))
        assert cap.content is not None and b"built by javascript kumquat" in cap.content
        assert cap.source == "live+render" and seen == ["live", "render"]
        probe = CaptureEvent(url=base + "/probe?target=x&ws=y", timestamp=datetime(2024, 1, 1, tzinfo=UTC))
        plain = await acq.get(probe)
        assert plain.source == "live" and seen == ["live", "render", "live"]  # 1 script: not rendered


@pytest.mark.browser
@session_loop
async def test_render_routes_every_request_through_the_guard(
    render_pool_session: RenderPool, app_site: tuple[str, dict[str, int]], secret_site: tuple[str, list[str]]
) -> None:
    base, counts = app_site
    secret, hits = secret_site
    blocked_before = render_pool_session.blocked_requests
    ws_url = base.replace("http://", "ws://") + "/ws"
    html, _ = await render_pool_session.render(f"{base}/probe?target={secret}&ws={ws_url}")
    assert b"probe page" in html
    await asyncio.sleep(0.3)
    assert hits == []  # neither the <img> nor fetch() reached the refused address
    assert render_pool_session.blocked_requests >= blocked_before + 2
    assert counts["ws"] == 0  # WebSockets are mocked, never connected
    with pytest.raises(BlockedAddressError):
        await render_pool_session.render(secret + "/page")
    with pytest.raises(BlockedAddressError):
        await render_pool_session.render("http://169.254.169.254/latest/meta-data/")
    assert hits == []


@pytest.mark.browser
@session_loop
async def test_loopback_refused_without_allow_list(
    render_config: RenderConfig, app_site: tuple[str, dict[str, int]]
) -> None:
    base, _ = app_site
    pool = RenderPool(render_config, ())
    try:
        with pytest.raises(BlockedAddressError):
            await pool.render(base + "/app/")
        with pytest.raises(BlockedAddressError):
            await pool.render(base.replace("127.0.0.1", "localhost") + "/app/")
    finally:
        await pool.close()


@pytest.mark.browser
@session_loop
async def test_render_timeout(render_config: RenderConfig, app_site: tuple[str, dict[str, int]]) -> None:
    base, counts = app_site
    cfg = render_config.model_copy(update={"timeout_s": 1.5, "pages": 1})
    pool = RenderPool(cfg, ("127.0.0.1/32",))
    try:
        with pytest.raises(RenderError) as err:
            await pool.render(base + "/slow")
        assert err.value.reason == "render_timeout"
        assert counts["slow"] == 1
        # The pool is usable after a timeout.  With a generous timeout now: on a loaded machine a normal
        # page took over 1.5 s too, which says nothing about the pool.
        pool.cfg = cfg.model_copy(update={"timeout_s": 120.0})
        html, _ = await pool.render(base + "/app/")
        assert b"kumquat" in html
    finally:
        await pool.close()


@pytest.mark.browser
@session_loop
async def test_browser_restarts_after_sigkill(
    render_config: RenderConfig, app_site: tuple[str, dict[str, int]]
) -> None:
    base, _ = app_site
    others = set(chromium_browser_pids())  # e.g. the session pool's browser: left alone
    pool = RenderPool(render_config, ("127.0.0.1/32",))
    try:
        first, _ = await pool.render(base + "/app/")
        assert b"kumquat" in first
        mine = set(chromium_browser_pids()) - others
        assert len(mine) == 1, "expected exactly one Chromium browser process for this pool"
        for pid in mine:
            os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.2)
        second, _ = await pool.render(base + "/app/")
        assert b"kumquat" in second
        assert pool.restarts == 1
        relaunched = set(chromium_browser_pids()) - others
        assert len(relaunched) == 1 and not (relaunched & mine)
    finally:
        await pool.close()


# -- wants_render (no browser) -------------------------------------------------------


def _cap(url: str = "https://app.example.org/report", ctype: str = "text/html") -> Capture:
    return Capture(url=url, timestamp=datetime(2024, 1, 1, tzinfo=UTC), content=b"<html></html>", content_type=ctype)


def test_wants_render_rules() -> None:
    auto = RenderConfig()
    assert wants_render(None, _cap(), text_word_count=3, script_count=5, cfg=auto)
    assert not wants_render(None, _cap(), text_word_count=300, script_count=5, cfg=auto)
    assert not wants_render(None, _cap(), text_word_count=3, script_count=1, cfg=auto)
    assert not wants_render(None, _cap(ctype="application/pdf"), text_word_count=0, script_count=9, cfg=auto)
    assert not wants_render(None, _cap(), 3, 5, RenderConfig(enabled=False))
    assert not wants_render(None, _cap(), 3, 5, RenderConfig(auto=False))
    by_host = RenderConfig(auto=False, hosts=("example.org",))
    assert wants_render(None, _cap(), 500, 0, by_host)  # subdomain of a configured host
    assert not wants_render(None, _cap("https://notexample.org/"), 500, 0, by_host)
    by_pattern = RenderConfig(auto=False, url_patterns=(r"/report$",))
    assert wants_render(None, _cap(), 500, 0, by_pattern)
    assert not wants_render(None, _cap("https://app.example.org/other"), 500, 0, by_pattern)
    event = CaptureEvent(url="https://app.example.org/report", timestamp=datetime(2024, 1, 1, tzinfo=UTC),
                         mimetype="text/html")
    assert wants_render(event, _cap(ctype=""), 0, 4, auto)


def test_quick_word_count() -> None:
    html = b"<html><head><style>p {x: y}</style><script>var a = 'one two three';</script></head>"
    html += b"<body><p>four five</p><noscript>six</noscript> seven</body></html>"
    assert quick_word_count(html) == 3


def test_count_scripts() -> None:
    assert count_scripts(b"<SCRIPT src=x></SCRIPT><script>1</script><scripts>") == 2
    assert count_scripts("<p>no scripts</p>") == 0
