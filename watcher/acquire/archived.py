"""Subresources for rendering an archived capture (:class:`ArchiveResolver`).

A crawler such as Heritrix does not run JavaScript, so the WARC record of a
script-built page holds a shell with little text; scored as captured, it
reads as drift that a visitor never saw.  Rendering it needs what a replay
system provides: every request the page makes answered *from the archive*, at
the capture's time.  Answering from the live web would mix today's scripts
and data into an old capture (and reach hosts the crawl never touched), so the
renderer asks a resolver and never the network:

* :class:`WarcFileResolver` looks a URL up in the capture's own WARC file
  (indexed in a thread, cached, and extended as the crawler appends to it:
  Heritrix writes a page's subresources into the same file, after the page);
* :class:`ReplayResolver` asks the configured archive for the raw capture
  nearest in time (``BASE/TIMESTAMPid_/URL``);
* :class:`ChainResolver` tries several in order.

Whatever no resolver has is answered 404, as a replay system does.  Redirect
records are followed inside the archive (Chromium does not route the hops of
a redirect it is handed, and must not reach the network on its own).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol
from urllib.parse import urljoin

from ..archive.index import IndexEntry, index_archive
from ..archive.replay import build_replay_uri
from ..archive.warc import RecordLoader
from ..canonical import url_key
from ..config import Config
from ..errors import AcquireError, InputError
from ..model import REDIRECT_STATUSES
from ..net.http import FetchResult, HttpFetcher

log = logging.getLogger(__name__)

_MAX_HOPS = 5


class ArchiveResolver(Protocol):
    """Answers a rendered page's request from an archive."""

    async def resolve(self, url: str, when: datetime) -> FetchResult | None:
        """The archived response for ``url`` nearest ``when``, or None if not archived."""
        ...


@dataclass
class _FileIndex:
    """Records of one WARC file by URL key, read up to ``end`` (a record boundary)."""

    by_key: dict[str, list[IndexEntry]] = field(default_factory=dict)
    end: int = 0
    size: int = -1


class WarcIndexCache:
    """Per-WARC-file indexes (URL key to records), the ``size`` most recently used kept.

    Heritrix appends to an open WARC while the crawl runs, and a page's
    subresources are written after the page: an index is extended from where
    it stopped whenever the file has grown, never rebuilt.  Indexing runs as a
    task of its own, so a render that times out waiting does not waste it, and
    concurrent renders of one file wait for one indexing.
    """

    def __init__(self, cfg: Config, size: int = 4) -> None:
        self.cfg = cfg
        self.size = max(1, size)
        self._cache: OrderedDict[str, _FileIndex] = OrderedDict()
        self._pending: dict[str, asyncio.Task[_FileIndex]] = {}
        self.indexed_files = 0  # files indexed from their start
        self.extensions = 0  # times a grown file's index was extended

    async def get(self, path: str) -> dict[str, list[IndexEntry]]:
        cached = self._cache.get(path)
        size = _size(path)
        if cached is not None and 0 <= size < cached.end:
            cached = None  # the file was replaced by a shorter one: start again
        if cached is not None and size == cached.size:
            self._cache.move_to_end(path)
            return cached.by_key
        task = self._pending.get(path)
        if task is None:
            task = asyncio.create_task(self._extend(path, cached))
            self._pending[path] = task
            task.add_done_callback(lambda _t: self._pending.pop(path, None))
        return (await asyncio.shield(task)).by_key

    async def _extend(self, path: str, cached: _FileIndex | None) -> _FileIndex:
        index = cached or _FileIndex()
        index.size, index.end, added = await asyncio.to_thread(_index_from, path, index.end, self.cfg)
        # Updated in place, in the event loop: lookups read it synchronously, never across an await.
        for entry in added:
            index.by_key.setdefault(entry.key, []).append(entry)
        self._cache[path] = index
        self._cache.move_to_end(path)
        if cached is None:
            self.indexed_files += 1
        else:
            self.extensions += 1
        while len(self._cache) > self.size:
            self._cache.popitem(last=False)
        log.info("render: indexed %s to offset %d for archived subresources (%d URLs, %d new records)",
                 path, index.end, len(index.by_key), len(added))
        return index


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def _index_from(path: str, start: int, cfg: Config) -> tuple[int, int, list[IndexEntry]]:
    """(file size, end of the last complete record indexed, the records from ``start``).

    A record still being written (the file's tail) ends the pass without
    moving ``end`` past it, so the next pass reads it whole.
    """
    size = _size(path)
    end = start
    added: list[IndexEntry] = []
    try:
        for entry in index_archive(path, cfg, start=start, growing=True):
            if entry.truncated:
                break
            end = entry.offset + (entry.length or 0)
            if entry.kind != "revisit":
                added.append(entry)
    except InputError as exc:  # the file went away: keep what was read
        log.info("render: %s", exc)
    return size, end, added


