"""Closing what a pipeline owner started: the Kafka app (:class:`consumers.app.ConsumerApp`) and
the durable crawl-log runner (:class:`consumers.crawllog.CrawlLogRunner`) hold the same parts under
the same names and close them in the same order, so the order lives here once.

Why this order: the metrics server first (nothing scrapes a half-closed app), then the publisher
(its last acknowledgements are in), the acquirer and the browser (no fetch is still running),
the scoring threads (every store write is done), and the store last.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


async def close_parts(owner: Any) -> None:
    """Close and clear ``owner``'s ``metrics_server``, ``publisher``, ``acquirer``, ``renderer``,
    ``executor`` and ``store``, whichever are set; a part that fails to close is logged and the
    rest still close."""
    if owner.metrics_server is not None:
        await owner.metrics_server.stop()
        owner.metrics_server = None
    if owner.publisher is not None:
        await owner.publisher.stop()
        owner.publisher = None
    for name, what in (("acquirer", "the acquirer"), ("renderer", "the browser")):
        part = getattr(owner, name)
        if part is not None:
            try:
                await part.close()
            except Exception:
                log.exception("error closing %s", what)
            setattr(owner, name, None)
    if owner.executor is not None:
        owner.executor.shutdown(wait=True)
        owner.executor = None
    if owner.store is not None:
        owner.store.close()
        owner.store = None
