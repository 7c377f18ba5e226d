"""Prometheus metrics and the small HTTP server that exposes them.

Why a class with its own ``CollectorRegistry``: tests (and the demo) run
several consumer apps in one process, and the global default registry refuses
a second metric of the same name.  The metric names are a public interface:
the dashboards and alert rules in ``deploy/`` query them.  No label ever holds
a URL (unbounded cardinality); labels are topics, partitions, reason slugs,
measure names, statuses, change classes, pipeline stages and a *bounded*
collection label (the first ``metrics.max_collections`` crawl jobs or
collections seen, then ``other``).

Why every labelled counter is initialised to 0 at start: ``rate()`` and
``increase()`` need two samples, so a series born at 1 hides its first
increment (a 1 h off-topic share read 0.43 where the truth was 0.33).
Every known label combination is therefore exported from the start.  A
collection is known from the start when listed in ``metrics.collections``;
one first seen in an event gets its series when the event is parsed, before
it is scored, so only a scrape falling inside that one event's scoring can
miss its verdict.
"""

from __future__ import annotations

import asyncio
import logging
import os
import platform
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from . import measures
from .errors import DriftlineError
from .events.skip import SKIP_REASONS

log = logging.getLogger(__name__)

_SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

# Verdict (status, change) pairs the profiles produce (watcher/step.py, watcher/profiles/, watcher/doi/profile.py),
# each change class of watcher.model.ChangeClass once at least (tests/output/test_output.py checks it).
VERDICT_PAIRS: tuple[tuple[str, str], ...] = (
    ("on-topic", "unchanged"), ("on-topic", "minor"), ("on-topic", "drifted"), ("on-topic", "baseline"),
    ("off-topic", "off-topic"), ("empty", "empty"), ("error", "error"),
    ("on-topic", "layout"), ("on-topic", "moved"), ("off-topic", "replaced"), ("off-topic", "gone"),
    ("error", "blocked"),
)
ALERT_CHANGES = ("drifted", "off-topic")  # the default; the app passes its alert policy's changes
RECOMMENDATION_ACTIONS = ("stop-seed", "deprioritise-seed", "recrawl-interval")
STAGES = ("router", "scorer")
# Per-event work, timed per stage: fetch the bytes, parse them, compare with
# the baseline, write verdict and baseline, publish and wait for the acks.
WORK_STAGES = ("acquire", "extract", "score", "store", "publish")
# Reasons a stream event fails with that are not a DriftlineError class's
# default slug (raised with an explicit reason, or a bug).
_EXTRA_FAIL_REASONS = ("internal", "unparseable", "missing_field", "invalid_field", "bad_url", "timeout", "dns",
                       "http_status", "warc_missing", "warc_unreadable", "store_write", "store_read")
RENDER_FALLBACK_REASONS = ("render", "render_timeout", "render_failed", "render_launch", "render_closed",
                           "blocked_address")
OTHER = "other"
NO_COLLECTION = "none"

# Measure kinds (watcher/measures.py): one histogram each, with buckets over
# the kind's range, so a -1..0 fraction or a 0..64 bit count is not squeezed
# into 0.05..1.0 buckets.  (The fraction histogram has negative buckets, so
# prometheus_client exports no _sum for it, as OpenMetrics requires: use
# histogram_quantile, not a mean.)
KIND_METRIC = {"fraction": "driftline_measure_score", "bits": "driftline_measure_bits",
               "count": "driftline_measure_items"}

ReadyCheck = Callable[[], Awaitable[bool]]


def _error_reasons() -> list[str]:
    seen: set[str] = set()
    todo: list[type[DriftlineError]] = [DriftlineError]
    while todo:
        cls = todo.pop()
        seen.add(cls.reason)
        todo.extend(cls.__subclasses__())
    return sorted(seen | set(_EXTRA_FAIL_REASONS))


def kind_buckets(kind: str) -> tuple[float, ...]:
    """About 20 equal buckets over the range of every measure of ``kind``."""
    specs = [s for s in measures.REGISTRY.values() if s.kind == kind]
    lo, hi = min(s.lo for s in specs), max(s.hi for s in specs)
    steps = 20
    width = (hi - lo) / steps
    return tuple(round(lo + i * width, 6) for i in range(steps + 1))


def version() -> str:
    try:
        return metadata.version("driftline")
    except metadata.PackageNotFoundError:
        return "unknown"


