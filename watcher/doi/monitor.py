"""One check of one DOI, end to end: resolve, preserve, score (the one step), record, emit.

Every failure mode ends in a recorded outcome (``resolved``,
``redirected_elsewhere``, ``not_found``, ``blocked``, ``timeout``,
``dns_error``, ``server_error``, ``invalid_doi``): :meth:`DoiMonitor.check` never raises for
trouble on the network or in a page, so the scheduler never loses a DOI.

Politeness: the guarded HTTP client keeps a per-host concurrency limit and a
minimum delay between request starts; a ``Retry-After`` on 429/503 is
honoured (the host is not asked again before it, by this check or any other)
unless it is longer than ``doi.max_retry_after_s``; timeouts and server
errors are retried with exponential backoff (``doi.retries``,
``doi.backoff_s``).  A bot challenge is retried through the browser on the
next check.  An alert is raised once a DOI has failed the same way
``doi.alert_after_failures`` times in a row, not on the first timeout.

One state, one scoring step.  The check is scored by the project's one step
(:meth:`watcher.engine.Engine.score_next`, profile ``doi``), driven by the
same :meth:`watcher.watch.Watcher.score` (through a :class:`watcher.job.Job`) as the streaming watcher, over the
same baseline store, into the history ``doi:<doi>``: the DOI's state is the
watcher's state, and the change class in the status report is the verdict
stored for the check's capture.  Why in process rather than waiting for the
stream: ``driftline doi status`` has a change class right after the check
(also with no streaming watcher running), and a bot wall is known at once,
so the next check goes through the browser.  Why it still emits the capture
event: the event names the same history (``watch.id``), capture time and
payload digest, so it has the same verdict id; a streaming watcher on the
same store finds the verdict already stored (``Watcher.job`` finds it
before anything is read) and publishes it (with any alert owed) instead of
scoring the check a second time, and one on another store scores it with the
same step.  Blocked pages (bot walls, cookie walls) are never baselines and
never drift (:func:`watcher.doi.profile.first_doi`, ``decide_doi``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..config import Config, EngineConfig
from ..engine import Engine
from ..errors import DoiError, DriftlineError, ExtractError
from ..events.driftline import validate_event
from ..fingerprint import fingerprint, host_of
from ..model import Capture, Fingerprint, Verdict, payload_digest
from ..store.codec import iso_utc
from ..verdict import Decision
from ..watch import Watcher
from .ident import doi_url, normalise_doi
from .lists import DoiEntry
from .metrics import DoiMetrics
from .registry import DRIFT_CHANGES, DoiRegistry, DoiState
from .resolve import DoiResolver, Resolution
from .warcs import RollingWarcWriter, WarcRef

log = logging.getLogger(__name__)

Emit = Callable[[str, dict[str, Any]], Awaitable[None]]
RETRYABLE = frozenset({"timeout", "dns_error", "server_error"})  # a resolver hiccup passes; a dead name stays
OBSERVED = frozenset({"resolved", "redirected_elsewhere"})


@dataclass(slots=True)
class CheckResult:
    doi: str
    when: datetime
    outcome: str
    reason: str
    record: dict[str, Any]
    state: DoiState | None
    event: dict[str, Any] | None = None
    warc: WarcRef | None = None
    decision: Decision | None = None
    verdict: Verdict | None = None
    alert: dict[str, Any] | None = None


def history_of(doi: str) -> str:
    """The history of a DOI's checks in the store (also the capture event's ``watch.id``)."""
    return f"doi:{doi}"


def fingerprint_capture(cap: Capture, cfg: EngineConfig) -> Fingerprint:
    """The CPU-bound part of a check, a pure function so it can run in a worker process.  Read
    as the watcher's step reads a ``doi`` capture (Engine.fingerprint), whatever the engine's
    configured profile."""
    return fingerprint(cap, cfg, main_content=cfg.extract.main_content_for(False))


def interval_of(entry: DoiEntry, cfg: Config) -> int:
    """The DOI's own interval, else its first tag's group interval, else the default."""
    if entry.interval_s:
        return entry.interval_s
    for t in entry.tags:
        if t in cfg.doi.group_intervals_s:
            return int(cfg.doi.group_intervals_s[t])
    return cfg.doi.default_interval_s


class DoiMonitor:
    """Checks DOIs.  ``emit(kind, message)`` receives ``"event"`` and ``"alert"``
    messages (the Kafka glue produces them); ``None`` drops them."""

    def __init__(self, cfg: Config, registry: DoiRegistry, resolver: DoiResolver, warcs: RollingWarcWriter,
                 emit: Emit | None = None, metrics: DoiMetrics | None = None) -> None:
        self.cfg = cfg
        self.registry = registry
        self.resolver = resolver
        self.warcs = warcs
        self.emit = emit
        self.metrics = metrics or DoiMetrics()
        self._sem = asyncio.Semaphore(cfg.doi.max_concurrent_checks)
        self._not_before: dict[str, float] = {}  # host -> monotonic time (Retry-After)
        self._validated = False
        self.watcher = Watcher(Engine(cfg.engine), registry.baselines, profile="doi")
        self._alert_on = cfg.alerts.alerts_on("doi", cfg.doi.events_topic)
        self._pool: ProcessPoolExecutor | None = None
        if cfg.doi.judge_processes > 0:
            self._pool = ProcessPoolExecutor(cfg.doi.judge_processes, mp_context=multiprocessing.get_context("spawn"))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    async def _respect_retry_after(self, hosts: list[str]) -> None:
        now = time.monotonic()
        wait = max((self._not_before.get(h, 0.0) - now for h in hosts if h), default=0.0)
        if wait > 0:
            await asyncio.sleep(wait)

    async def _resolve(self, entry: DoiEntry, use_browser: bool) -> Resolution:
        d = self.cfg.doi
        hosts = [host_of(d.resolver_url), host_of(entry.landing_url or "")]
        res: Resolution | None = None
        for attempt in range(d.retries + 1):
            await self._respect_retry_after(hosts)
            res = await self.resolver.resolve(entry.doi, expected_url=entry.landing_url, use_browser=use_browser)
            self.metrics.resolution.observe(res.seconds)
            if res.outcome not in RETRYABLE or attempt == d.retries:
                break
            delay = res.retry_after_s if res.retry_after_s is not None else d.backoff_s * (2 ** attempt)
            if res.retry_after_s is not None and res.final_url:
                self._not_before[host_of(res.final_url)] = time.monotonic() + res.retry_after_s
                hosts.append(host_of(res.final_url))
            if delay > d.max_retry_after_s:
                res.reason += f"; not retried (Retry-After {delay:.0f} s > {d.max_retry_after_s:.0f} s)"
                break
            log.info("DOI %s: %s (%s), retry %d in %.1f s", entry.doi, res.outcome, res.reason, attempt + 1, delay)
            await asyncio.sleep(delay)
        assert res is not None
        return res

    async def check_doi(self, doi: str) -> CheckResult | None:
        """Check the watched ``doi`` (``None`` when it is no longer watched)."""
        entry = await asyncio.to_thread(self.registry.get, doi)
        if entry is None:
            return None
        return await self.check(entry)

    async def check(self, entry: DoiEntry) -> CheckResult:
        async with self._sem:
            try:
                return await self._check(entry)
            except DoiError as exc:  # a DOI that cannot be a DOI
                return await self._record(entry, datetime.now(UTC), "invalid_doi", str(exc), None, None, None, None)
            except (OSError, ValueError, RuntimeError, DriftlineError) as exc:  # a bug or a disk: still an outcome
                log.exception("DOI %s: check failed", entry.doi)
                return await self._record(entry, datetime.now(UTC), "error", f"{type(exc).__name__}: {exc}", None,
                                          None, None, None)

    async def _check(self, entry: DoiEntry) -> CheckResult:
        doi = normalise_doi(entry.doi)
        prev = await asyncio.to_thread(self.registry.state, doi)
        use_browser = bool(self.cfg.doi.render and prev is not None and prev.outcome == "blocked")
        res = await self._resolve(entry, use_browser)
        when = datetime.now(UTC)
        warc = None
        if res.status is not None and res.final_url:
            warc = await asyncio.to_thread(
                self.warcs.write_exchange, res.final_url, when, status=res.status, headers=res.headers,
                body=res.raw_body if res.raw_body is not None else res.body, request_headers=res.request_headers,
                rendered=res.body if res.browser else None)
        fp, verdict = await self._score(entry, res, when)
        decision = None
        if verdict is not None:
            decision = Decision(verdict.status, verdict.change, verdict.reason, verdict.drift_score or 0.0)
        return await self._record(entry, when, res.outcome, res.reason, res, warc, fp, decision, verdict)

    async def _score(self, entry: DoiEntry, res: Resolution,
                     when: datetime) -> tuple[Fingerprint | None, Verdict | None]:
        """Score the answer with the watcher's one step (profile ``doi``, history ``doi:<doi>``).

        Fingerprinting, the CPU-bound part, runs in ``doi.judge_processes``
        worker processes when configured (one per core beats threads under the
        GIL), else in a thread; the step then runs in a thread (it reads and
        writes the store).  The capture is the one the event describes (same
        URL, time and payload digest), so its verdict id is the one a
        streaming watcher computes for the event."""
        if res.status is None or res.final_url is None:
            return None, None
        cap = Capture(url=res.final_url, timestamp=when, content=res.body, content_type=res.content_type,
                      status=res.status, history=history_of(entry.doi), source="driftline-doi", job="doi-monitor",
                      doi=entry.doi, expected_title=entry.title)
        engine_cfg = self.watcher.engine.config
        if self._pool is not None:
            fp = await asyncio.get_running_loop().run_in_executor(self._pool, fingerprint_capture, cap, engine_cfg)
        else:
            fp = await asyncio.to_thread(fingerprint_capture, cap, engine_cfg)
        try:
            job = await asyncio.to_thread(self.watcher.job_for, cap, "doi")
            out = await asyncio.to_thread(functools.partial(self.watcher.score, cap, job, alert_on=self._alert_on,
                                                            fingerprint=fp))
        except ExtractError as exc:
            log.info("DOI %s: the answer could not be read: %s", entry.doi, exc)
            return fp, None
        return fp, out.verdict

    async def _record(self, entry: DoiEntry, when: datetime, outcome: str, reason: str, res: Resolution | None,
                      warc: WarcRef | None, fp: Fingerprint | None, decision: Decision | None,
                      verdict: Verdict | None = None) -> CheckResult:
        if decision is not None and decision.change == "blocked" and outcome in OBSERVED:
            outcome, reason = "blocked", decision.reason  # a challenge or cookie wall answered 200
        change = decision.change if decision is not None else (
            "blocked" if outcome == "blocked" else "gone" if outcome == "not_found" else "error")
        rec = fp.record if fp is not None else None
        body = res.body if res is not None else b""
        record: dict[str, Any] = {
            "doi": entry.doi, "checked_at": iso_utc(when), "outcome": outcome, "reason": reason,
            "http_status": res.status if res else None, "content_type": res.content_type if res else None,
            "final_url": res.final_url if res else None, "redirect_count": max(0, len(res.hops) - 1) if res else 0,
            "latency_s": round(res.seconds, 4) if res else None, "browser": res.browser if res else False,
            "method": res.hops[-1].method if res and res.hops else None,
            "head_status": res.head.status if res and res.head else None,
            "head_final_url": res.head.final_url if res and res.head else None,
            "head_disagrees": res.head_disagrees if res else None,
            "has_schema_org": bool(rec and "schema.org" in rec.sources),
            "citation_doi_present": bool(rec and rec.doi == entry.doi),
            "body_has_identifier": entry.doi.encode() in body.lower() if body else False,
            "change": change, "change_reason": decision.reason if decision else reason,
            "reason_detail": decision.reason if decision else None,
            "resolution": res.chain() if res else None,
            "warc": {"filename": warc.filename, "offset": warc.offset, "length": warc.length} if warc else None,
            "verdict_id": verdict.verdict_id if verdict is not None else None,
        }
        record["reason"] = decision.reason if decision is not None and outcome in OBSERVED else reason
        state = await asyncio.to_thread(self.registry.record_check, entry.doi, when, outcome, record)
        self.metrics.checks.labels(outcome=outcome).inc()
        self.metrics.changes.labels(change=change).inc()
        result = CheckResult(entry.doi, when, outcome, record["reason"], record, state, warc=warc, decision=decision,
                             verdict=verdict)
        if res is not None and warc is not None:
            result.event = self._event(entry, when, res, warc, record)
            if self.emit is not None:
                await self.emit("event", result.event)
        kind = state.failure_kind
        if kind is not None and state.failures == self.cfg.doi.alert_after_failures:
            result.alert = {"type": "driftline.doi-alert", "doi": entry.doi, "kind": kind, "failures": state.failures,
                            "since": iso_utc(when), "reason": reason, "final_url": record["final_url"],
                            "expected_title": entry.title}
            self.metrics.alerts.labels(kind=kind).inc()
            log.warning("DOI %s failed %d times in a row (%s): %s", entry.doi, state.failures, kind, reason)
            if self.emit is not None:
                await self.emit("alert", result.alert)
        return result

    def _event(self, entry: DoiEntry, when: datetime, res: Resolution, warc: WarcRef,
               record: dict[str, Any]) -> dict[str, Any]:
        """A driftline capture event referencing the WARC record (validated against the schema)."""
        url = res.final_url or doi_url(entry.doi, self.cfg.doi.resolver_url)
        event: dict[str, Any] = {
            "type": "driftline.capture", "url": url, "timestamp": iso_utc(when), "status_code": res.status,
            "mimetype": (res.content_type or "")[:256] or None, "content_length": len(res.body),
            "digest": payload_digest(res.body), "crawler": "driftline-doi", "job": "doi-monitor",
            "warc_filename": warc.filename, "warc_offset": warc.offset, "warc_length": warc.length,
            "doi": entry.doi,
            "watch": {"id": f"doi:{entry.doi}", "name": entry.title or entry.doi,
                      "interval_s": interval_of(entry, self.cfg)},
            "extra": {"expected_title": entry.title, "landing_url": entry.landing_url, "outcome": record["outcome"],
                      "change": record["change"], "resolution": res.chain(), "tags": list(entry.tags)},
        }
        if not self._validated:  # the shape is ours and fixed: checked once per process (tests check every one)
            validate_event(event)
            self._validated = True
        return event

    def refresh_gauges(self) -> None:
        states = self.registry.states()
        self.metrics.drifted.set(sum(1 for s in states if s.change in DRIFT_CHANGES))
        self.metrics.blocked.set(sum(1 for s in states if s.change == "blocked"))
        self.metrics.watched.set(self.registry.count())
