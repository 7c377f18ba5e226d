"""One entry point for every feed format: :func:`parse_event`.

Kafka message values are bytes of unknown provenance; a topic can be
configured with its format (``kafka.input_topics: {topic: format}``) or left
on ``auto``, which looks at the message itself: a JSON object with crawler
fields (``content_digest``, ``start_time_plus_duration``...) is a Heritrix or
warcprox feed message, any other JSON object a driftline event, and a text
line a crawl.log line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import EventError
from .crawllog import parse_crawl_log_line
from .driftline import parse_driftline
from .feeds import CRAWLER_MARKERS, WARCPROX_MARKERS, parse_heritrix_kafka, parse_warcprox
from .model import CaptureEvent

FORMATS = ("auto", "heritrix-kafka", "crawl-log", "warcprox", "driftline")

_JSON_PARSERS: dict[str, Callable[[Mapping[str, Any]], CaptureEvent]] = {
    "heritrix-kafka": parse_heritrix_kafka,
    "warcprox": parse_warcprox,
    "driftline": parse_driftline,
}


def _text(value: bytes | str | None) -> str:
    if value is None:
        raise EventError("message has no value (tombstone)", reason="unparseable")
    if isinstance(value, str):
        text = value
    else:
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            raise EventError("message is not UTF-8 text", reason="unparseable") from None
    text = text.lstrip("\ufeff").strip()
    if not text:
        raise EventError("message is empty", reason="unparseable")
    return text


def _json_object(text: str) -> dict[str, Any]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EventError(f"message is not valid JSON: {exc.msg} at char {exc.pos}", reason="unparseable") from None
    if not isinstance(obj, dict):
        raise EventError(f"message is JSON {type(obj).__name__}, expected an object", reason="unparseable")
    return obj


def detect_json_format(obj: Mapping[str, Any]) -> str:
    """``heritrix-kafka``, ``warcprox`` or ``driftline`` for a decoded JSON message."""
    if obj.get("type") == "driftline.capture":
        return "driftline"
    keys = obj.keys()
    if WARCPROX_MARKERS & keys or ("content_type" in keys and "content_digest" in keys and "mimetype" not in keys):
        return "warcprox"
    if CRAWLER_MARKERS & keys:
        return "heritrix-kafka"
    return "driftline"


def detect_format(value: bytes | str | None) -> str:
    """The concrete format of one message (never ``auto``)."""
    text = _text(value)
    if text.startswith("{"):
        return detect_json_format(_json_object(text))
    return "crawl-log"


def parse_event(value: bytes | str | None, fmt: str = "auto") -> CaptureEvent:
    """Parse one message value into a :class:`CaptureEvent`.

    Raises :class:`~watcher.errors.EventError` with reason ``unparseable``
    (not text/JSON/a crawl.log line), ``missing_field``, ``invalid_field`` or
    ``unknown_format``.
    """
    if fmt not in FORMATS:
        raise EventError(f"unknown feed format {fmt!r} (expected one of {', '.join(FORMATS)})", reason="unknown_format")
    text = _text(value)
    if fmt == "crawl-log" or (fmt == "auto" and not text.startswith("{")):
        if "\n" in text:
            raise EventError("message holds several lines; expected one crawl.log line", reason="unparseable")
        return parse_crawl_log_line(text)
    obj = _json_object(text)
    concrete = detect_json_format(obj) if fmt == "auto" else fmt
    return _JSON_PARSERS[concrete](obj)