class ProcessTreeCollector(Collector):
    """RSS of this process and of all its descendants (Chromium's renderers,
    GPU and zygote processes), read from /proc.  The stock process collector
    sees only the Python process, so a browser eating the pod's memory limit
    was invisible."""

    def __init__(self, pid: int | None = None, proc: Path = Path("/proc")) -> None:
        self.pid = pid or os.getpid()
        self.proc = proc
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def _table(self) -> dict[int, tuple[int, str, int]]:
        """pid -> (ppid, comm, rss bytes) for every readable process."""
        out: dict[int, tuple[int, str, int]] = {}
        for entry in self.proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            # fields[0] is state, [1] ppid, [21] rss (pages): see proc(5)
            out[int(entry.name)] = (int(fields[1]), comm, int(fields[21]) * self._page)
        return out

    @staticmethod
    def _pss(entry: Path) -> int | None:
        """Proportional set size: shared pages split among their sharers, so the
        sum over Chromium's processes is what the cgroup is charged, where the
        sum of their RSS counts the shared browser binary once per process."""
        try:
            for line in (entry / "smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            return None
        return None

    def tree(self) -> dict[str, tuple[int, int, int]]:
        """kind -> (process count, RSS bytes, PSS bytes); kinds ``self``, ``chromium``,
        ``other``.  PSS falls back to RSS where smaps_rollup is unreadable."""
        table = self._table()
        children: dict[int, list[int]] = {}
        for pid, (ppid, _, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        out: dict[str, tuple[int, int, int]] = {"self": (0, 0, 0), "chromium": (0, 0, 0), "other": (0, 0, 0)}
        todo = [self.pid]
        while todo:
            pid = todo.pop()
            if pid not in table:
                continue
            _, comm, rss = table[pid]
            kind = "self" if pid == self.pid else ("chromium" if "chrom" in comm.lower() or
                                                   "headless_shell" in comm else "other")
            pss = self._pss(self.proc / str(pid))
            n, total, total_pss = out[kind]
            out[kind] = (n + 1, total + rss, total_pss + (rss if pss is None else pss))
            todo.extend(children.get(pid, ()))
        return out

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            tree = self.tree()
        except OSError:  # no /proc (not Linux): nothing to report
            return
        rss = GaugeMetricFamily("driftline_process_tree_resident_memory_bytes",
                                "Resident memory (RSS) of this process and its descendants, per kind; shared "
                                "pages count once per process.", labels=["kind"])
        pss = GaugeMetricFamily("driftline_process_tree_pss_bytes",
                                "Proportional memory (PSS) of this process and its descendants, per kind: shared "
                                "pages split among their sharers, close to what the container is charged.",
                                labels=["kind"])
        count = GaugeMetricFamily("driftline_process_tree_processes",
                                  "Processes in this process's tree, per kind.", labels=["kind"])
        for kind, (n, total, total_pss) in sorted(tree.items()):
            rss.add_metric([kind], float(total))
            pss.add_metric([kind], float(total_pss))
            count.add_metric([kind], float(n))
        yield rss
        yield pss
        yield count


class Collections:
    """A bounded label: the first ``cap`` distinct collection names, then ``other``.

    Why bounded: the crawl job or collection name comes from the event, i.e.
    from the crawler's configuration, and a label with one value per crawl
    job grows without limit over months.  The first ``cap`` names seen keep
    their own series (enough for the usual handful of concurrent crawls)."""

    def __init__(self, cap: int, on_new: Callable[[str], None], known: Iterable[str] = ()) -> None:
        self.cap = max(0, cap)
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self._on_new = on_new
        for name in (NO_COLLECTION, OTHER):
            on_new(name)
        for name in known:
            self.label(name)

    def label(self, name: str | None) -> str:
        if not name:
            return NO_COLLECTION
        name = name[:100]
        with self._lock:
            if name in self._seen:
                return name
            if len(self._seen) >= self.cap:
                return OTHER
            self._seen.add(name)
        self._on_new(name)
        return name


class Metrics:
    """Every metric driftline exports, registered in one private registry."""

    def __init__(self, registry: CollectorRegistry | None = None, *, max_collections: int = 20,
                 collections: Iterable[str] = (), input_topics: Iterable[str] = (),
                 alert_changes: Iterable[str] = ALERT_CHANGES, process_metrics: bool = True) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        r = self.registry
        self.events_consumed = Counter(
            "driftline_events_consumed",
            "Crawl events read from the input topics, counted once (by the router when it re-keys, else by "
            "the scorer).", ["topic"], registry=r,
        )
        self.records_processed = Counter(
            "driftline_records_processed",
            "Records a pipeline stage finished (router: re-keyed; scorer: scored, skipped or dead-lettered): "
            "the stage's progress.", ["stage"], registry=r,
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
        self.crawl_log_gaps = Counter(
            "driftline_crawl_log_gaps",
            "Stretches of a followed crawl.log that could not be read (a rotated file deleted before it was read, "
            "a truncation without a copy): each is also a crawl-log-gap dead letter.", registry=r,
        )
        self.crawl_log_gap_bytes = Counter(
            "driftline_crawl_log_gap_bytes",
            "Bytes of followed crawl.log files known lost in gaps (at least: a gap's end may be unknown).",
            registry=r,
        )
        self.render_fallbacks = Counter(
            "driftline_render_fallbacks",
            "Renders that failed, after which the raw page was scored (not an event failure).", ["reason"],
            registry=r,
        )
        self.verdicts = Counter(
            "driftline_verdicts", "Verdicts published, per status, change class and collection.",
            ["status", "change", "collection"], registry=r,
        )
        self.alerts = Counter("driftline_alerts", "Alerts published, per change class and collection.",
                              ["change", "collection"], registry=r)
        self.measure_hist = {
            kind: Histogram(name, f"Scores of each measure of kind {kind} (see watcher/measures.py).",
                            ["measure"], buckets=kind_buckets(kind), registry=r)
            for kind, name in KIND_METRIC.items()
        }
        self.processing_seconds = Histogram(
            "driftline_processing_seconds", "Time from message received to its results acknowledged.",
            buckets=_SECONDS_BUCKETS, registry=r,
        )
        self.stage_seconds = Histogram(
            "driftline_stage_seconds", "Time spent per event in each stage of scoring.", ["stage"],
            buckets=_SECONDS_BUCKETS, registry=r,
        )
        self.fetch_seconds = Histogram(
            "driftline_fetch_seconds", "Time to obtain a capture's bytes, per source.", ["source"],
            buckets=_SECONDS_BUCKETS, registry=r,
        )
        self.render_seconds = Histogram(
            "driftline_render_seconds", "Time to render a page in Chromium (successful or not).",
            buckets=_SECONDS_BUCKETS, registry=r,
        )
        self.consumer_lag = Gauge(
            "driftline_consumer_lag",
            "Messages not yet processed by the consumer group (end offset - committed offset), for every "
            "partition of the stage's topics.  Every replica exports the whole group's lag; owned=\"true\" "
            "where this replica owns the partition (its figure also counts work finished but not yet "
            "committed).  Aggregate: the owner's figure per partition, else the max of the others.",
            ["stage", "topic", "partition", "owned"], registry=r,
        )
        self.consumer_lag_seconds = Gauge(
            "driftline_consumer_lag_seconds",
            "Age of the oldest record not yet processed on a partition this replica owns (0 when caught up).",
            ["stage", "topic", "partition"], registry=r,
        )
        self.assigned_partitions = Gauge(
            "driftline_assigned_partitions", "Partitions this replica owns, per stage.", ["stage"], registry=r
        )
        self.urls_off_topic = Gauge(
            "driftline_urls_off_topic",
            "Histories whose newest verdict is off-topic, read from the store: with a shared store every "
            "replica reports the same number, so aggregate with max(), never sum().", registry=r,
        )
        self.recommendations = Counter(
            "driftline_recommendations", "Crawl-control recommendations published, per action.", ["action"],
            registry=r,
        )
        self.in_flight = Gauge("driftline_in_flight", "Events received and not yet finished.", registry=r)
        self.up = Gauge("driftline_up", "1 while the consumer app runs.", registry=r)
        self.build_info = Info("driftline_build", "driftline version and runtime.", registry=r)
        self.build_info.info({"version": version(), "python": platform.python_version()})
        if process_metrics:
            ProcessCollector(registry=r)
            r.register(ProcessTreeCollector())
        self.alert_changes = tuple(sorted(set(alert_changes)))
        self.collections = Collections(max_collections, self._init_collection, collections)
        self._init_zeroes(input_topics)

    def _init_collection(self, collection: str) -> None:
        for status, change in VERDICT_PAIRS:
            self.verdicts.labels(status=status, change=change, collection=collection)
        for change in self.alert_changes:
            self.alerts.labels(change=change, collection=collection)

    def _init_zeroes(self, input_topics: Iterable[str]) -> None:
        """Export every known label combination at 0 (see the module docstring)."""
        for topic in input_topics:
            self.events_consumed.labels(topic=topic)
        for stage in STAGES:
            self.records_processed.labels(stage=stage)
            self.assigned_partitions.labels(stage=stage)
        for reason in SKIP_REASONS:
            self.events_skipped.labels(reason=reason)
        for reason in _error_reasons():
            self.events_failed.labels(reason=reason)
            self.dead_letter.labels(reason=reason)
        for reason in RENDER_FALLBACK_REASONS:
            self.render_fallbacks.labels(reason=reason)
        for action in RECOMMENDATION_ACTIONS:
            self.recommendations.labels(action=action)
        for stage in WORK_STAGES:
            self.stage_seconds.labels(stage=stage)
        for spec in measures.REGISTRY.values():
            self.measure_hist[spec.kind].labels(measure=spec.name)
        for source in ("warc", "replay", "live", "inline"):
            self.fetch_seconds.labels(source=source)

    def add_input_topics(self, topics: Iterable[str]) -> None:
        for topic in topics:
            self.events_consumed.labels(topic=topic)

    def collection(self, name: str | None) -> str:
        """The bounded collection label for an event's job or collection name."""
        return self.collections.label(name)

    def observe_measure(self, name: str, score: float) -> None:
        try:
            kind = measures.get(name).kind
        except DriftlineError:
            return
        self.measure_hist[kind].labels(measure=name).observe(score)

    def observe_stage(self, stage: str, seconds: float) -> None:
        """Per-event latency of one stage (see :data:`WORK_STAGES`)."""
        self.stage_seconds.labels(stage=stage).observe(seconds)

    def observe_fetch(self, source: str, seconds: float) -> None:
        """The acquirer's ``on_fetch`` callback: rendering has its own histogram."""
        if source == "render":
            self.render_seconds.observe(seconds)
        else:
            self.fetch_seconds.labels(source=source).observe(seconds)

    def observe_render_error(self, reason: str) -> None:
        """A render failed and the raw page was scored instead: a fallback, not
        an event failure (the event still got its verdict)."""
        self.render_fallbacks.labels(reason=reason).inc()

    def exposition(self) -> bytes:
        return bytes(generate_latest(self.registry))


async def _always_ready() -> bool:
    return True


class MetricsServer:
    """aiohttp server with ``/metrics``, ``/healthz``, ``/readyz`` and ``/assigned``.

    ``/healthz`` answers 200 while the process's event loop runs (a liveness
    probe).  ``/readyz`` answers 200 when ``ready()`` says so: the app is up
    and connected (its consumers joined and the broker answers), else 503.
    It deliberately does *not* require owned partitions: replicas beyond the
    partition count idle as hot standbys, and a readiness probe that failed
    on them would stall every rolling update.  ``/assigned`` answers 200 only
    where ``assigned()`` holds (this replica owns partitions), for humans and
    scripts; the ``driftline_assigned_partitions`` gauge says the same.
    Port 0 picks a free port; :attr:`port` tells which.
    """

    def __init__(self, metrics: Metrics, host: str = "127.0.0.1", port: int = 9308,
                 ready: ReadyCheck | None = None, assigned: ReadyCheck | None = None) -> None:
        self.metrics = metrics
        self.host = host
        self.port = port
        self._ready = ready or _always_ready
        self._assigned = assigned or _always_ready
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/metrics", self._handle_metrics)
        app.router.add_get("/healthz", self._handle_health)
        app.router.add_get("/readyz", self._handle_ready)
        app.router.add_get("/assigned", self._handle_assigned)
        return app

    async def _handle_metrics(self, request: web.Request) -> web.Response:
        body = await asyncio.to_thread(self.metrics.exposition)
        resp = web.Response(body=body)
        resp.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return resp

    async def _handle_health(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _handle_ready(self, request: web.Request) -> web.Response:
        return await self._check("ready", self._ready)

    async def _handle_assigned(self, request: web.Request) -> web.Response:
        return await self._check("assigned", self._assigned)

    @staticmethod
    async def _check(name: str, check: ReadyCheck) -> web.Response:
        try:
            ok = await asyncio.wait_for(check(), 5.0)
        except Exception as exc:  # a failing check means "no", reported as such
            log.debug("%s check failed: %r", name, exc)
            ok = False
        body: dict[str, Any] = {name: ok}
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
