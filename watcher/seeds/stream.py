"""Seed reports as verdicts arrive: the streaming app's side of ``driftline seeds``.

Each scored capture may refresh the report of the URL it belongs to (its history: one watched URL,
a seed when the crawl feeds seeds), made by :func:`.report.report` from the history's newest stored
verdicts, so the topic says what ``driftline seeds`` says over the same verdicts.  At most one
report per history every ``seeds.publish_interval_s``: a report reads up to
``seeds.history_verdicts`` verdicts (about 33 µs each from SQLite).

The latest report of every history (up to ``seeds.max_tracked_seeds``, the least recently reported
giving way) feeds :class:`SeedDistribution`, which exports how yield and change rate are spread over
seeds: bounded cardinality, no per-seed label.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Protocol

from prometheus_client.core import GaugeHistogramMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from ..model import Verdict
from .report import SeedReport, report
from .settings import SeedsConfig

YIELD_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
RATE_BUCKETS = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)  # changes per day


class VerdictReader(Protocol):
    def recent_verdicts(self, history: str, limit: int) -> list[Verdict]: ...


class SeedReporter:
    """Makes a history's report when it is due and keeps the latest per history for the metrics."""

    def __init__(self, cfg: SeedsConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.cfg = cfg
        self._clock = clock
        self._lock = threading.Lock()
        self._latest: OrderedDict[str, SeedReport] = OrderedDict()
        self._last_sent: dict[str, float] = {}
        self._advice: dict[str, str] = {}
        # Where a history's last published advice is kept beyond this process (the store's advice ledger,
        # set by ``driftline run --crawl-log``): asked when this process has not seen the history's advice.
        self.advice_of: Callable[[str], str | None] | None = None

    def observe(self, verdict: Verdict, store: VerdictReader) -> SeedReport | None:
        """The history's new report when one is due after ``verdict`` (already stored), else None."""
        now = self._clock()
        with self._lock:
            last = self._last_sent.get(verdict.history)
            if last is not None and now - last < self.cfg.publish_interval_s:
                return None
            self._last_sent[verdict.history] = now
        verdicts = store.recent_verdicts(verdict.history, self.cfg.history_verdicts)
        if not verdicts:
            return None
        first = min(verdicts, key=lambda v: v.capture_time)
        rep = report(first.seed or first.url, verdicts, self.cfg)
        with self._lock:
            self._latest[verdict.history] = rep
            self._latest.move_to_end(verdict.history)
            while len(self._latest) > self.cfg.max_tracked_seeds:
                old, _ = self._latest.popitem(last=False)
                self._last_sent.pop(old, None)
        return rep

    def advice_changed(self, history: str, advice_id: str) -> bool:
        """Whether ``advice_id`` (a guidance recommendation's id, stable while the advice stands) is
        new for ``history``; it is remembered as the history's advice."""
        known = history in self._advice
        last = None if known or self.advice_of is None else self.advice_of(history)
        with self._lock:
            if not known and last is not None:
                self._advice.setdefault(history, last)
            if self._advice.get(history) == advice_id:
                return False
            self._advice[history] = advice_id
            if len(self._advice) > self.cfg.max_tracked_seeds:
                self._advice.pop(next(iter(self._advice)))
            return True

    def forget_advice(self) -> None:
        """Drop the advice remembered in memory (it was decided but never recorded: a store write failed),
        so that the next decision asks :attr:`advice_of` again."""
        with self._lock:
            self._advice.clear()

    def snapshot(self) -> list[SeedReport]:
        with self._lock:
            return list(self._latest.values())


def report_message(rep: SeedReport) -> bytes:
    """The message on ``seeds.topic`` (schema: ``watcher/schemas/seed-report.schema.json``)."""
    return json.dumps(rep.to_dict(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _buckets(values: list[float], bounds: tuple[float, ...]) -> list[tuple[str, float]]:
    out = []
    for b in bounds:
        out.append((repr(b), float(sum(1 for v in values if v <= b))))
    out.append(("+Inf", float(len(values))))
    return out


class SeedDistribution(Collector):
    """How yield and change rate are spread over the tracked seeds, at scrape time."""

    def __init__(self, reporter: SeedReporter) -> None:
        self.reporter = reporter

    def collect(self) -> Iterator[GaugeHistogramMetricFamily | GaugeMetricFamily]:
        reps = self.reporter.snapshot()
        yields = [r.yield_ for r in reps if r.yield_ is not None]
        rates = [r.change_rate_per_day for r in reps if r.change_rate_per_day is not None]
        h = GaugeHistogramMetricFamily(
            "driftline_seed_yield", "Seeds by yield (share of their captures on topic with content).")
        h.add_metric([], _buckets(yields, YIELD_BUCKETS), gsum_value=float(sum(yields)))
        yield h
        c = GaugeHistogramMetricFamily(
            "driftline_seed_change_rate", "Seeds by estimated text changes per day.")
        c.add_metric([], _buckets(rates, RATE_BUCKETS), gsum_value=float(sum(rates)))
        yield c
        low = GaugeMetricFamily("driftline_seeds_low_yield", "Seeds whose yield is under seeds.low_yield.")
        low.add_metric([], float(sum(1 for y in yields if y < self.reporter.cfg.low_yield)))
        yield low
        n = GaugeMetricFamily("driftline_seeds_tracked", "Seeds with a report (bounded by seeds.max_tracked_seeds).")
        n.add_metric([], float(len(reps)))
        yield n
