"""One entry point for every feed format (:func:`parse_event`) and one table of them.

Kafka message values are bytes of unknown provenance; a topic can be
configured with its format (``kafka.input_topics: {topic: format}``) or left
on ``auto``, which looks at the message itself: a JSON object is offered to
the JSON formats' detectors in table order (driftline's typed events, then
warcprox's listener JSON, then Heritrix's Kafka feed; an object no detector
claims is read as a driftline event, which is validated strictly), and a text
line is a crawl.log line.

Why one table (:data:`FEED_FORMATS`): the names accepted in the config, the
parser and the detector of each format were three lists that drifted; now a
new format is one row, and :func:`check_formats` validates the config
against the same rows at start-up.

JSON is parsed with limits, because a message anyone can produce must fail
as bad input, never as a bug: nesting deeper than :data:`MAX_JSON_DEPTH`
(Python's parser raises ``RecursionError`` at ~1,000), integers over Python's
4,300-digit limit (``ValueError``), ``NaN``/``Infinity`` and overflowing
floats, and strings holding lone surrogates (``"\\ud800"`` decodes, then
fails on every later encode) are all ``bad_json`` / ``bad_encoding``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, EventError
from .crawllog import parse_crawl_log_line
from .driftline import parse_driftline
from .feeds import CRAWLER_MARKERS, WARCPROX_MARKERS, parse_heritrix_kafka, parse_warcprox
from .model import CaptureEvent

MAX_JSON_DEPTH = 32


def _is_driftline(obj: Mapping[str, Any]) -> bool:
    return obj.get("type") == "driftline.capture"


def _is_warcprox(obj: Mapping[str, Any]) -> bool:
    keys = obj.keys()
    return bool(WARCPROX_MARKERS & keys) or ("content_type" in keys and "content_digest" in keys
                                             and "mimetype" not in keys)


def _is_heritrix(obj: Mapping[str, Any]) -> bool:
    return bool(CRAWLER_MARKERS & obj.keys())


@dataclass(frozen=True)
class FeedFormat:
    """One feed format: its config name, what it is, and how it is read.

    ``json_parser`` reads a decoded JSON object, ``line_parser`` one text
    line (exactly one of them is set); ``detect`` says whether a JSON object
    is of this format (``None``: never chosen by detection alone).
    """

    name: str
    what: str
    json_parser: Callable[[Mapping[str, Any]], CaptureEvent] | None = None
    line_parser: Callable[[str], CaptureEvent] | None = None
    detect: Callable[[Mapping[str, Any]], bool] | None = None


FEED_FORMATS: tuple[FeedFormat, ...] = (
    FeedFormat("driftline", "driftline's own event JSON (event.schema.json)", json_parser=parse_driftline,
               detect=_is_driftline),
    FeedFormat("warcprox", "the warcprox listener JSON (Brozzler)", json_parser=parse_warcprox, detect=_is_warcprox),
    FeedFormat("heritrix-kafka", "Heritrix 3 KafkaCrawlLogFeed JSON", json_parser=parse_heritrix_kafka,
               detect=_is_heritrix),
    FeedFormat("crawl-log", "one Heritrix/warcprox crawl.log line", line_parser=parse_crawl_log_line),
)
FEEDS: dict[str, FeedFormat] = {f.name: f for f in FEED_FORMATS}
FALLBACK_JSON_FORMAT = "driftline"
FORMATS = ("auto", *FEEDS)


def check_formats(input_topics: Mapping[str, str]) -> None:
    """Refuse, at start-up, an ``input_topics`` format that is not in the table (one line)."""
    for topic, fmt in input_topics.items():
        if fmt not in FORMATS:
            raise ConfigError(f"kafka.input_topics.{topic}: unknown feed format {fmt!r}; known: {', '.join(FORMATS)}",
                              reason="unknown_format")


def _text(value: bytes | str | None) -> str:
    if value is None:
        raise EventError("message has no value (tombstone)", reason="unparseable")
    if isinstance(value, str):
        text = value
    else:
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EventError(f"message is not UTF-8 text (byte {exc.start})", reason="bad_encoding") from None
    text = text.lstrip("\ufeff").strip()
    if not text:
        raise EventError("message is empty", reason="unparseable")
    return text


def _constant(name: str) -> Any:
    raise EventError(f"message holds {name}, which is not JSON", reason="bad_json")


def _float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise EventError(f"message holds a number that overflows a float ({text[:20]}...)", reason="bad_json")
    return number


def _check_tree(obj: Any) -> None:
    """Depth and string checks over a decoded JSON value (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise EventError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", reason="bad_json")
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, child in items:
                if isinstance(key, str):
                    _check_string(key)
                if isinstance(child, dict | list | str):
                    stack.append((child, depth + 1))
        elif isinstance(node, str):
            _check_string(node)


def _check_string(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise EventError("a JSON string holds a lone surrogate (\\ud800-\\udfff)", reason="bad_encoding") from None


def _json_object(text: str) -> dict[str, Any]:
    try:
        obj = json.loads(text, parse_constant=_constant, parse_float=_float)
    except json.JSONDecodeError as exc:
        raise EventError(f"message is not valid JSON: {exc.msg} at char {exc.pos}", reason="bad_json") from None
    except RecursionError:
        raise EventError("JSON nested too deep to parse", reason="bad_json") from None
    except ValueError as exc:  # an integer over Python's 4,300-digit limit
        raise EventError(f"message holds a number JSON cannot take: {str(exc)[:80]}", reason="bad_json") from None
    if not isinstance(obj, dict):
        raise EventError(f"message is JSON {type(obj).__name__}, expected an object", reason="bad_json")
    _check_tree(obj)
    return obj


def detect_json_format(obj: Mapping[str, Any]) -> str:
    """The name of the JSON feed format of a decoded message (the first detector that claims it)."""
    for feed in FEED_FORMATS:
        if feed.detect is not None and feed.detect(obj):
            return feed.name
    return FALLBACK_JSON_FORMAT


def detect_format(value: bytes | str | None) -> str:
    """The concrete format of one message (never ``auto``)."""
    text = _text(value)
    if text.startswith(("{", "[")):
        return detect_json_format(_json_object(text))
    return "crawl-log"


def parse_event(value: bytes | str | None, fmt: str = "auto") -> CaptureEvent:
    """Parse one message value into a :class:`CaptureEvent`.

    Raises :class:`~watcher.errors.EventError`: ``unparseable`` (empty, or
    not JSON/a crawl.log line), ``bad_encoding``, ``bad_json``,
    ``missing_field``, ``invalid_field``, ``bad_url``, ``bad_timestamp``,
    ``bad_digest``, ``bad_warc_ref`` or ``unknown_format``.
    """
    if fmt not in FORMATS:
        raise EventError(f"unknown feed format {fmt!r} (expected one of {', '.join(FORMATS)})", reason="unknown_format")
    text = _text(value)
    feed = FEEDS.get(fmt)
    if feed is None:  # auto
        feed = None if text.startswith(("{", "[")) else FEEDS["crawl-log"]
    if feed is not None and feed.line_parser is not None:
        if "\n" in text:
            raise EventError("message holds several lines; expected one crawl.log line", reason="unparseable")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise EventError("message holds a lone surrogate", reason="bad_encoding") from None
        return feed.line_parser(text)
    obj = _json_object(text)
    if feed is None:
        feed = FEEDS[detect_json_format(obj)]
    assert feed.json_parser is not None
    return feed.json_parser(obj)
