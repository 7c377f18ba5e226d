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

from .messages import (
    H_SRC_KEY,
    H_SRC_OFFSET,
    H_SRC_PARTITION,
    H_SRC_TOPIC,
    MAX_DEAD_LETTER_KEY_BYTES,
    dead_letter_message,
    minimal_dead_letter,
)
from .publisher import Publisher

log = logging.getLogger(__name__)

Record = Any  # aiokafka ConsumerRecord


def header(record: Record, name: str) -> bytes | None:
    for key, value in record.headers or ():
        if key == name:
            return bytes(value) if value is not None else None
    return None


def source_position(record: Record) -> tuple[str, int, int, bytes | None]:
    """(topic, partition, offset, key) of the event as the crawler produced it.

    Headers written by the router are trusted only when they parse; a
    re-keyed record with damaged headers is reported at its consumed position.
    """
    topic = header(record, H_SRC_TOPIC)
    partition = header(record, H_SRC_PARTITION)
    offset = header(record, H_SRC_OFFSET)
    if topic is not None and partition is not None and offset is not None:
        try:
            return topic.decode("utf-8", "replace"), int(partition), int(offset), header(record, H_SRC_KEY)
        except ValueError:
            pass
    return record.topic, int(record.partition), int(record.offset), record.key


def _safe_text(text: str) -> str:
    """``text`` with lone surrogates escaped, so it encodes (logs, JSON) anywhere."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class DeadLetters:
    def __init__(self, kafka: KafkaConfig, publisher: Publisher, metrics: Metrics) -> None:
        self.kafka = kafka
        self.publisher = publisher
        self.metrics = metrics
        self.lost = 0  # dead letters the broker refused even in their minimal form

    async def send(self, record: Record, reason: str, message: str, error_class: str | None = None) -> bool:
        """Park ``record`` on the dead-letter topic (waits for the broker's ack); never raises.

        If the full dead letter cannot be built or is refused (a key or value
        that cannot be encoded, a message the broker will not take), a minimal
        one is sent instead: reason, message and source position, without the
        original bytes.  Returns False only if the broker refused that too
        (logged as an error and counted in ``driftline_dead_letter_total``
        with reason ``dead_letter_refused``).
        """
        message = _safe_text(message)
        try:
            topic, partition, offset, key = source_position(record)
        except Exception:  # a record without a usable position: never expected from aiokafka
            topic, partition, offset, key = str(record.topic), -1, -1, None
        consumed = None
        if (topic, partition, offset) != (record.topic, record.partition, record.offset):
            consumed = {"topic": record.topic, "partition": record.partition, "offset": record.offset}
        where = {"topic": topic, "partition": partition, "offset": offset, "reason": reason}
        log.warning("dead-lettering %s[%d]@%d: %s: %s", topic, partition, offset, reason, message[:500], extra=where)
        # The Kafka key of the dead letter is the event's key when it is short;
        # the full key is always inside the body (base64).
        dl_key = key if key is not None and len(key) <= MAX_DEAD_LETTER_KEY_BYTES else None
        try:
            body = dead_letter_message(
                value=record.value, key=key, reason=reason, message=message, topic=topic, partition=partition,
                offset=offset, consumed_from=consumed, error_class=error_class,
            )
        except Exception as exc:  # never lose the offset because the letter itself failed
            log.warning("dead letter for %s[%d]@%d could not be built (%r); sending a minimal one",
                        topic, partition, offset, exc, extra=where)
            body = minimal_dead_letter(reason=reason, message=message, topic=topic, partition=partition,
                                       offset=offset, error_class=error_class, note=f"full letter failed: {exc!r}")
        try:
            await self.publisher.send_all([(self.kafka.dead_letter_topic, dl_key, body, None)])
        except Exception as exc:  # PublishError, or anything else: the minimal letter is the fallback
            log.warning("dead letter for %s[%d]@%d refused (%s); sending a minimal one", topic, partition, offset,
                        exc, extra=where)
            body = minimal_dead_letter(reason=reason, message=message, topic=topic, partition=partition,
                                       offset=offset, error_class=error_class, note=f"full letter refused: {exc}")
            try:
                await self.publisher.send_all([(self.kafka.dead_letter_topic, None, body, None)])
            except Exception as again:
                self.lost += 1
                self.metrics.dead_letter.labels(reason="dead_letter_refused").inc()
                log.error("dead letter for %s[%d]@%d refused by the broker even in minimal form; the event is "
                          "known only from this line (%s: %s): %s", topic, partition, offset, reason, message[:500],
                          again, extra=where)
                return False
        self.metrics.dead_letter.labels(reason=reason).inc()
        return True
