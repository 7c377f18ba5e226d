"""The scorer: one event in, one stored verdict and its messages out.

Per event: parse -> skip rule (for an event straight from an input topic; a
re-keyed copy passed the router's) -> ``Watcher.job`` (the event's
:class:`~watcher.job.Job`, made once: the history, which is the router's Kafka
key where there is one, the seed, the profile, the verdict id, and, unless the
verdict is stored already, the state and whether the payload is the
reference's) -> acquire the bytes (not for a re-delivered event, nor for the
reference's payload again) -> ``Watcher.score`` with the Job (stores the
verdict, idempotently, with any corrections a late capture causes and the
alerts it owes) -> publish the verdicts, the owed alerts (marked sent
once the broker acknowledged them) and a crawl-stop recommendation when one
completes -> wait for the broker's acknowledgements.  Only then does the runner commit the offset.

Any :class:`~watcher.errors.DriftlineError` dead-letters the event with its
reason slug; any other exception is a bug: logged with its traceback and
dead-lettered as ``internal``.  Either way the partition goes on.  The one
exception is a store outage (connection lost, database restarting): that is
not the event's fault, so the event is retried with backoff for
``kafka.store_retry_s`` before it is dead-lettered.

The engine and the store are synchronous; they run in a small thread pool so
the event loop keeps heartbeating, fetching and publishing meanwhile.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, Protocol, TypeVar

from watcher.actuators import Actuator, apply_recommendation, guidance_for
from watcher.config import Config
from watcher.errors import DriftlineError, SkipEvent, StoreError, TooLargeError
from watcher.events import CaptureEvent, parse_event, should_skip
from watcher.job import Job
from watcher.metrics import Metrics
from watcher.model import Capture, Fingerprint, Verdict
from watcher.profiles.base import Profile
from watcher.recommend import Recommendation
from watcher.seeds.stream import SeedReporter, report_message
from watcher.store.base import BaselineStore
from watcher.store.labels import seed_muted
from watcher.watch import Outcome

from .publish.deadletter import DeadLetters, header, source_position
from .publish.messages import H_SRC_FORMAT, alert_message, verdict_message
from .publish.publisher import Outgoing, Publisher

log = logging.getLogger(__name__)

# Store failures that a later attempt can cure (connection lost, database
# locked or restarting); anything else (a damaged record) is the event's own.
TRANSIENT_STORE_REASONS = frozenset({"store", "store_open", "store_read", "store_write"})

Record = Any  # aiokafka ConsumerRecord
T = TypeVar("T")


class WatcherLike(Protocol):
    """What the scorer needs of :class:`watcher.watch.Watcher`."""

    def job(self, url: str, timestamp: datetime, *, digest: str | None = None, seed: str | None = None,
            history: str | None = None, key: str | None = None, profile: str | Profile | None = None,
            redelivery: bool = True) -> Job: ...

    @property
    def store(self) -> BaselineStore: ...

    def score(self, capture: Capture, job: Job | None = None, *, alert_on: frozenset[str] = frozenset(),
              fingerprint: Fingerprint | None = None) -> Outcome: ...


class AcquirerLike(Protocol):
    """What the scorer needs of :class:`watcher.acquire.Acquirer`."""

    async def get(self, event: CaptureEvent) -> Capture: ...


class RecommenderLike(Protocol):
    def observe(self, verdict: Verdict, event: Any = None) -> Any: ...


def _history_key(record: Record) -> str | None:
    """The router's Kafka key of a re-keyed copy: the history, as the router computed it (``None`` when it is
    not UTF-8, which the router never writes: the history is then computed from the URL again)."""
    try:
        return bytes(record.key).decode("utf-8") or None
    except UnicodeDecodeError:
        return None


def event_collection(event: CaptureEvent | None) -> str | None:
    """The crawl job or collection an event belongs to (a metrics label, bounded by
    :meth:`watcher.metrics.Metrics.collection`): the event's ``job``, else an
    Archive-It style ``collection``/``collection_id`` field."""
    if event is None:
        return None
    if event.job:
        return event.job
    for key in ("collection", "collection_id", "crawl", "crawl_id"):
        value = event.extra.get(key)
        if value is not None and str(value):
            return str(value)
    return None


class Scorer:
    def __init__(
        self,
        cfg: Config,
        *,
        watcher: WatcherLike,
        acquirer: AcquirerLike,
        publisher: Publisher,
        dead_letters: DeadLetters,
        metrics: Metrics,
        recommender: RecommenderLike | None = None,
        executor: ThreadPoolExecutor | None = None,
        actuator: Actuator | None = None,
        seeds: SeedReporter | None = None,
    ) -> None:
        self.cfg = cfg
        self.watcher = watcher
        self.acquirer = acquirer
        self.publisher = publisher
        self.dead_letters = dead_letters
        self.metrics = metrics
        self.recommender = recommender
        self.executor = executor
        self.actuator = actuator
        self.seeds = seeds
        self.verdicts = 0
        # Where the Kafka path keeps the last advice it published per history (the store's advice ledger,
        # set by the app): called once the advice is acknowledged, so a restart does not publish it again.
        self.advice_published: Callable[[str, str], object] | None = None

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, functools.partial(fn, *args))

    def _format(self, record: Record) -> str:
        fmt = header(record, H_SRC_FORMAT)
        if fmt is not None:
            return fmt.decode("utf-8", "replace")
        return self.cfg.kafka.input_topics.get(record.topic, "auto")

    async def handle(self, record: Record) -> None:
        """Score one record; never raises (except on cancellation at shutdown)."""
        started = time.perf_counter()
        if record.topic in self.cfg.kafka.input_topics:  # re-keyed copies were counted by the router
            self.metrics.events_consumed.labels(topic=record.topic).inc()
        try:
            await self._score_retrying(record)
        except SkipEvent as skip:
            self.metrics.events_skipped.labels(reason=skip.reason).inc()
        except DriftlineError as exc:
            self.metrics.events_failed.labels(reason=exc.reason).inc()
            await self.dead_letters.send(record, exc.reason, str(exc), type(exc).__name__)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must not stop the partition
            topic, partition, offset, _ = source_position(record)
            log.exception("internal error scoring %s[%d]@%d", topic, partition, offset,
                          extra={"topic": topic, "partition": partition, "offset": offset, "reason": "internal"})
            self.metrics.events_failed.labels(reason="internal").inc()
            await self.dead_letters.send(record, "internal", repr(exc), type(exc).__name__)
        finally:
            self.metrics.processing_seconds.observe(time.perf_counter() - started)

    async def _score_retrying(self, record: Record) -> None:
        """:meth:`_score`, retried while the store is unreachable.

        A store outage says nothing about the event: dead-lettering every event
        during a database restart would be wrong.  The partition waits (order
        is kept) with backoff for up to ``kafka.store_retry_s``; after that the
        event is dead-lettered with the store's reason and the partition goes
        on.  Every step is idempotent, so a retry after a partial write is safe.
        """
        deadline = time.monotonic() + self.cfg.kafka.store_retry_s
        delay = 0.5
        while True:
            try:
                await self._score(record)
                return
            except StoreError as exc:
                if exc.reason not in TRANSIENT_STORE_REASONS or time.monotonic() + delay > deadline:
                    raise
                topic, partition, offset, _ = source_position(record)
                log.warning("store unavailable scoring %s[%d]@%d (%s: %s); retrying in %.1fs", topic, partition,
                            offset, exc.reason, exc, delay,
                            extra={"topic": topic, "partition": partition, "offset": offset, "reason": exc.reason})
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)

    async def _score(self, record: Record) -> None:
        topic, partition, offset, _ = source_position(record)
        event = parse_event(record.value if record.value is not None else b"", self._format(record))
        event = event.with_position(topic, partition, offset)
        # The collection's series exist (at 0) before its first verdict is counted.
        self.metrics.collection(event_collection(event))
        keyed = record.topic == self.cfg.kafka.keyed_topic and record.key is not None
        if not keyed:  # a re-keyed copy passed the router's skip rule
            reason = should_skip(event, self.cfg.events)
            if reason is not None:
                raise SkipEvent(reason)
        cap = self.cfg.acquire.live.max_bytes
        if event.content is not None and len(event.content) > cap:
            # The payload cap holds for bytes that came inline as for fetched ones.
            raise TooLargeError(f"inline content of {len(event.content)} bytes is over acquire.live.max_bytes ({cap})")
        profile = self.cfg.kafka.topic_profiles.get(event.topic or topic)
        # The event's Job: made once, here, before anything is fetched (a re-delivered event is found now).
        job = await self._call(functools.partial(
            self.watcher.job, event.url, event.timestamp, digest=event.digest, seed=event.seed,
            history=event.watch_history, key=_history_key(record) if keyed else None, profile=profile))
        if job.needs_payload:
            started = time.perf_counter()
            capture = await self.acquirer.get(event)
            self.metrics.stage_seconds.labels(stage="acquire").observe(time.perf_counter() - started)
        else:
            capture = event.to_capture(None, source="digest")
        alert_on = self.cfg.alerts.alerts_on(profile or self.cfg.engine.profile, event.topic or topic)
        outcome = await self._call(functools.partial(self.watcher.score, capture, job, alert_on=alert_on))
        owed = frozenset(outcome.alerts) if outcome.stored_now else None
        await self.publish(outcome.verdict, event, owed)
        for corrected in outcome.corrections:  # later captures re-scored against the late one's baseline
            await self.publish(corrected, None, owed)

    async def publish(self, verdict: Verdict, event: CaptureEvent | None, owed: frozenset[str] | None = None) -> None:
        """Send the verdict, its alert and any recommendation; return once acknowledged.  ``owed``: the
        verdict ids owed an alert, when the caller knows them (recorded just now with the verdicts);
        ``None``: the store says (a re-delivered event's alert may be recorded and unsent)."""
        k = self.cfg.kafka
        key = verdict.history.encode("utf-8")
        out: list[Outgoing] = [(k.results_topic, key, verdict_message(verdict), None)]
        # Owed alerts are recorded with their verdict (one transaction); sent here, marked once acknowledged.
        alert = verdict.verdict_id in owed if owed is not None else \
            await self._call(self.watcher.store.alert_pending, verdict.verdict_id)
        if alert and await self._call(seed_muted, self.watcher.store, verdict.seed or verdict.url):
            # the curator muted this seed (driftline review): the alert is owed to nobody
            await self._call(self.watcher.store.mark_alert_sent, verdict.verdict_id)
            alert = False
        if alert:
            out.append((k.alerts_topic, key, alert_message(verdict), None))
        recommendation = None
        if self.recommender is not None:
            recommendation = await self._call(self.recommender.observe, verdict, event)
        if recommendation is not None:
            out.append((k.recommendations_topic, key, recommendation.to_json().encode("utf-8"), None))
        guidance = None
        if self.seeds is not None:
            seed_report = await self._call(self.seeds.observe, verdict, self.watcher.store)
            if seed_report is not None:
                out.append((self.cfg.seeds.topic, key, report_message(seed_report), None))
                kind = self.cfg.actuator.kind
                guidance = guidance_for(seed_report, self.cfg.actuator, job=verdict.job,
                                        crawler=None if kind == "none" else kind)
                # published when the advice changes, not with every report that repeats it
                # in the executor: the check may read the store's advice ledger (a database round trip)
                if guidance is not None and await self._call(self.seeds.advice_changed, verdict.history, guidance.id):
                    out.append((k.recommendations_topic, key, guidance.to_json().encode("utf-8"), None))
                else:
                    guidance = None
        started = time.perf_counter()
        await self.publisher.send_all(out)
        self.metrics.stage_seconds.labels(stage="publish").observe(time.perf_counter() - started)
        # A correction (a later capture re-scored) has no event: its verdict names the job.
        collection = self.metrics.collection(event_collection(event) or verdict.job)
        if alert:
            await self._call(self.watcher.store.mark_alert_sent, verdict.verdict_id)
            self.metrics.alerts.labels(change=verdict.change, collection=collection).inc()
        if recommendation is not None:
            self.metrics.recommendations.labels(action=str(getattr(recommendation, "action", "stop-seed"))).inc()
            if self.actuator is not None and isinstance(recommendation, Recommendation):
                # Only once the recommendation is on its topic: the crawler is
                # told what driftline has durably said, never more.
                await apply_recommendation(self.actuator, recommendation)
        if guidance is not None:
            if self.advice_published is not None:
                await self._call(self.advice_published, verdict.history, guidance.id)
            self.metrics.recommendations.labels(action=guidance.action).inc()
            await apply_recommendation(self.actuator, guidance)  # acted on only where actuator.act_on names it
        self.metrics.verdicts.labels(status=verdict.status, change=verdict.change, collection=collection).inc()
        for name, measure in verdict.measures.items():
            if measure.score is not None:
                self.metrics.observe_measure(name, measure.score)
        self.verdicts += 1
        log.debug("verdict %s %s %s: %s", verdict.verdict_id, verdict.change, verdict.url, verdict.reason)
