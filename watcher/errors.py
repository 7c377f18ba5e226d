"""One error hierarchy, rooted in :class:`DriftlineError`.

Why one root: consumers apply one policy (dead-letter the event, log
topic/partition/offset, go on) to anything that is a driftline error, and let
everything else surface as a bug.  "Skip this event" is *not* an error: it is
:class:`SkipEvent`, which does not derive from :class:`DriftlineError`; nor
is Ctrl-C (:class:`Interrupted`, a :class:`KeyboardInterrupt` carrying what was kept).
"""

from __future__ import annotations


class DriftlineError(Exception):
    """Root of every error driftline raises on purpose.

    ``reason`` is a short machine-readable slug used as a metrics label and in
    dead-letter messages (bounded cardinality: never a URL).
    """

    reason: str = "error"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class ConfigError(DriftlineError):
    """A setting is invalid.  ``problems`` holds one line per problem (the message joins them)."""

    reason = "config"

    def __init__(self, message: str, *, reason: str | None = None, problems: list[str] | None = None) -> None:
        super().__init__(message, reason=reason)
        self.problems = problems or [message]


class InputError(DriftlineError):
    """A batch input (file, URL) could not be read or recognised."""

    reason = "input"


class EventError(DriftlineError):
    """A streaming event is bad input: it cannot be parsed, or a field is unusable.

    The slug names what is wrong (:data:`EVENT_REASONS`), so an operator
    tells a producer's bug from driftline's: bad input is never ``internal``.
    """

    reason = "bad_event"


# Every slug an EventError carries (bounded metric label values).
EVENT_REASONS = (
    "bad_event",  # bad input not covered below
    "unparseable",  # empty, a tombstone, or text that is neither JSON nor a crawl.log line
    "bad_encoding",  # not UTF-8, or a string holding a lone surrogate
    "bad_json",  # invalid JSON, or JSON past the limits (depth, 4,300-digit integers, NaN/Infinity)
    "missing_field",
    "invalid_field",  # a field of the wrong type or out of range
    "bad_url",  # no scheme, no host, whitespace/control characters, surrogates, too long
    "bad_timestamp",  # not a time, or a year outside 1970-2999 (e.g. 9999-12-31T23:59:59-05:00)
    "bad_digest",
    "bad_warc_ref",  # negative WARC offset or length
    "unknown_format",
)


class AcquireError(DriftlineError):
    """The captured bytes could not be obtained (WARC, replay, live)."""

    reason = "acquire"


class BlockedAddressError(AcquireError):
    """A URL resolved to a private, loopback, link-local or metadata address."""

    reason = "blocked_address"


class TooLargeError(AcquireError):
    reason = "too_large"


class ExtractError(DriftlineError):
    reason = "extract"


class RenderError(AcquireError):
    reason = "render"


class StoreError(DriftlineError):
    reason = "store"


class DoiError(DriftlineError):
    """A DOI is malformed, or a DOI list or registry API answer cannot be used."""

    reason = "invalid_doi"


class UnknownMeasureError(ConfigError):
    reason = "unknown_measure"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, after the work already finished was kept (a batch scan's finished histories).

    A :class:`KeyboardInterrupt`, so whatever stops on Ctrl-C still stops;
    its message is the one line the CLI prints before exiting 130.
    """


class SkipEvent(Exception):  # noqa: N818 - a signal, not an error
    """Not an error: this event is deliberately not scored (dns:, robots.txt, ...).

    ``reason`` is a bounded slug counted in metrics.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
