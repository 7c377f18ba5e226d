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
being called (so the member stays in the group) until the backlog halves.

Rebalances (aiokafka has no cooperative protocol, issues 929/933/335):
``on_partitions_revoked`` drops the revoked partitions' queued records (the
next owner re-reads them from the committed offset), waits for the record
being processed, and commits exactly the revoked partitions' offsets.  No
lock is held across ``getmany``.  A commit refused with ``CommitFailedError``
is logged: the new owner redoes that work, idempotently.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import CommitFailedError, IllegalStateError, KafkaError

from watcher.config import KafkaConfig
from watcher.kafkasec import kafka_security_options
from watcher.metrics import Metrics

log = logging.getLogger(__name__)

Record = Any  # aiokafka.structs.ConsumerRecord (untyped library)
Handler = Callable[[Record], Awaitable[None]]


@dataclass(eq=False)
class _Partition:
    tp: TopicPartition
    queue: deque[Record] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    done: int | None = None  # next offset to commit (last finished + 1)
    committed: int | None = None
    revoked: bool = False
    generation: int = 0  # bumped when the partition's log was reset (a memory broker restarted)


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
    ) -> None:
        self.name = name
        self.kafka = kafka
        self.bootstrap = bootstrap
        self.group_id = group_id
        self.topics = sorted(set(topics))
        self.handler = handler
        self.metrics = metrics
        self.consumer: AIOKafkaConsumer | None = None
        self._parts: dict[TopicPartition, _Partition] = {}
        self._in_flight = 0
        self._paused = False
        self._stopping = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._last_commit = time.monotonic()
        self._last_lag = 0.0
        self._lag_labels: set[TopicPartition] = set()
        self._reset_topics: set[str] = set()
        self.processed = 0

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> None:
        k = self.kafka
        self.consumer = AIOKafkaConsumer(
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
        )
        await self.consumer.start()
        self.consumer.subscribe(self.topics, listener=_Listener(self))
        self._loop_task = asyncio.create_task(self._fetch_loop(), name=f"driftline-{self.name}-fetch")
        log.info("%s: consuming %s as group %s", self.name, self.topics, self.group_id)

    async def stop(self, timeout_s: float | None = None) -> None:
        """Stop fetching, finish queued work (up to ``timeout_s``), commit, close."""
        self._stopping.set()
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
        for tp in assigned:
            self._parts.setdefault(tp, _Partition(tp))
        log.info("%s: assigned %s", self.name, sorted(f"{tp.topic}[{tp.partition}]" for tp in assigned))

    async def on_revoked(self, revoked: list[TopicPartition]) -> None:
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
            if part.tp in self._lag_labels:
                self._lag_labels.discard(part.tp)
                self.metrics.consumer_lag.remove(part.tp.topic, str(part.tp.partition))
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
                free = self.kafka.max_in_flight - self._in_flight
                batch = await consumer.getmany(timeout_ms=200, max_records=max(1, min(free, self.kafka.max_batch)))
                for tp, records in batch.items():
                    self._dispatch(tp, records)
                now = time.monotonic()
                if now - self._last_commit >= self.kafka.commit_interval_ms / 1000:
                    await self.commit()
                if now - self._last_lag >= 2.0:
                    self._last_lag = now
                    self._update_lag()
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
            part = self._parts[tp] = _Partition(tp)
        if part.revoked:
            return
        part.queue.extend(records)
        self._set_in_flight(self._in_flight + len(records))
        if part.task is None:
            part.task = asyncio.create_task(self._work(part), name=f"driftline-{self.name}-{tp.topic}-{tp.partition}")

    async def _work(self, part: _Partition) -> None:
        try:
            while part.queue and not part.revoked:
                record = part.queue.popleft()
                generation = part.generation
                try:
                    await self.handler(record)
                except asyncio.CancelledError:
                    self._set_in_flight(self._in_flight - 1)
                    raise
                except Exception:
                    log.exception("%s: handler raised for %s[%d]@%d; skipping it", self.name,
                                  record.topic, record.partition, record.offset)
                if part.generation == generation:
                    part.done = record.offset + 1
                self.processed += 1
                self._set_in_flight(self._in_flight - 1)
        finally:
            part.task = None

    def _drop_queue(self, part: _Partition) -> None:
        if part.queue:
            self._set_in_flight(self._in_flight - len(part.queue))
            part.queue.clear()

    def _set_in_flight(self, value: int) -> None:
        delta = max(0, value) - self._in_flight
        self._in_flight = max(0, value)
        if delta:
            self.metrics.in_flight.inc(delta)

    def _update_lag(self) -> None:
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
                continue
            position = part.done if part.done is not None else part.committed
            if position is None:
                continue
            self._lag_labels.add(tp)
            self.metrics.consumer_lag.labels(topic=tp.topic, partition=str(tp.partition)).set(max(0, high - position))

    # -- commits ----------------------------------------------------------------

    async def commit(self, force: bool = False) -> None:
        """Commit finished offsets of the partitions this member owns."""
        self._last_commit = time.monotonic()
        await self._commit_parts([p for p in self._parts.values() if not p.revoked or force])

    async def _commit_parts(self, parts: list[_Partition]) -> None:
        consumer = self.consumer
        if consumer is None:
            return
        offsets = {p.tp: p.done for p in parts if p.done is not None and p.done != p.committed}
        if not offsets:
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
