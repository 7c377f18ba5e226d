"""A local DOI resolver (handle API and redirects) plus publishers, for the
DOI monitor's tests and bench: all on loopback, never the internet.

``Landscape.pages[doi]`` is what a DOI's landing page serves right now
(change it between checks); ``Landscape.routes[doi]`` how the resolver gets
there (HTTP hops, a meta-refresh hop, a JavaScript hop, another host).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fixtures.webserver import serve


@dataclass
class Page:
    body: bytes | str
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    host: str = "a"  # which publisher host serves it: "a" or "b"


@dataclass
class Landscape:
    pages: dict[str, Page] = field(default_factory=dict)
    routes: dict[str, str] = field(default_factory=dict)  # doi -> "direct" | "hops" | "refresh" | "js"
    throttle: dict[str, list[int]] = field(default_factory=dict)  # doi -> statuses to answer first (429...)
    hits: dict[str, int] = field(default_factory=dict)  # GETs of each DOI's landing page
    heads: dict[str, int] = field(default_factory=dict)  # HEADs of it
    hit_times: dict[str, list[float]] = field(default_factory=dict)
    base: dict[str, str] = field(default_factory=dict)  # "resolver", "a", "b" -> base URL
    dynamic: Callable[[str, int], Page | None] | None = None  # (doi, times served) -> page, for unlisted DOIs

    def page(self, doi: str) -> Page | None:
        page = self.pages.get(doi)
        if page is None and self.dynamic is not None:
            page = self.dynamic(doi, self.hits.get(doi, 0))
        return page

    def landing(self, doi: str) -> str:
        page = self.page(doi)
        assert page is not None
        return f"{self.base[page.host]}/article/{doi}"


def _resolver_app(land: Landscape) -> web.Application:
    async def handle_api(request: web.Request) -> web.Response:
        doi = request.match_info["doi"].lower()
        if land.page(doi) is None:
            return web.json_response({"responseCode": 100, "handle": doi}, status=404)
        return web.json_response({"responseCode": 1, "handle": doi, "values": [
            {"index": 1, "type": "URL", "data": {"format": "string", "value": land.landing(doi)}},
            {"index": 100, "type": "HS_ADMIN", "data": {"format": "admin", "value": {}}}]})

    async def resolve(request: web.Request) -> web.Response:
        doi = request.match_info["doi"].lower()
        if land.page(doi) is None:
            return web.Response(status=404, text="DOI Not Found")
        route = land.routes.get(doi, "direct")
        target = land.landing(doi)
        if route == "hops":
            target = f"{land.base['a']}/hop1?to={target}"
        elif route == "refresh":
            target = f"{land.base['a']}/refresh?to={target}"
        elif route == "js":
            target = f"{land.base['a']}/js?to={target}"
        raise web.HTTPFound(target)

    app = web.Application()
    app.router.add_get(r"/api/handles/{doi:10\..+}", handle_api)
    app.router.add_get(r"/{doi:10\..+}", resolve)
    return app


def _publisher_app(land: Landscape, name: str) -> web.Application:
    async def hop1(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"/hop2?to={request.query['to']}")

    async def hop2(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently(request.query["to"])

    async def refresh(request: web.Request) -> web.Response:
        return web.Response(text=f'<html><head><meta http-equiv="refresh" content="0; url={request.query["to"]}">'
                            "</head><body>Redirecting</body></html>", content_type="text/html")

    async def js(request: web.Request) -> web.Response:
        return web.Response(text=f'<html><head><script>window.location.href = "{request.query["to"]}";</script>'
                            "</head><body></body></html>", content_type="text/html")

    async def article(request: web.Request) -> web.Response:
        doi = request.match_info["doi"].lower()
        if request.method == "HEAD":  # the monitor's HEAD beside its GET: counted apart, never throttled
            land.heads[doi] = land.heads.get(doi, 0) + 1
        else:
            land.hits[doi] = land.hits.get(doi, 0) + 1
            land.hit_times.setdefault(doi, []).append(asyncio.get_running_loop().time())
        queue = land.throttle.get(doi) if request.method != "HEAD" else None
        if queue:
            status = queue.pop(0)
            return web.Response(status=status, headers={"Retry-After": "1"}, text="slow down")
        page = land.page(doi)
        if page is None or page.host != name:
            return web.Response(status=404, text="<html><title>Page not found</title></html>",
                                content_type="text/html")
        if page.delay_s:
            await asyncio.sleep(page.delay_s)
        body = page.body.encode() if isinstance(page.body, str) else page.body
        return web.Response(status=page.status, body=body, headers={"Content-Type": page.content_type,
                                                                     **page.headers})

    app = web.Application()
    app.router.add_get("/hop1", hop1)
    app.router.add_get("/hop2", hop2)
    app.router.add_get("/refresh", refresh)
    app.router.add_get("/js", js)
    app.router.add_get(r"/article/{doi:10\..+}", article)
    return app


@asynccontextmanager
async def landscape(extra_hosts: int = 0) -> AsyncIterator[Landscape]:
    """Resolver on 127.0.0.1, publisher "a" on 127.0.0.2, publisher "b" (another domain) on 127.0.0.3,
    and ``extra_hosts`` more publishers "h0", "h1"... on 127.0.0.4 onwards."""
    from contextlib import AsyncExitStack

    land = Landscape()
    async with AsyncExitStack() as stack:
        land.base["resolver"] = await stack.enter_async_context(serve(_resolver_app(land), "127.0.0.1")) + "/"
        land.base["a"] = await stack.enter_async_context(serve(_publisher_app(land, "a"), "127.0.0.2"))
        land.base["b"] = await stack.enter_async_context(serve(_publisher_app(land, "b"), "127.0.0.3"))
        for i in range(extra_hosts):
            app = _publisher_app(land, f"h{i}")
            land.base[f"h{i}"] = await stack.enter_async_context(serve(app, f"127.0.0.{4 + i}"))
        yield land


def doi_config(land: Landscape, tmp: Any, **doi: Any) -> dict[str, Any]:
    """Config overlay for a monitor against ``land``."""
    return {
        "store": {"backend": "sqlite", "path": str(tmp / "doi.db")},
        "acquire": {"allow_addresses": ["127.0.0.0/8"]},
        "render": {"enabled": False},
        "doi": {"resolver_url": land.base["resolver"], "warc_dir": str(tmp / "warcs"), "per_host_delay_s": 0.0,
                "per_host_concurrency": 4, "jitter_s": 0.0, "backoff_s": 0.05, "timeout_s": 5.0, "status_port": 0,
                "mailto": "ops@example.org", **doi},
    }
