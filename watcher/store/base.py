"""The baseline store interface; backends are chosen by ``store.backend``.

Keeps, per history (canonical URL key): the baseline fingerprint (sketch form
by default; full text and shingles only when configured), document
frequencies for that history's TF-IDF, and the verdict history.  Writes are
idempotent per capture (keyed by the deterministic verdict id), so processing
a capture twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from ..model import Fingerprint, Verdict


@dataclass(frozen=True, slots=True)
class StoredBaseline:
    history: str
    capture_time: datetime
    uri_m: str | None
    fingerprint: Fingerprint


class BaselineStore(Protocol):
    """What the engine needs from a store.  All methods are synchronous and
    thread-safe; async callers run them in a thread (SQLite is fast enough
    that this is rarely needed)."""

    def get_baseline(self, history: str) -> StoredBaseline | None: ...

    def set_baseline(self, baseline: StoredBaseline) -> None:
        """Create or replace the baseline of ``baseline.history``."""

    def has_verdict(self, verdict_id: str) -> bool: ...

    def get_verdict(self, verdict_id: str) -> Verdict | None: ...

    def put_verdict(self, verdict: Verdict, terms: Sequence[str] = (), baseline: StoredBaseline | None = None) -> bool:
        """Store ``verdict``; return False (and change nothing) if its id is
        already stored, or was stored once and pruned by ``history_limit``.
        ``terms`` are the distinct terms of the capture, added to the
        history's document frequencies in the same transaction.  ``baseline``,
        when given, is set in that same transaction too (only if the verdict is
        new), so a crash cannot leave a new baseline without its verdict."""

    def recent_verdicts(self, history: str, limit: int) -> list[Verdict]:
        """The newest ``limit`` verdicts of ``history``, newest first (by capture time)."""

    def document_frequencies(self, history: str, terms: Sequence[str]) -> tuple[int, Mapping[str, int]]:
        """(number of documents seen for ``history``, df of each of ``terms``)."""

    def histories_off_topic(self) -> int:
        """Number of histories whose newest verdict is off-topic (a gauge)."""

    def close(self) -> None: ...
