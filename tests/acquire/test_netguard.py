"""The address guard against every spelling of loopback, checked on a real canary server.

A canary aiohttp server listens on every local address (``::``, dual stack)
and counts the requests it receives.  Each hostile URL form is fetched
directly and through a redirect from an allowed "public" server (on
127.0.0.2, admitted by ``allow_addresses``); the guard must refuse each one
and the canary must count 0 hits.  A control fetch without the guard shows
that each form really reaches the canary, so the test can fail.
"""

from __future__ import annotations

import asyncio
import gzip
import socket
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import ClassVar

import aiohttp
import pytest
import pytest_asyncio
import yarl
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from tests.fixtures.webserver import serve
from watcher.acquire import AddressPolicy, HttpFetcher, RenderPool
from watcher.config import LiveFetchConfig, RenderConfig
from watcher.errors import AcquireError, BlockedAddressError, TooLargeError
from watcher.net.netguard import RefusedConnectionError, ip_literal, normalised_host

PUBLIC_HOST = "127.0.0.2"  # stands for a public server: admitted by the allow-list
ALLOW = (f"{PUBLIC_HOST}/32",)
LIVE = LiveFetchConfig(timeout_s=5.0, per_host_delay_s=0.0)

# {p} is the canary's port.  Each form reaches 127.0.0.1, ::1 or 0.0.0.0.
FORMS = [
    "http://①②⑦.0.0.1:{p}/",  # circled digits (NFKC)
    "http://１２７.０.０.１:{p}/",  # fullwidth digits and dots
    "http://127。0。0。1:{p}/",  # ideographic full stops
    "http://127．0．0．1:{p}/",  # fullwidth full stops
    "http://2130706433:{p}/",  # decimal
    "http://0177.0.0.1:{p}/",  # octal
    "http://0x7f.0.0.1:{p}/",  # hex
    "http://0x7f000001:{p}/",  # one hex number
    "http://127.1:{p}/",  # short form
    "http://127.0.1:{p}/",
    "http://[::ffff:127.0.0.1]:{p}/",  # IPv4-mapped IPv6
    "http://[::ffff:7f00:1]:{p}/",
    "http://[0:0:0:0:0:ffff:7f00:1]:{p}/",
    "http://[::1]:{p}/",
    "http://0.0.0.0:{p}/",
    "http://0:{p}/",
    "http://127.0.0.1.:{p}/",  # trailing dot
    "http://127.0.0.1..:{p}/",
    "http://good.example@127.0.0.1:{p}/",  # userinfo
    "http://user:pass@127.0.0.1:{p}/",
    "http://localhost:{p}/",  # a name resolving to loopback (/etc/hosts)
    "http://LocalHost:{p}/",
    "http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ:{p}/",  # enclosed letters (IDNA maps them to "localhost")
    "http://rebind.test:{p}/",  # resolver override: a name whose DNS answer is 127.0.0.1
    "http://mixed.test:{p}/",  # resolver override: one public and one loopback answer
]


class OverrideResolver(AbstractResolver):
    """DNS answers set by the test (the guard wraps it as it wraps the system resolver)."""

    ANSWERS: ClassVar[dict[str, list[str]]] = {
        "rebind.test": ["127.0.0.1"], "mixed.test": ["93.184.215.14", "127.0.0.1"],
    }

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
                      ) -> list[ResolveResult]:
        addresses = self.ANSWERS.get(host.rstrip(".").lower())
        if addresses is None:
            infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
            addresses = [str(info[4][0]) for info in infos]
        return [ResolveResult(hostname=host, host=a, port=port, family=socket.AF_INET6 if ":" in a else socket.AF_INET,
                              proto=0, flags=socket.AI_NUMERICHOST) for a in addresses]

    async def close(self) -> None:
        return None


@dataclass
class Canary:
    port: int
    hits: list[str] = field(default_factory=list)


@pytest_asyncio.fixture
async def canary() -> AsyncIterator[Canary]:
    hits: list[str] = []

    async def any_path(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="canary secret", content_type="text/html")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", any_path)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    await web.TCPSite(runner, "0.0.0.0", 0).start()  # 127.0.0.1, 127.0.0.2, 0.0.0.0 ...
    port = runner.addresses[0][1]
    await web.TCPSite(runner, "::", port).start()  # ::1 (asyncio binds IPv6 sockets v6-only)
    try:
        yield Canary(port, hits)
    finally:
        await runner.cleanup()


