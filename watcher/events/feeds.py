"""Parsers for the JSON feeds crawlers emit (Heritrix Kafka feed, warcprox listener).

Both are flat JSON objects; fields driftline maps onto :class:`CaptureEvent`
are consumed, every other field is kept in ``extra`` untouched so that
deployment-specific fields (Archive-It's ``account_id``, ``collection_id``,
``is_test_crawl``...) survive into verdicts and alerts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import EventError
from .fields import (
    check_digest,
    check_url,
    check_warc_ref,
    opt_int,
    opt_str,
    parse_start_plus_duration,
    parse_time,
    require,
    split_annotations,
)
from .model import CaptureEvent

# Fields of Heritrix 3's contrib KafkaCrawlLogFeed that map onto CaptureEvent.
_HERITRIX_MAPPED = frozenset(
    {
        "url",
        "status_code",
        "mimetype",
        "content_length",
        "content_digest",
        "seed",
        "via",
        "hop_path",
        "job_name",
        "warc_filename",
        "warc_offset",
        "annotations",
    }
)

# Fields of the warcprox listener JSON (UK Web Archive plugin, used with Brozzler).
_WARCPROX_MAPPED = _HERITRIX_MAPPED | {"content_type", "warc_length"}

# Keys only the warcprox listener sends (used by format auto-detection).
WARCPROX_MARKERS = frozenset({"warc_type", "warc_id", "warc_content_type", "wire_bytes", "http_method", "warc_length"})
# Keys only the crawler feeds send (driftline's own events use ``digest``).
CRAWLER_MARKERS = frozenset({"content_digest", "start_time_plus_duration", "hop_path", "thread", "job_name"})


def _capture_time(obj: Mapping[str, Any]) -> Any:
    """Fetch start from ``start_time_plus_duration``, else the log ``timestamp``.

    The start time is what the WARC record's ``WARC-Date`` carries, so it is
    the capture time replay systems know this capture by.
    """
    start = parse_start_plus_duration(obj.get("start_time_plus_duration"))
    if start is not None:
        return start
    if obj.get("timestamp") in (None, "", "-"):
        raise EventError(
            "neither 'start_time_plus_duration' nor 'timestamp' is present", reason="missing_field"
        )
    return parse_time(obj["timestamp"], "timestamp")


def _warc_length(obj: Mapping[str, Any]) -> int | None:
    length = opt_int(obj.get("warc_length"), "warc_length")
    if length is not None:
        return length
    info = obj.get("extra_info")
    if isinstance(info, Mapping):
        return opt_int(info.get("warcFileRecordLength"), "extra_info.warcFileRecordLength")
    return None


def _json_feed_event(obj: Mapping[str, Any], *, crawler: str, fmt: str, mimetype: str | None,
                     annotations: tuple[str, ...], mapped: frozenset[str] | set[str]) -> CaptureEvent:
    """The fields Heritrix's Kafka feed and warcprox's listener JSON share."""
    warc_offset = opt_int(obj.get("warc_offset"), "warc_offset")
    warc_length = _warc_length(obj)
    check_warc_ref(opt_str(obj.get("warc_filename")), warc_offset, warc_length)
    return CaptureEvent(
        url=check_url(require(obj, "url")),
        timestamp=_capture_time(obj),
        status_code=opt_int(obj.get("status_code"), "status_code"),
        mimetype=mimetype,
        content_length=opt_int(obj.get("content_length"), "content_length"),
        digest=check_digest(obj.get("content_digest"), "content_digest"),
        seed=opt_str(obj.get("seed")),
        via=opt_str(obj.get("via")),
        hop_path=opt_str(obj.get("hop_path")),
        job=opt_str(obj.get("job_name")),
        crawler=crawler,
        warc_filename=opt_str(obj.get("warc_filename")),
        warc_offset=warc_offset,
        warc_length=warc_length,
        annotations=annotations,
        extra={k: v for k, v in obj.items() if k not in mapped},
        format=fmt,
    )


def parse_heritrix_kafka(obj: Mapping[str, Any]) -> CaptureEvent:
    """One message of Heritrix's ``KafkaCrawlLogFeed`` (topic ``heritrix-crawl-log``)."""
    return _json_feed_event(obj, crawler="heritrix", fmt="heritrix-kafka", mimetype=opt_str(obj.get("mimetype")),
                            annotations=split_annotations(obj.get("annotations")), mapped=_HERITRIX_MAPPED)


def parse_warcprox(obj: Mapping[str, Any]) -> CaptureEvent:
    """One message of the warcprox listener feed (Brozzler crawls through warcprox).

    A ``warc_type`` of ``revisit`` is turned into the ``duplicate:digest``
    annotation Heritrix uses, so one rule recognises revisits of both crawlers.
    """
    annotations = split_annotations(obj.get("annotations"))
    if str(obj.get("warc_type", "")).lower() == "revisit" and not any(a.startswith("duplicate:") for a in annotations):
        annotations = (*annotations, "duplicate:digest")
    mimetype = opt_str(obj.get("content_type")) or opt_str(obj.get("mimetype"))
    return _json_feed_event(obj, crawler="warcprox", fmt="warcprox", mimetype=mimetype, annotations=annotations,
                            mapped=_WARCPROX_MAPPED)
