"""The router: re-keys the crawler's unkeyed feed by canonical URL.

Why: Heritrix's ``KafkaCrawlLogFeed`` sends no key, so the captures of one
URL are spread over every partition of the input topic and two consumers
could score captures of one history at once, out of order (a later capture
scored against no baseline, or becoming the baseline).  The router parses
each raw event just enough to know its URL, applies the skip rule (dns:,
robots.txt, failed fetches never travel further), and re-produces the *raw*
value to ``keyed_topic`` with key = canonical URL key, plus headers naming
the source topic/partition/offset and format.  Kafka's key partitioning then
puts one history on one partition, which the scorer works in order.

Unparseable events are dead-lettered here, with their source position.
The offset is committed only after the keyed copy is acknowledged.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from watcher.config import Config
from watcher.errors import DriftlineError, EventError, SkipEvent
from watcher.events import parse_event, should_skip
from watcher.metrics import Metrics

from .publish.deadletter import DeadLetters
from .publish.messages import H_SRC_FORMAT, H_SRC_KEY, H_SRC_OFFSET, H_SRC_PARTITION, H_SRC_TOPIC
from .publish.publisher import Publisher

log = logging.getLogger(__name__)

Record = Any  # aiokafka ConsumerRecord


class Router:
    def __init__(self, cfg: Config, publisher: Publisher, dead_letters: DeadLetters, metrics: Metrics) -> None:
        self.cfg = cfg
        self.publisher = publisher
        self.dead_letters = dead_letters
        self.metrics = metrics

    async def handle(self, record: Record) -> None:
        """Route one record; never raises (except on cancellation at shutdown).

        Every outcome is one of: re-keyed onto ``keyed_topic``, counted skip,
        or dead letter (bad input with its slug; anything unexpected as
        ``internal``, with its traceback logged).
        """
        # Counted here, once: the scorer does not count the re-keyed copy.
        self.metrics.events_consumed.labels(topic=record.topic).inc()
        try:
            await self._route(record)
        except SkipEvent as skip:
            self.metrics.events_skipped.labels(reason=skip.reason).inc()
        except DriftlineError as exc:
            self.metrics.events_failed.labels(reason=exc.reason).inc()
            await self.dead_letters.send(record, exc.reason, str(exc), type(exc).__name__)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must not stop the partition, nor lose the event
            log.exception("router: internal error on %s[%d]@%d", record.topic, record.partition, record.offset,
                          extra={"topic": record.topic, "partition": record.partition, "offset": record.offset,
                                 "reason": "internal"})
            self.metrics.events_failed.labels(reason="internal").inc()
            await self.dead_letters.send(record, "internal", repr(exc), type(exc).__name__)

    async def _route(self, record: Record) -> None:
        fmt = self.cfg.kafka.input_topics.get(record.topic, "auto")
        event = parse_event(record.value if record.value is not None else b"", fmt)
        reason = should_skip(event, self.cfg.events)
        if reason is not None:
            raise SkipEvent(reason)
        try:
            key = event.history_key(self.cfg).encode("utf-8")
        except (UnicodeError, ValueError) as exc:
            raise EventError(f"URL has no canonical key: {exc}", reason="bad_url") from None
        headers: list[tuple[str, bytes]] = [
            (H_SRC_TOPIC, record.topic.encode("utf-8")),
            (H_SRC_PARTITION, str(record.partition).encode("ascii")),
            (H_SRC_OFFSET, str(record.offset).encode("ascii")),
            (H_SRC_FORMAT, event.format.encode("utf-8")),
        ]
        if record.key is not None:
            headers.append((H_SRC_KEY, bytes(record.key)))
        # PublishError (a value too large to re-produce) dead-letters it in handle().
        await self.publisher.send_all([(self.cfg.kafka.keyed_topic, key, record.value, headers)])
