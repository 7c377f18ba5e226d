"""Screenshots of archived captures for the detail view: rendered from the archive, never the live web.

The rendering is the engine's own archived rendering (:meth:`watcher.acquire.render.RenderPool.
screenshot_archived`): Chromium gets the captured document, and each request the page makes is answered
by a resolver -- the capture's own WARC file (:class:`~watcher.acquire.archived.WarcFileResolver`) when
it lies under the operator's roots, or the archive the URI-M names (raw replay, ``id_``) when it is one
of ``review.archives`` -- or with a 404; a redirect the archive cannot follow inside itself is a 404 too
(Chromium would follow a 3xx it is handed on its own).  Chromium itself resolves no host name
(``--host-resolver-rules``), so nothing reaches the network otherwise.  A gold directory's page has no
archive behind it: its subresources are all 404.  PNGs are cached on disk by verdict id (a re-scored
capture still shows the same page), so each is rendered once.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from datetime import datetime
from pathlib import Path

from ..acquire.archived import WarcIndexCache
from ..acquire.render import RenderPool
from ..config import Config
from ..errors import DriftlineError
from ..net.http import FetchResult
from .access import Access
from .content import Content
from .frames import resolver_for

log = logging.getLogger(__name__)


class Shots:
    """Renders and caches screenshots; the Chromium pool starts on the first one."""

    def __init__(self, cfg: Config, cache_dir: Path, access: Access) -> None:
        self.cfg = cfg
        self.access = access
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
                pool = RenderPool(self.cfg.render, self.cfg.acquire.allow_addresses, fetch=self.cfg.acquire.live)
                await pool.start()
                self._pool = pool
            return self._pool

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
        resolver = resolver_for(self.access, locator, uri_m, self._index, pool.fetcher)
        png = await pool.screenshot_archived(url, doc, resolver, when)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(png)
        tmp.replace(path)
        return png

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
