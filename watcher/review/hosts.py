"""Which addresses the review page binds and which Host names it answers.

Why a Host check: a page on any web site can make the curator's browser send requests to
``127.0.0.1:8765`` under that site's own name (DNS rebinding: the name resolves to this machine).  The
browser then treats the review page as that site's, so the site reads the page and its CSRF token and
can post labels.  The server answers only Host names it was told about: the bound address,
``localhost``/``127.0.0.1``/``[::1]`` and ``review.allowed_hosts``; bound to a wildcard address, any IP
literal too (rebinding needs a name).
"""

from __future__ import annotations

import ipaddress

from ..errors import ConfigError

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse (one line) a non-loopback address without a token."""
    if not is_loopback(host) and not token:
        raise ConfigError(f"review: refusing to serve on {host} without a token: set review.token "
                          "(DRIFTLINE__REVIEW__TOKEN) or bind 127.0.0.1", reason="review_token")


def host_of(header: str) -> str:
    """The name in a Host header: lower case, no port, an IPv6 address without its brackets, no final dot."""
    h = header.strip().lower()
    if h.startswith("["):
        h = h[1:h.find("]")] if "]" in h else h
    elif h.count(":") == 1:
        h = h.rsplit(":", 1)[0]
    return h.rstrip(".")


def answered_hosts(host: str, allowed: tuple[str, ...]) -> tuple[frozenset[str], bool]:
    """The Host names the server answers to, and whether any IP literal is (bound to a wildcard)."""
    names = {(h.lower() if h.count(":") > 1 and not h.startswith("[") else host_of(h))
             for h in (host, *LOOPBACK_NAMES, *allowed)}
    return frozenset(names), host.strip("[]") in ("0.0.0.0", "::", "")


def host_ok(hosts: frozenset[str], any_ip: bool, header: str | None) -> bool:
    """Whether a request's Host header names this server (see the module's docstring)."""
    if not header:
        return False
    name = host_of(header)
    if name in hosts:
        return True
    if any_ip:
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            return False
    return False
