"""The status report: one row per DOI, as a table, CSV, JSON or over HTTP.

``GET /doi/status`` answers the rows as JSON (for a publisher's dashboard or a
registration agency's poller; the rows' stable schema, shared with ``doi status
-f json``, is ``watcher/schemas/doi-status.schema.json``),
``GET /doi/check/<doi>`` the DOI's recent check records (DataCite-style link
checks: status, content type, redirect count, latency, has schema.org,
citation DOI present, body has the identifier), ``GET /metrics`` the
monitor's Prometheus metrics, ``GET /healthz`` (the process answers) and
``GET /readyz`` (the scheduler runs) for a container's probes: cheap, unlike
``/doi/status``, which reads every DOI's row.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from .ident import normalise_doi
from .monitor import DoiMonitor
from .registry import DoiRegistry

STATUS_COLUMNS = ("doi", "last_check", "outcome", "http_status", "final_url", "change", "first_drift", "reason",
                  "failures")


def status_rows(reg: DoiRegistry) -> list[dict[str, Any]]:
    """One row per watched DOI (never checked ones included, outcome ``pending``)."""
    states = {s.doi: s for s in reg.states()}
    rows = []
    for e in reg.entries():
        s = states.get(e.doi)
        rows.append({
            "doi": e.doi,
            "last_check": s.last_check.strftime("%Y-%m-%dT%H:%M:%SZ") if s else "",
            "outcome": s.outcome if s else "pending",
            "http_status": s.http_status if s and s.http_status is not None else "",
            "final_url": (s.final_url or "") if s else "",
            "change": (s.change or "") if s else "",
            "first_drift": s.first_drift.strftime("%Y-%m-%dT%H:%M:%SZ") if s and s.first_drift else "",
            "reason": (s.reason or "") if s else "",
            "failures": s.failures if s else 0,
        })
    return rows


def status_app(monitor: DoiMonitor, ready: Callable[[], bool] | None = None) -> web.Application:
    """The monitor's HTTP answers; ``ready`` says whether it checks DOIs (None: always ready)."""

    async def status(_: web.Request) -> web.Response:
        rows = await asyncio.to_thread(status_rows, monitor.registry)
        return web.json_response(rows, dumps=lambda o: json.dumps(o, ensure_ascii=False))

    async def checks(request: web.Request) -> web.Response:
        try:
            doi = normalise_doi(request.match_info["doi"])
        except Exception as exc:
            raise web.HTTPBadRequest(text=str(exc)) from None
        recs = await asyncio.to_thread(monitor.registry.checks, doi, int(request.query.get("limit", "20")))
        if not recs:
            raise web.HTTPNotFound(text=f"no checks of {doi}")
        return web.json_response({"doi": doi, "checks": recs})

    async def metrics(_: web.Request) -> web.Response:
        await asyncio.to_thread(monitor.refresh_gauges)
        body = generate_latest(monitor.metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def readyz(_: web.Request) -> web.Response:
        if ready is not None and not ready():
            return web.Response(status=503, text="the DOI scheduler is not running\n")
        return web.Response(text="ready\n")

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/doi/status", status)
    app.router.add_get(r"/doi/check/{doi:.+}", checks)
    app.router.add_get("/metrics", metrics)
    return app


@asynccontextmanager
async def serve_status(monitor: DoiMonitor, host: str, port: int,
                       ready: Callable[[], bool] | None = None) -> AsyncIterator[str | None]:
    """Serve :func:`status_app` on ``host:port`` (``port`` 0: not served, yields ``None``)."""
    if port <= 0:
        yield None
        return
    runner = web.AppRunner(status_app(monitor, ready), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    try:
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()
