"""Bad input is classified as bad input: parse limits, field checks, the feed-format
table and its start-up check, the client log limit, and dead letters that cannot
be built as they should."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest
from aiokafka.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    NodeNotReadyError,
    NotLeaderForPartitionError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)

from consumers.app import ConsumerApp
from consumers.client import read_topic
from consumers.logfilter import RateLimitFilter, install_client_log_limit
from consumers.publish.deadletter import DeadLetters
from consumers.publish.publisher import Publisher, transient
from tests.fixtures.kafka import KafkaNames, stream_config
from watcher.broker import EmbeddedBroker
from watcher.config import Config
from watcher.errors import EVENT_REASONS, ConfigError, EventError
from watcher.events import FEED_FORMATS, FEEDS, FORMATS, check_formats, detect_format, parse_event
from watcher.events.fields import check_url, parse_time
from watcher.metrics import Metrics

GOOD = {"url": "http://a.example.org/", "timestamp": "2024-01-01T00:00:00Z", "content_digest": "sha1:AAAA",
        "hop_path": "L"}


def _heritrix(**fields: object) -> bytes:
    return json.dumps({**GOOD, **fields}).encode()


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (_heritrix()[:-1] + b', "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "bad_json"),
        (_heritrix()[:-1] + b', "x": ' + b"[" * 40 + b"]" * 40 + b"}", "bad_json"),
        (_heritrix()[:-1] + b', "size": ' + b"7" * 5000 + b"}", "bad_json"),
        (_heritrix()[:-1] + b', "size": NaN}', "bad_json"),
        (_heritrix()[:-1] + b', "size": Infinity}', "bad_json"),
        (_heritrix()[:-1] + b', "size": 1e400}', "bad_json"),
        (b"[1, 2]", "bad_json"),
        (_heritrix(seed="\ud800"), "bad_encoding"),
        (_heritrix(url="http://a.example.org/\ud800"), "bad_encoding"),
        (b"\xc0\xaf{}", "bad_encoding"),
        (_heritrix(timestamp="9999-12-31T23:59:59-05:00"), "bad_timestamp"),
        (_heritrix(timestamp="0000-01-01T00:00:00Z"), "bad_timestamp"),
        (_heritrix(timestamp=float("1e300")), "bad_timestamp"),
        (_heritrix(timestamp=[2024]), "bad_timestamp"),
        (_heritrix(url="http://a b/"), "bad_url"),
        (_heritrix(url="example.org/"), "bad_url"),
        (_heritrix(url="http:///x"), "bad_url"),
        (_heritrix(url=5), "bad_url"),
        (_heritrix(content_digest="x" * 1000), "bad_digest"),
        (_heritrix(warc_filename="A.warc.gz", warc_offset=-1), "bad_warc_ref"),
        (_heritrix(warc_offset=2**64), "invalid_field"),
    ],
)
def test_bad_input_gets_a_slug_that_names_it(value: bytes, reason: str) -> None:
    with pytest.raises(EventError) as err:
        parse_event(value)
    assert err.value.reason == reason
    assert reason in EVENT_REASONS


def test_values_at_the_limits_are_accepted() -> None:
    deep = {"a": {"b": {"c": [[[1]]]}}}
    event = parse_event(_heritrix(extra_info=deep, size=10**18, seed="http://b\u00fccher.example.org/"))
    assert event.url == "http://a.example.org/"
    assert parse_time("2999-12-31T00:00:00Z", "t").year == 2999
    assert check_url("http://bücher.example.org/ページ") == "http://bücher.example.org/ページ"
    assert check_url("javascript:alert(1)") == "javascript:alert(1)"  # the skip rule counts it


def test_one_table_of_feed_formats() -> None:
    assert ("auto", *(f.name for f in FEED_FORMATS)) == FORMATS
    assert set(FEEDS) == {"heritrix-kafka", "crawl-log", "warcprox", "driftline"}
    for feed in FEED_FORMATS:
        assert (feed.json_parser is None) != (feed.line_parser is None), feed.name
    assert detect_format(_heritrix()) == "heritrix-kafka"
    assert detect_format(_heritrix(warc_type="response")) == "warcprox"
    assert detect_format(json.dumps({"type": "driftline.capture", "url": "http://a/"}).encode()) == "driftline"
    assert detect_format(b"2024-01-01T00:00:00Z 200 1 http://a/ L - text/html #1 - - -") == "crawl-log"


def test_unknown_input_topic_format_fails_at_start_up_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        check_formats({"crawl": "heritrix"})
    message = str(err.value)
    assert "\n" not in message and "kafka.input_topics.crawl" in message and "'heritrix'" in message
    assert all(name in message for name in FORMATS)
    cfg = Config.model_validate({"kafka": {"bootstrap_servers": "127.0.0.1:1", "input_topics": {"crawl": "kafka"}}})
    with pytest.raises(ConfigError, match="unknown feed format 'kafka'"):
        ConsumerApp(cfg)
    check_formats({"a": "auto", "b": "crawl-log"})  # known ones pass


class _KeepRecords(logging.Handler):
    """A handler that keeps every record that reaches it, in ``into``."""

    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__()
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record)


def test_rate_limit_filter_lets_one_line_per_kind_per_interval() -> None:
    now = [0.0]
    limit = RateLimitFilter(10.0, clock=lambda: now[0])
    logger = logging.getLogger("aiokafka.test-limit")
    logger.propagate = False
    seen: list[logging.LogRecord] = []
    handler = _KeepRecords(seen)
    logger.addHandler(handler)
    logger.addFilter(limit)
    try:
        for i in range(3000):  # an outage: 3,000 lines in 20 s, two kinds
            now[0] = i * 20 / 3000
            logger.error("Unable connect to node with id %s: %s", 1, "refused")
            if i % 3 == 0:
                logger.error("Heartbeat send request failed: %s", "NodeNotReadyError")
    finally:
        logger.removeHandler(handler)
        logger.removeFilter(limit)
    assert 4 <= len(seen) <= 6
    assert limit.suppressed_total == 3000 + 1000 - len(seen)
    later = [r for r in seen if getattr(r, "suppressed", 0)]
    assert later and "similar lines suppressed" in later[0].getMessage()


def test_client_log_limit_goes_on_every_aiokafka_logger() -> None:
    limit = install_client_log_limit(10.0)
    for name in ("aiokafka", "aiokafka.conn", "aiokafka.consumer.group_coordinator", "aiokafka.producer.sender"):
        assert limit in logging.getLogger(name).filters, name
    assert install_client_log_limit(10.0) is limit  # idempotent


def test_publish_errors_are_classified() -> None:
    for exc in (KafkaConnectionError(), KafkaTimeoutError(), NodeNotReadyError(), NotLeaderForPartitionError(),
                UnknownTopicOrPartitionError()):
        assert transient(exc), exc
    assert not transient(TopicAlreadyExistsError())


@pytest.mark.kafka
async def test_a_dead_letter_that_cannot_be_built_falls_back_to_a_minimal_one(
    kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path
) -> None:
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path)
    publisher = Publisher(cfg.kafka, kafka_broker.bootstrap_servers)
    await publisher.start()
    metrics = Metrics()
    try:
        letters = DeadLetters(cfg.kafka, publisher, metrics)
        # A value that is not bytes cannot be base64-encoded; the message holds a lone surrogate.
        broken = SimpleNamespace(topic="crawl", partition=3, offset=41, key=None, value="not bytes", headers=[])
        huge_key = SimpleNamespace(topic="crawl", partition=3, offset=42, key=b"k" * 200_000, value=b"{",
                                   headers=[])
        assert await letters.send(broken, "bad_json", "message with \ud800", "EventError")
        assert await letters.send(huge_key, "bad_json", "truncated", "EventError")
        dead = await read_topic(kafka_broker.bootstrap_servers, cfg.kafka.dead_letter_topic, expect=2, timeout_s=20)
    finally:
        await publisher.stop()
    first, second = (d["value"] for d in sorted(dead, key=lambda d: d["value"]["offset"]))
    assert (first["topic"], first["partition"], first["offset"], first["reason"]) == ("crawl", 3, 41, "bad_json")
    assert first["minimal"] and first["value_b64"] is None and "\\ud800" in first["message"]
    assert second["offset"] == 42 and second["key_truncated"] and second["key_bytes"] == 200_000
    assert metrics.dead_letter.labels(reason="bad_json")._value.get() == 2


@pytest.mark.kafka
async def test_publisher_never_resends_an_acknowledged_message(
    kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path
) -> None:
    """A set of messages where one can never be sent: the others are acknowledged
    once, and the refusal is raised with its slug instead of being retried."""
    from consumers.publish.publisher import PublishError

    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path)
    topic = cfg.kafka.results_topic
    publisher = Publisher(cfg.kafka, kafka_broker.bootstrap_servers)
    await publisher.start()
    try:
        with pytest.raises(PublishError) as err:
            await publisher.send_all([(topic, b"k", b'{"n": 1}', None), (topic, b"k", b"x" * 3_000_000, None)])
        assert err.value.reason == "too_large"
        await publisher.send_all([(topic, b"k", b'{"n": 2}', None)])
        got = await read_topic(kafka_broker.bootstrap_servers, topic, timeout_s=10, idle_s=1.0)
    finally:
        await publisher.stop()
    assert [m["value"]["n"] for m in got] == [1, 2]
