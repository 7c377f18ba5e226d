"""Dead letters: a message that cannot be scored is parked, never retried forever.

Why: one bad event (unparseable, missing fields, an unreachable WARC, a
payload over the size cap, an extractor failure) must not stop its partition.
The original value and key go to ``dead_letter_topic`` (base64) with the
reason slug, the message, and where the event was read: its *source*
position (the router copies the input topic/partition/offset into headers of
re-keyed events, so an operator finds the original message either way).
"""

from __future__ import annotations

import logging
from typing import Any

from watcher.config import KafkaConfig
from watcher.metrics import Metrics

from .messages import H_SRC_KEY, H_SRC_OFFSET, H_SRC_PARTITION, H_SRC_TOPIC, dead_letter_message
from .publisher import Publisher, PublishError

log = logging.getLogger(__name__)

Record = Any  # aiokafka ConsumerRecord


def header(record: Record, name: str) -> bytes | None:
    for key, value in record.headers or ():
        if key == name:
            return bytes(value) if value is not None else None
    return None


def source_position(record: Record) -> tuple[str, int, int, bytes | None]:
    """(topic, partition, offset, key) of the event as the crawler produced it."""
    topic = header(record, H_SRC_TOPIC)
    partition = header(record, H_SRC_PARTITION)
    offset = header(record, H_SRC_OFFSET)
    if topic is None or partition is None or offset is None:
        return record.topic, int(record.partition), int(record.offset), record.key
    return topic.decode("utf-8", "replace"), int(partition), int(offset), header(record, H_SRC_KEY)


class DeadLetters:
    def __init__(self, kafka: KafkaConfig, publisher: Publisher, metrics: Metrics) -> None:
        self.kafka = kafka
        self.publisher = publisher
        self.metrics = metrics

    async def send(self, record: Record, reason: str, message: str, error_class: str | None = None) -> None:
        """Park ``record`` on the dead-letter topic (waits for the broker's ack)."""
        topic, partition, offset, key = source_position(record)
        consumed = None
        if (topic, partition, offset) != (record.topic, record.partition, record.offset):
            consumed = {"topic": record.topic, "partition": record.partition, "offset": record.offset}
        log.warning(
            "dead-lettering %s[%d]@%d: %s: %s", topic, partition, offset, reason, message,
            extra={"topic": topic, "partition": partition, "offset": offset, "reason": reason},
        )
        body = dead_letter_message(
            value=record.value, key=key, reason=reason, message=message, topic=topic, partition=partition,
            offset=offset, consumed_from=consumed, error_class=error_class,
        )
        try:
            await self.publisher.send_all([(self.kafka.dead_letter_topic, key, body, None)])
        except PublishError as exc:
            log.error("dead letter for %s[%d]@%d refused by the broker; event dropped: %s", topic, partition,
                      offset, exc, extra={"topic": topic, "partition": partition, "offset": offset})
            return
        self.metrics.dead_letter.labels(reason=reason).inc()