class WarcFileResolver:
    """Requests answered from one WARC file (the capture's own)."""

    def __init__(self, path: str, cache: WarcIndexCache) -> None:
        self.path = path
        self.cache = cache

    async def resolve(self, url: str, when: datetime) -> FetchResult | None:
        index = await self.cache.get(self.path)
        entries = index.get(url_key(url, self.cache.cfg.engine.canonical))
        if not entries:
            return None
        nearest = min(entries, key=lambda e: abs((e.time - when).total_seconds()))
        loaded = await asyncio.to_thread(_load, nearest, self.cache.cfg)
        if loaded is None:
            return None
        status, headers, body = loaded
        return FetchResult(url=url, status=status, headers=headers, body=body)


def _load(entry: IndexEntry, cfg: Config) -> tuple[int, dict[str, str], bytes] | None:
    loader = RecordLoader(cfg)
    try:
        loaded = loader.load(entry)
    finally:
        loader.close()
    if loaded.content is None:
        return None
    return loaded.status or 200, dict(loaded.headers), loaded.content


class ReplayResolver:
    """Requests answered by an archive's raw replay (``BASE/TIMESTAMPid_/URL``)."""

    def __init__(self, base: str, fetcher: HttpFetcher) -> None:
        self.base = base.rstrip("/")
        self.fetcher = fetcher

    async def resolve(self, url: str, when: datetime) -> FetchResult | None:
        """Redirects inside the archive (to the nearest capture, or an archived
        redirect it rewrote) are followed here; an archived redirect whose
        ``Location`` is not rewritten is returned with it resolved against
        the original URL, for :class:`ChainResolver` to look up in turn."""
        uri = build_replay_uri(self.base, when, url)
        for _hop in range(_MAX_HOPS + 1):
            try:
                result = await self.fetcher.fetch(uri, follow_redirects=False)
            except AcquireError as exc:
                log.info("render: archive has no %s (%s)", url[:200], exc.reason)
                return None
            location = _location(result)
            if result.status in REDIRECT_STATUSES and location:
                target = urljoin(uri, location)
                if target.startswith(self.base + "/"):
                    uri = target
                    continue
                return FetchResult(url=url, status=result.status, headers={"Location": urljoin(url, location)},
                                   body=b"")
            if result.status >= 400:
                return None
            return FetchResult(url=url, status=result.status, headers=result.headers, body=result.body)
        return None


def _location(result: FetchResult) -> str | None:
    return result.headers.get("Location") or result.headers.get("location")


class ChainResolver:
    """The first answer of several resolvers, redirects followed inside the archive."""

    def __init__(self, resolvers: Sequence[ArchiveResolver]) -> None:
        self.resolvers = tuple(resolvers)

    async def resolve(self, url: str, when: datetime) -> FetchResult | None:
        for _hop in range(_MAX_HOPS + 1):
            result = await self._first(url, when)
            if result is None:
                return None
            location = _location(result)
            if result.status not in REDIRECT_STATUSES or not location:
                return result
            url = urljoin(url, location)
        return None

    async def _first(self, url: str, when: datetime) -> FetchResult | None:
        for resolver in self.resolvers:
            result = await resolver.resolve(url, when)
            if result is not None:
                return result
        return None