@pytest_asyncio.fixture
async def public() -> AsyncIterator[str]:
    """An admitted server that redirects wherever ?to= says, as a hostile public page would."""

    async def to(request: web.Request) -> web.Response:
        # The Location header exactly as given (HTTPFound would IDNA-normalise it first).
        return web.Response(status=302, headers={"Location": request.query["to"]})

    app = web.Application()
    app.router.add_get("/to", to)
    async with serve(app, PUBLIC_HOST) as base:
        yield base


def guarded() -> HttpFetcher:
    return HttpFetcher(LIVE, AddressPolicy(ALLOW), resolver=OverrideResolver())


async def test_every_form_reaches_the_canary_without_the_guard(canary: Canary) -> None:
    """Control: the forms this test refuses do reach the canary when nothing refuses them
    (aiohttp 3.14 itself refuses the legacy numeric forms, as an invalid URL; the guard
    refuses them by the address they encode, for clients and proxies that do not)."""
    fetcher = HttpFetcher(LIVE, None, resolver=OverrideResolver())
    reached: list[str] = []
    invalid: list[str] = []
    try:
        for form in FORMS:
            url = form.format(p=canary.port)
            if normalised_host(url) == "mixed.test":
                continue  # its first answer is not ours
            before = len(canary.hits)
            try:
                result = await fetcher.fetch(url)
            except AcquireError as exc:
                assert exc.reason == "bad_url", (url, exc)
                invalid.append(form)
                continue
            assert result.status == 200, url
            assert len(canary.hits) == before + 1, url
            reached.append(form)
    finally:
        await fetcher.close()
    assert len(reached) >= 14, reached
    assert "http://①②⑦.0.0.1:{p}/" in reached and "http://[::1]:{p}/" in reached
    assert "http://127.0.0.1.:{p}/" in invalid


@pytest.mark.parametrize("form", FORMS)
async def test_forms_are_refused_directly(canary: Canary, form: str) -> None:
    fetcher = guarded()
    try:
        with pytest.raises(BlockedAddressError):
            await fetcher.fetch(form.format(p=canary.port))
    finally:
        await fetcher.close()
    assert canary.hits == []


@pytest.mark.parametrize("form", FORMS)
async def test_forms_are_refused_after_a_redirect(canary: Canary, public: str, form: str) -> None:
    fetcher = guarded()
    target = form.format(p=canary.port)
    url = str(yarl.URL(f"{public}/to").with_query(to=target))
    try:
        hop = await fetcher.fetch(url, follow_redirects=False)
        assert hop.status == 302  # the public server itself is admitted
        assert hop.headers.get("Location") == target  # the form reaches the client as written
        with pytest.raises(BlockedAddressError):
            await fetcher.fetch(url)
    finally:
        await fetcher.close()
    assert canary.hits == []


async def test_socket_layer_refuses_without_the_pre_check(canary: Canary) -> None:
    """The guarded session alone (no check_url, no resolver for IP literals) refuses at connect()."""
    fetcher = guarded()
    session = fetcher._get_session(True)
    try:
        for form in ("http://①②⑦.0.0.1:{p}/", "http://１２７.０.０.１:{p}/", "http://[::1]:{p}/",
                     "http://[::ffff:127.0.0.1]:{p}/", "http://0.0.0.0:{p}/"):
            with pytest.raises(aiohttp.ClientConnectorError) as info:
                async with session.get(form.format(p=canary.port)):
                    pass
            assert isinstance(info.value.os_error, RefusedConnectionError), form
    finally:
        await fetcher.close()
    assert canary.hits == []


async def test_allow_list_and_trusted_hosts_still_admit(canary: Canary) -> None:
    allowed = HttpFetcher(LIVE, AddressPolicy(("127.0.0.0/8",)))
    trusted = HttpFetcher(LIVE, AddressPolicy((), trusted_hosts=["127.0.0.1"]))
    try:
        assert (await allowed.fetch(f"http://①②⑦.0.0.1:{canary.port}/a")).status == 200
        assert (await trusted.fetch(f"http://127.0.0.1:{canary.port}/b")).status == 200
        with pytest.raises(BlockedAddressError):  # trust is per host name, not per address
            await trusted.fetch(f"http://[::1]:{canary.port}/c")
    finally:
        await allowed.close()
        await trusted.close()
    assert canary.hits == ["/a", "/b"]


