"""Capture events: the model every crawler feed is parsed into, and the skip rule.

Public API::

    CaptureEvent, normalise_digest            (model)
    parse_event(value, fmt="auto"), detect_format, FORMATS, FEED_FORMATS (the table), check_formats
    parse_crawl_log_line, iter_crawl_log, parse_heritrix_kafka, parse_warcprox,
    parse_driftline, validate_event, event_schema
    should_skip(event, cfg) -> reason | None, SKIP_REASONS
"""

from __future__ import annotations

from .crawllog import iter_crawl_log, parse_crawl_log_line
from .driftline import event_schema, parse_driftline, validate_event
from .feeds import parse_heritrix_kafka, parse_warcprox
from .model import CaptureEvent, normalise_digest
from .parse import FEED_FORMATS, FEEDS, FORMATS, FeedFormat, check_formats, detect_format, parse_event
from .skip import SKIP_REASONS, base_mimetype, should_skip

__all__ = [
    "FEEDS",
    "FEED_FORMATS",
    "FORMATS",
    "SKIP_REASONS",
    "CaptureEvent",
    "FeedFormat",
    "base_mimetype",
    "check_formats",
    "detect_format",
    "event_schema",
    "iter_crawl_log",
    "normalise_digest",
    "parse_crawl_log_line",
    "parse_driftline",
    "parse_event",
    "parse_heritrix_kafka",
    "parse_warcprox",
    "should_skip",
    "validate_event",
]
