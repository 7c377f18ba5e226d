"""The schedule: every watched DOI checked on its interval, across restarts.

APScheduler 3.x (:class:`AsyncIOScheduler`) with a persistent
:class:`SQLAlchemyJobStore` beside the project's database (SQLite by default,
``<store.path>.jobs``; the PostgreSQL database at ``store.dsn`` at scale; or
``doi.jobstore_url``): one job per
DOI (``doi:<doi>``), an :class:`IntervalTrigger` of the DOI's own interval,
else its group's (``doi.group_intervals_s`` by tag), else
``doi.default_interval_s``, with ``doi.jitter_s`` of random delay so checks
spread out.  Why this holds across restarts: the next run time lives in the
job store, so a restart neither re-runs a check that was done (no duplicate)
nor forgets one that fell due while it was down (a missed run executes once:
``coalesce``, within ``doi.misfire_grace_s``).  :meth:`DoiScheduler.sync`
adds jobs for new DOIs, reschedules changed intervals and removes jobs of
removed DOIs without touching the others' next run times.

Jobs name their function by reference (``watcher.doi.schedule:run_check``),
as a persistent store needs; the function finds the running monitor in
:data:`_ACTIVE`.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger
from sqlalchemy import Engine, create_engine, event

from ..config import Config, LiveFetchConfig, StoreConfig
from ..errors import ConfigError, DriftlineError
from .importers import user_agent
from .monitor import DoiMonitor, Emit, interval_of
from .registry import open_registry

if TYPE_CHECKING:
    from ..net.netguard import AddressPolicy

log = logging.getLogger(__name__)

JOB_PREFIX = "doi:"
_ACTIVE: dict[str, DoiMonitor] = {}


_INFLIGHT: set[asyncio.Task[Any]] = set()


async def run_check(doi: str) -> None:
    """The job function of every DOI job (referenced by name from the job store)."""
    monitor = _ACTIVE.get("monitor")
    if monitor is None:
        log.warning("DOI %s fell due with no monitor running", doi)
        return
    task = asyncio.current_task()
    if task is not None:
        _INFLIGHT.add(task)
    try:
        result = await monitor.check_doi(doi)
    except asyncio.CancelledError:
        # Only a shutdown that outlived its drain time cancels a check (DoiScheduler.stop); the job store
        # already holds the next run, so the DOI is checked then.  Not an error: no traceback.
        log.warning("check of DOI %s cut short by shutdown; it runs again at its next run time", doi)
        return
    finally:
        if task is not None:
            _INFLIGHT.discard(task)
    if result is None:
        log.info("DOI %s is no longer watched", doi)


PG_JOBSTORE = "postgresql+psycopg://"  # the store's database, connected with the store's own DSN


def jobstore_url(store: StoreConfig, configured: str | None = None) -> str:
    """SQLAlchemy URL of the job store: ``doi.jobstore_url`` when set; else, with SQLite, a file beside
    the store's (``<store.path>.jobs``: APScheduler writes from the event loop, and a second writer on
    the store's own file would make it wait for the store's write lock); with PostgreSQL, the store's
    database (a server has no single write lock): :data:`PG_JOBSTORE`, whose connections
    :func:`jobstore_engine` opens with ``store.dsn`` as the baseline store does (a ``postgresql://`` URL
    or a ``key=value`` DSN alike, with its options such as ``search_path``; the password never
    enters a URL that could be logged)."""
    if configured:
        return configured
    if store.backend == "memory":
        return "sqlite://"
    if store.backend == "sqlite":
        return "sqlite:///" + str(Path(store.path).resolve()) + ".jobs"
    if store.dsn is None or not store.dsn.get_secret_value().strip():
        raise ConfigError("the DOI scheduler needs store.dsn (the PostgreSQL database)", reason="store_dsn")
    return PG_JOBSTORE


def jobstore_engine(url: str, store: StoreConfig | None = None) -> Engine:
    """The job store's engine.  APScheduler 3 writes a job's next run time from the event loop after
    every run, one commit per job: on SQLite those commits go to a WAL with ``synchronous=NORMAL``
    (durable across a process crash, as the baseline store) instead of an fsync each.  For
    :data:`PG_JOBSTORE` the connections are psycopg's, made from ``store.dsn``."""
    if url == PG_JOBSTORE:
        if store is None or store.dsn is None:
            raise ConfigError("the PostgreSQL job store needs store.dsn", reason="store_dsn")
        import psycopg

        dsn = store.dsn.get_secret_value()
        return create_engine(url, creator=lambda: psycopg.connect(dsn), pool_pre_ping=True)
    engine = create_engine(url)
    if url.startswith("sqlite"):
        def pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=10000")
            cur.close()

        event.listen(engine, "connect", pragmas)
    return engine


