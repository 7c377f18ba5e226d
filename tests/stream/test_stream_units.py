"""Pieces of the streaming app that need no broker: messages, logging, metrics."""

from __future__ import annotations

import base64
import io
import json
import logging
import os
from datetime import UTC, datetime

from consumers.publish.messages import alert_message, dead_letter_message, verdict_message
from watcher.logging_setup import JsonFormatter, setup_logging
from watcher.metrics import Metrics
from watcher.model import ChangeClass, MeasureResult, Verdict, verdict_id

T0 = datetime(2024, 1, 1, tzinfo=UTC)
T1 = datetime(2024, 3, 1, 12, 30, tzinfo=UTC)


def _verdict(change: ChangeClass = "off-topic") -> Verdict:
    return Verdict(
        verdict_id=verdict_id("org,example)/", T1, "sha1:X"), history="org,example)/", url="http://example.org/",
        capture_time=T1, uri_m=None, digest="sha1:X", baseline_time=T0, baseline_uri_m=None,
        measures={"cosine": MeasureResult("cosine", 0.05, "off-topic", 0.15)}, status="off-topic",
        change=change,
        reason="cosine 0.05 < 0.15", page_kind="parked", seed="http://example.org/", job="job-1",
    )


def test_verdict_and_alert_messages_carry_the_same_id() -> None:
    v = _verdict()
    body = json.loads(verdict_message(v))
    alert = json.loads(alert_message(v))
    assert body["verdict_id"] == alert["verdict_id"] == v.verdict_id
    assert body["capture_time"] == "2024-03-01T12:30:00Z" and body["baseline_time"] == "2024-01-01T00:00:00Z"
    assert body["measures"] == {"cosine": {"name": "cosine", "score": 0.05, "status": "off-topic", "threshold": 0.15}}
    assert (body["status"], body["change"], body["page_kind"], body["seed"], body["job"]) == (
        "off-topic", "off-topic", "parked", "http://example.org/", "job-1")
    assert alert["type"] == "alert" and body["type"] == "verdict"


def test_dead_letter_message_round_trips_bytes() -> None:
    raw = b"\x00\xffnot json"
    msg = json.loads(dead_letter_message(value=raw, key=None, reason="unparseable", message="bad", topic="t",
                                         partition=2, offset=17))
    assert base64.b64decode(msg["value_b64"]) == raw
    assert msg["key_b64"] is None
    assert (msg["reason"], msg["topic"], msg["partition"], msg["offset"]) == ("unparseable", "t", 2, 17)


def test_json_logs_carry_extras() -> None:
    stream = io.StringIO()
    setup_logging("INFO", "json", stream=stream)
    try:
        logging.getLogger("consumers.test").warning("dead-lettering %s", "x",
                                                    extra={"topic": "t", "partition": 1, "offset": 5})
    finally:
        setup_logging("WARNING", "text")
    line = json.loads(stream.getvalue().strip().splitlines()[-1])
    assert line["message"] == "dead-lettering x"
    assert (line["topic"], line["partition"], line["offset"], line["level"]) == ("t", 1, 5, "WARNING")
    record = logging.LogRecord("n", logging.ERROR, "f", 1, "boom", None, None)
    assert json.loads(JsonFormatter().format(record))["level"] == "ERROR"


def test_client_library_chatter_is_kept_at_warning_unless_debugging() -> None:
    """aiokafka logs every rebalance and py4j (Spark's gateway) every connection it closes, with a
    traceback, at INFO: a Spark session closing under a command's INFO log was a screen of noise."""
    chatty = ("aiokafka", "aiohttp.access", "py4j")
    levels = {name: logging.getLogger(name).level for name in chatty}
    stream = io.StringIO()
    try:
        setup_logging("INFO", "text", stream=stream)
        for name in chatty:
            logging.getLogger(name).info("chatter from %s", name)
        logging.getLogger("py4j.clientserver").warning("a real problem")
        # py4j's java_gateway logs some records to the root logger: known by the file they come from
        root = logging.getLogger()
        gateway = os.path.join("site-packages", "py4j", "java_gateway.py")
        for level in (logging.INFO, logging.ERROR):
            root.handle(root.makeRecord("root", level, gateway, 1056, "Exception while sending command.", (), None))
        assert stream.getvalue().count("chatter") == 0 and "a real problem" in stream.getvalue()
        assert stream.getvalue().count("Exception while sending command.") == 1  # the ERROR one
        for name in chatty:
            logging.getLogger(name).setLevel(logging.NOTSET)  # as a fresh process has them
        setup_logging("DEBUG", "text", stream=stream)
        logging.getLogger("py4j.clientserver").info("chatter from py4j")
        assert "chatter from py4j" in stream.getvalue()
    finally:
        setup_logging("WARNING", "text")
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def test_metrics_are_per_instance_and_named() -> None:
    a, b = Metrics(), Metrics()  # two apps in one process must not collide
    a.observe_fetch("render", 0.5)
    a.observe_fetch("warc", 0.01)
    a.events_consumed.labels(topic="t").inc()
    text = a.exposition().decode()
    assert 'driftline_events_consumed_total{topic="t"} 1.0' in text
    assert "driftline_render_seconds_count 1.0" in text
    assert 'driftline_fetch_seconds_count{source="warc"} 1.0' in text
    assert "driftline_events_consumed_total{" not in b.exposition().decode()
