"""Small client helpers: produce events, read result topics.

For the demo (which starts :class:`consumers.app.ConsumerApp` in-process),
the tests and the benchmark: everything they need to talk to the app's
broker without repeating aiokafka boilerplate.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from watcher.config import KafkaConfig
from watcher.kafkasec import kafka_security_options


def client_options(kafka: KafkaConfig) -> dict[str, Any]:
    """Security keyword arguments (TLS, SASL) for a client of ``kafka``'s broker; pass as ``security=``."""
    return kafka_security_options(kafka)


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
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                auto_offset_reset="earliest", client_id=f"driftline-reader-{uuid.uuid4().hex[:8]}",
                                **dict(security or {}))
    await consumer.start()
    out: list[dict[str, Any]] = []
    try:
        deadline = time.monotonic() + timeout_s
        partitions: set[int] | None = None
        while partitions is None and time.monotonic() < deadline:
            partitions = consumer.partitions_for_topic(topic)
            if partitions is None:
                await consumer.topics()  # refresh metadata
                await asyncio.sleep(0.2)
        if not partitions:
            return out
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
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
        await consumer.stop()
    return out
