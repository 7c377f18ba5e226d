"""Parser for Heritrix / warcprox ``crawl.log`` lines (one line per message).

Layout (whitespace separated, ``-`` for empty): log time, status, size, URI,
hop path, via, MIME type, ``#thread``, ``start+duration``, digest, source tag
(the seed), annotations, then an optional extra-info JSON object.  The
annotations field may itself contain spaces (ClamAV writes
``1: stream: Eicar-Test-Signature FOUND``), so the extra JSON is found by
trying each ``{`` from the left until the remainder parses as an object.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
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
    split_annotations,
)
from .model import CaptureEvent

MIN_FIELDS = 11


def _split_rest(rest: str) -> tuple[str, dict[str, Any]]:
    """Split ``annotations [extra-json]`` into the two parts."""
    rest = rest.strip()
    if not rest.endswith("}"):
        return rest, {}
    start = rest.find("{")
    while start != -1:
        if start == 0 or rest[start - 1].isspace():
            try:
                obj = json.loads(rest[start:])
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                return rest[:start].strip(), obj
        start = rest.find("{", start + 1)
    return rest, {}


def parse_crawl_log_line(line: str) -> CaptureEvent:
    """One crawl.log line as a :class:`CaptureEvent` (raises :class:`EventError`)."""
    parts = line.strip().split(None, MIN_FIELDS)
    if len(parts) < MIN_FIELDS:
        raise EventError(
            f"crawl.log line has {len(parts)} fields, expected at least {MIN_FIELDS}", reason="unparseable"
        )
    log_time = parse_time(parts[0], "log time")
    status = opt_int(parts[1], "status")
    if status is None:
        raise EventError("crawl.log line has no status code", reason="missing_field")
    url = parts[3]
    if url == "-":
        raise EventError("crawl.log line has no URI", reason="missing_field")
    url = check_url(url)
    annotations_text, info = _split_rest(parts[11]) if len(parts) > MIN_FIELDS else ("", {})
    thread = parts[7]
    warc_offset = opt_int(info.get("warcFileOffset"), "warcFileOffset")
    warc_length = opt_int(info.get("warcFileRecordLength"), "warcFileRecordLength")
    check_warc_ref(opt_str(info.get("warcFilename")), warc_offset, warc_length)
    return CaptureEvent(
        url=url,
        timestamp=parse_start_plus_duration(parts[8]) or log_time,
        status_code=status,
        mimetype=opt_str(parts[6]),
        content_length=opt_int(parts[2], "size"),
        digest=check_digest(parts[9]),
        seed=opt_str(parts[10]),
        via=opt_str(parts[5]),
        hop_path=opt_str(parts[4]),
        # Heritrix writes the toe thread (#001); warcprox writes '-' there.
        crawler="heritrix" if thread.startswith("#") else "warcprox",
        warc_filename=opt_str(info.get("warcFilename")),
        warc_offset=warc_offset,
        warc_length=warc_length,
        annotations=split_annotations(annotations_text),
        extra={"log_time": log_time.isoformat(), "thread": opt_str(thread), "extra_info": info},
        format="crawl-log",
    )


def iter_crawl_log(lines: Iterable[str]) -> Iterator[CaptureEvent | EventError]:
    """Parse a crawl.log file; yields an event or the error of each non-blank line."""
    for line in lines:
        if not line.strip():
            continue
        try:
            yield parse_crawl_log_line(line)
        except EventError as exc:
            yield exc
