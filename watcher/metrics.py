"""Prometheus metrics and the small HTTP server that exposes them.

Why a class with its own ``CollectorRegistry``: tests (and the demo) run
several consumer apps in one process, and the global default registry refuses
a second metric of the same name.  The metric names are a public interface:
the dashboards and alert rules in ``deploy/`` query them.  No label ever holds
a URL (unbounded cardinality); labels are topics, partitions, reason slugs,
measure names, statuses and change classes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

log = logging.getLogger(__name__)

_SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_SCORE_BUCKETS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)

ReadyCheck = Callable[[], Awaitable[bool]]


class Metrics:
    """Every metric driftline exports, registered in one private registry."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        r = self.registry
        self.events_consumed = Counter(
            "driftline_events_consumed", "Kafka messages consumed, per topic.", ["topic"], registry=r
        )
        self.events_skipped = Counter(
            "driftline_events_skipped", "Events deliberately not scored (dns:, robots.txt, ...).", ["reason"],
            registry=r,
        )
        self.events_failed = Counter(
            "driftline_events_failed", "Events that could not be scored, per reason slug.", ["reason"], registry=r
        )
        self.dead_letter = Counter(
            "driftline_dead_letter", "Messages sent to the dead-letter topic, per reason slug.", ["reason"],
            registry=r,
        )
        self.verdicts = Counter(
            "driftline_verdicts", "Verdicts published, per status and change class.", ["status", "change"],
            registry=r,
        )
        self.alerts = Counter("driftline_alerts", "Alerts published, per change class.", ["change"], registry=r)
        self.measure_score = Histogram(
            "driftline_measure_score", "Scores of each measure.", ["measure"], buckets=_SCORE_BUCKETS, registry=r
        )
        self.processing_seconds = Histogram(
            "driftline_processing_seconds", "Time from message received to its results acknowledged.",
            buckets=_SECONDS_BUCKETS, registry=r,
        )
        self.fetch_seconds = Histogram(
            "driftline_fetch_seconds", "Time to obtain a capture's bytes, per source.", ["source"],
            buckets=_SECONDS_BUCKETS, registry=r,
        )
        self.render_seconds = Histogram(
            "driftline_render_seconds", "Time to render a page in Chromium.", buckets=_SECONDS_BUCKETS, registry=r
        )
        self.consumer_lag = Gauge(
            "driftline_consumer_lag", "Messages not yet processed (high watermark - next offset).",
            ["topic", "partition"], registry=r,
        )
        self.urls_off_topic = Gauge(
            "driftline_urls_off_topic", "Histories whose newest verdict is off-topic.", registry=r
        )
        self.recommendations = Counter(
            "driftline_recommendations", "Crawl-control recommendations published, per action.", ["action"],
            registry=r,
        )
        self.in_flight = Gauge("driftline_in_flight", "Events received and not yet finished.", registry=r)
        self.up = Gauge("driftline_up", "1 while the consumer app runs.", registry=r)

    def observe_fetch(self, source: str, seconds: float) -> None:
        """The acquirer's ``on_fetch`` callback: rendering has its own histogram."""
        if source == "render":
            self.render_seconds.observe(seconds)
        else:
            self.fetch_seconds.labels(source=source).observe(seconds)

    def observe_render_error(self, reason: str) -> None:
        """A render failed and the raw page was scored: counted as a failure
        (``reason`` render_timeout, render_failed, ...) so render alerts fire."""
        self.events_failed.labels(reason=reason).inc()

    def exposition(self) -> bytes:
        return bytes(generate_latest(self.registry))


async def _always_ready() -> bool:
    return True


class MetricsServer:
    """aiohttp server with ``/metrics``, ``/healthz`` and ``/readyz``.

    ``/healthz`` answers 200 while the process's event loop runs (a liveness
    probe); ``/readyz`` answers 200 only when ``ready()`` says so (the
    consumer has partitions assigned and the broker answers), else 503.
    Port 0 picks a free port; :attr:`port` tells which.
    """

    def __init__(self, metrics: Metrics, host: str = "127.0.0.1", port: int = 9308,
                 ready: ReadyCheck | None = None) -> None:
        self.metrics = metrics
        self.host = host
        self.port = port
        self._ready = ready or _always_ready
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._handle_metrics)
        app.router.add_get("/healthz", self._handle_health)
        app.router.add_get("/readyz", self._handle_ready)
        return app

    async def _handle_metrics(self, request: web.Request) -> web.Response:
        body = await asyncio.to_thread(self.metrics.exposition)
        resp = web.Response(body=body)
        resp.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return resp

    async def _handle_health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _handle_ready(self, request: web.Request) -> web.Response:
        try:
            ok = await asyncio.wait_for(self._ready(), 5.0)
        except Exception as exc:  # a failing check means "not ready", reported as such
            log.debug("readiness check failed: %r", exc)
            ok = False
        body: dict[str, Any] = {"ready": ok}
        return web.json_response(body, status=200 if ok else 503)

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        log.info("metrics on http://%s:%d/metrics", self.host, self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