def _trigger(seconds: int, cfg: Config, start: datetime) -> IntervalTrigger:
    return IntervalTrigger(seconds=seconds, start_date=start, jitter=cfg.doi.jitter_s or None, timezone=UTC)


class DoiScheduler:
    def __init__(self, cfg: Config, monitor: DoiMonitor) -> None:
        self.cfg = cfg
        self.monitor = monitor
        self.scheduler = AsyncIOScheduler(
            jobstores={"default": SQLAlchemyJobStore(
                engine=jobstore_engine(jobstore_url(cfg.store, cfg.doi.jobstore_url), cfg.store),
                tablename="doi_jobs")},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": cfg.doi.misfire_grace_s},
            timezone=UTC,
        )

    def sync(self) -> dict[str, int]:
        """Make the jobs match the watched DOIs; returns counts of what changed."""
        entries = self.monitor.registry.entries()
        jobs: dict[str, Any] = {j.id: j for j in self.scheduler.get_jobs() if j.id.startswith(JOB_PREFIX)}
        added = changed = 0
        now = datetime.now(UTC)
        spread = max(0.0, self.cfg.doi.jitter_s)
        for e in entries:
            jid = JOB_PREFIX + e.doi
            seconds = interval_of(e, self.cfg)
            job = jobs.pop(jid, None)
            if job is None:
                # A start in the future: IntervalTrigger's first fire time is the first start + k * interval
                # not before "now", so a start already past (by microseconds) would wait a whole interval.
                first = now + timedelta(seconds=1.0 + random.uniform(0, min(float(seconds), spread)))
                self.scheduler.add_job("watcher.doi.schedule:run_check", _trigger(seconds, self.cfg, first), id=jid,
                                       name=e.doi, args=[e.doi], replace_existing=True)
                added += 1
            elif int(job.trigger.interval.total_seconds()) != seconds:
                self.scheduler.reschedule_job(jid, trigger=_trigger(seconds, self.cfg, now))
                changed += 1
        for jid in jobs:
            self.scheduler.remove_job(jid)
        counts = {"added": added, "rescheduled": changed, "removed": len(jobs), "watched": len(entries)}
        log.info("DOI schedule: %(watched)d watched, %(added)d added, %(rescheduled)d rescheduled, "
                 "%(removed)d removed", counts)
        return counts

    def start(self, paused: bool = False) -> None:
        """Start (``paused``: load and sync the jobs but run none until :meth:`resume`)."""
        _ACTIVE["monitor"] = self.monitor
        self.scheduler.start(paused=paused)
        self.sync()

    def resume(self) -> None:
        self.scheduler.resume()

    async def stop(self, drain_s: float | None = None) -> int:
        """Stop without losing the checks under way: no new check starts, those running may finish
        for ``drain_s`` (default: one check's time budget, ``doi.timeout_s`` per attempt with its
        retries and backoff), then the scheduler shuts down.  Returns how many were cut short."""
        if drain_s is None:
            d = self.cfg.doi
            drain_s = d.timeout_s * (d.retries + 1) + d.backoff_s * (2 ** d.retries)
        if self.scheduler.running:
            self.scheduler.pause()
        pending = [t for t in _INFLIGHT if not t.done()]
        still: set[asyncio.Task[Any]] = set()
        if pending:
            log.info("waiting up to %.0f s for %d DOI checks under way", drain_s, len(pending))
            _, still = await asyncio.wait(pending, timeout=drain_s)
        self.shutdown()
        for task in still:  # the executor's shutdown cancels them too; here it is not left to chance
            task.cancel()
        if still:
            await asyncio.wait(still, timeout=5.0)  # let them unwind (close connections, log) before returning
        return len(still)

    def shutdown(self) -> None:
        """Stop at once: checks under way are cancelled (see :meth:`stop`)."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        if _ACTIVE.get("monitor") is self.monitor:
            _ACTIVE.pop("monitor", None)

    def next_runs(self) -> dict[str, datetime | None]:
        return {j.id[len(JOB_PREFIX):]: j.next_run_time for j in self.scheduler.get_jobs()
                if j.id.startswith(JOB_PREFIX)}


def fetch_config(cfg: Config) -> LiveFetchConfig:
    """The guarded client's limits for DOI checks (politeness from ``doi:``)."""
    d = cfg.doi
    return LiveFetchConfig(timeout_s=d.timeout_s, max_bytes=cfg.acquire.live.max_bytes, max_redirects=d.max_redirects,
                           per_host_concurrency=d.per_host_concurrency, per_host_delay_s=d.per_host_delay_s,
                           user_agent=user_agent(d))


