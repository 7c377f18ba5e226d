"""The DOI part of ``driftline demo``: the DOI monitor against a local resolver and publisher.

The demo serves, on loopback, a DOI resolver (the handle API and the
redirects ``https://doi.org/`` answers) and a journal platform
(:mod:`watcher.demo.doi_site`), then checks five DOIs three times with the
real monitor (:class:`watcher.doi.monitor.DoiMonitor`: resolution chain,
HEAD beside GET, WARC records, the one scoring step under the ``doi``
profile, the registry, alerts after failures in a row), changing the
publisher's pages between checks: a redesign, an edited abstract, a replaced
article, a lapsed domain and a bot wall.  Each check is printed as it is
scored, then a table per DOI.

While the demo waits for Ctrl-C, the monitor's status (``/doi/status``, the
stable JSON of ``watcher/schemas/doi-status.schema.json``) and its
``driftline_doi_*`` metrics are served on ``doi.status_host:status_port`` (a
free port when that one is taken) and the DOIs are checked again every few
seconds, as ``driftline doi run`` would on a short interval: so the DOI
dashboard (``deploy/grafana/doi.json``) and the recording rules
(``deploy/prometheus/doi_rules.yml``) have rates to show.  The demo's DOI
store is its own SQLite file in the work directory.
"""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from aiohttp import web

from ..config import Config
from ..ports import free_port, port_free
from .doi_site import Story, stories

RECHECK_S = 5.0  # while the demo waits for Ctrl-C, every DOI is checked again this often
ROUND_GAP_S = 1.0  # between the demo's three rounds of checks




@dataclass
class DoiTally:
    story: Story
    changes: list[str] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)

    @property
    def as_expected(self) -> bool:
        return tuple(self.changes) == self.story.expected


@dataclass
class DoiDemoResult:
    tallies: list[DoiTally]
    alerts: int = 0
    status_url: str | None = None

    @property
    def as_expected(self) -> bool:
        return all(t.as_expected for t in self.tallies) and self.alerts >= 1


def doi_demo_config(cfg: Config, workdir: Path, resolver_url: str, status_port: int) -> Config:
    """``cfg`` for the demo's monitor: the local resolver, loopback admitted by the guarded client, no
    politeness delay (one local publisher), no browser, its own SQLite store and WARC folder."""
    doi = cfg.doi.model_copy(update={
        "resolver_url": resolver_url, "warc_dir": str(workdir / "doi-warcs"), "per_host_delay_s": 0.0,
        "per_host_concurrency": 8, "jitter_s": 0.0, "retries": 1, "backoff_s": 0.05, "timeout_s": 30.0,
        "render": False, "judge_processes": 0, "status_port": status_port, "alert_after_failures": 2,
        "mailto": cfg.doi.mailto or "demo@driftline.invalid",
    })
    store = cfg.store.model_copy(update={"backend": "sqlite", "path": str(workdir / "doi.db")})
    acquire = cfg.acquire.model_copy(update={"allow_addresses": (*cfg.acquire.allow_addresses, "127.0.0.0/8")})
    render = cfg.render.model_copy(update={"enabled": False})
    return cfg.model_copy(update={"doi": doi, "store": store, "acquire": acquire, "render": render})


