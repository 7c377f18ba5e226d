""""Make this capture the baseline": pin it, re-score the history, store the changed verdicts as new versions.

Nothing of the scoring is re-implemented here: the pin is ``engine.baseline.policy: pinned`` with
``engine.baseline.pinned: {history: <14 digits>}`` (the history's other pins kept), and the history
is scored again by the engine's own code, in one of two ways:

- captures that can be re-read where the scan read them (a scan result's locators): the engine's fold
  (:meth:`watcher.engine.Engine.scan_history`, the step the stream runs too) over all of them;
- a store the stream wrote, whose pages are not kept: the stream's own re-scoring
  (:class:`watcher.watch.Watcher`: the pinned capture scored against the history as it stood at its
  time, then the captures after it re-scored from the fingerprints the store keeps for
  ``store.rescore_window_s``), and the history's state gets the pin, so the stream scores the next
  captures against it.

Verdicts whose class, status or reason changed are stored under their id with ``version + 1``, as the
stream's re-scoring does; a capture that cannot be re-read keeps its verdict.
"""

from __future__ import annotations

import dataclasses
import logging

from ..config import Config
from ..engine import Engine
from ..errors import DriftlineError
from ..model import Capture, Verdict, ts14
from ..step import same_verdict
from ..store.base import BaselineStore
from ..store.labels import SQLReview
from .access import Access
from .content import load_content

log = logging.getLogger(__name__)


def pinned_config(cfg: Config, pins: dict[str, str]) -> Config:
    base = cfg.engine.baseline.model_copy(update={"policy": "pinned", "pinned": {**cfg.engine.baseline.pinned,
                                                                                   **pins}})
    return cfg.model_copy(update={"engine": cfg.engine.model_copy(update={"baseline": base})})


def _capture(v: Verdict, review: SQLReview, cfg: Config, access: Access | None) -> Capture:
    c = load_content(review.source(v.verdict_id), v.uri_m, v.url, v.capture_time, cfg, access)
    return Capture(url=v.url, timestamp=v.capture_time, content=c.data, content_type=c.content_type,
                   uri_m=v.uri_m, history=v.history, seed=v.seed, job=v.job, label=v.label,
                   error=None if c.data is not None else (c.error or "unreadable"))


def pin_baseline(store: BaselineStore, review: SQLReview, verdict_id: str, cfg: Config,
                 reviewer: str = "curator", access: Access | None = None) -> list[Verdict]:
    """Pin ``verdict_id``'s capture as its history's baseline and re-score; returns the new versions.
    ``access``: what the captures may be re-read from (:func:`~watcher.review.content.load_content`)."""
    item = review.item(verdict_id)
    if item is None:
        return []
    pins = {**review.pins(), item.history: item.ts}
    stored = {i.verdict_id: store.get_verdict(i.verdict_id) for i in review.timeline(item.history)}
    olds = [v for v in stored.values() if v is not None]
    if review.source(verdict_id) is None and any(v.verdict_id == verdict_id for v, _ in store.logged(item.history)):
        return _pin_in_stream(store, review, verdict_id, cfg, pins, reviewer)
    captures = [_capture(v, review, cfg, access) for v in olds]
    unread = {ts14(c.timestamp) for c in captures if c.content is None}
    engine = Engine(pinned_config(cfg, pins).engine)
    profile = olds[0].profile if olds else None
    result = engine.scan_history(item.history, [c for c in captures if c.content is not None], profile)
    pinned = next((v for v in result.verdicts if ts14(v.capture_time) == item.ts), None)
    if pinned is None or pinned.change != "baseline":
        why = pinned.reason if pinned is not None else "its content cannot be re-read"
        raise DriftlineError(f"this capture cannot be a baseline: {why}", reason="review_pin")
    review.set_pin(item.history, item.ts, reviewer)
    by_time: dict[str, Verdict] = {ts14(v.capture_time): v for v in olds}
    out: list[Verdict] = []
    for new in result.verdicts:
        old = by_time.get(ts14(new.capture_time))
        if old is None or ts14(new.capture_time) in unread:
            continue
        cand = dataclasses.replace(new, verdict_id=old.verdict_id, label=old.label, seed=old.seed, job=old.job)
        if not same_verdict(cand, old):
            out.append(dataclasses.replace(cand, version=old.version + 1))
    if out:
        review.replace_verdicts(out)
    log.info("%s: baseline pinned at %s; %d verdicts re-published as new versions (%d captures unreadable)",
             item.history, item.ts, len(out), len(unread))
    return out



def _pin_in_stream(store: BaselineStore, review: SQLReview, verdict_id: str, cfg: Config, pins: dict[str, str],
                   reviewer: str) -> list[Verdict]:
    """The pin in a store the stream writes: :class:`~watcher.watch.Watcher`'s re-scoring from the
    fingerprints the store keeps, under the pinned configuration."""
    from ..watch import Watcher

    old = store.get_verdict(verdict_id)
    logged = {v.verdict_id: fp for v, fp in store.logged(old.history)} if old is not None else {}
    if old is None or verdict_id not in logged:
        raise DriftlineError("this capture cannot be re-read", reason="review_pin")
    history, fp = old.history, logged[verdict_id]
    watcher = Watcher(Engine(pinned_config(cfg, pins).engine), store, old.profile)
    cap = Capture(url=old.url, timestamp=old.capture_time, uri_m=old.uri_m, digest=old.digest,
                  status=fp.http_status, seed=old.seed, job=old.job, label=old.label, history=history)
    again = watcher.rescore(cap, fp)
    pinned, corrections, final = again.verdict, again.corrections, again.state
    if pinned.change != "baseline" or again.after.pinned is None:
        raise DriftlineError(f"this capture cannot be a baseline: {pinned.reason}", reason="review_pin")
    out = [dataclasses.replace(pinned, version=old.version + 1)] if not same_verdict(pinned, old) else []
    out += list(corrections)
    if out:
        review.replace_verdicts(out)
    store.set_state(history, dataclasses.replace(final, latest=None))
    review.set_pin(history, ts14(old.capture_time), reviewer)
    log.info("%s: baseline pinned at %s (from the stream's kept fingerprints); %d verdicts re-published",
             history, ts14(old.capture_time), len(out))
    return out
