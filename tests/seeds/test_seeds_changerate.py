"""The change-rate estimator: Cho and Garcia-Molina's on regular visits, covered by its band on
irregular ones where the naive rate is not."""

from __future__ import annotations

import math
import random

import pytest

from watcher.seeds.changerate import Rate, estimate, naive, recrawl_interval_days


@pytest.mark.parametrize(("n", "x"), [(10, 0), (10, 3), (20, 12), (15, 15)])
def test_regular_visits_give_cho_and_garcia_molinas_estimator(n: int, x: int) -> None:
    rate = estimate([2.0] * n, [True] * x + [False] * (n - x))
    assert rate is not None
    expected = -math.log((n - x + 0.5) / (n + 0.5)) / 2.0
    assert rate.per_day == pytest.approx(expected, rel=1e-6, abs=1e-9)
    assert rate.low <= rate.per_day <= rate.high
    assert (rate.intervals, rate.changes) == (n, x)


def test_no_change_seen_gives_zero_with_an_upper_bound() -> None:
    rate = estimate([1.0, 3.0, 7.0, 2.0], [False] * 4)
    assert rate is not None and rate.per_day == 0.0 and rate.low == 0.0
    assert 0.0 < rate.high < 1.0


def test_every_visit_changed_stays_finite() -> None:
    rate = estimate([1.0, 0.5, 2.0], [True] * 3)
    assert rate is not None and math.isfinite(rate.per_day) and math.isfinite(rate.high)
    assert rate.per_day > 1.0


def test_nothing_to_estimate_from() -> None:
    assert estimate([], []) is None
    assert estimate([0.0], [True]) is None  # two captures at the same instant say nothing of time


def _coverage(rate: float, rng: random.Random, runs: int) -> tuple[float, float, float]:
    """Share of runs whose band holds the true rate, the naive rate's (its Poisson band), and
    the estimator's median relative error."""
    inside = naive_inside = 0
    errors = []
    for _ in range(runs):
        intervals = [rng.expovariate(1.0) + 0.05 for _ in range(rng.randint(15, 40))]
        changed = [rng.random() < -math.expm1(-rate * t) for t in intervals]
        est = estimate(intervals, changed)
        assert est is not None
        inside += est.low <= rate <= est.high
        errors.append(abs(est.per_day - rate) / rate)
        x, total = sum(changed), sum(intervals)
        half = 1.96 * math.sqrt(max(x, 1)) / total
        nv = naive(intervals, changed)
        assert nv is not None
        naive_inside += nv - half <= rate <= nv + half
    errors.sort()
    return inside / runs, naive_inside / runs, errors[len(errors) // 2]


@pytest.mark.parametrize("rate", [0.1, 0.5, 1.0, 2.0])
def test_band_covers_the_true_rate_in_at_least_90_percent_of_runs(rate: float) -> None:
    covered, _naive, median_error = _coverage(rate, random.Random(int(rate * 1000)), 400)
    assert covered >= 0.90, covered
    assert median_error < 0.5


def test_naive_rate_misses_where_changes_outpace_visits() -> None:
    # about one change per visit: several changes between two visits count once
    covered, naive_covered, _ = _coverage(1.0, random.Random(7), 400)
    assert covered >= 0.90
    assert naive_covered < 0.5, naive_covered


def test_recrawl_interval_is_the_median_wait_clamped() -> None:
    r = Rate(per_day=0.1, low=0.05, high=0.2, intervals=10, changes=5)
    assert recrawl_interval_days(r, 1.0, 90.0, 0.5) == pytest.approx(math.log(2) / 0.1)
    assert recrawl_interval_days(Rate(50.0, 40.0, 60.0, 10, 10), 1.0, 90.0, 0.5) == 1.0
    assert recrawl_interval_days(Rate(0.0, 0.0, 0.1, 10, 0), 1.0, 90.0, 0.5) == 90.0
    assert recrawl_interval_days(None, 1.0, 30.0, 0.5) == 30.0
