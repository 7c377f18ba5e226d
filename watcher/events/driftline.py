"""driftline's own event JSON, validated by ``watcher/schemas/event.schema.json``.

Unlike the crawler feeds, this format is ours, so it is validated strictly
(unknown fields are refused, not silently ignored): a typo in a producer
should reach the dead-letter topic, not disappear.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import EventError
from .fields import check_digest, check_url, check_warc_ref, opt_int, opt_str, parse_time, split_annotations
from .model import CaptureEvent

# Schema failures of these fields get the slug the feed parsers use for them.
_FIELD_REASONS = {"url": "bad_url", "timestamp": "bad_timestamp", "digest": "bad_digest",
                  "warc_offset": "bad_warc_ref", "warc_length": "bad_warc_ref"}

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "event.schema.json"


@lru_cache(maxsize=1)
def event_schema() -> dict[str, Any]:
    """The JSON Schema of driftline events (loaded once)."""
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema  # here, not at import: commands that read no events (scan) do not pay for it

    schema = event_schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate_event(obj: Any) -> None:
    """Raise :class:`EventError` (``missing_field`` / ``invalid_field``) unless ``obj`` fits the schema."""
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(obj))
    if error is None:
        return
    where = "/".join(str(p) for p in error.absolute_path) or "(event)"
    reason = "missing_field" if error.validator in ("required", "dependentRequired") else "invalid_field"
    if reason == "invalid_field" and error.absolute_path:
        reason = _FIELD_REASONS.get(str(error.absolute_path[0]), reason)
    raise EventError(f"driftline event invalid at {where}: {error.message}", reason=reason)


def _decode_content(obj: Mapping[str, Any]) -> tuple[bytes | None, str | None]:
    if "content" not in obj:
        return None, None
    encoding = obj.get("content_encoding", "text")
    text = obj["content"]
    if encoding == "base64":
        try:
            return base64.b64decode(text, validate=True), "base64"
        except (binascii.Error, ValueError):
            raise EventError("field 'content' is not valid base64", reason="invalid_field") from None
    return text.encode("utf-8"), "text"


def parse_driftline(obj: Mapping[str, Any]) -> CaptureEvent:
    """A validated driftline event as a :class:`CaptureEvent`."""
    validate_event(obj)
    content, encoding = _decode_content(obj)
    watch = obj.get("watch")
    warc_offset = opt_int(obj.get("warc_offset"), "warc_offset")
    warc_length = opt_int(obj.get("warc_length"), "warc_length")
    check_warc_ref(opt_str(obj.get("warc_filename")), warc_offset, warc_length)
    return CaptureEvent(
        url=check_url(obj["url"]),
        timestamp=parse_time(obj["timestamp"], "timestamp"),
        status_code=opt_int(obj.get("status_code"), "status_code"),
        mimetype=opt_str(obj.get("mimetype")),
        content_length=opt_int(obj.get("content_length"), "content_length"),
        digest=check_digest(obj.get("digest")),
        seed=opt_str(obj.get("seed")),
        via=opt_str(obj.get("via")),
        hop_path=opt_str(obj.get("hop_path")),
        job=opt_str(obj.get("job")),
        crawler=str(obj.get("crawler") or "driftline"),
        warc_filename=opt_str(obj.get("warc_filename")),
        warc_offset=warc_offset,
        warc_length=warc_length,
        replay_uri=opt_str(obj.get("replay_uri")),
        content=content,
        content_encoding=encoding,
        annotations=split_annotations(obj.get("annotations")),
        extra=dict(obj.get("extra") or {}),
        doi=opt_str(obj.get("doi")),
        watch=dict(watch) if isinstance(watch, Mapping) else None,
        format="driftline",
    )
