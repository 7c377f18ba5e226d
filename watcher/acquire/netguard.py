"""SSRF guard: which network addresses driftline may fetch from.

URLs in events are untrusted input.  A crawl of a hostile site, or a forged
event, can name ``http://169.254.169.254/latest/meta-data/`` or a host whose
DNS answer is ``127.0.0.1``.  The guard therefore checks the *resolved*
addresses: :class:`GuardedResolver` is the aiohttp resolver of every guarded
session, so aiohttp connects only to addresses that passed the check (no
window for DNS rebinding between check and connect).  IP-literal hosts skip
aiohttp's resolver, so :meth:`AddressPolicy.check_url` must run before every
request and every redirect hop; the HTTP fetcher does that.

``acquire.allow_addresses`` (CIDRs) admits otherwise refused addresses, e.g. a
test server on loopback or an archive on the private network.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver

from ..errors import AcquireError, BlockedAddressError

log = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Cloud metadata endpoints.  Most are link-local or private anyway; listed so
# they stay refused even if someone allow-lists a broad private range, and
# because some (Azure's wire server) are globally routable addresses.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean...
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.253",  # AWS DNS
        "169.254.169.123",  # AWS time
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::23",
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure wire server
        "192.0.0.192",  # Oracle Cloud
    )
)
METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.com",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
        "metadata.packet.net",
    }
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_v4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, Teredo, NAT64)."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_category(ip: IPAddress) -> str | None:
    """Why ``ip`` is refused (``loopback``, ``private``, ``metadata``...), ``None`` if public."""
    inner = _embedded_v4(ip)
    if inner is not None:
        cat = address_category(inner)
        if cat is not None:
            return cat
    if ip in METADATA_ADDRESSES:
        return "metadata"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link_local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_reserved:
        return "reserved"
    if ip.is_private:
        return "private"
    if not ip.is_global:
        return "not_global"  # shared (100.64/10), documentation, benchmarking ranges
    return None


class AddressPolicy:
    """Decides whether an address or URL may be fetched.

    ``allow`` lists CIDRs that are admitted even though refused by default
    (an allow-listed address is admitted, metadata addresses included: the
    operator asked for it explicitly).  ``trusted_hosts`` are host names
    (or IP literals) from the operator's configuration (replay and WARC
    servers): they are admitted whatever they resolve to, while redirects
    leaving them are checked like any other URL.
    """

    def __init__(self, allow: Iterable[str] = (), trusted_hosts: Iterable[str] = ()) -> None:
        self.trusted_hosts = frozenset(h.strip().rstrip(".").lower().strip("[]") for h in trusted_hosts if h.strip())
        nets: list[IPNetwork] = []
        for cidr in allow:
            try:
                nets.append(ipaddress.ip_network(cidr.strip(), strict=False))
            except ValueError as exc:
                raise AcquireError(f"allow_addresses: bad CIDR {cidr!r}: {exc}", reason="config") from None
        self.allow: tuple[IPNetwork, ...] = tuple(nets)

    def is_trusted_host(self, host: str) -> bool:
        return host.rstrip(".").lower().strip("[]") in self.trusted_hosts

    def _allowed(self, ip: IPAddress) -> bool:
        candidates = [ip]
        inner = _embedded_v4(ip)
        if inner is not None:
            candidates.append(inner)
        return any(c.version == net.version and c in net for c in candidates for net in self.allow)

    def refusal(self, address: str) -> str | None:
        """Category of refusal for ``address`` (an IP string), ``None`` if it may be fetched."""
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return "not_an_address"
        if self._allowed(ip):
            return None
        return address_category(ip)

    def check_address(self, address: str, host: str) -> None:
        """Raise :class:`BlockedAddressError` unless ``address`` may be fetched."""
        why = self.refusal(address)
        if why is not None:
            raise BlockedAddressError(f"refusing {host!r}: address {address} is {why}")

    def check_url(self, url: str) -> str:
        """Pre-flight check of one URL; returns its host.

        Refuses non-HTTP schemes, metadata host names and refused IP
        literals.  Host names are checked again, after resolution, by
        :class:`GuardedResolver`.
        """
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").rstrip(".").lower()
            _ = parts.port
        except ValueError:
            raise AcquireError(f"malformed URL {url[:200]!r}", reason="bad_url") from None
        if parts.scheme.lower() not in ("http", "https"):
            raise AcquireError(f"scheme {parts.scheme!r} is not fetched", reason="bad_url")
        if not host:
            raise AcquireError(f"URL has no host: {url[:200]!r}", reason="bad_url")
        if self.is_trusted_host(host):
            return host
        if host in METADATA_HOSTS:
            raise BlockedAddressError(f"refusing {host!r}: cloud metadata host name")
        try:
            ipaddress.ip_address(host.split("%", 1)[0])
        except ValueError:
            return host
        self.check_address(host, host)
        return host


class GuardedResolver(AbstractResolver):
    """aiohttp resolver that refuses a host if ANY of its addresses is refused.

    aiohttp connects to exactly the addresses a resolver returns, so checking
    here closes the DNS-rebinding window.  Refusing on any bad answer (rather
    than dropping it) also defeats answers that mix public and private addresses.
    """

    def __init__(self, policy: AddressPolicy, inner: AbstractResolver | None = None) -> None:
        self.policy = policy
        self._inner = inner or ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if host.rstrip(".").lower() in METADATA_HOSTS:
            raise BlockedAddressError(f"refusing {host!r}: cloud metadata host name")
        results = await self._inner.resolve(host, port, family)
        if self.policy.is_trusted_host(host):
            return results
        for result in results:
            self.policy.check_address(result["host"], host)
        log.debug("resolved %s to %s", host, [r["host"] for r in results])
        return results

    async def close(self) -> None:
        await self._inner.close()
