"""Canonical URL keys: captures of one resource form one history.

One seed's captures often differ in case, ``www.``, default port, trailing
slash, query order or scheme.  The key is SURT-style (``org,example)/path?q``)
so keys of one site sort together, and every normalisation is configurable
(:class:`~watcher.config.CanonicalConfig`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from .config import CanonicalConfig

_DEFAULT_PORTS = {"http": "80", "https": "443", "ftp": "21"}
_WAYBACK = re.compile(r"^https?://[^/]+/(?:[^/]+/)*?\d{14}(?:[a-z]{2}_)?/(.+)$")
_DEFAULT = CanonicalConfig()
_WWW = re.compile(r"^www\d{0,3}\.")
_SLASHES = re.compile(r"/{2,}")


@lru_cache(maxsize=16)
def _dropped(params: tuple[str, ...]) -> frozenset[str]:
    """``canonical.drop_query_params`` lower-cased, once per configuration (not at every URL: the
    index reads a key for every capture of its inputs)."""
    return frozenset(p.lower() for p in params)


def original_url(uri: str) -> str:
    """The URI-R inside a Wayback-style URI-M (``.../20120103014326id_/http://x/``)."""
    m = _WAYBACK.match(uri)
    if not m:
        return uri
    inner = m.group(1)
    if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", inner):
        inner = "http://" + inner
    return inner


def url_key(url: str, cfg: CanonicalConfig | None = None) -> str:
    """SURT-style canonical key of ``url`` (never raises; odd input is kept) under ``cfg`` (the
    ``engine.canonical`` that builds histories; the defaults when not given)."""
    cfg = cfg or _DEFAULT
    raw = url.strip()
    if "://" not in raw and not raw.startswith(("dns:", "urn:", "mailto:")):
        raw = "http://" + raw
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
        return raw.lower() if cfg.lowercase_host else raw
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https", "ftp"):
        return raw
    host = parts.hostname or ""
    if not cfg.lowercase_host and parts.netloc:
        host = parts.netloc.rsplit("@", 1)[-1].split(":", 1)[0]
    host = host.rstrip(".")
    if cfg.strip_www and host.startswith("www"):
        host = _WWW.sub("", host)
    port_s = str(port) if port is not None else ""
    if cfg.strip_default_port and port_s == _DEFAULT_PORTS.get(scheme):
        port_s = ""
    path = quote(unquote(parts.path or "/"), safe="/:@!$&'()*+,;=-._~%")
    if "//" in path:
        path = _SLASHES.sub("/", path)
    if cfg.strip_trailing_slash and len(path) > 1:
        path = path.rstrip("/") or "/"
    query = ""
    if parts.query:
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        drop = _dropped(tuple(cfg.drop_query_params))
        pairs = [(k, v) for k, v in pairs if k.lower() not in drop]
        if cfg.sort_query:
            pairs.sort()
        query = urlencode(pairs)
    labels = [lab for lab in host.split(".") if lab]
    surt_host = ",".join(reversed(labels))
    if port_s:
        surt_host += ":" + port_s
    key = f"{surt_host})" + path
    if query:
        key += "?" + query
    # A hashbang ("#!/user", Google's AJAX crawling scheme: twitter.com/#!/user) names the content,
    # not a place in the page: two accounts must not share one history.
    if parts.fragment and (not cfg.strip_fragment or parts.fragment.startswith("!")):
        key += "#" + parts.fragment
    if not cfg.ignore_scheme:
        key = f"{scheme}://({key}"
    return key


def surt_prefix(url: str) -> str:
    """The host-level SURT prefix in Heritrix's form (``http://(org,example,``).

    Used by crawl-stop actuators to reject everything under a seed's host.
    """
    try:
        host = (urlsplit(url if "://" in url else "http://" + url).hostname or "").lower()
    except ValueError:
        host = ""
    host = re.sub(r"^www\d{0,3}\.", "", host)
    labels = [lab for lab in host.split(".") if lab]
    return "http://(" + ",".join(reversed(labels)) + ","
