"""Small client helpers: produce events, read result topics, read records back.

For the runner's log check (:func:`read_back`), the demo (which starts :class:`consumers.app.ConsumerApp` in-process),
the tests and the benchmark: everything they need to talk to the app's
broker without repeating aiokafka boilerplate.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import OffsetOutOfRangeError

from watcher.config import KafkaConfig
from watcher.errors import DriftlineError
from watcher.kafkasec import kafka_security_options

log = logging.getLogger(__name__)


def client_options(kafka: KafkaConfig) -> dict[str, Any]:
    """Security keyword arguments (TLS, SASL) for a client of ``kafka``'s broker; pass as ``security=``."""
    return kafka_security_options(kafka)


async def start_consumer(make: Callable[[], AIOKafkaConsumer], what: str, *, timeout_s: float = 60.0,
                         attempts: int = 3) -> AIOKafkaConsumer:
    """A started consumer from ``make``, each start bounded by ``timeout_s``.

    Why: aiokafka's ``start()`` has no deadline of its own, and a broker that accepts the
    connection but never answers one request (seen against the embedded broker on a loaded
    machine, two starts in a suite of 1,250 tests) left a consumer, and the process, waiting
    for good.  A start that takes too long is abandoned with a WARNING and a fresh consumer (a
    new connection) tried; after ``attempts`` the failure is an error that names the cause."""
    for attempt in range(1, attempts + 1):
        consumer = make()
        try:
            await asyncio.wait_for(consumer.start(), timeout_s)
            return consumer
        except TimeoutError:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(consumer.stop(), 10.0)
            log.warning("%s: the Kafka consumer did not start within %.0f s (attempt %d of %d)%s", what, timeout_s,
                        attempt, attempts, "; starting a new one" if attempt < attempts else "")
    raise DriftlineError(f"{what}: the Kafka consumer did not start in {attempts} attempts of {timeout_s:.0f} s: "
                         f"the broker accepts connections but does not answer", reason="broker_unavailable")


async def produce(
    bootstrap: str, topic: str, values: Iterable[bytes], *, key: bytes | None = None,
    security: Mapping[str, Any] | None = None,
) -> list[tuple[int, int]]:
    """Send ``values`` to ``topic`` (unkeyed unless ``key``, like Heritrix) and wait for the acks.

    Returns the (partition, offset) of each message, in order.  ``security``:
    :func:`client_options` of a secured broker.
    """
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, **dict(security or {}))
    await producer.start()
    try:
        futures = [await producer.send(topic, value=v, key=key) for v in values]
        sent = await asyncio.gather(*futures)
        return [(int(m.partition), int(m.offset)) for m in sent]
    finally:
        await producer.stop()


async def read_topic(
    bootstrap: str,
    topic: str,
    *,
    expect: int | None = None,
    timeout_s: float = 30.0,
    idle_s: float = 1.0,
    security: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Every JSON message of ``topic`` from the beginning (no group, no commits).

    Returns once ``expect`` messages were read, or after ``idle_s`` without a
    new message when ``expect`` is None, or at ``timeout_s``.  Each item has
    the decoded ``value`` plus ``key``, ``partition`` and ``offset``.
    """
    consumer = await start_consumer(
        lambda: AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                 auto_offset_reset="earliest", client_id=f"driftline-reader-{uuid.uuid4().hex[:8]}",
                                 **dict(security or {})),
        f"reading {topic}", timeout_s=max(10.0, min(60.0, timeout_s)))
    out: list[dict[str, Any]] = []
    try:
        deadline = time.monotonic() + timeout_s
        partitions: set[int] | None = None
        while partitions is None and time.monotonic() < deadline:
            partitions = consumer.partitions_for_topic(topic)
            if partitions is None:
                with contextlib.suppress(TimeoutError):  # a metadata refresh left unanswered is tried again
                    await asyncio.wait_for(consumer.topics(), 5.0)
                await asyncio.sleep(0.2)
        if not partitions:
            return out
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        # Bounded by the deadline: the reset waits for a ListOffsets answer without a limit of its
        # own, and a broker that leaves one unanswered held a reader (and a test) past its timeout.
        # Cut short, the reset goes on in the client, and with no group the reader starts at the
        # earliest offset anyway (auto_offset_reset); the reads below keep to the deadline.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(consumer.seek_to_beginning(*tps), max(0.1, deadline - time.monotonic()))
        last_new = time.monotonic()
        while time.monotonic() < deadline:
            if expect is not None and len(out) >= expect:
                break
            if expect is None and time.monotonic() - last_new >= idle_s:
                break
            batch = await consumer.getmany(timeout_ms=200)
            for records in batch.values():
                for r in records:
                    out.append({
                        "key": r.key.decode("utf-8", "replace") if r.key is not None else None,
                        "partition": r.partition,
                        "offset": r.offset,
                        "value": json.loads(r.value),
                    })
                    last_new = time.monotonic()
    finally:
        with contextlib.suppress(TimeoutError):  # leaving a broker that does not answer: not waited for
            await asyncio.wait_for(consumer.stop(), 10.0)
    return out


async def read_back(
    bootstrap: str, kafka: KafkaConfig, offsets: Mapping[TopicPartition, int], name: str,
) -> dict[TopicPartition, Any]:
    """The record at each partition's offset, or None where the log no longer holds that offset
    (it starts after it or ends before it, as its fetches' high watermark says: Tansu's ListOffsets
    can answer a stale end offset).  Read without a group, so nothing is committed or rebalanced.
    Raises ``KafkaError`` or ``TimeoutError`` when the broker does not answer in
    ``kafka.request_timeout_ms``: the caller cannot tell then.
    """
    timeout = kafka.request_timeout_ms / 1000
    probe = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="none", request_timeout_ms=kafka.request_timeout_ms,
                             client_id=f"{kafka.client_id}-{name}-{uuid.uuid4().hex[:6]}",
                             **kafka_security_options(kafka))
    found: dict[TopicPartition, Any] = dict.fromkeys(offsets)
    try:
        await asyncio.wait_for(probe.start(), timeout)
        starts = await asyncio.wait_for(probe.beginning_offsets(list(offsets)), timeout)
        pending = {tp for tp, o in offsets.items() if o >= int(starts.get(tp, 0))}
        if not pending:
            return found
        probe.assign(sorted(pending))
        for tp in pending:
            probe.seek(tp, offsets[tp])
        deadline = time.monotonic() + timeout
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no record read back from {len(pending)} partitions in {timeout:.0f}s")
            try:
                batch = await probe.getmany(*pending, timeout_ms=200, max_records=1)
            except OffsetOutOfRangeError as exc:  # the log ends before the offset
                gone = set(exc.args[0]) if exc.args and isinstance(exc.args[0], dict) else set()
                pending -= gone
                if not gone:
                    raise
                continue
            for tp, records in batch.items():
                if tp in pending and records:
                    pending.discard(tp)
                    found[tp] = records[0] if records[0].offset == offsets[tp] else None
            for tp in list(pending):
                high = probe.highwater(tp)
                if high is not None and high <= offsets[tp]:
                    pending.discard(tp)  # fetched: the log ends before the offset
        return found
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(probe.stop(), 10.0)