def check_resolver(cfg: Config, policy: AddressPolicy) -> None:
    """Refuse at start-up a ``doi.resolver_url`` the guarded client would refuse on every check.

    Why: a local resolver (a test instance, a mirror on loopback or a private network) was refused
    check after check with ``blocked_address`` and nothing said what to set; one line naming both
    keys now says it before anything runs.  Only an address spelt in the URL (or ``localhost``) is
    known before a check; a name resolving to a private address is refused at connect time with
    the same hint."""
    from ..net.netguard import ip_literal, normalised_host

    url = cfg.doi.resolver_url
    try:
        host = normalised_host(url)
    except DriftlineError as exc:
        raise ConfigError(f"doi.resolver_url {url!r}: {exc}") from None
    address = "127.0.0.1" if host == "localhost" else ip_literal(host)
    why = policy.refusal(address) if address is not None else None
    if address is not None and why is not None:
        raise ConfigError(f"doi.resolver_url {url!r} is a {why} address, which the guarded client refuses: "
                          f"admit it with acquire.allow_addresses (e.g. DRIFTLINE__ACQUIRE__ALLOW_ADDRESSES="
                          f"'[\"{address}/{128 if ':' in address else 32}\"]'), or set doi.resolver_url to a "
                          "public resolver")


@asynccontextmanager
async def open_monitor(cfg: Config, emit: Emit | None = None, *, render: bool | None = None,
                       metrics: Any = None) -> AsyncIterator[DoiMonitor]:
    """A ready monitor: registry, guarded client, render pool (when enabled), WARC writer."""
    from ..acquire.render import RenderPool
    from ..net.http import HttpFetcher
    from ..net.netguard import AddressPolicy
    from .resolve import DoiResolver
    from .warcs import RollingWarcWriter

    policy = AddressPolicy(cfg.acquire.allow_addresses)
    check_resolver(cfg, policy)
    fetcher = HttpFetcher(fetch_config(cfg), policy)
    use_render = cfg.doi.render and cfg.render.enabled if render is None else render
    pool = RenderPool(cfg.render, policy, fetch=fetch_config(cfg)) if use_render else None
    registry = await asyncio.to_thread(open_registry, cfg.store)
    try:
        resolver = DoiResolver(cfg, fetcher, pool)
        warcs = RollingWarcWriter(cfg.doi.warc_dir, max_bytes=cfg.doi.warc_max_bytes)
        monitor = DoiMonitor(cfg, registry, resolver, warcs, emit, metrics)
        try:
            yield monitor
        finally:
            monitor.close()
    finally:
        await fetcher.close()
        if pool is not None:
            await pool.close()
        registry.close()


async def check_all(monitor: DoiMonitor) -> list[Any]:
    """One round: every watched DOI checked once (``doi run --once``), concurrency bounded by the monitor."""
    entries = await asyncio.to_thread(monitor.registry.entries)
    return list(await asyncio.gather(*(monitor.check(e) for e in entries)))
