"""Screenshots of archived captures for the detail view: rendered from the archive, never the live web.

The rendering is the engine's own archived rendering (:meth:`watcher.acquire.render.RenderPool.
screenshot_archived`): Chromium gets the captured document, and each request the page makes is answered
by a resolver -- the capture's own WARC file (:class:`~watcher.acquire.archived.WarcFileResolver`), or
the archive the URI-M names (raw replay, ``id_``) -- or with a 404; nothing reaches the network
otherwise.  A gold directory's page has no archive behind it: its subresources are all 404.  PNGs are
cached on disk by verdict id (a re-scored capture still shows the same page), so each is rendered
once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from datetime import datetime
from pathlib import Path

from ..acquire.archived import ArchiveResolver, ReplayResolver, WarcFileResolver, WarcIndexCache
from ..acquire.render import RenderPool
from ..config import Config
from ..errors import DriftlineError
from ..net.http import FetchResult
from .content import Content

log = logging.getLogger(__name__)

_WAYBACK = re.compile(r"^(https?://.+?)/(\d{14})(?:[a-z]{2}_)?/(https?://.+)$")


class _Nothing:
    """No archive behind the capture (a gold file): every subresource is missing."""

    async def resolve(self, url: str, when: datetime) -> FetchResult | None:
        return None


class Shots:
    """Renders and caches screenshots; the Chromium pool starts on the first one."""

    def __init__(self, cfg: Config, cache_dir: Path) -> None:
        self.cfg = cfg
        self.cache_dir = cache_dir
        self._pool: RenderPool | None = None
        self._lock = asyncio.Lock()
        self._index = WarcIndexCache(cfg, cfg.render.archive_index_files)

    @property
    def available(self) -> bool:
        return self.cfg.render.enabled and Path(self.cfg.render.executable_path).exists()

    async def _get_pool(self) -> RenderPool:
        async with self._lock:
            if self._pool is None:
                pool = RenderPool(self.cfg.render, (), fetch=self.cfg.acquire.live)
                await pool.start()
                self._pool = pool
            return self._pool

    def _resolver(self, pool: RenderPool, locator: str | None, uri_m: str | None) -> ArchiveResolver:
        if locator and locator.startswith("warc:"):
            return WarcFileResolver(locator[5:].rpartition("#")[0], self._index)
        m = _WAYBACK.match(uri_m or "")
        if m:
            return ReplayResolver(m.group(1), pool.fetcher)
        return _Nothing()

    async def png(self, key: str, url: str, when: datetime, content: Content, locator: str | None,
                  uri_m: str | None) -> bytes:
        """The screenshot of one capture (``key``: verdict id, version and side), from the cache or
        rendered now; raises :class:`DriftlineError` when it cannot be rendered."""
        path = self.cache_dir / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.png"
        if path.exists():
            return path.read_bytes()
        if not self.available:
            raise DriftlineError(f"no screenshot: Chromium is not at {self.cfg.render.executable_path}",
                                 reason="render")
        if content.data is None:
            raise DriftlineError(f"no screenshot: {content.error or 'no archived copy'}", reason="render")
        pool = await self._get_pool()
        headers = {"Content-Type": content.content_type or "text/html"}
        doc = FetchResult(url=url, status=200, headers=headers, body=content.data)
        png = await pool.screenshot_archived(url, doc, self._resolver(pool, locator, uri_m), when)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(png)
        tmp.replace(path)
        return png

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
