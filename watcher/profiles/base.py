"""What a profile is: the :class:`Profile` protocol, the :class:`Case` it judges, and
:class:`BaseProfile`, the defaults a profile that asks little can inherit.

A profile answers one question about a capture against its baseline.  Everything that is the
profile's own lives in its module: how its fingerprints are read (the scholarly record, the word
sequence, the main content), what its baseline keeps, its decision, its reading of a capture with
no baseline yet, what its history remembers of its verdicts, and which change classes are alerts.
The engine asks the profile, never its name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..model import Capture, ChangeClass, Fingerprint, MeasureResult, Verdict
from ..state import HistoryState, state_form
from ..verdict import Decision
from .seedkind import Seed

if TYPE_CHECKING:
    from ..config import EngineConfig


_NOTHING = HistoryState()  # a comparison outside a history: no baseline, nothing remembered


@dataclass(frozen=True, slots=True)
class Case:
    """One capture against its baseline, as a profile reads it: the two fingerprints, the measures
    scored, the engine's configuration, the seed (read once), what the history remembers, the
    capture itself (what a DOI check watches: ``doi``, ``expected_title``), and the profile's own
    configuration section (``params``, e.g. the ``doi:`` thresholds; ``None`` where it has none)."""

    base: Fingerprint
    cur: Fingerprint
    results: Mapping[str, MeasureResult]
    cfg: EngineConfig
    seed: Seed
    state: HistoryState = _NOTHING
    capture: Capture | None = None
    params: object | None = None


class Profile(Protocol):
    """The contract of a profile (see the module doc); registered by name in :mod:`watcher.profiles`."""

    @property
    def name(self) -> str:
        """The name the configuration, the command line and the verdicts use."""
        ...

    @property
    def alert_classes(self) -> tuple[ChangeClass, ...]:
        """The change classes that are alerts by default (``alerts.changes`` overrides them)."""
        ...

    @property
    def own_checks(self) -> bool:
        """True: :meth:`decide` replaces the shared checks (:func:`watcher.profiles.shared.checks`)."""
        ...

    @property
    def reads_record(self) -> bool:
        """Its fingerprints read the scholarly record (a fifth of a fingerprint's cost)."""
        ...

    @property
    def words_kept(self) -> bool:
        """Its fingerprints, and its baselines, keep the word sequence."""
        ...

    def main_content(self, seed: Seed) -> bool:
        """Whether ``extract.main_content: auto`` removes boilerplate for this seed."""
        ...

    def keeps(self, fp: Fingerprint, seed: Seed, cfg: EngineConfig) -> Fingerprint:
        """What a baseline keeps of ``fp`` (its state form)."""
        ...

    def decide(self, case: Case) -> Decision:
        """The verdict's status, change class and reason."""
        ...

    def first(self, fp: Fingerprint, unfit: str | None, capture: Capture, params: object | None) -> Decision | None:
        """A capture with no baseline in force: the profile's own reading, or ``None`` for the
        engine's (it becomes the baseline when fit: ``unfit`` is None)."""
        ...

    def remember(self, state: HistoryState, verdict: Verdict, seed: Seed) -> HistoryState:
        """``state`` after ``verdict``: the same object when the profile remembers nothing new."""
        ...


class BaseProfile:
    """Defaults for a profile: the shared checks, the whole page, a compact baseline, nothing
    remembered, the engine's reading of a first capture, off-topic captures as alerts."""

    name = "base"
    alert_classes: tuple[ChangeClass, ...] = ("off-topic",)
    own_checks = False
    reads_record = False
    words_kept = False

    def main_content(self, seed: Seed) -> bool:
        return self.words_kept

    def keeps(self, fp: Fingerprint, seed: Seed, cfg: EngineConfig) -> Fingerprint:
        kept = state_form(fp, cfg.tokens.keep_shingles, cfg.tokens.keep_tokens or self.words_kept,
                          keep_record=self.reads_record)
        # a first-level heading names a deep page's subject, never a home page's (profiles.collection)
        return dataclasses.replace(kept, heading="") if kept.heading and seed.site else kept

    def decide(self, case: Case) -> Decision:
        raise NotImplementedError

    def first(self, fp: Fingerprint, unfit: str | None, capture: Capture, params: object | None) -> Decision | None:
        return None

    def remember(self, state: HistoryState, verdict: Verdict, seed: Seed) -> HistoryState:
        return state
