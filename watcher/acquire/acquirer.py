"""Getting the captured bytes for a capture event (:class:`Acquirer`).

Sources, tried in order: the event's inline content, then
``acquire.order`` (default: the WARC record named by the event, from
``acquire.warc_dirs`` or over HTTP from ``acquire.warc_http_base``; the raw
replay of the capture; a live fetch of the URL).  The first source that
yields a payload wins; failures fall through to the next source and the last
failure is raised when none succeeds.  An event naming a WARC record never
falls through to a live fetch (see :meth:`Acquirer._sources`) and fails with
the WARC's reason.

Trust: the hosts of ``warc_http_base`` and ``replay_base`` are operator
configuration and admitted whatever address they have (a pywb on localhost is
common); a redirect leaving them, and everything taken from an event (its
URL, its replay URI unless it points at the configured replay host), passes
the SSRF guard.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import quote, urlsplit

from ..archive.replay import WAYBACK, build_replay_uri, is_archived_response, raw_replay_uri
from ..canonical import url_key
from ..config import Config
from ..errors import AcquireError
from ..events.model import CaptureEvent
from ..model import Capture, payload_digest
from ..net.http import FetchResult, HttpFetcher
from ..net.netguard import AddressPolicy
from .archived import ArchiveResolver, ChainResolver, ReplayResolver, WarcFileResolver, WarcIndexCache
from .render import RenderPool, count_scripts, quick_word_count, rendered_capture, wants_render
from .revisit import RevisitFinder
from .warc import RecordExtent, WarcPayload, find_warc, parse_record, read_record_bytes, safe_warc_name

log = logging.getLogger(__name__)

# on_fetch(source, seconds): one call per attempted fetch, success or failure.
FetchCallback = Callable[[str, float], None]
FETCH_SOURCES = ("warc", "warc_http", "replay", "live", "render")
_OK_ARCHIVE_STATUSES = range(200, 400)


class Acquirer:
    """Obtains a :class:`~watcher.model.Capture` with content for a :class:`CaptureEvent`."""

    def __init__(
        self, cfg: Config, *, on_fetch: FetchCallback | None = None, renderer: RenderPool | None = None,
        on_render_error: Callable[[str], None] | None = None,
    ) -> None:
        """``renderer`` (optional, owned by the caller): live captures that
        :func:`wants_render` picks are replaced by their rendered DOM.
        ``on_render_error(reason)`` is told of every render that failed (the
        raw page is scored instead), so the failure is counted, not lost."""
        self.cfg = cfg
        self.on_render_error = on_render_error
        self.renderer = renderer
        self.acfg = cfg.acquire
        self.on_fetch = on_fetch
        self.policy = AddressPolicy(self.acfg.allow_addresses)
        live = self.acfg.live
        # Event URLs: guarded, polite (per-host delay).
        ratio = cfg.engine.extract.max_decompress_ratio
        self.live_fetcher = HttpFetcher(live, self.policy, max_decompress_ratio=ratio)
        # Configured archive endpoints (replay, WARC server): trusted hosts, no delay.
        self._replay_host = _host(self.acfg.replay_base) if self.acfg.replay_base else None
        trusted = [h for h in (self._replay_host, _host(self.acfg.warc_http_base or "")) if h]
        self.archive_policy = AddressPolicy(self.acfg.allow_addresses, trusted_hosts=trusted)
        self.archive_fetcher = HttpFetcher(live, self.archive_policy, per_host_delay_s=0.0,
                                           max_decompress_ratio=ratio)
        self.warc_indexes = WarcIndexCache(cfg, cfg.render.archive_index_files)
        self.revisits = RevisitFinder(cfg)

    async def __aenter__(self) -> Acquirer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.live_fetcher.close()
        await self.archive_fetcher.close()

    def _timed(self, source: str, started: float) -> None:
        if self.on_fetch is not None:
            self.on_fetch(source, time.perf_counter() - started)

    async def get(self, event: CaptureEvent) -> Capture:
        """The capture with its payload; raises :class:`AcquireError` (last failure) if no source works."""
        if event.content is not None:
            return event.to_capture(event.content, source="inline")
        errors: list[AcquireError] = []
        tried = False
        sources, revisit_replay = self._sources(event)
        for source in sources:
            if source == "replay" and revisit_replay and not any(e.reason == "warc_revisit" for e in errors):
                continue
            attempt = self._attempt(source, event)
            if attempt is None:
                continue
            tried = True
            try:
                return await attempt
            except AcquireError as exc:
                log.info("acquire %s via %s failed (%s): %s", event.url[:200], source, exc.reason, exc)
                errors.append(exc)
        if not tried:
            raise AcquireError(
                f"no source for {event.url[:200]}: no inline content, WARC, replay or live fetch configured",
                reason="no_source",
            )
        # A capture that names a WARC record fails with the WARC's reason
        # (too_large, truncated, warc_missing...), whatever else was tried.
        last = errors[0] if _names_warc(event) else errors[-1]
        summary = "; ".join(f"{e.reason}: {e}" for e in errors)
        raise type(last)(f"could not acquire {event.url[:200]}: {summary}", reason=last.reason) from last

    def _sources(self, event: CaptureEvent) -> tuple[list[str], bool]:
        """``acquire.order`` as it applies to ``event``, and whether its replay
        step is only for a WARC revisit record.

        A capture that names a WARC record is an archived capture: it is
        judged from that record, never from today's live page (which would be
        stored under the archived capture's time).  When WARC files are
        reachable (``warc_dirs`` or ``warc_http_base``), a replay is tried for
        an event that names its own replay URI, or when the record is a
        revisit (no payload of its own: the archive's replay of that capture
        resolves it); without WARC access, the configured replay of the same
        capture is the only archived copy.  Live fetching is for events
        without a WARC reference and for watch events (the DOI scheduler's).
        """
        order: list[str] = list(self.acfg.order)
        if not _names_warc(event) or event.watch is not None:
            return order, False
        order = [s for s in order if s != "live"]
        warc_access = bool(self.acfg.warc_dirs or self.acfg.warc_http_base)
        return order, warc_access and not event.replay_uri

    def _attempt(self, source: str, event: CaptureEvent) -> Coroutine[Any, Any, Capture] | None:
        """The coroutine fetching ``event`` from ``source``, or None if the source does not apply."""
        if source == "warc":
            if event.warc_filename is None or event.warc_offset is None:
                return None
            if self.acfg.warc_dirs:
                return self._from_warc_file(event)
            if self.acfg.warc_http_base:
                return self._from_warc_http(event)
            return None
        if source == "replay":
            # driftline's own events without a replay URI are fresh (DOI scheduler):
            # the archive cannot have them yet, so no replay_base guess for those.
            if event.replay_uri or (self.acfg.replay_base and event.crawler != "driftline"):
                return self._from_replay(event)
            return None
        if source == "live":
            return self._from_live_maybe_rendered(event)
        raise AcquireError(f"unknown acquire source {source!r}", reason="config")

    # -- WARC ---------------------------------------------------------------

    async def _from_warc_file(self, event: CaptureEvent) -> Capture:
        assert event.warc_filename is not None and event.warc_offset is not None
        started = time.perf_counter()
        try:
            try:
                path = find_warc(event.warc_filename, self.acfg.warc_dirs)
            except AcquireError:
                if self.acfg.warc_http_base:
                    return await self._from_warc_http(event)
                raise
            data = await asyncio.to_thread(
                read_record_bytes, path, event.warc_offset, event.warc_length, self.acfg.warc_max_bytes
            )
            try:
                record = await asyncio.to_thread(parse_record, data, self.acfg.live.max_bytes)
            except AcquireError as exc:
                if exc.reason != "warc_revisit":
                    raise
                # No payload of its own: the original's, from the WARC, whether or not it was scored yet.
                found = await asyncio.to_thread(self.revisits.find, path, data)
                return event.to_capture(found.content, found.content_type, found.status, found.headers,
                                        source="warc", digest=event.digest or found.digest)
        finally:
            self._timed("warc", started)
        capture = self._warc_capture(event, record, "warc")
        return await self._maybe_render_archived(
            event, capture, [WarcFileResolver(str(path), self.warc_indexes), *self._configured_replay()]
        )

    async def _from_warc_http(self, event: CaptureEvent) -> Capture:
        assert event.warc_filename is not None and event.warc_offset is not None
        base = self.acfg.warc_http_base
        assert base is not None
        name = safe_warc_name(event.warc_filename)
        url = f"{base.rstrip('/')}/{quote(name)}"
        start = event.warc_offset
        end = f"{start + event.warc_length - 1}" if event.warc_length else ""
        tracker = RecordExtent()
        started = time.perf_counter()
        try:
            result = await self.archive_fetcher.fetch(
                url,
                headers={"Range": f"bytes={start}-{end}", "Accept-Encoding": "identity"},
                max_bytes=self.acfg.warc_max_bytes,
                extent=None if event.warc_length else tracker.feed,
            )
            if result.status == 404:
                raise AcquireError(f"WARC {name} not found at {base}", reason="warc_missing")
            if result.status != 206 and not (result.status == 200 and start == 0):
                raise AcquireError(
                    f"WARC server answered {result.status} to a Range request for {name}", reason="http_status"
                )
            record = await asyncio.to_thread(parse_record, result.body, self.acfg.live.max_bytes)
        finally:
            self._timed("warc_http", started)
        capture = self._warc_capture(event, record, "warc_http")
        return await self._maybe_render_archived(event, capture, self._configured_replay())

    def _warc_capture(self, event: CaptureEvent, record: WarcPayload, source: str) -> Capture:
        canonical = self.cfg.engine.canonical
        if record.target_uri and url_key(record.target_uri, canonical) != url_key(event.url, canonical):
            raise AcquireError(
                f"WARC record at {event.warc_filename}:{event.warc_offset} is for {record.target_uri[:200]},"
                f" not {event.url[:200]}",
                reason="warc_mismatch",
            )
        return event.to_capture(
            record.payload,
            record.content_type,
            record.status,
            record.headers,
            source=source,
            digest=event.digest or record.payload_digest or payload_digest(record.payload),
        )

    # -- replay -------------------------------------------------------------

    async def _from_replay(self, event: CaptureEvent) -> Capture:
        base: str | None
        if event.replay_uri:
            uri = raw_replay_uri(event.replay_uri)
            trusted = self._replay_host is not None and _host(uri) == self._replay_host
            base = replay_base_of(uri)
        else:
            assert self.acfg.replay_base is not None
            uri = build_replay_uri(self.acfg.replay_base, event.timestamp, event.url)
            trusted = True
            base = self.acfg.replay_base
        fetcher = self.archive_fetcher if trusted else self.live_fetcher
        started = time.perf_counter()
        try:
            result = await fetcher.fetch(uri)
        finally:
            self._timed("replay", started)
        # An archived error response is the capture when the crawler recorded that status (or none);
        # under an event that recorded a success it is another capture (the nearest the replay had).
        archived_error = is_archived_response(result.headers) and event.status_code in (None, result.status)
        if result.status not in _OK_ARCHIVE_STATUSES and not archived_error:
            raise AcquireError(f"replay {uri[:200]} answered {result.status}", reason="http_status")
        capture = self._http_capture(event, result, "replay", digest=event.digest, uri_m=uri)
        return await self._maybe_render_archived(event, capture, [ReplayResolver(base, fetcher)] if base else [])

    def _configured_replay(self) -> list[ArchiveResolver]:
        base = self.acfg.replay_base
        return [ReplayResolver(base, self.archive_fetcher)] if base else []

    async def _maybe_render_archived(
        self, event: CaptureEvent, capture: Capture, resolvers: list[ArchiveResolver]
    ) -> Capture:
        """``capture`` rendered in Chromium when it looks script-built, its
        subresources answered by ``resolvers`` (see :mod:`.archived`)."""
        if not self.cfg.render.archived or not self._wants_render(event, capture, archived=True):
            return capture
        assert self.renderer is not None and capture.content is not None
        headers = dict(capture.headers or {})
        if capture.content_type and not any(k.lower() == "content-type" for k in headers):
            headers["Content-Type"] = capture.content_type
        document = FetchResult(url=event.url, status=capture.status or 200, headers=headers, body=capture.content)
        resolver = ChainResolver(resolvers)
        return await self._render_or_raw(
            capture, self.renderer.render_archived(event.url, document, resolver, event.timestamp)
        )

    # -- live ---------------------------------------------------------------

    async def _from_live_maybe_rendered(self, event: CaptureEvent) -> Capture:
        """Live capture, rendered in Chromium when configured/needed."""
        capture = await self._from_live(event)
        if not self._wants_render(event, capture, archived=False):
            return capture
        assert self.renderer is not None
        return await self._render_or_raw(capture, self.renderer.render(event.url))

    def _wants_render(self, event: CaptureEvent, capture: Capture, *, archived: bool) -> bool:
        """A successful HTML capture that :func:`wants_render` picks (archived:
        2xx only, since a redirect record has nothing to render)."""
        if self.renderer is None or not capture.content or capture.status is None:
            return False
        if capture.status >= (300 if archived else 400):
            return False
        content = capture.content
        return wants_render(event, capture, quick_word_count(content), count_scripts(content), self.cfg.render)

    async def _render_or_raw(
        self, capture: Capture, rendering: Coroutine[Any, Any, tuple[bytes, float]]
    ) -> Capture:
        """The rendered capture, or ``capture`` as it was when rendering fails (counted, logged)."""
        started = time.perf_counter()
        try:
            html, _ = await rendering
        except AcquireError as exc:  # RenderError and BlockedAddressError included
            log.info("render of %s failed (%s); scoring the raw page", capture.url[:200], exc.reason)
            if self.on_render_error is not None:
                self.on_render_error(exc.reason)
            return capture
        finally:
            self._timed("render", started)
        return rendered_capture(capture, html)

    async def _from_live(self, event: CaptureEvent) -> Capture:
        """Fetch the URL now.  Client and server errors below 500 are returned
        as captures (a landing page turning 404 is drift worth reporting);
        5xx and 429 are transient and raised as ``http_status``."""
        started = time.perf_counter()
        try:
            result = await self.live_fetcher.fetch(event.url)
        finally:
            self._timed("live", started)
        if result.status >= 500 or result.status == 429:
            raise AcquireError(f"live fetch of {event.url[:200]} answered {result.status}", reason="http_status")
        return self._http_capture(event, result, "live", digest=payload_digest(result.body))

    def _http_capture(
        self, event: CaptureEvent, result: FetchResult, source: str, *, digest: str | None, uri_m: str | None = None
    ) -> Capture:
        return event.to_capture(
            result.body,
            result.content_type,
            result.status,
            result.headers,
            source=source,
            digest=digest or payload_digest(result.body),
            redirects=result.redirects,
            uri_m=uri_m,
        )


def _names_warc(event: CaptureEvent) -> bool:
    return event.warc_filename is not None and event.warc_offset is not None


def replay_base_of(uri: str) -> str | None:
    """``https://archive/collection`` of a Wayback-style memento URI (None if it is not one)."""
    m = WAYBACK.match(uri)
    return m.group(1).rstrip("/") if m else None


def _host(url: str) -> str | None:
    try:
        return (urlsplit(url).hostname or "").lower() or None
    except ValueError:
        return None
