"""Live fetching: SSRF guard (after DNS, on every redirect), timeouts, size cap, politeness."""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypedDict, Unpack

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from tests.fixtures.webserver import serve
from watcher.acquire import Acquirer, AddressPolicy, HttpFetcher, address_category
from watcher.config import AcquireConfig, Config, LiveFetchConfig
from watcher.errors import AcquireError, BlockedAddressError, TooLargeError
from watcher.events import CaptureEvent

LOOPBACK = ("127.0.0.1/32",)
UA = "driftline-test/1.0 (+https://example.invalid/bot)"


class LiveFields(TypedDict, total=False):
    """LiveFetchConfig's fields (typed as there), for ``live_cfg`` and ``cfg``."""

    timeout_s: float
    max_bytes: int
    max_redirects: int
    per_host_concurrency: int
    per_host_delay_s: float
    user_agent: str


def live_cfg(**kw: Unpack[LiveFields]) -> LiveFetchConfig:
    base: LiveFields = {"timeout_s": 5.0, "per_host_delay_s": 0.0, "user_agent": UA}
    base.update(kw)
    return LiveFetchConfig(**base)


def cfg(allow: tuple[str, ...] = LOOPBACK, **live: Unpack[LiveFields]) -> Config:
    return Config(acquire=AcquireConfig(order=("live",), allow_addresses=allow, live=live_cfg(**live)))


def ev(url: str) -> CaptureEvent:
    return CaptureEvent(url=url, timestamp=datetime(2024, 1, 1, tzinfo=UTC))


@dataclass
class SiteState:
    hits: list[str] = field(default_factory=list)
    ua: str | None = None
    active: int = 0
    max_active: int = 0
    starts: list[float] = field(default_factory=list)
    huge_sent: int = 0  # bytes /huge wrote before the client went away


