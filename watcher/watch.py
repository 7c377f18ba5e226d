"""Streaming scoring: one capture at a time, the same step as batch.

The batch engine folds :meth:`Engine.score_next` over a whole history; a crawl
delivers captures one by one, in any order.  :class:`Watcher` keeps the fold's
state (:class:`watcher.state.HistoryState`) in the store and is idempotent per
capture: the verdict id is derived from the canonical URL, capture time and
digest, so a re-delivered event returns the stored verdict and changes nothing.
Every capture is scored through a :class:`watcher.job.Job` made once at the edge
(:meth:`Watcher.job`, :meth:`Watcher.job_for`): the re-delivery check happens there,
before anything is fetched, when the event names its payload digest.

Late captures.  A capture is scored against the baseline in force at its
capture time, never a later one, and against what the history remembered then
(:func:`watcher.state.memory_of`, rebuilt from the verdicts stored before it;
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

from .engine import Engine
from .events.model import normalise_digest
from .job import Job, expected_id, history_of, readable, repeated, same_reference, seed_url
from .model import Capture, Fingerprint, Verdict, utc, verdict_id
from .profiles.base import Profile
from .profiles.seedkind import Seed
from .state import HistoryState, memory_of
from .step import same_verdict
from .store.base import BaselineStore

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
class Rescored:
    """A capture scored again (:meth:`Watcher.rescore`): its verdict, the state right after it, the
    later kept captures' changed verdicts (new versions) and the state after them.  Nothing stored."""

    verdict: Verdict
    after: HistoryState
    corrections: tuple[Verdict, ...]
    state: HistoryState


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

    def job(self, url: str, timestamp: datetime, *, digest: str | None = None, seed: str | None = None,
            history: str | None = None, key: str | None = None, profile: str | Profile | None = None,
            redelivery: bool = True) -> Job:
        """The :class:`~watcher.job.Job` of a capture of ``url`` at ``timestamp``, made before its payload
        is read: its history (the router's ``key``, the declared ``history``, else the URL's key), seed,
        profile, verdict id; when that verdict is stored already (a re-delivered event) nothing else is
        read, else the history's state (the one store read of it) and the reference whose payload
        ``digest`` repeats.  ``redelivery=False``: the capture is known to be stored (review re-scores it),
        so it is not looked up."""
        canon = self.engine.config.canonical
        hist = history_of(url, canon, key=key, declared=history)
        dig = normalise_digest(digest)
        job = Job(hist, Seed.of(seed_url(hist, url, seed, canon)), self.engine.profile(profile or self.profile),
                  verdict_id=expected_id(hist, timestamp, dig))
        done = self.store.get_verdict(job.verdict_id) if redelivery and job.verdict_id is not None else None
        if done is not None:
            return dataclasses.replace(job, done=done)
        state = self.store.get_state(hist)
        return dataclasses.replace(job, state=state,
                                   same=same_reference(state, dig, self.engine.reading(job.profile, job.seed)))

    def job_for(self, capture: Capture, profile: str | Profile | None = None, *, key: str | None = None,
                redelivery: bool = True) -> Job:
        """:meth:`job` for a capture in hand (its payload, if any, gives the digest)."""
        return self.job(capture.url, capture.timestamp, digest=capture.effective_digest, seed=capture.seed,
                        history=capture.history, key=key, profile=profile, redelivery=redelivery)

    def score(self, capture: Capture, job: Job | None = None, *, alert_on: frozenset[str] = frozenset(),
              fingerprint: Fingerprint | None = None) -> Outcome:
        """Score and store ``capture`` (and any corrections it causes): the one entry point.

        ``job``: the capture's, made at the edge (:meth:`job`; made here from the capture when not
        given).  ``alert_on``: the change classes that are alerts here; an alert owed for the verdict
        (or for a correction that newly reaches such a class) is recorded with it in one transaction
        (see ``BaselineStore.alert_pending``).  ``fingerprint``: ``capture``'s, when the caller made it
        already (the DOI monitor fingerprints in worker processes); the step is the same.  The caller
        serialises the captures of one history, as the consumer does per partition."""
        job = job or self.job_for(capture)
        if job.done is not None:
            return Outcome(job.done, False)
        history, seed, prof = job.history, job.seed, job.profile
        vid = verdict_id(history, capture.timestamp, capture.effective_digest)
        if vid != job.verdict_id:  # the digest was not known before the payload was read
            existing = self.store.get_verdict(vid)
            if existing is not None:
                return Outcome(existing, False)
        with self._lock:
            state = job.state
            fp = readable(capture.url, self._fingerprint(job, capture) if fingerprint is None else fingerprint)
            started = time.perf_counter()
            t = utc(capture.timestamp)
            late = state.latest is not None and t < utc(state.latest)
            # A late capture is scored against the history as it stood at its capture time: the
            # baseline in force then, and what the verdicts before it left remembered.
            kept = self.store.recent_verdicts(history, _ALL) if late else None
            prior = self._state_at(state, kept or [], t, prof, seed) if late else state
            verdict, new_state = self.engine.score(dataclasses.replace(job, state=prior), capture, fp)
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

    def rescore(self, capture: Capture, fingerprint: Fingerprint) -> Rescored:
        """Score ``capture`` (stored already, ``fingerprint`` as the store kept it) again against the
        history as it stood at its time, then re-score the kept captures after it; nothing is stored
        (review's "make this the baseline" stores what it keeps, under the pinned configuration this
        watcher's engine holds)."""
        job = self.job_for(capture, redelivery=False)
        t = utc(capture.timestamp)
        prior = self._state_at(job.state, self.store.recent_verdicts(job.history, _ALL), t, job.profile, job.seed)
        verdict, after = self.engine.score(dataclasses.replace(job, state=prior), capture, fingerprint)
        corrections, final, _ = self._rescore_after(job.history, capture, verdict, after, job.seed, job.profile)
        return Rescored(verdict, after, corrections, final)

    def _fingerprint(self, job: Job, cap: Capture) -> Fingerprint:
        # the reference's payload again (the digest the job was made with is this capture's): no fetch, no parse
        fp = repeated(job, cap.status) if cap.content is None or cap.effective_digest == job.same_digest else None
        if fp is not None:
            return fp  # same payload as the reference: no fetch, no parse
        started = time.perf_counter()
        fp = self.engine.fingerprint(cap, job.profile, job.seed)
        self._timed("extract", started)
        return fp

    def _timed(self, stage: str, started: float) -> None:
        if self.on_stage is not None:
            self.on_stage(stage, time.perf_counter() - started)

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
            log.warning("%s: late capture %s changed the state; %d later verdicts are outside the re-scoring "
                        "window and keep their old verdicts", history, t.isoformat(), len(missing))
            # what the history remembers is rebuilt from every verdict, those kept as they were included
            newest = {v.verdict_id: v for v in (*stored, verdict, *out)}
            state = memory_of(state, newest.values(), profile, seed)
        return tuple(out), state, was


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
