"""The JSON messages driftline publishes (verdicts, alerts, dead letters).

Every result message carries the deterministic ``verdict_id`` (history +
capture time + digest), so a message re-sent by the at-least-once pipeline is
recognisable downstream.  Keys are the history (canonical URL key): all
results of one resource stay in one partition, in order.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from watcher.model import Verdict, utc
from watcher.store.codec import verdict_to_dict

# A dead letter holds the original bytes base64-encoded (4/3 larger): cap them
# so the dead letter itself stays under the broker's default 1 MB message size.
DEAD_LETTER_MAX_VALUE_BYTES = 512 * 1024
# Keys are capped alike (in the body); a longer key is not used as the dead letter's Kafka key.
DEAD_LETTER_MAX_KEY_BYTES = 64 * 1024
MAX_DEAD_LETTER_KEY_BYTES = 1024

# Headers the router puts on re-keyed events: where the raw event came from.
H_SRC_TOPIC = "driftline-source-topic"
H_SRC_PARTITION = "driftline-source-partition"
H_SRC_OFFSET = "driftline-source-offset"
H_SRC_FORMAT = "driftline-source-format"
H_SRC_KEY = "driftline-source-key"


def iso(dt: datetime | None) -> str | None:
    """ISO 8601 in UTC with a ``Z``, or ``None``."""
    if dt is None:
        return None
    return utc(dt).isoformat().replace("+00:00", "Z")


def _dumps(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def verdict_dict(verdict: Verdict) -> dict[str, Any]:
    """Every field of the verdict, as the store and the batch writers see it
    (one serialisation: :func:`watcher.store.codec.verdict_to_dict`)."""
    return verdict_to_dict(verdict)


def verdict_message(verdict: Verdict) -> bytes:
    """The message on ``results_topic``: one per scored capture."""
    return _dumps({"type": "verdict", **verdict_dict(verdict)})


def alert_message(verdict: Verdict) -> bytes:
    """The message on ``alerts_topic``: a capture whose change the alert policy names, once per capture."""
    body = verdict_dict(verdict)
    body["type"] = "alert"
    body["alert"] = f"{verdict.change}: {verdict.url} ({verdict.reason})"
    return _dumps(body)


def dead_letter_message(
    *,
    value: bytes | None,
    key: bytes | None,
    reason: str,
    message: str,
    topic: str,
    partition: int,
    offset: int,
    consumed_from: Mapping[str, Any] | None = None,
    error_class: str | None = None,
) -> bytes:
    """The message on ``dead_letter_topic``: the original bytes (base64, cut at
    :data:`DEAD_LETTER_MAX_VALUE_BYTES`), where they came from, and why they
    could not be scored."""
    size = len(value) if value is not None else 0
    truncated = value is not None and size > DEAD_LETTER_MAX_VALUE_BYTES
    if truncated and value is not None:
        value = value[:DEAD_LETTER_MAX_VALUE_BYTES]
    key_size = len(key) if key is not None else 0
    if key is not None and key_size > DEAD_LETTER_MAX_KEY_BYTES:
        key = key[:DEAD_LETTER_MAX_KEY_BYTES]
    return _dumps({
        "type": "dead-letter",
        "reason": reason,
        "message": _encodable(message[:2000]),
        "error_class": error_class,
        "topic": topic,
        "partition": partition,
        "offset": offset,
        "key_b64": base64.b64encode(key).decode("ascii") if key is not None else None,
        "value_b64": base64.b64encode(value).decode("ascii") if value is not None else None,
        "value_bytes": size,
        "value_truncated": truncated,
        "key_bytes": key_size,
        "key_truncated": key_size > DEAD_LETTER_MAX_KEY_BYTES,
        "consumed_from": dict(consumed_from) if consumed_from else None,
        "time": iso(datetime.now(UTC)),
    })


def _encodable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def minimal_dead_letter(*, reason: str, message: str, topic: str, partition: int, offset: int,
                        error_class: str | None, note: str) -> bytes:
    """A dead letter without the original bytes (ASCII JSON, small): sent when the
    full one cannot be built or is refused, so the source position is never lost."""
    return json.dumps({
        "type": "dead-letter",
        "reason": reason,
        "message": _encodable(message[:2000]),
        "error_class": error_class,
        "topic": _encodable(str(topic))[:500],
        "partition": partition,
        "offset": offset,
        "key_b64": None,
        "value_b64": None,
        "value_truncated": True,
        "minimal": _encodable(note[:500]),
        "time": iso(datetime.now(UTC)),
    }, ensure_ascii=True, sort_keys=True, separators=(",", ":")).encode("ascii")
