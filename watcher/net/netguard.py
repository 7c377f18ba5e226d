"""SSRF guard: which network addresses driftline may fetch from.

URLs in events are untrusted input.  A crawl of a hostile site, or a forged
event, can name ``http://169.254.169.254/latest/meta-data/``, a host whose
DNS answer is ``127.0.0.1``, or a loopback address spelt so that a string
check misses it: ``http://①②⑦.0.0.1/``, ``http://１２７.０.０.１/`` and
``http://127。0。0。1/`` are all ``127.0.0.1`` once the URL library applies
IDNA/NFKC, and ``2130706433``, ``0177.0.0.1``, ``0x7f.0.0.1``, ``127.1`` are
legacy spellings the C resolver accepts.  Three layers, each on what is
really used:

1. :meth:`AddressPolicy.check_url` checks the host *as the HTTP client will
   see it* (yarl's normalised host, legacy numeric forms decoded), for a clear
   early error;
2. :class:`GuardedResolver` checks every address a host name resolves to
   (refusing the host if any answer is refused: no mixed answers);
3. :func:`guarded_socket_factory` checks the socket address right before
   ``connect()``, for every connection (each redirect hop, IP literals that
   skip the resolver, happy-eyeballs fallbacks).  This is the layer that
   cannot be talked around by spelling: it sees the bytes handed to the kernel.

``acquire.allow_addresses`` (CIDRs) admits otherwise refused addresses, e.g. a
test server on loopback or an archive on the private network.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

import yarl
from aiohappyeyeballs import AddrInfoType, SocketFactoryType
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
            raise BlockedAddressError(f"refusing {host!r}: address {address} is {why}{admit_hint(why, address)}")

    def check_url(self, url: str) -> str:
        """Pre-flight check of one URL; returns its normalised host.

        Refuses non-HTTP schemes, metadata host names and refused addresses,
        however spelt (see :func:`normalised_host`).  Host names are checked
        again after resolution (:class:`GuardedResolver`) and every address
        right before connecting (:func:`guarded_socket_factory`).
        """
        host = normalised_host(url)
        if self.is_trusted_host(host):
            return host
        if host in METADATA_HOSTS:
            raise BlockedAddressError(f"refusing {host!r}: cloud metadata host name")
        literal = ip_literal(host)
        if literal is not None:
            self.check_address(literal, host)
        return host


def admit_hint(why: str, address: str) -> str:
    """What to set to fetch a refused address on purpose (a local resolver, archive or test site):
    the refusal names the key, so a user need not look for it in the docs.  Never for a cloud
    metadata address (admitting one is for an operator who already knows the key)."""
    if why not in ("loopback", "private", "link_local", "reserved", "not_global"):
        return ""
    cidr = f"{address}/{128 if ':' in address else 32}"
    return (f" (to fetch it on purpose, admit it with acquire.allow_addresses, e.g. "
            f"DRIFTLINE__ACQUIRE__ALLOW_ADDRESSES='[\"{cidr}\"]')")


def ip_literal(host: str) -> str | None:
    """The IP address ``host`` spells, in canonical form, or ``None`` for a name.

    Accepts what the C library's ``inet_aton`` accepts (``2130706433``,
    ``0177.0.0.1``, ``0x7f.0.0.1``, ``127.1``): a client or a proxy that hands
    such a host to ``getaddrinfo`` connects to the address it encodes.
    """
    bare = host.strip("[]").split("%", 1)[0]
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        pass
    if bare and all(part and (part.isdigit() or part.lower().startswith("0x")) for part in bare.split(".")):
        try:
            return socket.inet_ntoa(socket.inet_aton(bare))
        except OSError:
            return None
    return None


def normalised_host(url: str) -> str:
    """The host of ``url`` as aiohttp will connect to it (IDNA/NFKC applied, lower
    case, trailing dots and brackets removed); raises ``bad_url`` errors."""
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        raise AcquireError(f"malformed URL {url[:200]!r}", reason="bad_url") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise AcquireError(f"scheme {parts.scheme!r} is not fetched", reason="bad_url")
    try:
        raw = yarl.URL(url).raw_host or ""
    except (ValueError, UnicodeError):
        raise AcquireError(f"malformed URL {url[:200]!r}", reason="bad_url") from None
    host = raw.rstrip(".").lower().strip("[]")
    if not host:
        raise AcquireError(f"URL has no host: {url[:200]!r}", reason="bad_url")
    return host


class RefusedConnectionError(OSError):
    """Raised by :func:`guarded_socket_factory` instead of connecting.

    An ``OSError`` (EACCES) so that aiohttp treats it as a failed connection
    attempt (closing the socket, trying no other trick); the fetcher turns it
    into :class:`BlockedAddressError`.
    """

    def __init__(self, address: str, why: str) -> None:
        super().__init__(errno.EACCES, f"refusing to connect to {address}: {why}")
        self.address = address
        self.why = why


def guarded_socket_factory(policy: AddressPolicy) -> SocketFactoryType:
    """A ``TCPConnector(socket_factory=...)`` that refuses blocked addresses.

    aiohttp calls it with the very ``addrinfo`` it is about to ``connect()``
    to, after every normalisation and resolution, so what is checked here is
    what would be connected to.
    """

    def factory(addr_info: AddrInfoType) -> socket.socket:
        family, type_, proto, _canon, sockaddr = addr_info
        address = str(sockaddr[0])
        why = policy.refusal(address)
        if why is not None:
            log.warning("refused a connection to %s (%s)", address, why)
            raise RefusedConnectionError(address, why)
        return socket.socket(family=family, type=type_, proto=proto)

    return factory


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
