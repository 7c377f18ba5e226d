"""Memento TimeMaps (RFC 7089) as batch input.

Reads link-format TimeMaps (``application/link-format``), CDXJ TimeMaps
(ipwb style: ``14-digit-datetime {"uri": ..., "rel": ..., "datetime": ...}``)
and JSON TimeMaps (the Memento aggregator's and MemGator's object, pywb's
``timemap/json`` lines) from a file or an http(s) URL, then fetches every memento's raw capture (see
:mod:`.fetch`).  A memento that cannot be fetched becomes a capture with
``content=None`` and an ``error``: one dead memento must not lose the TimeMap.

Large archives page their TimeMaps, and aggregators answer with a TimeMap
index: both name further TimeMaps with ``rel="timemap"`` (paging also uses
``rel="next"``/``"prev"``).  For a TimeMap read from a URL those are followed,
breadth first, up to ``scan.timemap_max_pages`` documents, and their mementos
merged into one history: a seed's history cut at page one would hide exactly
the late captures where drift shows.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from ..archive.detect import is_url, open_text
from ..config import Config
from ..errors import AcquireError, BlockedAddressError, InputError
from ..model import Capture

if TYPE_CHECKING:
    from ..net.http import HttpFetcher
    from .fetch import FetchResult

log = logging.getLogger(__name__)

_FETCH_WORKERS = 4
_CDXJ_URI = re.compile(r'"uri"\s*:\s*"([^"]+)"')
_CDXJ_REL = re.compile(r'"rel"\s*:\s*"([^"]+)"')
_CDXJ_ORIGINAL = re.compile(r'"original_uri"\s*:\s*"([^"]+)"')


@dataclass(frozen=True, slots=True)
class Memento:
    uri_m: str
    datetime: datetime


@dataclass(frozen=True, slots=True)
class TimeMap:
    uri_t: str
    original: str | None
    mementos: tuple[Memento, ...]
    # Further TimeMaps this one names (pages of a paged TimeMap, entries of an index), as written.
    pages: tuple[str, ...] = ()


# Link relations naming another TimeMap document of the same resource.
_PAGE_RELS = frozenset({"timemap", "next", "prev", "previous"})


def parse_link_format(text: str) -> list[tuple[str, dict[str, str]]]:
    """Split a link-format document into ``(uri, {param: value})`` entries.

    Commas inside quoted values (HTTP dates) and inside ``<...>`` do not split.
    """
    links: list[tuple[str, dict[str, str]]] = []
    i, n = 0, len(text)
    while i < n:
        start = text.find("<", i)
        if start < 0:
            break
        end = text.find(">", start)
        if end < 0:
            break
        uri = text[start + 1:end].strip()
        j = end + 1
        params: dict[str, str] = {}
        buf: list[str] = []
        quoted = False
        while j < n:
            ch = text[j]
            if ch == '"':
                quoted = not quoted
            elif not quoted and ch == ",":
                j += 1
                break
            elif not quoted and ch == "<":
                break
            buf.append(ch)
            j += 1
        for part in "".join(buf).split(";"):
            if "=" in part:
                name, _, value = part.partition("=")
                params[name.strip().lower()] = value.strip().strip('"')
        links.append((uri, params))
        i = j
    return links


def _in_time_order(mementos: dict[str, Memento]) -> tuple[Memento, ...]:
    """The mementos of every TimeMap format and page, one per URI-M, oldest first."""
    return tuple(sorted(mementos.values(), key=lambda m: m.datetime))


def _parse_http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        dt = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def parse_timemap(text: str, uri_t: str) -> TimeMap:
    """Parse a link-format, CDXJ or JSON TimeMap; ``uri_t`` is where it came from
    (replaced by its ``self`` link when it names one)."""
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith("<"):
        return _parse_link_timemap(text, uri_t)
    if head.startswith("{"):
        return _parse_json_timemap(head, uri_t)
    return _parse_cdxj_timemap(text, uri_t)


def _parse_any_date(value: object) -> datetime | None:
    """A memento datetime as JSON TimeMaps write it: ISO 8601 (the Memento aggregator's and
    MemGator's JSON), an HTTP date, or 14 digits."""
    from ..archive.index import parse_warc_date

    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return parse_warc_date(value)
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return _parse_http_date(value)
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def _parse_json_timemap(text: str, uri_t: str) -> TimeMap:
    """The two JSON TimeMaps archives serve: the Memento aggregator's and MemGator's one object
    (``original_uri``, ``mementos.list`` of ``{uri, datetime}``, ``self``, paging under ``pages``
    or ``timemap_index``), and pywb's ``timemap/json``, one CDX object per line (``timestamp``,
    ``url``), whose memento URIs are the archive's prefix, the timestamp and the URL."""
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or not ("mementos" in doc or "original_uri" in doc):
        return _parse_ndjson_timemap(text, uri_t)
    mementos: dict[str, Memento] = {}
    listed = doc.get("mementos")
    items = listed.get("list", []) if isinstance(listed, dict) else listed if isinstance(listed, list) else []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
            continue
        dt = _parse_any_date(item.get("datetime"))
        if dt is None:
            log.warning("%s: memento %s has no usable datetime; skipped", uri_t, item["uri"])
            continue
        mementos.setdefault(item["uri"], Memento(item["uri"], dt))
    pages: list[str] = []
    paging = doc.get("pages")
    if isinstance(paging, dict):
        pages += [v for k, v in paging.items() if k in _PAGE_RELS and isinstance(v, str)]
    index = doc.get("timemap_index")
    if isinstance(index, list):
        pages += [e["uri"] for e in index if isinstance(e, dict) and isinstance(e.get("uri"), str)]
    self_uri = doc.get("self") if isinstance(doc.get("self"), str) else None
    original = doc.get("original_uri") if isinstance(doc.get("original_uri"), str) else None
    ordered = _in_time_order(mementos)
    pages = [p for p in dict.fromkeys(pages) if p != self_uri]
    return TimeMap(uri_t=self_uri or uri_t, original=original, mementos=ordered, pages=tuple(pages))


_PYWB_TIMEMAP = re.compile(r"^(https?://.+?/)timemap/json/", re.I)


def _parse_ndjson_timemap(text: str, uri_t: str) -> TimeMap:
    prefix = _PYWB_TIMEMAP.match(uri_t)
    original: str | None = None
    mementos: dict[str, Memento] = {}
    for line in text.splitlines():
        try:
            row = json.loads(line) if line.strip() else None
        except ValueError:
            row = None
        if not isinstance(row, dict) or not isinstance(row.get("url"), str):
            continue
        stamp = str(row.get("timestamp", ""))
        dt = _parse_any_date(stamp)
        uri_m = row.get("uri") or row.get("load_url") or (f"{prefix.group(1)}{stamp}/{row['url']}" if prefix else None)
        if dt is None or not isinstance(uri_m, str):
            if prefix is None and dt is not None:
                raise InputError(f"{uri_t}: a pywb JSON TimeMap names no memento URIs, and read from a file it "
                                 "names no archive to fetch them from; pass its URL (.../timemap/json/...)",
                                 reason="timemap_no_archive")
            continue
        original = original or row["url"]
        mementos.setdefault(uri_m, Memento(uri_m, dt))
    ordered = _in_time_order(mementos)
    return TimeMap(uri_t=uri_t, original=original, mementos=ordered)


def _parse_link_timemap(text: str, uri_t: str) -> TimeMap:
    original: str | None = None
    self_uri: str | None = None
    mementos: dict[str, Memento] = {}
    pages: list[str] = []
    for uri, params in parse_link_format(text):
        rels = params.get("rel", "").split()
        if "original" in rels:
            original = uri
        if "self" in rels:
            self_uri = uri
        elif "memento" not in rels and _PAGE_RELS.intersection(rels) and uri not in pages:
            pages.append(uri)
        if "memento" in rels:
            dt = _parse_http_date(params.get("datetime"))
            if dt is None:
                log.warning("%s: memento %s has no usable datetime; skipped", uri_t, uri)
                continue
            mementos.setdefault(uri, Memento(uri, dt))
    ordered = _in_time_order(mementos)
    pages = [p for p in pages if p != self_uri]
    return TimeMap(uri_t=self_uri or uri_t, original=original, mementos=ordered, pages=tuple(pages))


def _parse_cdxj_timemap(text: str, uri_t: str) -> TimeMap:
    from ..archive.index import parse_warc_date

    original: str | None = None
    self_uri: str | None = None
    mementos: dict[str, Memento] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("!"):
            m = _CDXJ_ORIGINAL.search(line)
            if m:
                original = m.group(1)
            if line.startswith("!id"):
                mu = _CDXJ_URI.search(line)
                self_uri = mu.group(1) if mu else self_uri
            continue
        stamp, _, rest = line.partition(" ")
        mu = _CDXJ_URI.search(rest)
        mr = _CDXJ_REL.search(rest)
        dt = parse_warc_date(stamp)
        if mu is None or dt is None or (mr is not None and "memento" not in mr.group(1).split()):
            continue
        mementos.setdefault(mu.group(1), Memento(mu.group(1), dt))
    ordered = _in_time_order(mementos)
    return TimeMap(uri_t=self_uri or uri_t, original=original, mementos=ordered)


def _get_timemap_text(url: str, cfg: Config) -> str:
    """A TimeMap document over the guarded client (its page links come from the remote side too)."""
    from .fetch import run_batch  # the HTTP client (aiohttp) only where a TimeMap is fetched

    try:
        res = run_batch(cfg, lambda fetcher: fetcher.fetch(url))
    except BlockedAddressError as exc:
        raise InputError(f"{url}: TimeMap refused: {exc} (acquire.allow_addresses admits a local archive)",
                         reason="timemap_blocked") from exc
    except AcquireError as exc:
        raise InputError(f"{url}: TimeMap not reachable: {exc}", reason="timemap_unreachable") from exc
    if res.status >= 400:
        raise InputError(f"{url}: TimeMap request failed with HTTP {res.status}", reason="timemap_http")
    return res.body.decode("utf-8", errors="replace")


def load_timemap(source: str, cfg: Config, problems: list[str] | None = None) -> TimeMap:
    """Read a TimeMap from a file or an http(s) URL, following its further
    pages when read from a URL; raises InputError when it cannot be obtained
    or names no memento.  ``problems`` collects a line per further page that
    could not be read."""
    if is_url(source):
        text = _get_timemap_text(source, cfg)
    else:
        try:
            with open_text(Path(source)) as fh:
                text = fh.read()
        except OSError as exc:
            raise InputError(f"{source}: cannot read TimeMap: {exc}", reason="unreadable") from exc
    tm = parse_timemap(text, source)
    if is_url(source):
        # The document's own "self" link may name another host (a mirror); keep where we read it.
        tm = _follow_pages(dataclasses.replace(tm, uri_t=source), cfg, problems)
    elif tm.pages:
        log.warning("%s: names %d further TimeMap page(s), not followed for a file; pass the TimeMap's URL "
                    "to read them all", source, len(tm.pages))
    if not tm.mementos:
        raise InputError(f"{source}: TimeMap lists no mementos", reason="timemap_empty")
    return tm


def _follow_pages(first: TimeMap, cfg: Config, problems: list[str] | None = None) -> TimeMap:
    """Merge the mementos of every TimeMap reachable from ``first`` by page
    links (breadth first, each document once, ``timemap_max_pages`` in all).

    A page that cannot be read is logged and skipped, as a dead memento is: the
    rest of the history still counts.  A page about another original resource
    (a misconfigured index) is skipped too, since it is not this history.
    """
    from ..canonical import url_key

    mementos = {m.uri_m: m for m in first.mementos}
    original = first.original
    seen = {first.uri_t}
    queue = deque(urljoin(first.uri_t, p) for p in first.pages)
    read = 1
    while queue:
        url = queue.popleft()
        if url in seen:
            continue
        seen.add(url)
        if read >= cfg.scan.timemap_max_pages:
            log.warning("%s: stopped after %d TimeMap pages (scan.timemap_max_pages); %s and later not read",
                        first.uri_t, read, url)
            break
        read += 1
        try:
            page = parse_timemap(_get_timemap_text(url, cfg), url)
        except InputError as exc:
            log.warning("%s: TimeMap page skipped: %s", first.uri_t, exc)
            if problems is not None:
                problems.append(f"{url}: TimeMap page not read ({exc.reason})")
            continue
        canon = cfg.engine.canonical
        if original and page.original and url_key(page.original, canon) != url_key(original, canon):
            log.warning("%s: TimeMap page %s is about %s, not %s; skipped", first.uri_t, url, page.original,
                        original)
            continue
        original = original or page.original
        for m in page.mementos:
            mementos.setdefault(m.uri_m, m)
        queue.extend(urljoin(url, p) for p in page.pages)
    if read > 1:
        log.info("%s: %d TimeMap pages, %d mementos", first.uri_t, read, len(mementos))
    ordered = _in_time_order(mementos)
    return TimeMap(uri_t=first.uri_t, original=original, mementos=ordered)


def timemap_captures(tm: TimeMap, cfg: Config) -> list[Capture]:
    """Fetch every memento of ``tm`` (a few at a time) as raw captures."""
    from ..canonical import original_url
    from .fetch import fetch_raw, run_batch  # the HTTP client (aiohttp) only where mementos are fetched

    async def fetch_all(fetcher: HttpFetcher) -> list[FetchResult]:
        sem = asyncio.Semaphore(_FETCH_WORKERS)

        async def one(m: Memento) -> FetchResult:
            async with sem:
                return await fetch_raw(fetcher, m.uri_m, max_redirects=cfg.scan.follow_redirects)

        return list(await asyncio.gather(*(one(m) for m in tm.mementos)))

    captures: list[Capture] = []
    results = run_batch(cfg, fetch_all)
    for m, res in zip(tm.mementos, results, strict=True):
        if res.error:
            log.warning("%s: memento %s not fetched: %s", tm.uri_t, m.uri_m, res.error)
        captures.append(Capture(
            url=tm.original or original_url(m.uri_m),
            timestamp=m.datetime,
            content=res.content,
            content_type=res.content_type,
            status=res.status,
            headers=res.headers,
            uri_m=m.uri_m,
            source="timemap",
            redirects=res.redirects,
            error=res.error,
        ))
    captures.sort(key=lambda c: c.timestamp)
    return captures