class DoiDemo:
    """The resolver, the publisher, the monitor and its status server, for one demo run."""

    def __init__(self, cfg: Config, workdir: Path, out: TextIO) -> None:
        self.base_cfg = cfg
        self.workdir = workdir
        self.out = out
        self.stories = stories()
        self.current: dict[str, tuple[str, int]] = {}
        self.cfg: Config | None = None
        self.monitor: Any = None
        self.status_url: str | None = None
        self.publisher = ""
        self._stack = AsyncExitStack()

    async def _serve(self, app: web.Application) -> str:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        self._stack.push_async_callback(runner.cleanup)
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        return f"http://127.0.0.1:{port}"

    def _landing(self, doi: str) -> str:
        return f"{self.publisher}/doi/{doi}"

    async def __aenter__(self) -> DoiDemo:
        from ..doi.schedule import open_monitor
        from ..doi.status import serve_status

        try:
            self.publisher = await self._serve(self._publisher_app())
            resolver = await self._serve(self._resolver_app()) + "/"
            d = self.base_cfg.doi
            port = d.status_port if d.status_port > 0 and port_free(d.status_host, d.status_port) else free_port()
            self.cfg = doi_demo_config(self.base_cfg, self.workdir, resolver, port)
            self.monitor = await self._stack.enter_async_context(open_monitor(self.cfg, render=False))
            self.status_url = await self._stack.enter_async_context(
                serve_status(self.monitor, self.cfg.doi.status_host, port))
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, et: type[BaseException] | None, ev: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._stack.aclose()

    def _resolver_app(self) -> web.Application:
        known = {s.article.doi for s in self.stories}

        async def api(request: web.Request) -> web.Response:
            doi = request.match_info["doi"].lower()
            if doi not in known:
                return web.json_response({"responseCode": 100, "handle": doi}, status=404)
            return web.json_response({"responseCode": 1, "handle": doi, "values": [
                {"index": 1, "type": "URL", "data": {"format": "string", "value": self._landing(doi)}}]})

        async def resolve(request: web.Request) -> web.Response:
            doi = request.match_info["doi"].lower()
            if doi not in known:
                return web.Response(status=404, text="DOI Not Found")
            raise web.HTTPFound(self._landing(doi))

        app = web.Application()
        app.router.add_get(r"/api/handles/{doi:10\..+}", api)
        app.router.add_get(r"/{doi:10\..+}", resolve)
        return app

    def _publisher_app(self) -> web.Application:
        async def article(request: web.Request) -> web.Response:
            page = self.current.get(request.match_info["doi"].lower())
            if page is None:
                return web.Response(status=404, text="<html><title>Page not found</title></html>",
                                    content_type="text/html")
            return web.Response(status=page[1], text=page[0], content_type="text/html", charset="utf-8")

        app = web.Application()
        app.router.add_get(r"/doi/{doi:10\..+}", article)
        return app

    async def run(self) -> DoiDemoResult:
        """Three checks of every DOI, the publisher's pages changed between them; printed as they go."""
        from ..doi.lists import DoiEntry
        from ..doi.schedule import check_all
        from ..lang import detect

        mon, w = self.monitor, self.out.write
        # The language model loaded once, before five checks would each load it at the same time.
        await asyncio.to_thread(detect, " ".join(s.article.abstract for s in self.stories))
        tallies = {s.article.doi: DoiTally(s) for s in self.stories}
        await asyncio.to_thread(mon.registry.add, [DoiEntry(s.article.doi, s.article.title) for s in self.stories])
        w(f"\ndriftline demo, DOI monitor: {len(self.stories)} DOIs x {len(self.stories[0].pages)} checks against "
          f"a local resolver and publisher\n")
        alerts = 0
        for n in range(len(self.stories[0].pages)):
            if n:  # a capture is named to the second: the bot wall's same page twice in one second would be one
                await asyncio.sleep(ROUND_GAP_S)
            for s in self.stories:
                self.current[s.article.doi] = s.pages[n]
            results = sorted(await check_all(mon), key=lambda r: [s.article.doi for s in self.stories].index(r.doi))
            for r in results:
                t = tallies[r.doi]
                t.changes.append(str(r.record["change"]))
                t.outcomes.append(r.outcome)
                w(f"check {n + 1}  doi:{r.doi}  ({t.story.name})\n    {r.record['change']:<10} {r.outcome:<10} "
                  f"{r.record['change_reason']}\n")
                if r.alert is not None:
                    alerts += 1
                    w(f"check {n + 1}  ALERT doi:{r.doi}: {r.alert['kind']} {r.alert['failures']} times in a row\n")
        self.out.flush()
        return DoiDemoResult(list(tallies.values()), alerts, self.status_url)

    async def keep_checking(self, interval_s: float = RECHECK_S) -> None:
        """Check every DOI again every ``interval_s`` until cancelled (the pages stay as they ended)."""
        from ..doi.schedule import check_all

        while True:
            await asyncio.sleep(interval_s)
            with contextlib.suppress(Exception):  # a failed round is the next round's to retry, as in doi run
                await check_all(self.monitor)


def print_doi_summary(result: DoiDemoResult, out: TextIO) -> None:
    """One row per DOI: the story, the classes its checks got, the classes designed."""
    w = out.write
    rows = [("DOI", "story", "checks", "expected")]
    rows += [(t.story.article.doi, t.story.name, " ".join(t.changes), " ".join(t.story.expected))
             for t in result.tallies]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    w("\n")
    for n, row in enumerate(rows):
        w("  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip() + "\n")
        if n == 0:
            w("  ".join("-" * x for x in widths) + "\n")
    w(f"\n{sum(len(t.changes) for t in result.tallies)} DOI checks, {result.alerts} DOI alerts.\n")
    w("Every DOI behaved as designed.\n" if result.as_expected else "Some DOIs did NOT behave as designed.\n")
    out.flush()
