"""A consumer group's lag, read from the broker for the metrics: how far behind, in records and in time.

Why from the broker, on a timer, for *every* partition of the runner's topics (owned or not,
paused or not): a position held in memory would vanish with a rebalance (the series disappear
and lag alerts go blind) and stand still while partitions are paused.  Every replica of the group
exports every partition, so no series vanishes in a rebalance; rules take the owner's figure
(label ``owned="true"``) where there is one, else the max of the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable, Mapping

from aiokafka import AIOKafkaConsumer, TopicPartition

from watcher.metrics import Metrics

from .partition import Partition, record_time


class LagReader:
    """The lag gauges of one runner (``name``, the stage label) over ``topics``."""

    def __init__(self, name: str, topics: Iterable[str], metrics: Metrics) -> None:
        self.name = name
        self.topics = sorted(set(topics))
        self.metrics = metrics
        self.lag: dict[TopicPartition, int] = {}  # the group's lag per partition, from the last reading
        self._owned: dict[TopicPartition, str] = {}  # the "owned" label each partition's lag series has
        self._age_labels: set[TopicPartition] = set()  # partitions this replica exports an age for

    def _all_partitions(self, consumer: AIOKafkaConsumer) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for topic in self.topics
                for p in sorted(consumer.partitions_for_topic(topic) or ())]

    async def update(self, consumer: AIOKafkaConsumer, parts: Mapping[TopicPartition, Partition],
                     assigned: set[TopicPartition], rebalancing: bool) -> None:
        """Read the group's lag for every partition of our topics.

        Lag = end offset - committed offset (or - the log start when the group never committed);
        for a partition this replica owns (``assigned``; ``parts`` its state), work finished but
        not yet committed counts as done and the end offset is also taken from our fetches' high
        watermark.  ``rebalancing``: a rebalance is under way (age series are kept through it).
        """
        tps = self._all_partitions(consumer)
        if not tps:
            return
        self.metrics.assigned_partitions.labels(stage=self.name).set(len(assigned))
        ends = await consumer.end_offsets(tps)
        committed = await asyncio.gather(*(consumer.committed(tp) for tp in tps))
        never = [tp for tp, c in zip(tps, committed, strict=True) if c is None]
        starts = await consumer.beginning_offsets(never) if never else {}
        now = time.time()
        for tp, done in zip(tps, committed, strict=True):
            position = int(done) if done is not None else int(starts.get(tp, 0))
            part = parts.get(tp)
            if part is not None and part.done is not None and tp in assigned:
                position = max(position, part.done)
            end = int(ends.get(tp, 0))
            if tp in assigned:
                # The high watermark of our last fetch as well: Tansu's ListOffsets
                # answers stale end offsets for some logs (one per batch), fetches don't.
                end = max(end, int(consumer.highwater(tp) or 0))
            lag = max(0, end - position)
            self.lag[tp] = lag
            owned = "true" if tp in assigned else "false"
            labels = (self.name, tp.topic, str(tp.partition))
            if self._owned.get(tp, owned) != owned:  # one series per partition and replica
                with contextlib.suppress(KeyError):
                    self.metrics.consumer_lag.remove(*labels, self._owned[tp])
            self._owned[tp] = owned
            self.metrics.consumer_lag.labels(*labels, owned).set(lag)
            if part is None or tp not in assigned:
                continue
            oldest = part.current_ts or (record_time(part.queue[0]) if part.queue else None)
            if oldest is None and lag:
                oldest = part.last_ts  # nothing fetched yet (paused): the last one finished bounds it
                if oldest is None:
                    continue  # a new owner that has read nothing yet: unknown until the first record
            age = max(0.0, now - oldest) if oldest is not None and (lag or part.queue) else 0.0
            self._age_labels.add(tp)
            self.metrics.consumer_lag_seconds.labels(stage=self.name, topic=tp.topic,
                                                     partition=str(tp.partition)).set(age)
        if not rebalancing:
            self._drop_foreign_ages(assigned)

    def _drop_foreign_ages(self, assigned: set[TopicPartition]) -> None:
        """Remove the age series of partitions this replica no longer owns (their new owner
        exports them); not called while a rebalance is under way, so a partition handed back to
        us never loses its series."""
        for tp in sorted(self._age_labels - assigned):
            self._age_labels.discard(tp)
            with contextlib.suppress(KeyError):
                self.metrics.consumer_lag_seconds.remove(self.name, tp.topic, str(tp.partition))
