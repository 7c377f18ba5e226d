"""One error hierarchy, rooted in :class:`DriftlineError`.

Why one root: consumers apply one policy (dead-letter the event, log
topic/partition/offset, go on) to anything that is a driftline error, and let
everything else surface as a bug.  "Skip this event" is *not* an error: it is
:class:`SkipEvent`, which does not derive from :class:`DriftlineError`.
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
    reason = "config"


class InputError(DriftlineError):
    """A batch input (file, URL) could not be read or recognised."""

    reason = "input"


class EventError(DriftlineError):
    """A streaming event is unparseable or misses required fields."""

    reason = "bad_event"


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


class SkipEvent(Exception):  # noqa: N818 - a signal, not an error
    """Not an error: this event is deliberately not scored (dns:, robots.txt, ...).

    ``reason`` is a bounded slug counted in metrics.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