@pytest.fixture
async def site() -> AsyncIterator[tuple[str, SiteState]]:
    state = SiteState()
    hits = state.hits

    async def page(request: web.Request) -> web.Response:
        hits.append(request.path)
        state.ua = request.headers.get("User-Agent")
        return web.Response(text="<html><body>hello live</body></html>", content_type="text/html")

    async def hop(request: web.Request) -> web.Response:
        hits.append(request.path)
        n = int(request.match_info["n"])
        raise web.HTTPFound("/page" if n == 0 else f"/hop/{n - 1}")

    async def to(request: web.Request) -> web.Response:
        hits.append(request.path)
        raise web.HTTPFound(request.query["url"])

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(10)
        return web.Response(text="late")

    async def huge(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()  # chunked, no Content-Length
        resp.content_type = "text/html"
        await resp.prepare(request)
        try:
            for _ in range(2000):  # up to 64 MB
                await resp.write(b"x" * 32768)
                state.huge_sent += 32768
        except (ConnectionResetError, ConnectionError):
            pass
        return resp

    async def declared(request: web.Request) -> web.Response:
        return web.Response(body=b"y" * 300_000, content_type="text/html")

    async def polite(request: web.Request) -> web.Response:
        state.active += 1
        state.max_active = max(state.max_active, state.active)
        state.starts.append(time.monotonic())
        await asyncio.sleep(0.05)
        state.active -= 1
        return web.Response(text="ok")

    async def status(request: web.Request) -> web.Response:
        return web.Response(status=int(request.match_info["code"]), text="<html>status page</html>",
                            content_type="text/html")

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/hop/{n}", hop)
    app.router.add_get("/to", to)
    app.router.add_get("/slow", slow)
    app.router.add_get("/huge", huge)
    app.router.add_get("/declared", declared)
    app.router.add_get("/polite/{i}", polite)
    app.router.add_get("/status/{code}", status)
    async with serve(app) as base:
        yield base, state


# -- address policy ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "category"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "metadata"),
        ("169.254.1.1", "link_local"),
        ("fe80::1", "link_local"),
        ("fd00:ec2::254", "metadata"),
        ("fc00::1", "private"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "not_global"),
        ("100.100.100.200", "metadata"),
        ("168.63.129.16", "metadata"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:169.254.169.254", "metadata"),
        ("64:ff9b::a00:1", "private"),
        ("2002:7f00:1::", "loopback"),
        ("8.8.8.8", None),
        ("93.184.216.34", None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_address_categories(address: str, category: str | None) -> None:
    assert address_category(ipaddress.ip_address(address)) == category


def test_policy_allow_list_and_url_checks() -> None:
    strict = AddressPolicy()
    assert strict.refusal("127.0.0.1") == "loopback"
    allow = AddressPolicy(["127.0.0.0/8", "fd00::/8"])
    assert allow.refusal("127.0.0.5") is None and allow.refusal("::ffff:127.0.0.1") is None
    assert allow.refusal("10.0.0.1") == "private" and allow.refusal("fd00:ec2::254") is None
    with pytest.raises(BlockedAddressError):
        strict.check_url("http://[::1]:8080/")
    with pytest.raises(BlockedAddressError):
        strict.check_url("http://169.254.169.254/latest/meta-data/")
    with pytest.raises(BlockedAddressError):
        strict.check_url("http://metadata.google.internal./computeMetadata/v1/")
    with pytest.raises(AcquireError) as err:
        strict.check_url("file:///etc/passwd")
    assert err.value.reason == "bad_url"
    assert strict.check_url("https://Example.ORG/x") == "example.org"
    with pytest.raises(AcquireError):
        AddressPolicy(["not-a-cidr"])


# -- fetching --------------------------------------------------------------------------


async def test_live_fetch_with_allow_list(site: tuple[str, SiteState]) -> None:
    base, state = site
    seen: list[tuple[str, float]] = []
    async with Acquirer(cfg(), on_fetch=lambda s, t: seen.append((s, t))) as acq:
        cap = await acq.get(ev(base + "/page"))
    assert cap.content == b"<html><body>hello live</body></html>" and cap.status == 200
    assert cap.source == "live" and cap.content_type is not None and cap.content_type.startswith("text/html")
    assert state.ua == UA
    assert [s for s, _ in seen] == ["live"] and seen[0][1] > 0


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_loopback_refused_without_allow_list(site: tuple[str, SiteState], host: str) -> None:
    base, state = site
    url = base.replace("127.0.0.1", host) + "/page"
    async with Acquirer(cfg(allow=())) as acq:
        with pytest.raises(BlockedAddressError) as err:
            await acq.get(ev(url))
    assert err.value.reason == "blocked_address"
    assert state.hits == []  # the server was never contacted


async def test_redirect_chain_and_limit(site: tuple[str, SiteState]) -> None:
    base, _state = site
    async with Acquirer(cfg(max_redirects=3)) as acq:
        cap = await acq.get(ev(base + "/hop/2"))
        assert cap.content is not None and b"hello live" in cap.content
        assert cap.redirects == (base + "/hop/2", base + "/hop/1", base + "/hop/0")
        with pytest.raises(AcquireError) as err:
            await acq.get(ev(base + "/hop/5"))
        assert err.value.reason == "too_many_redirects"


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.2:{port}/page",  # loopback, but outside the allow-list
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://[::1]:{port}/page",
        "http://0.0.0.0:{port}/page",
        "http://[::ffff:127.0.0.2]:{port}/page",  # IPv4-mapped spelling of a refused address
    ],
)
async def test_redirect_from_allowed_host_to_blocked_address(site: tuple[str, SiteState], target: str) -> None:
    base, state = site
    port = base.rsplit(":", 1)[1]
    async with serve(web.Application(), host="127.0.0.2") as other:  # would answer if contacted
        del other
        async with Acquirer(cfg()) as acq:
            with pytest.raises(BlockedAddressError):
                await acq.get(ev(f"{base}/to?url={target.format(port=port)}"))
    assert state.hits == ["/to"]


class FixedResolver(AbstractResolver):
    """Stands in for DNS answers (e.g. a rebinding attacker's): every name -> the given addresses."""

    def __init__(self, *addresses: str) -> None:
        self.addresses = addresses
        self.calls = 0

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.calls += 1
        return [ResolveResult(hostname=host, host=a, port=port, family=socket.AF_INET, proto=0,
                              flags=socket.AI_NUMERICHOST) for a in self.addresses]

    async def close(self) -> None:
        return None


async def test_resolved_address_is_checked_and_then_used(site: tuple[str, SiteState]) -> None:
    """A public-looking name that resolves to loopback is refused; the checked address is the one connected to."""
    base, state = site
    port = base.rsplit(":", 1)[1]
    rebinding = FixedResolver("127.0.0.1")
    guarded = HttpFetcher(live_cfg(), AddressPolicy(), resolver=rebinding)
    try:
        with pytest.raises(BlockedAddressError):
            await guarded.fetch(f"http://innocent.example:{port}/page")
    finally:
        await guarded.close()
    assert rebinding.calls == 1 and state.hits == []
    mixed = HttpFetcher(live_cfg(), AddressPolicy(), resolver=FixedResolver("93.184.216.34", "10.0.0.7"))
    try:
        with pytest.raises(BlockedAddressError):
            await mixed.fetch("http://mixed.example/")
    finally:
        await mixed.close()
    # with loopback allow-listed, the same name is fetched from the address the resolver returned
    allowed = HttpFetcher(live_cfg(), AddressPolicy(LOOPBACK), resolver=FixedResolver("127.0.0.1"))
    try:
        result = await allowed.fetch(f"http://innocent.example:{port}/page")
    finally:
        await allowed.close()
    assert result.status == 200 and state.hits == ["/page"]


async def test_timeout(site: tuple[str, SiteState]) -> None:
    base, _ = site
    started = time.monotonic()
    async with Acquirer(cfg(timeout_s=0.5)) as acq:
        with pytest.raises(AcquireError) as err:
            await acq.get(ev(base + "/slow"))
    assert err.value.reason == "timeout"
    # Before the server answers (10 s): the timeout fired.  Not a speed: 0.5 s against 10 s.
    assert time.monotonic() - started < 9


async def test_size_cap_streamed_and_declared(site: tuple[str, SiteState]) -> None:
    base, state = site
    async with Acquirer(cfg(max_bytes=100_000)) as acq:
        with pytest.raises(TooLargeError) as err:
            await acq.get(ev(base + "/huge"))
        assert err.value.reason == "too_large"
        # Aborted early, not after 64 MB: counted in bytes the server could write before the client hung
        # up (the cap plus socket buffers), not in seconds, which a loaded machine stretches.
        deadline = time.monotonic() + 60
        sent = -1
        while state.huge_sent != sent and time.monotonic() < deadline:  # until the server stops writing
            sent = state.huge_sent
            await asyncio.sleep(0.5)
        assert state.huge_sent < 16 * 2**20, state.huge_sent
        with pytest.raises(TooLargeError):
            await acq.get(ev(base + "/declared"))


async def test_per_host_delay_and_concurrency(site: tuple[str, SiteState]) -> None:
    base, state = site
    fetcher = HttpFetcher(live_cfg(per_host_delay_s=0.2, per_host_concurrency=1), AddressPolicy(LOOPBACK))
    try:
        results = await asyncio.gather(*(fetcher.fetch(f"{base}/polite/{i}") for i in range(4)))
    finally:
        await fetcher.close()
    assert [r.status for r in results] == [200] * 4
    assert state.max_active == 1
    starts = sorted(state.starts)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= 0.18


async def test_live_status_handling(site: tuple[str, SiteState]) -> None:
    base, _ = site
    async with Acquirer(cfg()) as acq:
        gone = await acq.get(ev(base + "/status/404"))
        assert gone.status == 404 and gone.content == b"<html>status page</html>"
        for code in (503, 429):
            with pytest.raises(AcquireError) as err:
                await acq.get(ev(f"{base}/status/{code}"))
            assert err.value.reason == "http_status"
        with pytest.raises(AcquireError) as err:
            await acq.get(ev("ftp://127.0.0.1/file"))
        assert err.value.reason == "bad_url"
