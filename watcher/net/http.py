"""One HTTP client for every fetch driftline makes (live pages, replay, WARC
ranges, the pages Chromium asks for, batch TimeMaps and their mementos).

Why hand-rolled redirects: aiohttp's automatic redirects would connect to
each new location before driftline could check it; here every hop passes
:meth:`AddressPolicy.check_url`, the guarded resolver and the guarded socket
factory (see :mod:`.netguard`).  Bodies are streamed and abandoned as soon
as they exceed the size cap, so a hostile "infinite" response costs at most
``max_bytes``.  Decompression is ours, not aiohttp's: the *decompressed*
bytes are counted against ``max_bytes`` while they are produced (a 292 kB
gzip bomb must not become 300 MB), and a body whose decompressed size
exceeds ``max_decompress_ratio`` times its compressed size is refused as a
``bomb`` (the same cap as ``engine.extract.max_decompress_ratio``, which the
callers pass).
Politeness: a semaphore and a minimum delay between request starts per host.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
import zlib
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver

from ..config import ExtractConfig, LiveFetchConfig
from ..errors import AcquireError, BlockedAddressError, TooLargeError
from ..model import REDIRECT_STATUSES
from .netguard import AddressPolicy, GuardedResolver, RefusedConnectionError, guarded_socket_factory

log = logging.getLogger(__name__)

_CHUNK = 64 * 1024
# Content codings driftline decodes itself (and asks for); anything else is refused.
ACCEPT_ENCODING = "gzip, deflate"
# The ratio cap applies past this many decoded bytes: small pages compress
# very well too, bombs are big.
_RATIO_FLOOR_BYTES = 1_000_000
_DECODE_STEP = 1 << 20
DEFAULT_DECOMPRESS_RATIO: float = ExtractConfig().max_decompress_ratio
# Called with each new chunk; returns the number of bytes wanted once known
# (reading stops there), None while unknown.
ExtentFn = Callable[[bytes], int | None]


@dataclass(frozen=True, slots=True)
class FetchResult:
    """A final (non-redirect) response.  ``redirects`` are the URLs hopped through."""

    url: str
    status: int
    headers: Mapping[str, str]
    body: bytes
    redirects: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def content_type(self) -> str | None:
        return self.headers.get("Content-Type")


@dataclass
class _HostSlot:
    sem: asyncio.Semaphore
    next_start: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class HostThrottle:
    """Per-host concurrency limit plus a minimum delay between request starts."""

    MAX_HOSTS = 10_000

    def __init__(self, concurrency: int, delay_s: float) -> None:
        self.concurrency = max(1, concurrency)
        self.delay_s = max(0.0, delay_s)
        self._slots: dict[str, _HostSlot] = {}

    def _slot(self, host: str) -> _HostSlot:
        slot = self._slots.get(host)
        if slot is None:
            if len(self._slots) >= self.MAX_HOSTS:
                self._prune()
            slot = self._slots[host] = _HostSlot(asyncio.Semaphore(self.concurrency))
        return slot

    def _prune(self) -> None:
        now = time.monotonic()
        for host, slot in list(self._slots.items()):
            if not slot.sem.locked() and slot.next_start <= now:
                del self._slots[host]

    @asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        slot = self._slot(host)
        async with slot.sem:
            if self.delay_s:
                async with slot.lock:
                    wait = slot.next_start - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    slot.next_start = time.monotonic() + self.delay_s
            yield


class HttpFetcher:
    """Fetches URLs with a size cap, manual redirects and (optionally) the SSRF guard.

    ``policy=None`` makes an *unguarded* fetcher, for endpoints the operator
    configured (replay and WARC servers); event-supplied URLs always go
    through a guarded one.
    """

    def __init__(
        self,
        cfg: LiveFetchConfig,
        policy: AddressPolicy | None,
        *,
        per_host_delay_s: float | None = None,
        resolver: AbstractResolver | None = None,
        max_decompress_ratio: float = DEFAULT_DECOMPRESS_RATIO,
    ) -> None:
        self.cfg = cfg
        self.max_decompress_ratio = max_decompress_ratio
        self.policy = policy
        self._inner_resolver = resolver  # the DNS resolver wrapped by the guard (default: threaded getaddrinfo)
        delay = cfg.per_host_delay_s if per_host_delay_s is None else per_host_delay_s
        self.throttle = HostThrottle(cfg.per_host_concurrency, delay)
        # Guarded session for untrusted hops; a plain one for the operator's trusted hosts (or policy=None).
        self._sessions: dict[bool, aiohttp.ClientSession] = {}

    def _get_session(self, guarded: bool = True) -> aiohttp.ClientSession:
        guarded = guarded and self.policy is not None
        session = self._sessions.get(guarded)
        if session is None or session.closed:
            resolver: AbstractResolver | None = self._inner_resolver
            if guarded and self.policy is not None:
                resolver = GuardedResolver(self.policy, self._inner_resolver)
                connector = aiohttp.TCPConnector(
                    resolver=resolver, limit=100, ttl_dns_cache=10,
                    socket_factory=guarded_socket_factory(self.policy),
                )
            else:
                connector = aiohttp.TCPConnector(resolver=resolver, limit=100, ttl_dns_cache=10)
            session = self._sessions[guarded] = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.cfg.timeout_s),
                headers={"User-Agent": self.cfg.user_agent, "Accept-Encoding": ACCEPT_ENCODING},
                cookie_jar=aiohttp.DummyCookieJar(),
                trust_env=False,
                auto_decompress=False,
            )
        return session

    async def close(self) -> None:
        for session in self._sessions.values():
            if not session.closed:
                await session.close()
        self._sessions.clear()

    def _check(self, url: str) -> str:
        if self.policy is not None:
            return self.policy.check_url(url)
        try:
            parts = urlsplit(url)
        except ValueError:
            raise AcquireError(f"malformed URL {url[:200]!r}", reason="bad_url") from None
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise AcquireError(f"not an http(s) URL: {url[:200]!r}", reason="bad_url")
        return parts.hostname.lower()

    def _guarded(self, host: str) -> bool:
        return self.policy is not None and not self.policy.is_trusted_host(host)

    async def fetch(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: Mapping[str, str] | None = None,
        data: bytes | None = None,
        follow_redirects: bool = True,
        max_bytes: int | None = None,
        extent: ExtentFn | None = None,
        timeout_s: float | None = None,
    ) -> FetchResult:
        """Fetch ``url``; the timeout covers the whole redirect chain and body.

        Raises :class:`AcquireError` subclasses: ``blocked_address``,
        ``too_large``, ``timeout``, ``too_many_redirects``, ``connect``,
        ``bad_url``.  Any final HTTP status is returned, not raised.
        """
        limit = self.cfg.max_bytes if max_bytes is None else max_bytes
        budget = self.cfg.timeout_s if timeout_s is None else timeout_s
        started = time.perf_counter()
        deadline = time.monotonic() + budget
        redirects: list[str] = []
        current = url
        while True:
            host = self._check(current)
            async with self.throttle.slot(host):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AcquireError(f"timed out after {budget:.1f}s fetching {url[:200]}", reason="timeout")
                status, resp_headers, body = await self._one_hop(
                    current, method, headers, data, limit, extent, remaining, budget, self._guarded(host)
                )
            location = resp_headers.get("Location")
            if follow_redirects and status in REDIRECT_STATUSES and location:
                if len(redirects) >= self.cfg.max_redirects:
                    raise AcquireError(
                        f"more than {self.cfg.max_redirects} redirects from {url[:200]}", reason="too_many_redirects"
                    )
                redirects.append(current)
                current = urljoin(current, location.strip())
                if status == 303 or (status in (301, 302) and method == "POST"):
                    method, data = "GET", None
                continue
            return FetchResult(
                url=current,
                status=status,
                headers=resp_headers,
                body=body,
                redirects=tuple(redirects),
                seconds=time.perf_counter() - started,
            )

    async def _one_hop(
        self,
        url: str,
        method: str,
        headers: Mapping[str, str] | None,
        data: bytes | None,
        limit: int,
        extent: ExtentFn | None,
        remaining: float,
        budget: float,
        guarded: bool = True,
    ) -> tuple[int, dict[str, str], bytes]:
        session = self._get_session(guarded)
        try:
            async with asyncio.timeout(remaining):
                async with session.request(
                    method, url, headers=dict(headers or {}), data=data, allow_redirects=False
                ) as resp:
                    resp_headers = _flat_headers(resp.headers)
                    if (resp.status in REDIRECT_STATUSES and "Location" in resp_headers) or method == "HEAD":
                        # a HEAD answer has no body; its Content-Length is the GET body's, not a size to cap
                        return resp.status, resp_headers, b""
                    # extent only understands the requested resource, not an error page
                    body = await _read_capped(resp, limit, extent if 200 <= resp.status < 300 else None, url,
                                              self.max_decompress_ratio)
                    return resp.status, resp_headers, body
        except TimeoutError:
            raise AcquireError(f"timed out after {budget:.1f}s fetching {url[:200]}", reason="timeout") from None
        except (BlockedAddressError, TooLargeError):
            raise
        except aiohttp.InvalidURL as exc:
            raise AcquireError(f"invalid URL {url[:200]}: {exc}", reason="bad_url") from None
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, RefusedConnectionError) or "refusing to connect to" in str(exc):
                raise BlockedAddressError(f"refusing {url[:200]}: {exc.os_error}") from None
            if isinstance(exc, aiohttp.ClientConnectorDNSError) or isinstance(exc.os_error, socket.gaierror):
                # the name does not resolve: its own reason, not a server's failure (a typo, a lapsed domain)
                raise AcquireError(f"cannot resolve the host of {url[:200]}: {exc.os_error}", reason="dns") from None
            raise AcquireError(f"cannot connect to {url[:200]}: {exc}", reason="connect") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise AcquireError(f"HTTP error fetching {url[:200]}: {exc!r}", reason="http_error") from None


def _flat_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers as a plain dict; repeated headers are joined with ``, ``."""
    out: dict[str, str] = {}
    lower: dict[str, str] = {}
    for key, value in headers.items():
        known = lower.get(key.lower())
        if known is None:
            lower[key.lower()] = key
            out[key] = value
        else:
            out[known] = out[known] + ", " + value
    return _CIDict(out)


