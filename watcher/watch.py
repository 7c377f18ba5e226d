"""Streaming scoring: one capture at a time, the same step as batch.

The batch engine folds :meth:`Engine.score_next` over a whole history; a crawl
delivers captures one by one, in any order.  :class:`Watcher` keeps the fold's
state (:class:`watcher.step.HistoryState`) in the store and is idempotent per
capture: the verdict id is derived from the canonical URL, capture time and
digest, so a re-delivered event returns the stored verdict and changes nothing.

Late captures.  A capture is scored against the baseline in force at its
capture time, never a later one, and against what the history remembered then
(:func:`watcher.step.memory_of`, rebuilt from the verdicts stored before it;
the store tells a late capture by the newest capture time it has scored).
When a late capture changes what captures already scored were judged against
(it is earlier than the baseline and fit to be one, it is the configured pinned
capture, or it changes what the history remembers), those captures are
re-scored in capture-time order from the fingerprints the store keeps for
``store.rescore_window_s`` and their changed verdicts are stored and returned
as new versions (same id, version + 1), so the stream ends where a batch run
over the same captures ends.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime

from .canonical import url_key
from .engine import Engine
from .errors import ExtractError
from .events.model import normalise_digest
from .fingerprint import failure_reason
from .model import Capture, Fingerprint, Verdict, utc, verdict_id
from .profiles.base import Profile
from .profiles.seeds import Seed
from .state import HistoryState, Reference, memory_of
from .step import same_verdict
from .store.base import BaselineStore
from .verdict import extraction_failed

log = logging.getLogger(__name__)
_ALL = 1_000_000  # every stored verdict of a history (the store keeps store.history_limit of them)


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """What processing one capture produced."""

    verdict: Verdict
    stored_now: bool  # False: a re-delivered capture (its stored verdict is returned)
    corrections: tuple[Verdict, ...] = ()  # new versions of later captures' verdicts
    # The verdict ids owed an alert, recorded with them now (``stored_now``): the caller publishes
    # them without asking the store again; a re-delivered capture asks (its alert may be unsent).
    alerts: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Begun:
    """One event's work resolved once, at the edge, before its payload is fetched: the history key,
    the history's state (the one store read of it), and the reference whose payload the event
    repeats by digest (``same``: nothing to fetch or parse), passed down to :meth:`Watcher.handle`."""

    history: str
    state: HistoryState
    same: Reference | None = None


class Watcher:
    """Scores captures of many URLs against their stored state."""

    def __init__(self, engine: Engine, store: BaselineStore, profile: str | None = None) -> None:
        self.engine = engine
        self.store = store
        self.profile = profile
        # Captures of one history must be scored one at a time; the consumer
        # guarantees that per partition, this lock guards the rest.
        self._lock = threading.Lock()
        # Optional ``on_stage(stage, seconds)`` timing hook (stages extract, score,
        # store): the streaming app feeds it to the per-stage latency histogram.
        self.on_stage: Callable[[str, float], None] | None = None
        self.uncorrectable = 0  # late captures whose later captures had left the re-scoring window

    def history_key(self, url: str) -> str:
        return url_key(url, self.engine.config.canonical)

    def baseline_digest(self, history: str) -> str | None:
        """Digest of the newest baseline (a capture with that payload needs no fetch)."""
        state = self.store.get_state(history)
        ref = state.pinned or state.baseline
        return ref.fingerprint.digest if ref else None

    def begin(self, url: str, history: str | None = None, digest: str | None = None) -> Begun:
        """An event's history (``history``, else ``url``'s key), its state (one store read) and whether
        its payload ``digest`` is the newest baseline's: what the scorer needs before it fetches, and
        what :meth:`handle` then takes instead of reading it again."""
        key = history or self.history_key(url)
        state = self.store.get_state(key)
        ref = state.pinned or state.baseline
        same = ref if ref is not None and digest and normalise_digest(digest) == ref.fingerprint.digest else None
        return Begun(key, state, same)

    def process(self, capture: Capture, profile: str | None = None) -> Verdict:
        """Score ``capture``; see :meth:`handle`."""
        return self.handle(capture, profile).verdict

    def process_new(self, capture: Capture, profile: str | None = None) -> tuple[Verdict, bool]:
        out = self.handle(capture, profile)
        return out.verdict, out.stored_now

    def handle(self, capture: Capture, profile: str | None = None, alert_on: frozenset[str] = frozenset(),
               fingerprint: Fingerprint | None = None, *, begun: Begun | None = None) -> Outcome:
        """Score and store ``capture`` (and any corrections it causes).

        ``alert_on``: the change classes that are alerts here; an alert owed
        for the verdict (or for a correction that newly reaches such a class) is
        recorded with it in one transaction (see ``BaselineStore.alert_pending``).
        ``fingerprint``: ``capture``'s, when the caller made it already (the DOI
        monitor fingerprints in worker processes); the step is the same.  ``begun``: the event's
        history and state as :meth:`begin` read them (the store is not asked for the state again;
        the caller serialises the captures of one history, as the consumer does per partition)."""
        history = begun.history if begun is not None else capture.history or self.history_key(capture.url)
        vid = verdict_id(history, capture.timestamp, capture.effective_digest)
        existing = self.store.get_verdict(vid)
        if existing is not None:
            return Outcome(existing, False)
        prof = self.engine.profile(profile or self.profile)  # the profile and the seed: resolved once, here
        with self._lock:
            state = begun.state if begun is not None else self.store.get_state(history)
            seed = Seed.of(self._seed_url(history, capture))
            fp = self._fingerprint(state, capture, prof, seed, begun) if fingerprint is None else \
                _readable(capture, fingerprint)
            started = time.perf_counter()
            t = utc(capture.timestamp)
            late = state.latest is not None and t < utc(state.latest)
            # A late capture is scored against the history as it stood at its capture time: the
            # baseline in force then, and what the verdicts before it left remembered.
            kept = self.store.recent_verdicts(history, _ALL) if late else None
            prior = self._state_at(state, kept or [], t, prof, seed) if late else state
            verdict, new_state = self.engine.score_next(history, prior, capture, fp, seed, prof)
            corrections: tuple[Verdict, ...] = ()
            was: dict[str, str] = {}
            if _moved_back(prior, new_state) or (late and _remembers(new_state) != _remembers(prior)):
                corrections, new_state, was = self._rescore_after(history, capture, verdict, new_state, seed, prof,
                                                                  kept)
            elif late:  # what later captures were scored against is unchanged; the references may move on
                new_state = state if (new_state.baseline, new_state.pinned) == (prior.baseline, prior.pinned) \
                    else dataclasses.replace(state, baseline=new_state.baseline, pinned=new_state.pinned)
            self._timed("score", started)
            alerts = [verdict.verdict_id] if verdict.change in alert_on else []
            alerts += [v.verdict_id for v in corrections if v.change in alert_on and was.get(v.verdict_id) != v.change]
            started = time.perf_counter()
            # An unchanged state (the step returned the very object it was given: most captures) is not
            # written back: re-encoding the baseline fingerprint on every capture is most of a store write.
            new = self.store.put_verdict(verdict, None if new_state is state else new_state, fp, corrections,
                                         alerts=alerts)
            self._timed("store", started)
        if not new:
            stored = self.store.get_verdict(vid)
            return Outcome(stored or verdict, False)
        return Outcome(verdict, True, corrections, tuple(alerts))

    def _fingerprint(self, state: HistoryState, cap: Capture, profile: Profile, seed: Seed,
                     begun: Begun | None = None) -> Fingerprint:
        if begun is not None:
            ref = begun.same  # decided once, before the fetch
        else:
            ref = state.pinned or state.baseline
            ref = ref if ref is not None and cap.digest and cap.digest == ref.fingerprint.digest else None
        if ref is not None and cap.content is None:
            # Same payload as the baseline: no fetch, no parse.
            return dataclasses.replace(ref.fingerprint, http_status=cap.status or ref.fingerprint.http_status)
        started = time.perf_counter()
        fp = self.engine.fingerprint(cap, profile, seed)
        self._timed("extract", started)
        if extraction_failed(fp):
            # A bad event for the streaming policy: dead-lettered with the reason.
            raise ExtractError(f"{cap.url}: {fp.error}", reason=failure_reason(fp.error))
        return fp

    def _timed(self, stage: str, started: float) -> None:
        if self.on_stage is not None:
            self.on_stage(stage, time.perf_counter() - started)

    def _seed_url(self, history: str, cap: Capture) -> str:
        """The URL the history stands for: the seed when the crawler names it and it is this URL, else
        the URL itself (captures of one history share it up to canonicalisation)."""
        if cap.seed and self.history_key(cap.seed) == history:
            return cap.seed
        return cap.url

    def _state_at(self, state: HistoryState, stored: list[Verdict], t: datetime, profile: Profile,
                  seed: Seed) -> HistoryState:
        """``state`` as a capture taken at ``t`` sees it: what it remembers rebuilt from the history's
        ``stored`` verdicts before ``t`` (the references answer for any time themselves: reference_at)."""
        before = [v for v in stored if utc(v.capture_time) < t]
        return memory_of(state, before, profile, seed)

    def _rescore_after(self, history: str, cap: Capture, verdict: Verdict, state: HistoryState, seed: Seed,
                       profile: Profile, stored: list[Verdict] | None = None
                       ) -> tuple[tuple[Verdict, ...], HistoryState, dict[str, str]]:
        """Re-score the kept captures later than ``cap`` (whose ``verdict`` produced ``state``) in
        capture-time order; return the changed verdicts (new versions), the state after them, and the
        change each had before.  ``stored``: the history's stored verdicts, when the caller read them."""
        t = utc(cap.timestamp)
        logged = self.store.logged(history)
        # A capture scored without a fetch (same payload as the baseline) was logged with the baseline's
        # compact form; against another baseline it needs its whole fingerprint: the one logged when
        # that payload was first fetched.
        whole = {fp.digest: fp for _, fp in logged if "shingles" in fp.features}
        later = [(v, _whole(fp, whole)) for v, fp in logged if v.capture_time > t]
        was: dict[str, str] = {v.verdict_id: str(v.change) for v, _ in later}
        out: list[Verdict] = []
        for old, fp in later:
            again = Capture(url=old.url, timestamp=old.capture_time, uri_m=old.uri_m, digest=old.digest,
                            status=fp.http_status, seed=old.seed, job=old.job, label=old.label, history=history)
            v, state = self.engine.score_next(history, state, again, fp, seed, profile)
            if not same_verdict(v, old):
                out.append(dataclasses.replace(v, version=old.version + 1))
        kept = {v.verdict_id for v, _ in later}
        stored = self.store.recent_verdicts(history, _ALL) if stored is None else stored
        missing = [v for v in stored if v.capture_time > t and v.verdict_id not in kept]
        if missing:
            self.uncorrectable += len(missing)
            log.warning("%s: late capture %s changed the state; %d later verdicts are outside the re-scoring "
                        "window and keep their old verdicts", history, t.isoformat(), len(missing))
            # what the history remembers is rebuilt from every verdict, those kept as they were included
            newest = {v.verdict_id: v for v in (*stored, verdict, *out)}
            state = memory_of(state, newest.values(), profile, seed)
        return tuple(out), state, was


def _readable(cap: Capture, fp: Fingerprint) -> Fingerprint:
    if extraction_failed(fp):
        raise ExtractError(f"{cap.url}: {fp.error}", reason=failure_reason(fp.error))
    return fp


def _whole(fp: Fingerprint, whole: dict[str, Fingerprint]) -> Fingerprint:
    full = whole.get(fp.digest) if "shingles" not in fp.features else None
    return fp if full is None else dataclasses.replace(full, http_status=fp.http_status)


def _remembers(state: HistoryState) -> tuple[str, ...]:
    return state.names


def _moved_back(before: HistoryState, after: HistoryState) -> bool:
    """The step replaced a reference by an earlier capture, or set the pinned one:
    captures after it were scored against something else."""
    if after.pinned is not None and after.pinned is not before.pinned:
        return True
    b, a = before.baseline, after.baseline
    # the first baseline of the history, or an earlier one: captures after it may have been scored without it
    return a is not None and a is not b and (b is None or a.capture_time < b.capture_time)
