"""Field coercion shared by the feed parsers.

Feeds disagree on spelling: crawl.log writes ``-`` for empty, Kafka feeds
send numbers as strings (``"is_test_crawl": "false"``), timestamps come as
ISO 8601, 14/17-digit archive stamps or Heritrix's
``yyyyMMddHHmmssSSS+<ms>``.  Each helper either returns a clean value or
raises :class:`~watcher.errors.EventError` with a slug naming the field's
problem (``invalid_field``, ``bad_timestamp``, ``bad_url``, ``bad_digest``,
``bad_warc_ref``).

Why the bounds: every value here comes from a message anyone can produce.
A value that parses but cannot be used later (an offset past 2**63, the year
9999 shifted past UTC's end, a URL holding a lone surrogate) would otherwise
raise deep inside the pipeline and be reported as a bug (``internal``); it
is bad input, and is refused here, where the slug can say so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from ..errors import EventError

_DIGITS = re.compile(r"^(\d{14})(\d{3})?$")
# Integers in events are offsets, lengths and status codes: 64-bit signed at most.
MAX_INT = 2**63 - 1
# Capture times outside these years are not web captures (and the far end
# overflows once shifted to UTC or a baseline window is added).
MIN_YEAR, MAX_YEAR = 1970, 2999
MAX_URL_CHARS = 8192
MAX_DIGEST_CHARS = 256
_DIGEST = re.compile(r"^[A-Za-z0-9+/=:_.-]+$")
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
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
        number = value
    else:
        try:
            number = int(str(value).strip())
        except ValueError:  # also Python's 4,300-digit limit on int(str)
            msg = f"field {name!r} must be an integer, got {str(value)[:40]!r}"
            raise EventError(msg, reason="invalid_field") from None
    if not -MAX_INT <= number <= MAX_INT:
        raise EventError(f"field {name!r}: integer out of the 64-bit range", reason="invalid_field")
    return number


def parse_digits(stamp: str) -> datetime | None:
    """``YYYYmmddHHMMSS[SSS]`` (UTC) or ``None`` if not of that form."""
    m = _DIGITS.match(stamp)
    if not m:
        return None
    d = m.group(1)
    try:  # the fields by position (``strptime`` was a tenth of reading a feed event)
        dt = datetime(int(d[:4]), int(d[4:6]), int(d[6:8]), int(d[8:10]), int(d[10:12]), int(d[12:14]), tzinfo=UTC)
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
    """An aware UTC datetime from ISO 8601, 14/17 digits or epoch seconds.

    Raises ``missing_field`` when blank and ``bad_timestamp`` when the value
    is not a time, or not one between :data:`MIN_YEAR` and :data:`MAX_YEAR`.
    """
    if value is None or (isinstance(value, str) and blank(value)):
        raise EventError(f"field {name!r} is empty", reason="missing_field")
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise EventError(f"field {name!r}: a timestamp must be a string or a number, got {type(value).__name__}",
                         reason="bad_timestamp")
    if isinstance(value, int | float):
        try:
            dt = datetime.fromtimestamp(float(value), tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise EventError(f"field {name!r}: epoch value out of range", reason="bad_timestamp") from None
        return _in_range(dt, name)
    text = value.strip()
    if len(text) > 64:
        raise EventError(f"field {name!r}: a timestamp of {len(text)} characters", reason="bad_timestamp")
    digits = parse_digits(text)
    if digits is not None:
        return _in_range(digits, name)
    try:
        dt = datetime.fromisoformat(text)
        dt = dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    except (ValueError, OverflowError):  # OverflowError: 9999-12-31T23:59:59-05:00 shifted to UTC
        raise EventError(f"field {name!r}: unrecognised timestamp {text[:40]!r}", reason="bad_timestamp") from None
    return _in_range(dt, name)


def _in_range(dt: datetime, name: str) -> datetime:
    if not MIN_YEAR <= dt.year <= MAX_YEAR:
        raise EventError(f"field {name!r}: year {dt.year} is outside {MIN_YEAR}-{MAX_YEAR}", reason="bad_timestamp")
    return dt


def check_url(value: Any, name: str = "url") -> str:
    """``value`` as a URL string fit for every later stage, or ``bad_url``.

    Refused: non-strings, over :data:`MAX_URL_CHARS`, lone surrogates (not
    encodable, so not a key), whitespace or control characters inside, no
    scheme, and http(s) URLs without a host or with a malformed host/port.
    Other schemes (``dns:``, ``javascript:``, ``data:``, ``file:``) pass:
    the skip rule counts them, as crawlers log them routinely.
    """
    if not isinstance(value, str):
        raise EventError(f"field {name!r} must be a string, got {type(value).__name__}", reason="bad_url")
    url = value.strip()
    if len(url) > MAX_URL_CHARS:
        raise EventError(f"field {name!r}: URL of {len(url)} characters (max {MAX_URL_CHARS})", reason="bad_url")
    try:
        url.encode("utf-8")
    except UnicodeEncodeError:
        raise EventError(f"field {name!r}: URL holds a lone surrogate", reason="bad_url") from None
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise EventError(f"field {name!r}: URL holds whitespace or control characters: {url[:80]!r}",
                         reason="bad_url")
    if not _URL_SCHEME.match(url):
        raise EventError(f"field {name!r}: URL has no scheme: {url[:80]!r}", reason="bad_url")
    scheme = url.split(":", 1)[0].lower()
    if scheme in ("http", "https"):
        try:
            parts = urlsplit(url)
            _ = parts.port
            host = parts.hostname
        except ValueError as exc:
            raise EventError(f"field {name!r}: malformed URL {url[:80]!r}: {exc}", reason="bad_url") from None
        if not host:
            raise EventError(f"field {name!r}: URL has no host: {url[:80]!r}", reason="bad_url")
    return url


def check_digest(value: Any, name: str = "digest") -> str | None:
    """A payload digest as a short token (``sha1:BASE32``...), or ``bad_digest``."""
    if blank(value):
        return None
    if not isinstance(value, str):
        raise EventError(f"field {name!r} must be a string, got {type(value).__name__}", reason="bad_digest")
    text = value.strip()
    if len(text) > MAX_DIGEST_CHARS or not _DIGEST.match(text):
        raise EventError(f"field {name!r}: not a payload digest: {text[:60]!r}", reason="bad_digest")
    return text


def check_warc_ref(filename: str | None, offset: int | None, length: int | None) -> None:
    """A WARC reference that can be read: no negative offset or length."""
    if offset is not None and offset < 0:
        raise EventError(f"negative WARC offset {offset}", reason="bad_warc_ref")
    if length is not None and length < 0:
        raise EventError(f"negative WARC record length {length}", reason="bad_warc_ref")


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