class _CIDict(dict[str, str]):
    """A dict whose ``get``/``in`` ignore header-name case (keys keep their spelling)."""

    def __init__(self, data: Mapping[str, str]) -> None:
        super().__init__(data)
        self._lower = {k.lower(): k for k in data}

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        real = self._lower.get(key.lower())
        return super().get(real, default) if real is not None else default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._lower


class _Decoder:
    """Incremental decoder of one content coding, bounded in output per call."""

    def __init__(self, coding: str, url: str) -> None:
        coding = coding.strip().lower()
        self.url = url
        self._raw_deflate_tried = False
        if coding in ("", "identity"):
            self._z: zlib._Decompress | None = None
        elif coding in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif coding == "deflate":
            self._z = zlib.decompressobj()
        else:
            raise AcquireError(f"{url[:200]}: unsupported Content-Encoding {coding[:40]!r}", reason="content_encoding")
        self.coding = coding

    def feed(self, data: bytes, room: int) -> tuple[bytes, bytes]:
        """Decode ``data`` producing at most ``room + 1`` bytes; returns them and the input not yet decoded."""
        if self._z is None:
            return data, b""
        try:
            out = self._z.decompress(data, room + 1)
        except zlib.error:
            if self.coding == "deflate" and not self._raw_deflate_tried:
                # Some servers send raw deflate without the zlib header.
                self._raw_deflate_tried = True
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.feed(data, room)
            raise AcquireError(f"{self.url[:200]}: corrupt {self.coding} body", reason="bad_encoding") from None
        return out, self._z.unconsumed_tail


