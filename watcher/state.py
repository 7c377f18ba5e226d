"""The state a history's captures are scored against, apart from the step that scores them.

:class:`HistoryState` (the baseline, the pinned capture, what the profile remembers), the
:class:`Reference` a baseline is kept as and :func:`state_form` (what a baseline keeps of a
fingerprint).  The store reads and writes these and nothing of the step (:mod:`watcher.step`), so the
step can change without the store, and the store never imports the scoring code.

The state is small on purpose (a baseline fingerprint in compact form, the pinned one when a pin is
configured, and what the history remembers of its verdicts: a flag and up to two names): about 1.7 kB
per URL.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from .compact import reduce_fingerprint
from .model import Fingerprint, Verdict, utc

if TYPE_CHECKING:
    from .profiles.seedkind import Seed


@dataclass(frozen=True, slots=True)
class Reference:
    """A capture serving as baseline: when, where, and its fingerprint in
    state form (:func:`state_form`)."""

    capture_time: datetime
    uri_m: str | None
    fingerprint: Fingerprint


def state_form(fp: Fingerprint, keep_shingles: bool = False, keep_tokens: bool = False,
               keep_record: bool = True) -> Fingerprint:
    """What a baseline keeps of a fingerprint: the same in batch and stream,
    so that both score later captures against the same thing.  The whole
    shingle set gives way to its bottom-k sample (kept), the word sequence and
    the text are dropped unless configured; what is dropped leaves the
    recorded features, so a measure that needs it is n/a.  The scholarly
    record (title, authors, a 1,024-hash sample of the main text) is kept only
    where the profile reads it (``doi``): a page with Dublin Core or citation
    meta would otherwise cost some 5 kB per URL in a collection."""
    kept = reduce_fingerprint(fp, keep_text=keep_tokens, keep_shingles=keep_shingles)
    return dataclasses.replace(
        kept,
        headings=(),  # read once, for the page kind
        citation={},  # the DOI profile keeps the record it needs in its own field
        # the record (its main-text shingle set already given way to its sample, as the page's does)
        record=kept.record if keep_record else None,
        text_bytes=0, badness=None, boilerplate_share=None,  # the capture's evidence, not the baseline's
    )


@dataclass(frozen=True, slots=True)
class HistoryState:
    """Everything a history's next capture is scored against.

    ``baseline``: the first capture fit to be a baseline (``first``,
    ``first-valid``), or the latest on-topic one (``rolling``).  ``pinned``:
    the configured pinned capture once seen; it is the baseline from its capture
    time on (captures before it keep ``baseline``).

    What the profile remembers of the verdicts since the baseline (its
    ``remember``, a fold over them, so the stream can rebuild it for a late
    capture from the verdicts it stored: :func:`memory_of`); the ``collection``
    profile's (watcher.profiles.collection.remember): ``names``, the titles
    (normalised) a site carried while judged on topic, other than its
    baseline's, the newest last (a renamed or translated site keeps its
    identity under its new name).

    ``latest``: the newest capture time scored in the history, as the store
    knows it (never written with the state; the stream reads it to tell a late
    capture).  Batch folds in capture-time order and leaves it unset.
    """

    baseline: Reference | None = None
    pinned: Reference | None = None
    names: tuple[str, ...] = ()
    latest: datetime | None = field(default=None, compare=False)

    def reference_at(self, when: datetime) -> Reference | None:
        """The baseline in force for a capture taken at ``when``."""
        t = utc(when)
        if self.pinned is not None and self.pinned.capture_time <= t:
            return self.pinned
        if self.baseline is not None and self.baseline.capture_time <= t:
            return self.baseline
        return None


def memory_of(state: HistoryState, verdicts: Iterable[Verdict], profile: Remembers, seed: Seed) -> HistoryState:
    """``state`` with what it remembers rebuilt from ``verdicts`` (any order; folded in capture-time
    order, as batch scores them, by the profile's ``remember``): the stream's view of the history at
    a late capture's time."""
    out = dataclasses.replace(state, names=())
    for v in sorted(verdicts, key=lambda x: utc(x.capture_time)):
        out = profile.remember(out, v, seed)
    return out


class Remembers(Protocol):
    """What :func:`memory_of` needs of a profile (:class:`watcher.profiles.base.Profile`)."""

    def remember(self, state: HistoryState, verdict: Verdict, seed: Seed) -> HistoryState: ...
