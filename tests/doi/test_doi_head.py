"""HEAD beside GET: publishers answer them differently, so a check sends a
HEAD to the landing URL the GET reached (``doi.head_check``) through the
guarded client, records its status and final URL next to the GET chain, and
flags a disagreement.  A local aiohttp server answers HEAD and GET
differently on purpose."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.fixtures import doi_pages as dp
from tests.fixtures.webserver import serve
from watcher.config import load_config
from watcher.doi.lists import DoiEntry
from watcher.doi.schedule import open_monitor

ARTS = {name: dp.article(70 + i) for i, name in enumerate(["agree", "refuse", "login", "forbid"])}


def _apps(seen: list[tuple[str, str]], base: dict[str, str]) -> tuple[web.Application, web.Application]:
    async def handles(request: web.Request) -> web.Response:
        name = request.match_info["doi"].split("/")[-1]
        return web.json_response({"responseCode": 1, "values": [
            {"index": 1, "type": "URL", "data": {"format": "string", "value": f"{base['pub']}/article/{name}"}}]})

    async def resolve(request: web.Request) -> web.Response:
        name = request.match_info["doi"].split("/")[-1]
        raise web.HTTPFound(f"{base['pub']}/article/{name}")

    async def article(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        seen.append((request.method, name))
        if request.method == "HEAD":
            if name == "refuse":
                return web.Response(status=405, headers={"Allow": "GET"})
            if name == "login":
                raise web.HTTPFound(f"{base['pub']}/login")
            if name == "forbid":
                return web.Response(status=403)
        return web.Response(text=dp.highwire(ARTS[name], 0), content_type="text/html")

    async def login(request: web.Request) -> web.Response:
        seen.append((request.method, "login-page"))
        return web.Response(text="<html><title>Sign in</title><body>Sign in</body></html>", content_type="text/html")

    resolver = web.Application()
    resolver.router.add_get(r"/api/handles/{doi:10\..+}", handles)
    resolver.router.add_get(r"/{doi:10\..+}", resolve)
    pub = web.Application()
    pub.router.add_get("/article/{name}", article)  # add_get routes HEAD to the handler too
    pub.router.add_get("/login", login)
    return resolver, pub


def _config(tmp: Path, resolver: str, **doi: Any) -> dict[str, Any]:
    return {
        "store": {"backend": "sqlite", "path": str(tmp / "doi.db")},
        "acquire": {"allow_addresses": ["127.0.0.0/8"]},
        "render": {"enabled": False},
        "doi": {"resolver_url": resolver, "warc_dir": str(tmp / "warcs"), "per_host_delay_s": 0.0, "jitter_s": 0.0,
                "timeout_s": 5.0, "status_port": 0, "retries": 0, **doi},
    }


async def test_head_recorded_beside_get_and_disagreement_flagged(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []
    base: dict[str, str] = {}
    resolver_app, pub_app = _apps(seen, base)
    async with AsyncExitStack() as stack:
        base["resolver"] = await stack.enter_async_context(serve(resolver_app, "127.0.0.1")) + "/"
        base["pub"] = await stack.enter_async_context(serve(pub_app, "127.0.0.2"))
        cfg = load_config(overrides=_config(tmp_path, base["resolver"]))
        assert cfg.doi.head_check  # the default
        async with open_monitor(cfg) as mon:
            results = {name: await mon.check(DoiEntry(f"10.5555/{name}", ARTS[name].title)) for name in ARTS}
        got = {name: r.record for name, r in results.items()}
        for name in ARTS:
            assert ("HEAD", name) in seen and ("GET", name) in seen, name
            assert got[name]["outcome"] == "resolved" and got[name]["http_status"] == 200
            assert got[name]["change"] == "baseline"  # HEAD never decides the verdict
            head = got[name]["resolution"]["head"]
            assert head["method"] == "HEAD" and head["url"] == f"{base['pub']}/article/{name}"
            assert got[name]["resolution"]["hops"][-1]["method"] == "GET"
        assert got["agree"]["head_status"] == 200 and got["agree"]["head_disagrees"] is None
        assert got["agree"]["head_final_url"] == f"{base['pub']}/article/agree"
        assert got["refuse"]["head_status"] == 405
        assert got["refuse"]["head_disagrees"] == "HEAD answered 405, GET 200"
        assert got["forbid"]["head_disagrees"] == "HEAD answered 403, GET 200"
        assert got["login"]["head_status"] == 200 and got["login"]["head_final_url"] == f"{base['pub']}/login"
        assert got["login"]["resolution"]["head"]["redirects"] == 1
        assert got["login"]["head_disagrees"] == (f"HEAD ends at {base['pub']}/login, GET at "
                                                  f"{base['pub']}/article/login")

        # doi.head_check false: no HEAD is sent, none recorded
        seen.clear()
        cfg = load_config(overrides=_config(tmp_path / "off", base["resolver"], head_check=False))
        async with open_monitor(cfg) as mon:
            r = await mon.check(DoiEntry("10.5555/refuse", ARTS["refuse"].title))
        assert [m for m, _ in seen] == ["GET"]
        assert r.record["head_status"] is None and r.record["resolution"]["head"] is None