def test_normalised_host_and_legacy_literals() -> None:
    assert normalised_host("http://①②⑦.0.0.1/") == "127.0.0.1"
    assert normalised_host("http://127。0。0。1./x") == "127.0.0.1"
    assert normalised_host("http://u:p@Example.ORG:81/") == "example.org"
    assert ip_literal("2130706433") == "127.0.0.1"
    assert ip_literal("0177.0.0.1") == "127.0.0.1"
    assert ip_literal("0x7f.1") == "127.0.0.1"
    assert ip_literal("::ffff:7f00:1") == "::ffff:7f00:1"
    assert ip_literal("example.org") is None
    assert ip_literal("1.2.3.4.5") is None
    with pytest.raises(AcquireError):
        normalised_host("file:///etc/passwd")
    with pytest.raises(AcquireError):
        normalised_host("http:///nohost")
    policy = AddressPolicy()
    with pytest.raises(BlockedAddressError):
        policy.check_url("http://metadata.google.internal./computeMetadata/v1/")
    with pytest.raises(BlockedAddressError):
        policy.check_url("http://0xa9.0xfe.0xa9.0xfe/latest/")  # 169.254.169.254
    assert policy.check_url("http://example.org/") == "example.org"


async def test_chromium_requests_to_any_form_are_refused(canary: Canary, render_config: RenderConfig) -> None:
    """Real Chromium: a page on an admitted host pulls images, scripts, fetch() and
    iframes from every form (and through a redirect); none may reach the canary."""
    refs = [form.format(p=canary.port) for form in FORMS if "test:" not in form]

    async def page(request: web.Request) -> web.Response:
        tags = []
        for i, ref in enumerate(refs):
            tags.append(f'<img src="{ref}img{i}"><script src="{ref}js{i}"></script>')
            tags.append(f'<iframe src="/to?to={yarl.URL.build(path=ref).raw_path}"></iframe>')
        fetches = ";".join(f'fetch("{ref}f{i}").catch(function(){{}})' for i, ref in enumerate(refs))
        html = f"<html><body><p>probe</p>{''.join(tags)}<script>{fetches}</script></body></html>"
        return web.Response(text=html, content_type="text/html")

    async def to(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": request.query["to"]})

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/to", to)
    pool = RenderPool(render_config, AddressPolicy(ALLOW), fetch=LIVE)
    try:
        async with serve(app, PUBLIC_HOST) as base:
            html, _seconds = await pool.render(f"{base}/page")
        assert b"probe" in html
        assert pool.blocked_requests >= len(refs)
    finally:
        await pool.close()
    assert canary.hits == []


# --- the batch TimeMap fetcher goes through the same client -------------------------------------------------

def _gzip_bomb(decoded_mb: int) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * (1 << 20)
    return b"".join(z.compress(block) for _ in range(decoded_mb)) + z.flush()


BOMB = _gzip_bomb(300)


@dataclass
class Archive:
    base: str
    requests: list[str]


@pytest_asyncio.fixture
async def archive(canary: Canary) -> AsyncIterator[Archive]:
    """A Wayback-style archive on the admitted address whose TimeMap names hostile URI-Ms."""
    requests: list[str] = []
    forms = [f.format(p=canary.port) for f in FORMS if "test:" not in f]

    async def timemap(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        lines = ['<http://site.example/>; rel="original"']
        mementos = [f"{base}/web/2020010100000{i}/http://site.example/" for i in range(4)]
        mementos += forms  # URI-Ms pointing at the canary, however spelt
        for i, uri in enumerate(mementos):
            lines.append(f'<{uri}>; rel="memento"; datetime="Wed, 0{1 + i % 9} Jan 2020 00:00:{i:02d} GMT"')
        return web.Response(text=",\n".join(lines), content_type="application/link-format")

    # Redirects to another host are resolved inside the archive (in_archive), except those that name a
    # Wayback-style URI-M themselves: these leave the archive, so they must pass the guard.
    escape = "web/20200101000000/http://site.example/"

    async def memento(request: web.Request) -> web.Response:
        stamp = request.match_info["stamp"]
        requests.append(stamp)
        if stamp.startswith("20200101000000"):
            return web.Response(body=BOMB, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})
        if stamp.startswith("20200101000001"):  # a JavaScript redirect page to the circled-digit form
            t = forms[0] + escape
            return web.Response(text=f"<html><script>window.location.replace('{t}');</script></html>",
                                content_type="text/html")
        if stamp.startswith("20200101000002"):  # a meta refresh to the fullwidth form
            t = forms[1] + escape
            return web.Response(text=f'<meta http-equiv="refresh" content="0; url={t}">', content_type="text/html")
        return web.Response(status=302, headers={"Location": forms[2] + escape})

    app = web.Application()
    app.router.add_get("/timemap/{url:.*}", timemap)
    app.router.add_get("/web/{stamp}/{url:.*}", memento)
    async with serve(app, PUBLIC_HOST) as base:
        yield Archive(base, requests)


async def test_batch_timemap_uri_ms_are_guarded_and_bombs_capped(archive: Archive, canary: Canary) -> None:
    from watcher.config import Config
    from watcher.sources.timemap import load_timemap, timemap_captures

    cfg = Config.model_validate({"scan": {"timemap_timeout_s": 10.0},
                                 "acquire": {"allow_addresses": list(ALLOW)}})
    tm = await asyncio.to_thread(load_timemap, f"{archive.base}/timemap/http://site.example/", cfg)
    assert len(tm.mementos) == 4 + len([f for f in FORMS if "test:" not in f])
    caps = await asyncio.to_thread(timemap_captures, tm, cfg)
    by_uri = {c.uri_m: c for c in caps}
    bomb = by_uri[f"{archive.base}/web/20200101000000/http://site.example/"]
    assert bomb.content is None and bomb.error == "bomb"  # 292 kB on the wire, not 300 MB in memory
    for stamp in ("20200101000001", "20200101000002", "20200101000003"):
        redirected = by_uri[f"{archive.base}/web/{stamp}/http://site.example/"]
        assert redirected.content is None and redirected.error == "blocked_address", stamp
    assert all(c.uri_m is not None for c in caps)  # every capture names its memento
    hostile = [c for c in caps if c.uri_m is None or not c.uri_m.startswith(archive.base)]
    assert hostile and all(c.error == "blocked_address" and c.content is None for c in hostile)
    assert len(archive.requests) == 4
    assert canary.hits == []


async def test_decompression_caps_in_the_client(public: str) -> None:
    """Live client: decoded bytes count against max_bytes; the ratio cap stops a bomb earlier."""
    del public

    async def bomb(request: web.Request) -> web.Response:
        return web.Response(body=BOMB, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})

    async def fine(request: web.Request) -> web.Response:
        body = gzip.compress(b"<p>" + b"word " * 400_000 + b"</p>")  # 2 MB, very compressible but a page
        return web.Response(body=body, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})

    app = web.Application()
    app.router.add_get("/bomb", bomb)
    app.router.add_get("/fine", fine)
    async with serve(app, PUBLIC_HOST) as base:
        by_size = HttpFetcher(LiveFetchConfig(timeout_s=10, per_host_delay_s=0, max_bytes=20_000_000),
                              AddressPolicy(ALLOW), max_decompress_ratio=1e9)
        by_ratio = HttpFetcher(LiveFetchConfig(timeout_s=10, per_host_delay_s=0, max_bytes=200_000_000),
                               AddressPolicy(ALLOW), max_decompress_ratio=200)
        try:
            with pytest.raises(TooLargeError, match="once decompressed"):
                await by_size.fetch(f"{base}/bomb")
            with pytest.raises(TooLargeError, match="expands more than 200x") as bomb_err:
                await by_ratio.fetch(f"{base}/bomb")
            assert bomb_err.value.reason == "bomb"
            ok = await by_size.fetch(f"{base}/fine")
            assert ok.status == 200 and len(ok.body) == 2_000_007
        finally:
            await by_size.close()
            await by_ratio.close()
