"""The fold of ``driftline spark``: one sorted partition of records in, verdicts out.

The job sorts records by ``(history, capture time, tie)`` within partitions that hold
whole histories (a secondary sort), so a history arrives as one run of consecutive
records in capture-time order.  This module walks that stream keeping only the current
history's state (:class:`watcher.state.HistoryState`, about 1.7 kB) and what its summary
needs, never the history's records: a URL with 100,000 captures costs what a URL with
two costs.

Each capture goes through :func:`score_step`, the one place this module calls the
scoring step, which is :meth:`watcher.engine.Engine.score_next`, the step
:meth:`Engine.scan_history` folds for ``driftline scan``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from ..engine import Engine
from ..model import Behaviour, Capture, Fingerprint, HistoryResult, Verdict, ts14
from ..profiles.base import Profile
from ..profiles.seedkind import Seed
from ..state import HistoryState
from .records import ErrorRow, Record

log = logging.getLogger(__name__)


def score_step(engine: Engine, history: str, state: HistoryState, cap: Capture, fp: Fingerprint, seed: Seed,
               prof: Profile) -> tuple[Verdict, HistoryState]:
    """The one scoring step, as ``scan`` folds it (:meth:`Engine.scan_history`)."""
    return engine.score_next(history, state, cap, fp, seed, prof)


@dataclass(frozen=True, slots=True)
class Scored:
    """A verdict and where its capture can be read again (``driftline review``)."""

    verdict: Verdict
    locator: str | None


@dataclass(frozen=True, slots=True)
class HistoryEnd:
    """A history's summary (its verdicts aside) and final state: what the backfill stores."""

    history: str
    url: str
    captures: int
    behaviour: str
    first_drift: datetime | None
    off_topic_share: float
    state: HistoryState
    last: Verdict | None


class _Summary:
    """:func:`watcher.engine.summarise` computed as the verdicts go by (constant memory)."""

    def __init__(self, history: str, url: str) -> None:
        self.history, self.url = history, url
        self.n = 0
        self.judged = 0
        self.off = 0
        self.first_drift: datetime | None = None
        self.seq_first: bool | None = None
        self.seq_last: bool | None = None
        self.changes = 0

    def add(self, v: Verdict) -> None:
        self.n += 1
        if v.status in ("on-topic", "off-topic"):
            self.judged += 1
        if v.status == "off-topic":
            self.off += 1
            if self.first_drift is None:
                self.first_drift = v.capture_time
        if v.status in ("on-topic", "off-topic", "baseline"):
            now = v.status == "off-topic"
            if self.seq_first is None:
                self.seq_first = now
            elif now != self.seq_last:
                self.changes += 1
            self.seq_last = now

    def behaviour(self) -> str:
        if self.seq_first is None:
            return "Empty"
        if self.changes == 0:
            return "Always Off" if self.seq_first else "Always On"
        if self.changes == 1:
            return "Step Function On" if not self.seq_first else "Step Function Off"
        return "Oscillating"

    def end(self, state: HistoryState, last: Verdict | None) -> HistoryEnd:
        share = round(self.off / self.judged, 4) if self.judged else 0.0
        return HistoryEnd(self.history, self.url, self.n, self.behaviour(), self.first_drift, share, state, last)


def fold_partition(rows: Iterable[tuple[Any, Record]], engine: Engine) -> Iterator[Scored | HistoryEnd | ErrorRow]:
    """Verdicts of every capture of a sorted partition, each history closed by its
    :class:`HistoryEnd`.  A record the step fails on becomes an :class:`ErrorRow` and the
    history goes on; the same record twice (a WARC given with its own index) is scored once,
    as ``scan`` dedupes it."""
    prof = engine.profile()
    current: str | None = None
    state = HistoryState()
    seed = Seed.of("")
    summary = _Summary("", "")
    last: Verdict | None = None
    seen: set[tuple[str, ...]] = set()
    second = ""
    for _, rec in rows:
        if rec.history != current:
            if current is not None:
                yield summary.end(state, last)
            current, state, last = rec.history, HistoryState(), None
            seed = Seed.of(rec.capture.url)
            summary = _Summary(rec.history, rec.capture.url)
            seen, second = set(), ""
        if _duplicate(rec, seen, second):
            continue
        second = ts14(rec.capture.timestamp)
        if rec.fp is None:  # cannot happen: every revisit is resolved before the sort
            yield ErrorRow(rec.where, "unresolved_revisit", f"{rec.capture.url} at {second}")
            continue
        try:
            v, state = score_step(engine, rec.history, state, rec.capture, rec.fp, seed, prof)
        except Exception as exc:  # a bug on one capture must not lose the job: an error row, and on
            log.exception("%s: scoring %s at %s failed", rec.where, rec.capture.url, second)
            yield ErrorRow(rec.where, "score_failed", f"{rec.capture.url} at {second}: {type(exc).__name__}: {exc}")
            continue
        summary.add(v)
        last = v
        yield Scored(v, rec.capture.locator)
    if current is not None:
        yield summary.end(state, last)


def _duplicate(rec: Record, seen: set[tuple[str, ...]], second: str) -> bool:
    """:func:`watcher.archive.warc.dedupe` on a sorted stream: duplicates share the capture's
    second, so only that second's identities are remembered."""
    e = rec.entry
    if e is None:
        return False
    if ts14(e.time) != second:
        seen.clear()
    loc = ("loc", e.path, str(e.offset))
    ident = ("id", e.key, ts14(e.time), e.digest or "", e.kind) if e.digest else loc
    if loc in seen or ident in seen:
        return True
    seen.add(loc)
    seen.add(ident)
    return False


Sink = Callable[[Any], None]


def history_results(items: Iterable[Scored | HistoryEnd | ErrorRow], sources: dict[tuple[str, str, str], str],
                    on_end: Sink, on_error: Sink) -> Iterator[HistoryResult]:
    """The fold's output as ``scan``'s :class:`HistoryResult` per history, for its writers:
    one history's verdicts held at a time, ``sources`` holding that history's locators (as
    ``scan`` fills it for the writer).  Each history end goes to ``on_end`` (the backfill),
    each error row to ``on_error``."""
    held: list[Verdict] = []
    for item in items:
        if isinstance(item, Scored):
            if not held:
                sources.clear()
            held.append(item.verdict)
            if item.locator:
                v = item.verdict
                sources[(v.history, ts14(v.capture_time), v.url)] = item.locator
        elif isinstance(item, HistoryEnd):
            on_end(item)
            yield HistoryResult(history=item.history, url=item.url, verdicts=tuple(held),
                                behaviour=cast(Behaviour, item.behaviour),
                                first_drift=item.first_drift, off_topic_share=item.off_topic_share)
            held = []
        else:
            on_error(item)
