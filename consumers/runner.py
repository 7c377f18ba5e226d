"""A consumer-group loop: in order per partition, in parallel across partitions.

Why this shape: all captures of one history arrive on one partition (the
router keys them by canonical URL), and the verdict of a capture depends on
the verdicts before it, so one partition is worked strictly in order while
different partitions run concurrently.  At-least-once: the handler finishes
(verdict stored, results acknowledged by the broker) *before* the offset is
committed; a crash re-delivers, and idempotent processing makes that
harmless.

Memory is bounded: at most ``max_in_flight`` records are held; above that
every assigned partition is paused (``consumer.pause``) and ``getmany`` keeps
being called (so the member stays in the group) until the backlog halves.  While
paused the loop waits for that moment, not for a fetch timeout: a getmany over
paused partitions returns nothing, and waiting out its 200 ms after every
``max_in_flight`` records held a runner to 64 records per 200 ms.

Rebalances (aiokafka has no cooperative protocol, issues 929/933/335):
``on_partitions_revoked`` drops the revoked partitions' queued records (the
next owner re-reads them from the committed offset), waits for the record
being processed, and commits exactly the revoked partitions' offsets.  No
lock is held across ``getmany``.  A commit refused with ``CommitFailedError``
is logged: the new owner redoes that work, idempotently.

Lag is read from the broker on a timer (``metrics.lag_interval_s``) by
:mod:`consumers.lag`; each partition's state is a :class:`consumers.partition.Partition`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import CommitFailedError, IllegalStateError, KafkaError

from consumers.client import read_back, start_consumer
from consumers.lag import LagReader
from consumers.partition import Partition, Record, record_time, signature
from watcher.config import KafkaConfig
from watcher.kafkasec import kafka_security_options
from watcher.metrics import Metrics
from watcher.tasks import cancel_and_wait

log = logging.getLogger(__name__)

Handler = Callable[[Record], Awaitable[None]]


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, runner: PartitionRunner) -> None:
        self._runner = runner

    async def on_partitions_revoked(self, revoked: Iterable[TopicPartition]) -> None:
        await self._runner.on_revoked(list(revoked))

    async def on_partitions_assigned(self, assigned: Iterable[TopicPartition]) -> None:
        self._runner.on_assigned(list(assigned))


class PartitionRunner:
    """Runs ``handler`` over every record of ``topics`` for consumer group ``group_id``.

    The handler must not raise for a bad record (it dead-letters it); an
    exception escaping it is logged and the record counted as done, so one
    poison message never stops a partition.
    """

    def __init__(
        self,
        name: str,
        kafka: KafkaConfig,
        bootstrap: str,
        group_id: str,
        topics: Iterable[str],
        handler: Handler,
        metrics: Metrics,
        lag_interval_s: float = 10.0,
    ) -> None:
        self.name = name
        self.kafka = kafka
        self.bootstrap = bootstrap
        self.group_id = group_id
        self.topics = sorted(set(topics))
        self.handler = handler
        self.metrics = metrics
        self.consumer: AIOKafkaConsumer | None = None
        self._parts: dict[TopicPartition, Partition] = {}
        self._in_flight = 0
        self._paused = False
        self._drained = asyncio.Event()  # set when the records in flight fall to the resume level
        self._stopping = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._lag_task: asyncio.Task[None] | None = None
        self.lag_interval_s = lag_interval_s
        self._last_commit = time.monotonic()
        self._last_lag = 0.0
        self._rebalancing = False  # between a revocation and the next assignment
        self._lag = LagReader(name, self.topics, metrics)
        self._reset_topics: set[str] = set()
        self.processed = 0

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> None:
        k = self.kafka
        self.consumer = await start_consumer(lambda: AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            client_id=f"{k.client_id}-{self.name}",
            group_id=self.group_id,
            enable_auto_commit=False,
            auto_offset_reset=k.auto_offset_reset,
            session_timeout_ms=k.session_timeout_ms,
            heartbeat_interval_ms=k.heartbeat_interval_ms,
            rebalance_timeout_ms=k.rebalance_timeout_ms,
            max_poll_interval_ms=k.max_poll_interval_ms,
            request_timeout_ms=k.request_timeout_ms,
            metadata_max_age_ms=k.metadata_max_age_ms,
            max_poll_records=max(1, k.max_batch),
            **kafka_security_options(k),
        ), self.name, timeout_s=max(60.0, k.request_timeout_ms / 1000 * 2))
        self.consumer.subscribe(self.topics, listener=_Listener(self))
        self._loop_task = asyncio.create_task(self._fetch_loop(), name=f"driftline-{self.name}-fetch")
        self._lag_task = asyncio.create_task(self._lag_loop(), name=f"driftline-{self.name}-lag")
        log.info("%s: consuming %s as group %s", self.name, self.topics, self.group_id)

    async def stop(self, timeout_s: float | None = None) -> None:
        """Stop fetching, finish queued work (up to ``timeout_s``), commit, close."""
        self._stopping.set()
        if self._lag_task is not None:
            await cancel_and_wait([self._lag_task])  # its broker reads may lose a cancellation (watcher.tasks)
            self._lag_task = None
        if self._loop_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
            self._loop_task = None
        deadline = time.monotonic() + (self.kafka.shutdown_timeout_s if timeout_s is None else timeout_s)
        tasks = [p.task for p in self._parts.values() if p.task is not None]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=max(0.0, deadline - time.monotonic()))
            for t in pending:
                t.cancel()
            if pending:
                log.warning("%s: %d partitions still busy at shutdown; their work is redone on restart",
                            self.name, len(pending))
                await asyncio.wait(pending, timeout=5.0)
        await self.commit(force=True)
        if self.consumer is not None:
            with contextlib.suppress(KafkaError, asyncio.TimeoutError):
                await asyncio.wait_for(self.consumer.stop(), 10.0)
            self.consumer = None
        self._set_in_flight(0)
        log.info("%s: stopped after %d records", self.name, self.processed)

    # -- state queries -----------------------------------------------------

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def assignment(self) -> set[TopicPartition]:
        if self.consumer is None:
            return set()
        return set(self.consumer.assignment())

    async def caught_up(self) -> bool:
        """True when partitions are assigned, nothing is in flight, and every
        assigned partition is processed up to its end offset."""
        consumer = self.consumer
        assigned = self.assignment()
        if consumer is None or not assigned or self._in_flight:
            return False
        ends = await consumer.end_offsets(list(assigned))
        for tp in assigned:
            part = self._parts.get(tp)
            end = int(ends.get(tp, 0))
            if end == 0:
                continue
            if part is None or part.done is None or part.done < end:
                position = await consumer.position(tp)
                if position < end:
                    return False
        return True

    # -- rebalance callbacks -------------------------------------------------

    def on_assigned(self, assigned: list[TopicPartition]) -> None:
        self._rebalancing = False
        for tp in assigned:
            self._parts.setdefault(tp, Partition(tp))
        self.metrics.assigned_partitions.labels(stage=self.name).set(len(assigned))  # eager: the whole assignment
        log.info("%s: assigned %s", self.name, sorted(f"{tp.topic}[{tp.partition}]" for tp in assigned))

    async def on_revoked(self, revoked: list[TopicPartition]) -> None:
        self._rebalancing = True
        parts = [self._parts[tp] for tp in revoked if tp in self._parts]
        for part in parts:
            part.revoked = True
            self._drop_queue(part)
        busy = [p.task for p in parts if p.task is not None]
        if busy:
            timeout = max(1.0, self.kafka.rebalance_timeout_ms / 2000)
            _, pending = await asyncio.wait(busy, timeout=timeout)
            for t in pending:
                t.cancel()
        await self._commit_parts(parts)
        for part in parts:
            self._parts.pop(part.tp, None)
        # The age series of revoked partitions stay until the next lag reading after
        # the assignment (update_lag): an eager rebalance revokes every partition and
        # hands most of them back, and removing them here blanked the age of a
        # surviving owner for the whole rebalance (the recorded
        # driftline:consumer_lag_seconds:max and DriftlineConsumerLagOld's `for:` lost it).
        self.metrics.assigned_partitions.labels(stage=self.name).set(len(self.assignment() - set(revoked)))
        if revoked:
            log.info("%s: revoked %s", self.name, sorted(f"{tp.topic}[{tp.partition}]" for tp in revoked))

    def topics_recreated(self, topics: Iterable[str]) -> None:
        """The broker lost these topics and they were created anew (a broker
        with memory storage restarted): positions and finished offsets held
        for the old logs are meaningless, so read the new logs from the start.
        Without this a stale position inside the new log would skip records."""
        wanted = set(topics) & set(self.topics)
        if not wanted:
            return
        self._reset_topics |= wanted
        # Forget finished offsets of the old logs at once: a commit made before
        # the seek (e.g. in a rebalance callback) would otherwise skip records.
        for part in self._parts.values():
            if part.tp.topic in wanted:
                self._drop_queue(part)
                part.done = part.committed = None
                part.generation += 1

    async def _apply_resets(self) -> None:
        consumer = self.consumer
        if consumer is None or not self._reset_topics:
            return
        topics, self._reset_topics = self._reset_topics, set()
        tps = [tp for tp in consumer.assignment() if tp.topic in topics]
        for part in list(self._parts.values()):
            if part.tp.topic in topics:
                self._drop_queue(part)
                part.done = part.committed = None
        if tps:
            await consumer.seek_to_beginning(*tps)
        log.warning("%s: topics %s were re-created by a broker restart; reading them from the start",
                    self.name, sorted(topics))

    # -- the loop --------------------------------------------------------------

    async def _fetch_loop(self) -> None:
        consumer = self.consumer
        assert consumer is not None
        while not self._stopping.is_set():
            try:
                await self._apply_resets()
                self._apply_backpressure()
                if self._paused:
                    # Nothing can be fetched while paused: wait for the workers to drain to the
                    # resume level instead of holding the loop in a getmany for its whole timeout
                    # (that capped a runner at max_in_flight records per 200 ms: 312 events/s).
                    await self._wait_drained(0.2)
                    self._apply_backpressure()
                free = self.kafka.max_in_flight - self._in_flight
                # Still polled while paused (at once, nothing to wait for): a member that stops
                # polling for max_poll_interval_ms leaves the group.
                batch = await consumer.getmany(timeout_ms=0 if self._paused else 200,
                                               max_records=max(1, min(free, self.kafka.max_batch)))
                for tp, records in batch.items():
                    self._dispatch(tp, records)
                now = time.monotonic()
                if now - self._last_commit >= self.kafka.commit_interval_ms / 1000:
                    await self.commit()
                if now - self._last_lag >= 2.0:
                    self._last_lag = now
                    self._check_log_resets()
            except asyncio.CancelledError:
                raise
            except KafkaError as exc:
                log.warning("%s: Kafka error in fetch loop (retrying): %r", self.name, exc)
                await asyncio.sleep(1.0)
            except Exception:
                log.exception("%s: unexpected error in fetch loop (retrying)", self.name)
                await asyncio.sleep(1.0)

    def _apply_backpressure(self) -> None:
        consumer = self.consumer
        if consumer is None:
            return
        limit = self.kafka.max_in_flight
        if self._in_flight >= limit:
            assigned = consumer.assignment()
            if assigned:
                consumer.pause(*assigned)
            if not self._paused:
                log.debug("%s: %d in flight, pausing fetch", self.name, self._in_flight)
            self._paused = True
        elif self._paused and self._in_flight <= limit // 2:
            paused = consumer.paused()
            if paused:
                consumer.resume(*paused)
            self._paused = False
            log.debug("%s: backlog drained to %d, resuming", self.name, self._in_flight)

    def _dispatch(self, tp: TopicPartition, records: list[Record]) -> None:
        part = self._parts.get(tp)
        if part is None:
            if self.consumer is None or tp not in self.consumer.assignment():
                return  # revoked between fetch and dispatch: the next owner reads it
            part = self._parts[tp] = Partition(tp)
        if part.revoked:
            return
        if tp.topic in self._reset_topics:
            # Fetched at a position in the lost log, before the seek to the new log's start:
            # the seek reads them again (and the ones before them, which this fetch skipped).
            return
        part.queue.extend(records)
        self._set_in_flight(self._in_flight + len(records))
        if part.task is None:
            part.task = asyncio.create_task(self._work(part), name=f"driftline-{self.name}-{tp.topic}-{tp.partition}")

    async def _work(self, part: Partition) -> None:
        try:
            while part.queue and not part.revoked:
                record = part.queue.popleft()
                generation = part.generation
                part.current_ts = record_time(record)
                try:
                    await self.handler(record)
                except asyncio.CancelledError:
                    self._set_in_flight(self._in_flight - 1)
                    raise
                except Exception:  # the handlers dead-letter every failure: this is a bug in that path
                    log.exception("%s: handler raised for %s[%d]@%d; skipping it", self.name,
                                  record.topic, record.partition, record.offset,
                                  extra={"topic": record.topic, "partition": record.partition,
                                         "offset": record.offset, "reason": "unhandled"})
                    self.metrics.events_failed.labels(reason="unhandled").inc()
                finally:
                    part.current_ts = None
                if part.generation == generation:
                    part.done = record.offset + 1
                    part.last_sig = signature(record)
                part.last_ts = record_time(record)
                self.processed += 1
                self.metrics.records_processed.labels(stage=self.name).inc()
                self._set_in_flight(self._in_flight - 1)
        finally:
            part.task = None

    async def _wait_drained(self, timeout_s: float) -> None:
        """Return once the records in flight fell to the resume level, or after ``timeout_s``."""
        self._drained.clear()
        if self._in_flight <= self.kafka.max_in_flight // 2:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._drained.wait(), timeout_s)

    def _drop_queue(self, part: Partition) -> None:
        if part.queue:
            self._set_in_flight(self._in_flight - len(part.queue))
            part.queue.clear()

    def _set_in_flight(self, value: int) -> None:
        delta = max(0, value) - self._in_flight
        self._in_flight = max(0, value)
        if self._in_flight <= self.kafka.max_in_flight // 2:
            self._drained.set()
        if delta:
            self.metrics.in_flight.inc(delta)

    def _check_log_resets(self) -> None:
        """Notice a log shorter than what we finished: the broker lost it."""
        consumer = self.consumer
        if consumer is None:
            return
        for tp in consumer.assignment():
            high = consumer.highwater(tp)
            part = self._parts.get(tp)
            if high is None or part is None:
                continue
            if part.done is not None and high < part.done and tp.topic not in self._reset_topics:
                # The log is shorter than what we finished: the broker lost it
                # (memory storage restarted) and someone re-created the topic.
                log.warning("%s: %s[%d] high watermark %d is below our offset %d: log was reset",
                            self.name, tp.topic, tp.partition, high, part.done)
                self.topics_recreated([tp.topic])

    # -- lag ------------------------------------------------------------------------

    async def _lag_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                await asyncio.wait_for(self.update_lag(), max(5.0, self.lag_interval_s))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # broker away: keep the last reading, try again
                log.debug("%s: lag update failed: %r", self.name, exc)
            await asyncio.sleep(self.lag_interval_s)

    async def update_lag(self) -> None:
        """Read the group's lag for every partition of our topics from the broker (:mod:`consumers.lag`)."""
        if self.consumer is not None:
            await self._lag.update(self.consumer, self._parts, self.assignment(), self._rebalancing)

    @property
    def lag(self) -> dict[TopicPartition, int]:
        """The group's lag per partition, from the last reading."""
        return self._lag.lag

    # -- commits ----------------------------------------------------------------

    async def commit(self, force: bool = False) -> None:
        """Commit finished offsets of the partitions this member owns."""
        self._last_commit = time.monotonic()
        await self._commit_parts([p for p in self._parts.values() if not p.revoked or force])

    async def _commit_parts(self, parts: list[Partition]) -> None:
        consumer = self.consumer
        if consumer is None:
            return
        # Never commit for a topic whose log was lost and is not yet read again from its start: an
        # offset reached at a stale position would make the records before it skipped for good.
        offsets = {p.tp: p.done for p in parts
                   if p.done is not None and p.done != p.committed and p.tp.topic not in self._reset_topics}
        if not offsets:
            return
        if not await self._offsets_intact([p for p in parts if p.tp in offsets and p.committed is not None]):
            return
        if not await self._records_intact([p for p in parts if p.tp in offsets and p.committed is None]):
            return
        try:
            await consumer.commit(offsets)
        except CommitFailedError as exc:
            log.warning("%s: commit refused after a rebalance (work is redone by the new owner): %s", self.name, exc)
            return
        except IllegalStateError as exc:
            log.warning("%s: commit of partitions no longer assigned skipped: %s", self.name, exc)
            return
        except KafkaError as exc:
            log.warning("%s: commit failed, retrying later: %r", self.name, exc)
            return
        for p in parts:
            if p.tp in offsets:
                p.committed = offsets[p.tp]
        log.debug("%s: committed %s", self.name, {f"{tp.topic}[{tp.partition}]": o for tp, o in offsets.items()})

    async def _offsets_intact(self, parts: list[Partition]) -> bool:
        """True when the broker still holds the offsets this member committed last.

        Why: a broker that restarted without its data (the embedded broker's
        memory storage) has new, empty logs under the old topic names.  Until
        the member notices, it fetches at its old positions: once the new log
        is longer than that, the records before the position are silently
        skipped, and committing the next offset would make the skip permanent
        (in one run 1 of 400 events produced the moment the broker answered was
        lost that way).  The group's committed offset vanishing (or going
        backwards) is the sure sign: then nothing is committed, and the topic
        is read again from the start of its new log (at least once: a record
        read twice is scored idempotently).  Costs one offset fetch per
        partition per commit, concurrently.
        """
        consumer = self.consumer
        if consumer is None or not parts:
            return True
        try:
            found = await asyncio.wait_for(asyncio.gather(*(consumer.committed(p.tp) for p in parts)),
                                           self.kafka.request_timeout_ms / 1000)
        except (KafkaError, TimeoutError) as exc:
            log.warning("%s: cannot check committed offsets (%r); not committing now", self.name, exc)
            return False
        for part, theirs in zip(parts, found, strict=True):
            if part.committed is not None and (theirs is None or theirs < part.committed):
                log.warning("%s: the broker lost the committed offset of %s[%d] (ours %d, its %s): it restarted "
                            "without its data; reading %s again from the start of its new log", self.name,
                            part.tp.topic, part.tp.partition, part.committed, theirs, part.tp.topic)
                self.topics_recreated([part.tp.topic])
                return False
        return True

    async def _records_intact(self, parts: list[Partition]) -> bool:
        """True when the broker's log still holds, at its offset, the last record each partition
        finished: checked before the first commit of a partition this member has not committed yet.

        Why: :meth:`_offsets_intact` sees a lost log by the group's committed offset vanishing, so
        it cannot see one before this member's first commit.  Records finished just before a
        memory-storage broker restarted, and not yet committed, would otherwise have their offset
        committed into the new log: the records a crawler wrote there first were skipped for good
        (in one run 20 of 400, the counts read before the restart).  One probe per partition per
        assignment, without a group, only on that first commit.
        """
        # A snapshot: workers go on finishing records (and moving last_sig) while the probe reads.
        sigs = {p.tp: p.last_sig for p in parts if p.last_sig is not None and p.done is not None}
        if self.consumer is None or not sigs:
            return True
        try:
            found = await read_back(self.bootstrap, self.kafka, {tp: sig[0] for tp, sig in sigs.items()},
                                    f"{self.name}-probe")
        except (KafkaError, TimeoutError) as exc:
            log.warning("%s: cannot read back the last finished records (%r); not committing now", self.name, exc)
            return False
        lost = {tp.topic for tp, sig in sigs.items() if found[tp] is None or signature(found[tp]) != sig}
        if lost:
            log.warning("%s: the broker's logs of %s no longer hold the records this member finished (it "
                        "restarted without its data); reading them again from the start", self.name, sorted(lost))
            self.topics_recreated(lost)
            return False
        return True
