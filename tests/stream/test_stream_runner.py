"""The consumer-group runner on a real broker: order per partition, bounded
in-flight work (pause/resume), commits after the work, rebalances."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from consumers.client import produce
from consumers.runner import PartitionRunner
from tests.fixtures.kafka import KafkaNames, stream_config
from watcher.broker import EmbeddedBroker, ensure_topics
from watcher.metrics import Metrics

pytestmark = pytest.mark.kafka


async def _committed(boot: str, group: str, topic: str, partitions: int) -> dict[int, int | None]:
    consumer = AIOKafkaConsumer(bootstrap_servers=boot, group_id=group, enable_auto_commit=False)
    await consumer.start()
    try:
        return {p: await consumer.committed(TopicPartition(topic, p)) for p in range(partitions)}
    finally:
        await consumer.stop()


async def _committed_or_0(boot: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    return {p: c or 0 for p, c in (await _committed(boot, group, topic, partitions)).items()}


async def _partitions(boot: str, topic: str) -> int:
    """How many partitions the topic has now."""
    consumer = AIOKafkaConsumer(bootstrap_servers=boot, enable_auto_commit=False)
    await consumer.start()
    try:
        await consumer.topics()  # fresh metadata: the topic was created a moment ago
        return len(consumer.partitions_for_topic(topic) or ())
    finally:
        await consumer.stop()


async def test_order_backpressure_and_commits(kafka_broker: EmbeddedBroker, kafka_names: KafkaNames,
                                              tmp_path: Path) -> None:
    boot = kafka_broker.bootstrap_servers
    cfg = stream_config(boot, kafka_names, tmp_path, kafka={"max_in_flight": 8, "max_batch": 50})
    topic = kafka_names.topic("runner")
    await ensure_topics(boot, [topic], 2)
    n = 200
    await produce(boot, topic, [str(i).encode() for i in range(n)])
    seen: dict[int, list[int]] = defaultdict(list)
    peak = 0
    paused_seen: list[int] = []  # records handled while the runner held its partitions paused
    runner: PartitionRunner | None = None

    async def handler(record: Any) -> None:
        nonlocal peak
        assert runner is not None
        peak = max(peak, runner.in_flight)
        if runner.consumer is not None and runner.consumer.paused():
            paused_seen.append(record.offset)
        seen[record.partition].append(record.offset)
        await asyncio.sleep(0.002)

    runner = PartitionRunner("test", cfg.kafka, boot, kafka_names.group, [topic], handler, Metrics())
    await runner.start()
    consumer = runner.consumer
    assert consumer is not None
    fetch = consumer.getmany
    polls_paused: list[int] = []  # timeout_ms of every poll made while the whole assignment was paused

    async def watched_getmany(*args: Any, **kwargs: Any) -> Any:
        assigned = consumer.assignment()
        if assigned and assigned <= consumer.paused():
            polls_paused.append(int(kwargs.get("timeout_ms", 0)))
        return await fetch(*args, **kwargs)

    consumer.getmany = watched_getmany
    try:
        # The last record is appended to `seen` before its handler returns,
        # so "all seen" and "caught up" are distinct moments: poll for both.
        deadline = time.monotonic() + 60
        caught = False
        while not caught and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            caught = sum(len(v) for v in seen.values()) >= n and await runner.caught_up()
        assert caught, f"runner never caught up: {sum(len(v) for v in seen.values())}/{n} handled"
    finally:
        await runner.stop()
    assert sum(len(v) for v in seen.values()) == n
    for offsets in seen.values():
        assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    assert 0 < peak <= 8, f"in-flight work reached {peak} (limit 8)"
    # Paused, a fetch cannot return records: the runner polls without waiting (to stay in the
    # group) and waits for its workers instead.  Waiting out a fetch timeout there held a runner to
    # max_in_flight records per timeout (64 per 200 ms with the defaults).
    assert paused_seen, "the runner never paused: the backlog did not exercise backpressure"
    assert not [t for t in polls_paused if t > 0], f"polls over paused partitions waited: {polls_paused} ms"
    committed = await _committed(boot, kafka_names.group, topic, 2)
    assert {p: committed[p] for p in seen} == {p: max(o) + 1 for p, o in seen.items()}


async def test_rebalance_hands_over_without_losing_records(kafka_broker: EmbeddedBroker, kafka_names: KafkaNames,
                                                           tmp_path: Path) -> None:
    boot = kafka_broker.bootstrap_servers
    cfg = stream_config(boot, kafka_names, tmp_path, kafka={"max_in_flight": 16})
    topic = kafka_names.topic("rebalance")
    await ensure_topics(boot, [topic], 4)
    n = 400
    await produce(boot, topic, [str(i).encode() for i in range(n)])
    seen: dict[str, set[int]] = defaultdict(set)
    count = 0

    def make(name: str) -> Any:
        async def handler(record: Any) -> None:
            nonlocal count
            seen[f"{record.partition}"].add(record.offset)
            count += 1
            await asyncio.sleep(0.01)
        return handler

    first = PartitionRunner("one", cfg.kafka, boot, kafka_names.group, [topic], make("one"), Metrics())
    second = PartitionRunner("two", cfg.kafka, boot, kafka_names.group, [topic], make("two"), Metrics())
    await first.start()
    try:
        while count < 50:
            await asyncio.sleep(0.02)
        await second.start()  # a rebalance while the first member is busy
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if sum(len(v) for v in seen.values()) >= n and await first.caught_up() and await second.caught_up():
                break
            await asyncio.sleep(0.1)
        shared = bool(first.assignment()) and bool(second.assignment())
    finally:
        await second.stop()
        await first.stop()
    assert sum(len(v) for v in seen.values()) == n  # every record handled (re-deliveries allowed)
    assert shared, "the second member never got partitions"
    committed = await _committed(boot, kafka_names.group, topic, 4)
    assert sum(c or 0 for c in committed.values()) == n


async def test_offsets_finished_before_a_memory_broker_restart_are_not_committed_into_its_new_log(
    private_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path,
) -> None:
    """Records finished just before a memory-storage broker restarted, and not committed yet: their
    offset means nothing in the new log.  Committed there, the first records a crawler writes to
    the new log would be skipped for good (seen in the restart test: 20 of 400 events lost)."""
    boot = private_broker.bootstrap_servers
    # No commit on a timer before the restart: the first commit comes after it.
    cfg = stream_config(boot, kafka_names, tmp_path, kafka={"commit_interval_ms": 3_600_000})
    topic = kafka_names.topic("relog")
    await ensure_topics(boot, [topic], 1)
    await produce(boot, topic, [f"old-{i}".encode() for i in range(10)])
    seen: list[bytes] = []

    async def handler(record: Any) -> None:
        seen.append(record.value)

    runner = PartitionRunner("test", cfg.kafka, boot, kafka_names.group, [topic], handler, Metrics())
    await runner.start()
    try:
        deadline = time.monotonic() + 30
        while len(seen) < 10 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert len(seen) == 10
        private_broker.kill()
        await private_broker.start()  # same port, memory storage: no topic, no offsets, no group
        await ensure_topics(boot, [topic], 1)
        new = [f"new-{i}".encode() for i in range(30)]
        await produce(boot, topic, new)
        await runner.commit(force=True)  # the commit a timer or a rebalance makes after the restart
        deadline = time.monotonic() + 60
        while not set(new) <= set(seen) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            await runner.commit(force=True)
        # The restarted Tansu refuses some requests for a while (README limits): the runner commits
        # again on its timer; here the test asks until the broker holds a commit, for up to 60 s.
        # The new log may have more than one partition: the runner's own metadata request can make
        # the broker create the topic (with its default partitions) before ensure_topics above does
        # (seen under load: 30 records over 4 partitions, 8 of them in partition 0).
        parts = await _partitions(boot, topic)
        deadline = time.monotonic() + 60
        while sum((await _committed_or_0(boot, kafka_names.group, topic, parts)).values()) != len(new) \
                and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            await runner.commit(force=True)
    finally:
        await runner.stop()
    missing = [v.decode() for v in new if v not in seen]
    assert missing == [], f"{len(missing)} records of the new log never handled: {missing[:5]}"
    # The new log's end, not the old one's (10 records, in partition 0): one commit per record of the new log.
    assert sum((await _committed_or_0(boot, kafka_names.group, topic, parts)).values()) == len(new)


async def test_a_runner_held_paused_by_slow_work_stays_in_its_group(kafka_broker: EmbeddedBroker,
                                                                   kafka_names: KafkaNames, tmp_path: Path) -> None:
    """Work slower than ``max_poll_interval_ms`` holds the runner paused (its in-flight limit
    reached) for longer than that interval.  A consumer that stops polling for the interval
    leaves its group: its partitions are revoked and the records in flight are handed out again.
    Paused, the runner still polls (at once: nothing can be fetched), so it stays a member."""
    boot = kafka_broker.bootstrap_servers
    interval_s = 1.5
    cfg = stream_config(boot, kafka_names, tmp_path,
                        kafka={"max_in_flight": 2, "max_poll_interval_ms": int(interval_s * 1000)})
    topic = kafka_names.topic("slow")
    await ensure_topics(boot, [topic], 1)
    n = 12
    await produce(boot, topic, [str(i).encode() for i in range(n)])
    seen: list[int] = []
    revoked: list[list[Any]] = []
    held: list[float] = []  # when each of the slow handlers let go, after how long
    runner: PartitionRunner | None = None

    async def handler(record: Any) -> None:
        assert runner is not None and runner.consumer is not None
        seen.append(record.offset)
        if record.offset < 2:  # the first two fill the in-flight limit: the runner pauses
            start = time.monotonic()
            # held until the runner has been paused for well past the poll interval (a condition on
            # the clock, not a sleep of fixed length: a busy machine only makes the pause longer)
            while time.monotonic() - start < 2.5 * interval_s or not runner.consumer.paused():
                await asyncio.sleep(0.05)
            held.append(time.monotonic() - start)

    runner = PartitionRunner("test", cfg.kafka, boot, kafka_names.group, [topic], handler, Metrics())
    on_revoked = runner.on_revoked

    async def counted_revoke(tps: list[Any]) -> None:
        revoked.append(list(tps))
        await on_revoked(tps)

    runner.on_revoked = counted_revoke  # type: ignore[method-assign,assignment]  # a method patched to count revocations
    await runner.start()
    lost = False  # the assignment gone once it was there: the member left its group
    try:
        deadline = time.monotonic() + 60
        caught = False
        while not caught and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            lost = lost or (bool(seen) and not runner.assignment())
            if lost or any(revoked):
                break
            caught = len(seen) >= n and await runner.caught_up()
    finally:
        await runner.stop()
    assert not lost and [tps for tps in revoked if tps] == [], \
        f"the runner left its group while paused (revoked {revoked}, {len(seen)}/{n} handled)"
    assert caught, f"runner never caught up: {len(seen)}/{n} handled"
    assert len(held) == 2 and min(held) >= 2.5 * interval_s
    assert seen == list(range(n)), f"records handled again or out of order: {seen}"
    assert await _committed(boot, kafka_names.group, topic, 1) == {0: n}
