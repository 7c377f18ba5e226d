"""The one Kafka producer of a consumer app, with acknowledged, retried sends.

Why retried here: at-least-once means an offset is committed only after the
results are acknowledged.  If the broker is away (restart, network blip), a
send fails; the record is *not* skipped and *not* dead-lettered: the send is
retried with backoff until it succeeds or the app shuts down (then the record
is re-delivered after restart).

Errors are classified.  *Transient* ones (no connection, timeouts, errors the
client marks retriable: leader moving, topic not yet created) are retried
without a bound, since the broker being away says nothing about the event.
*Refusals* (any other broker answer, e.g. ``TOPIC_ALREADY_EXISTS`` or
``UNKNOWN`` from a freshly restarted Tansu, which heals within seconds) are
retried for ``kafka.publish_refused_retry_s``, then raised as
:class:`PublishError` (``publish_refused``), which dead-letters the event: a
broker that keeps refusing a produce will not accept it by being asked
forever (one run spent 225 s on 400 events that way).  Only the messages not yet acknowledged are re-sent: a verdict the
broker acknowledged is never sent twice by a retry.

Idempotence: ``enable_idempotence=True`` (which forces ``acks="all"``) is
asked for, but Tansu 0.6 (the embedded broker) answers InitProducerId v0 with
an unknown error, although its ApiVersions lists InitProducerId v0-5.  The
cause: aiokafka (0.14) speaks only v0 of that request, which carries no
producer id and epoch fields, and Tansu takes the missing fields for an error
(it logs ``producer=None epoch=None``); a v3 request with id -1 and epoch -1 is
granted an id.  So the capability is probed with one InitProducerId request of
our own before the producer is made (aiokafka's producer would log an ERROR on
every start); without it the publisher uses ``acks="all"`` without
idempotence.  For the embedded broker that is known in advance: no probe, a
DEBUG line (a WARNING on every start read as trouble); another broker that
refuses is worth a WARNING, once.  Nothing is lost by that: aiokafka keeps one
in-flight batch per partition (order is kept on retries) and every message
carries a deterministic id, so a duplicate from a retried send is
recognisable.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable

from aiokafka import AIOKafkaProducer
from aiokafka.errors import (
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    MessageSizeTooLargeError,
    NodeNotReadyError,
    RecordTooLargeError,
    UnknownError,
)

from watcher.config import KafkaConfig
from watcher.errors import DriftlineError
from watcher.kafkasec import kafka_security_options

log = logging.getLogger(__name__)

_TRANSIENT = (KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError)
_TOO_LARGE = (MessageSizeTooLargeError, RecordTooLargeError)


class PublishError(DriftlineError):
    """A message the broker will not accept (too large, or refused again and again)."""

    reason = "publish"


def transient(exc: BaseException) -> bool:
    """True for errors that say the broker is away or busy, not that it refuses the message."""
    return isinstance(exc, _TRANSIENT) or (isinstance(exc, KafkaError) and bool(getattr(exc, "retriable", False)))


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

    async def grants_producer_ids(self) -> bool:
        """Whether the broker answers InitProducerId (the idempotent producer's first request) without error.

        ApiVersions cannot tell: Tansu 0.6 advertises the request and then fails it.  Connection
        failures propagate (the broker is unreachable, which is not a missing capability).
        """
        from aiokafka.client import AIOKafkaClient
        from aiokafka.protocol.transaction import InitProducerIdRequest

        client = AIOKafkaClient(bootstrap_servers=self.bootstrap, client_id=f"{self.kafka.client_id}-probe",
                                request_timeout_ms=self.kafka.request_timeout_ms)
        try:
            await client.bootstrap()
            node = client.get_random_node()
            if node is None:
                return False
            resp = await client.send(node, InitProducerIdRequest(transactional_id=None,
                                                                 transaction_timeout_ms=60_000))
            return int(resp.error_code) == 0
        finally:
            await client.close()

    async def start(self) -> None:
        embedded = self.kafka.bootstrap_servers is None  # our Tansu: aiokafka's InitProducerId v0 always fails there
        if self.kafka.idempotent_producer and embedded:
            log.debug("embedded broker %s: producer without idempotence (Tansu refuses aiokafka's InitProducerId v0); "
                      "acks=all, and ids make duplicates recognisable", self.bootstrap)
        elif self.kafka.idempotent_producer and not await self.grants_producer_ids():
            log.warning("broker %s cannot give producer ids (InitProducerId fails); using acks=all without "
                        "idempotence (ids make duplicates recognisable)", self.bootstrap)
        elif self.kafka.idempotent_producer:
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

        Re-sends only the messages not acknowledged yet (a duplicate is
        preferred to a loss, but an acknowledged message is not re-sent).
        Raises :class:`PublishError` with reason ``too_large`` for a message
        the broker can never take, and ``publish_refused`` once refusals went
        on for ``kafka.publish_refused_retry_s``; transient errors are retried
        until cancelled (shutdown).
        """
        pending = list(messages)
        delay = 0.2
        refusals = 0
        first_refusal: float | None = None
        started = time.monotonic()
        attempt = 0
        while pending:
            producer = self.producer
            if producer is None:
                raise RuntimeError("publisher is not started")
            attempt += 1
            futures: list[asyncio.Future[object]] = []
            enqueue_error: BaseException | None = None
            for topic, key, value, headers in pending:
                try:
                    futures.append(await producer.send(topic, value=value, key=key, headers=headers))
                except _TOO_LARGE as exc:
                    enqueue_error = exc
                    break
                except KafkaError as exc:  # no metadata for the topic in time, producer closing...
                    enqueue_error = exc
                    break
            outcomes = await asyncio.gather(*futures, return_exceptions=True) if futures else []
            failed: list[Outgoing] = []
            errors: list[BaseException] = []
            for message, outcome in zip(pending, outcomes, strict=False):
                if isinstance(outcome, BaseException):
                    failed.append(message)
                    errors.append(outcome)
                else:
                    self.sent += 1
            failed += pending[len(outcomes):]  # never enqueued
            if enqueue_error is not None:
                errors.append(enqueue_error)
            if not failed:
                if attempt > 1:
                    log.info("send of %d messages succeeded after %d attempts (%.1fs)", len(pending), attempt,
                             time.monotonic() - started)
                return
            for error in errors:
                if isinstance(error, _TOO_LARGE):
                    raise PublishError(f"the broker refuses a message of this size: {error!r}",
                                       reason="too_large") from error
                if not isinstance(error, KafkaError):
                    raise error  # not the broker's answer: a bug, surfaced as such
            refused = [error for error in errors if not transient(error)]
            if refused:
                refusals += 1
                first_refusal = first_refusal if first_refusal is not None else time.monotonic()
                if time.monotonic() - first_refusal >= self.kafka.publish_refused_retry_s:
                    raise PublishError(f"the broker refused the message {refusals} times in "
                                       f"{time.monotonic() - first_refusal:.0f}s: {refused[0]!r}",
                                       reason="publish_refused") from refused[0]
            log.warning("send of %d of %d messages failed (%s), retrying in %.1fs: %r", len(failed), len(pending),
                        "refused" if refused else "transient", delay, errors[0] if errors else None)
            pending = failed
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
