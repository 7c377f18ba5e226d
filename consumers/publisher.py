"""The one Kafka producer of a consumer app, with acknowledged, retried sends.

Why retried here: at-least-once means an offset is committed only after the
results are acknowledged.  If the broker is away (restart, network blip), a
send fails; the record is *not* skipped and *not* dead-lettered: the send is
retried with backoff until it succeeds or the app shuts down (then the record
is re-delivered after restart).

Idempotence: ``enable_idempotence=True`` (which forces ``acks="all"``) is
asked for, but Tansu 0.6 (the embedded broker) answers InitProducerId v0 with
an unknown error.  The publisher then falls back to ``acks="all"`` without
idempotence and says so once.  Nothing is lost by that: aiokafka keeps one
in-flight batch per partition (order is kept on retries) and every message
carries a deterministic id, so a duplicate from a retried send is
recognisable.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError, MessageSizeTooLargeError, RecordTooLargeError, UnknownError

from watcher.config import KafkaConfig
from watcher.errors import DriftlineError
from watcher.kafkasec import kafka_security_options

log = logging.getLogger(__name__)



class PublishError(DriftlineError):
    """A message the broker will never accept (too large): retrying cannot help."""

    reason = "publish"


Outgoing = tuple[str, bytes | None, bytes, list[tuple[str, bytes]] | None]  # topic, key, value, headers


class Publisher:
    def __init__(self, kafka: KafkaConfig, bootstrap: str) -> None:
        self.kafka = kafka
        self.bootstrap = bootstrap
        self.producer: AIOKafkaProducer | None = None
        self.idempotent = False
        self._closing = asyncio.Event()
        self.sent = 0

    def _make(self, idempotent: bool) -> AIOKafkaProducer:
        return AIOKafkaProducer(
            bootstrap_servers=self.bootstrap,
            client_id=f"{self.kafka.client_id}-producer",
            acks="all",
            enable_idempotence=idempotent,
            request_timeout_ms=self.kafka.request_timeout_ms,
            metadata_max_age_ms=self.kafka.metadata_max_age_ms,
            retry_backoff_ms=200,
            **kafka_security_options(self.kafka),
        )

    async def start(self) -> None:
        if self.kafka.idempotent_producer:
            producer = self._make(True)
            try:
                await producer.start()
            except UnknownError:
                await producer.stop()
                log.warning("broker %s refused an idempotent producer (InitProducerId); "
                            "using acks=all without idempotence (ids make duplicates recognisable)", self.bootstrap)
            else:
                self.producer, self.idempotent = producer, True
                return
        producer = self._make(False)
        await producer.start()
        self.producer = producer

    async def stop(self) -> None:
        self._closing.set()
        if self.producer is not None:
            try:
                await asyncio.wait_for(self.producer.stop(), 15.0)
            except (KafkaError, TimeoutError) as exc:
                log.warning("producer did not flush cleanly: %r", exc)
            self.producer = None

    async def send_all(self, messages: Iterable[Outgoing]) -> None:
        """Send ``messages`` and wait until the broker acknowledged every one.

        Retries the whole set on failure (a duplicate is preferred to a loss),
        except for messages the broker can never take (:class:`PublishError`);
        otherwise raises ``asyncio.CancelledError`` only when cancelled (shutdown).
        """
        pending = list(messages)
        if not pending:
            return
        delay = 0.2
        while True:
            producer = self.producer
            if producer is None:
                raise RuntimeError("publisher is not started")
            try:
                futures = [
                    await producer.send(topic, value=value, key=key, headers=headers)
                    for topic, key, value, headers in pending
                ]
                await asyncio.gather(*futures)
                self.sent += len(pending)
                return
            except (MessageSizeTooLargeError, RecordTooLargeError) as exc:
                raise PublishError(f"the broker refuses a message of this size: {exc!r}") from exc
            except KafkaError as exc:
                log.warning("send of %d messages failed, retrying in %.1fs: %r", len(pending), delay, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
