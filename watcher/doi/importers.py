"""Import DOI lists from the Crossref and DataCite REST APIs.

Crossref: ``GET {crossref_url}/works`` (or ``/members/{id}/works``,
``/prefixes/{prefix}/works``) with ``filter=prefix:...`` (and
``from-update-date:YYYY-MM-DD`` for ``--since``), ``rows``, deep paging by
``cursor=*`` then each answer's ``message.next-cursor`` until a page comes
back empty, and ``mailto`` in the query plus a User-Agent naming the contact:
that is what puts a client in Crossref's "polite pool".

DataCite: ``GET {datacite_url}/dois`` with ``prefix`` / ``client-id`` /
``query`` (``updated:[SINCE TO *]`` for ``--since``), ``page[size]`` and
``page[cursor]`` paging: the first request sends ``page[cursor]=1``, the next
cursor is read from ``links.next``, and the next request is made against the
configured base URL (a test server, or a mirror, keeps the traffic), until
there is no ``links.next`` or a page is empty.

Both yield one page of entries at a time (memory stays flat on a member with
millions of works) and report each unusable record (no DOI, a malformed one)
with its page and position instead of failing the import.  429 and 5xx
answers are retried with the server's ``Retry-After`` or exponential backoff.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp

from ..config import DoiConfig
from ..errors import DoiError
from .ident import normalise_doi
from .lists import DoiEntry, ListProblem

log = logging.getLogger(__name__)

RETRIES = 4
BACKOFF_S = 1.0
MAX_RETRY_AFTER_S = 120.0


@dataclass(slots=True)
class ImportPage:
    """One API page: the usable entries and the records that were skipped."""

    number: int
    entries: list[DoiEntry] = field(default_factory=list)
    problems: list[ListProblem] = field(default_factory=list)
    total: int | None = None


def user_agent(cfg: DoiConfig) -> str:
    return f"{cfg.user_agent} mailto:{cfg.mailto}" if cfg.mailto else cfg.user_agent


def retry_after_s(value: str | None, default: float) -> float:
    """Seconds of a ``Retry-After`` header (delta-seconds or an HTTP date), capped."""
    if not value:
        return default
    try:
        return max(0.0, min(MAX_RETRY_AFTER_S, float(value)))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    from datetime import UTC

    return max(0.0, min(MAX_RETRY_AFTER_S, (when - datetime.now(UTC)).total_seconds()))


async def _get_json(session: aiohttp.ClientSession, url: str, params: Mapping[str, str], what: str,
                    backoff_s: float = BACKOFF_S) -> Any:
    """GET ``url`` and decode JSON; retries 429/5xx and connection errors."""
    last = ""
    for attempt in range(RETRIES + 1):
        delay = backoff_s * (2 ** attempt)
        try:
            async with session.get(url, params=params) as resp:
                if resp.status == 200:
                    try:
                        return await resp.json(content_type=None)
                    except ValueError as exc:
                        raise DoiError(f"{what}: answer is not JSON ({exc})", reason="import_bad_answer") from exc
                last = f"HTTP {resp.status}"
                if resp.status not in (429, 500, 502, 503, 504):
                    body = (await resp.text(errors="replace"))[:200]
                    raise DoiError(f"{what}: {last}: {body}", reason="import_http")
                delay = retry_after_s(resp.headers.get("Retry-After"), delay)
        except (TimeoutError, aiohttp.ClientError) as exc:
            last = f"{type(exc).__name__}: {exc}"
        if attempt < RETRIES:
            log.warning("%s: %s, retrying in %.1f s", what, last, delay)
            await asyncio.sleep(delay)
    raise DoiError(f"{what}: gave up after {RETRIES + 1} attempts ({last})", reason="import_failed")


def _session(cfg: DoiConfig) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(
        headers={"User-Agent": user_agent(cfg), "Accept": "application/json"},
        timeout=aiohttp.ClientTimeout(total=cfg.import_timeout_s),
    )


def _cap(page: ImportPage, seen: int, max_records: int) -> int:
    """Cut ``page`` so an import stops at ``max_records`` (0: no limit); returns the entries it keeps."""
    if max_records and seen + len(page.entries) > max_records:
        page.entries = page.entries[: max(0, max_records - seen)]
    return len(page.entries)


def _entry(doi: Any, title: Any, url: Any, source: str, tags: tuple[str, ...]) -> DoiEntry:
    if not isinstance(doi, str):
        raise DoiError("record has no DOI")
    t = title if isinstance(title, str) and title.strip() else None
    u = url if isinstance(url, str) and url.startswith(("http://", "https://")) else None
    return DoiEntry(doi=normalise_doi(doi), title=" ".join(t.split()) if t else None, landing_url=u,
                    source=source, tags=tags)


def crossref_route(prefix: str | None, member: str | None) -> tuple[str, list[str]]:
    """(path, filters) of a Crossref works query."""
    if member:
        return f"/members/{member}/works", ([f"prefix:{prefix}"] if prefix else [])
    if prefix:
        return "/works", [f"prefix:{prefix}"]
    raise DoiError("a Crossref import needs a prefix or a member id", reason="usage")


async def crossref_pages(cfg: DoiConfig, *, prefix: str | None = None, member: str | None = None,
                         since: datetime | None = None, tags: tuple[str, ...] = (),
                         backoff_s: float = BACKOFF_S) -> AsyncIterator[ImportPage]:
    """Pages of a Crossref works listing (see the module doc)."""
    path, filters = crossref_route(prefix, member)
    if since is not None:
        filters.append(f"from-update-date:{since.date().isoformat()}")
    url = cfg.crossref_url.rstrip("/") + path
    source = f"crossref:{member or prefix}"
    cursor, seen, number = "*", 0, 0
    async with _session(cfg) as session:
        while True:
            params = {"rows": str(cfg.import_rows), "cursor": cursor,
                      "select": "DOI,title,URL,resource,updated"}
            if filters:
                params["filter"] = ",".join(filters)
            if cfg.mailto:
                params["mailto"] = cfg.mailto
            number += 1
            doc = await _get_json(session, url, params, f"Crossref {path} page {number}", backoff_s)
            msg = doc.get("message") if isinstance(doc, dict) else None
            if not isinstance(msg, dict):
                raise DoiError(f"Crossref page {number}: no message object", reason="import_bad_answer")
            items = msg.get("items") or []
            page = ImportPage(number, total=msg.get("total-results") if isinstance(msg.get("total-results"), int)
                              else None)
            for i, item in enumerate(items if isinstance(items, list) else [], 1):
                try:
                    if not isinstance(item, dict):
                        raise DoiError("record is not an object")
                    titles = item.get("title")
                    title = titles[0] if isinstance(titles, list) and titles else titles
                    primary = ((item.get("resource") or {}).get("primary") or {}).get("URL")
                    page.entries.append(_entry(item.get("DOI"), title, primary, source, tags))
                except DoiError as exc:
                    page.problems.append(ListProblem(i, str(item)[:200], f"page {number} record {i}: {exc}"))
            seen += _cap(page, seen, cfg.import_max_records)
            if items:
                yield page
            nxt = msg.get("next-cursor")
            if not items or not isinstance(nxt, str) or not nxt or (
                    cfg.import_max_records and seen >= cfg.import_max_records):
                return
            cursor = nxt


async def datacite_pages(cfg: DoiConfig, *, prefix: str | None = None, client_id: str | None = None,
                         query: str | None = None, since: datetime | None = None, tags: tuple[str, ...] = (),
                         backoff_s: float = BACKOFF_S) -> AsyncIterator[ImportPage]:
    """Pages of a DataCite DOI listing (see the module doc)."""
    if not (prefix or client_id or query):
        raise DoiError("a DataCite import needs a prefix, a client id or a query", reason="usage")
    base: dict[str, str] = {"page[size]": str(cfg.import_rows)}
    if prefix:
        base["prefix"] = prefix
    if client_id:
        base["client-id"] = client_id
    queries = [query] if query else []
    if since is not None:
        queries.append(f"updated:[{since.strftime('%Y-%m-%dT%H:%M:%SZ')} TO *]")
    if queries:
        base["query"] = " AND ".join(f"({q})" if " " in q and len(queries) > 1 else q for q in queries)
    url = cfg.datacite_url.rstrip("/") + "/dois"
    source = f"datacite:{client_id or prefix or 'query'}"
    cursor, seen, number = "1", 0, 0
    async with _session(cfg) as session:
        while True:
            number += 1
            doc = await _get_json(session, url, {**base, "page[cursor]": cursor}, f"DataCite page {number}", backoff_s)
            data = doc.get("data") if isinstance(doc, dict) else None
            if not isinstance(data, list):
                raise DoiError(f"DataCite page {number}: no data array", reason="import_bad_answer")
            meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else {}
            page = ImportPage(number, total=meta.get("total") if isinstance(meta.get("total"), int) else None)
            for i, item in enumerate(data, 1):
                try:
                    if not isinstance(item, dict):
                        raise DoiError("record is not an object")
                    attrs = item.get("attributes") or {}
                    titles = attrs.get("titles") or []
                    title = titles[0].get("title") if titles and isinstance(titles[0], dict) else None
                    page.entries.append(_entry(attrs.get("doi") or item.get("id"), title, attrs.get("url"), source,
                                               tags))
                except (DoiError, AttributeError) as exc:
                    page.problems.append(ListProblem(i, str(item)[:200], f"page {number} record {i}: {exc}"))
            seen += _cap(page, seen, cfg.import_max_records)
            if data:
                yield page
            links = doc.get("links") if isinstance(doc.get("links"), dict) else {}
            nxt = next_cursor(links.get("next"))
            if not data or nxt is None or nxt == cursor or (cfg.import_max_records and seen >= cfg.import_max_records):
                return
            cursor = nxt


def next_cursor(link: Any) -> str | None:
    """The ``page[cursor]`` of DataCite's ``links.next`` URL."""
    if not isinstance(link, str) or not link:
        return None
    values = parse_qs(urlsplit(link).query).get("page[cursor]")
    return values[0] if values else None
