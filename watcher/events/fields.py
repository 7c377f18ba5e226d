"""Field coercion shared by the feed parsers.

Feeds disagree on spelling: crawl.log writes ``-`` for empty, Kafka feeds
send numbers as strings (``"is_test_crawl": "false"``), timestamps come as
ISO 8601, 14/17-digit archive stamps or Heritrix's
``yyyyMMddHHmmssSSS+<ms>``.  Each helper either returns a clean value or
raises :class:`~watcher.errors.EventError` with reason ``invalid_field``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ..errors import EventError

_DIGITS = re.compile(r"^(\d{14})(\d{3})?$")
_START_PLUS = re.compile(r"^(\d{14})(\d{3})?\+(-?\d+)$")


def blank(value: Any) -> bool:
    """True for values a feed uses to mean 'none' (``None``, ``""``, ``"-"``)."""
    return value is None or (isinstance(value, str) and value.strip() in ("", "-"))


def opt_str(value: Any) -> str | None:
    if blank(value):
        return None
    return str(value).strip()


def opt_int(value: Any, name: str) -> int | None:
    if blank(value):
        return None
    if isinstance(value, bool):
        raise EventError(f"field {name!r} must be an integer, got a boolean", reason="invalid_field")
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        msg = f"field {name!r} must be an integer, got {str(value)[:40]!r}"
        raise EventError(msg, reason="invalid_field") from None


def parse_digits(stamp: str) -> datetime | None:
    """``YYYYmmddHHMMSS[SSS]`` (UTC) or ``None`` if not of that form."""
    m = _DIGITS.match(stamp)
    if not m:
        return None
    try:
        dt = datetime.strptime(m.group(1), "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    if m.group(2):
        dt = dt.replace(microsecond=int(m.group(2)) * 1000)
    return dt


def parse_start_plus_duration(value: Any) -> datetime | None:
    """Fetch start of Heritrix's ``yyyyMMddHHmmssSSS+<duration ms>``; ``None`` if blank/odd."""
    if blank(value):
        return None
    m = _START_PLUS.match(str(value).strip())
    if not m:
        return None
    return parse_digits(m.group(1) + (m.group(2) or ""))


def parse_time(value: Any, name: str) -> datetime:
    """An aware UTC datetime from ISO 8601, 14/17 digits or epoch seconds."""
    if isinstance(value, bool) or blank(value):
        raise EventError(f"field {name!r} is empty", reason="missing_field")
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(float(value), tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise EventError(f"field {name!r}: epoch value out of range", reason="invalid_field") from None
    text = str(value).strip()
    digits = parse_digits(text)
    if digits is not None:
        return digits
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise EventError(f"field {name!r}: unrecognised timestamp {text[:40]!r}", reason="invalid_field") from None
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def split_annotations(value: Any) -> tuple[str, ...]:
    """Annotations as a tuple (feeds send a comma-joined string or a list)."""
    if blank(value):
        return ()
    if isinstance(value, list | tuple):
        return tuple(str(v).strip() for v in value if not blank(v))
    return tuple(a.strip() for a in str(value).split(",") if a.strip())


def require(obj: Mapping[str, Any], name: str) -> Any:
    value = obj.get(name)
    if blank(value):
        raise EventError(f"required field {name!r} is missing or empty", reason="missing_field")
    return value