async def _read_capped(
    resp: aiohttp.ClientResponse, limit: int, extent: ExtentFn | None, url: str, max_ratio: float = 0.0
) -> bytes:
    """The body, decoded, at most ``limit`` decoded bytes (or ``extent``'s answer).

    Decompressed bytes are counted as they are produced, a bounded amount per
    input chunk, so a bomb stops at ``limit`` (plus one chunk) of memory.
    """
    declared = resp.content_length
    decoder = _Decoder(resp.headers.get("Content-Encoding", ""), url)
    if declared is not None and declared > limit and extent is None and decoder.coding in ("", "identity"):
        raise TooLargeError(f"{url[:200]}: Content-Length {declared} exceeds the {limit}-byte cap")
    buf = bytearray()
    wire = 0
    wanted: int | None = None
    async for chunk in resp.content.iter_chunked(_CHUNK):
        wire += len(chunk)
        pending = chunk
        while pending:
            # at most _DECODE_STEP decoded bytes per step, so the ratio cap acts before the size cap
            out, pending = decoder.feed(pending, max(0, min(limit - len(buf), _DECODE_STEP)))
            buf += out
            consumed = wire - len(pending)  # compressed bytes decoded so far
            if extent is not None and wanted is None and out:
                wanted = extent(out)
            if wanted is not None and len(buf) >= wanted:
                return bytes(buf[:wanted])
            if max_ratio > 0 and len(buf) > _RATIO_FLOOR_BYTES and len(buf) > max_ratio * consumed:
                raise TooLargeError(f"{url[:200]}: {decoder.coding} body expands more than {max_ratio:g}x "
                                    f"({consumed} bytes became over {len(buf)}): a decompression bomb",
                                    reason="bomb")
            if len(buf) > limit:
                raise TooLargeError(f"{url[:200]}: body exceeds the {limit}-byte cap"
                                    + (f" once decompressed ({decoder.coding}, {wire} bytes on the wire)"
                                       if decoder.coding not in ("", "identity") else ""))
    return bytes(buf)
