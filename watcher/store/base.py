"""The baseline store interface; backends are chosen by ``store.backend``.

Keeps, per history (canonical URL key): the scoring state (the baseline
fingerprint in compact form, and a pinned one), the verdict history, and for
the re-scoring window each capture's compact fingerprint.  Writes are
idempotent per capture (keyed by the deterministic verdict id), so processing
a capture twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any, Protocol, Self

from ..model import Fingerprint, Verdict
from ..state import HistoryState


class Rows(Protocol):
    """The part of a DB-API cursor the shared code reads."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class BaselineStore(Protocol):
    """What the engine needs from a store: all per-history state.  All methods
    are synchronous and thread-safe; async callers run them in a thread."""

    def get_state(self, history: str) -> HistoryState:
        """The history's scoring state (an empty state for a new history)."""

    def set_state(self, history: str, state: HistoryState) -> None: ...

    def has_verdict(self, verdict_id: str) -> bool: ...

    def get_verdict(self, verdict_id: str) -> Verdict | None: ...

    def put_verdict(self, verdict: Verdict, state: HistoryState | None = None, fingerprint: Fingerprint | None = None,
                    corrections: Sequence[Verdict] = (), *,
                    alerts: Sequence[str] = ()) -> bool:
        """Store ``verdict``; return False (and change nothing) if its id is
        already stored, or was stored once and pruned by ``history_limit``.
        ``fingerprint`` (the capture's) is kept for the re-scoring window;
        ``corrections`` replace stored verdicts by new versions; ``state`` (or
        the older ``baseline``) becomes the history's state -- all in one
        transaction, and only if the verdict is new, so a crash cannot leave a
        new baseline without its verdict.  ``alerts`` (verdict ids) are
        recorded as owed in the same transaction: an alert is owed exactly when
        its verdict exists, so a crash before the send re-sends it."""

    def alert_pending(self, verdict_id: str) -> bool:
        """An alert is owed for this verdict and not yet acknowledged by the broker."""

    def mark_alert_sent(self, verdict_id: str) -> None:
        """The broker acknowledged the alert: it is not owed any more."""

    def logged(self, history: str) -> list[tuple[Verdict, Fingerprint]]:
        """Stored verdicts of ``history`` that still hold their capture's fingerprint, oldest first."""

    def recent_verdicts(self, history: str, limit: int) -> list[Verdict]:
        """The newest ``limit`` verdicts of ``history``, newest first (by capture time)."""

    def histories_off_topic(self) -> int:
        """Number of histories whose newest verdict is off-topic (a gauge)."""

    def all_verdicts(self) -> Iterator[Verdict]:
        """Every stored verdict (its newest version), history by history in capture order."""

    def close(self) -> None: ...

    # every store closes itself at the end of a ``with`` block (its ``__exit__`` calls ``close``)
    def __enter__(self) -> Self: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...
