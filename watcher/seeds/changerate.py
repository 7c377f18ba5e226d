"""How often a page changes, from captures taken at irregular times.

The naive rate, changes seen over time watched, is biased low: several changes between two visits
are seen as one.  Cho and Garcia-Molina ("Estimating frequency of change", ACM TOIT 2003) model a
page's changes as a Poisson process of rate ``r``; an interval of length ``t`` then shows a change
with probability ``1 - exp(-r t)``.  For ``n`` regular visits with ``X`` changes their estimator is
``r t = -ln((n - X + 0.5) / (n + 0.5))``: the maximum-likelihood estimate with half an unchanged
visit added, which keeps it finite when every visit saw a change and removes most of its bias.

Crawls visit irregularly, so :func:`estimate` maximises the same likelihood over the intervals as
they were, with the same half visit (of the mean interval's length) added; on regular intervals it
is exactly Cho and Garcia-Molina's estimator.  The band is the likelihood-ratio interval (the rates
whose log-likelihood is within ``chi2(1, level) / 2`` of the best), which needs no normal
approximation and stays sensible at ``X = 0`` (lower bound 0) and ``X = n``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# chi-squared quantiles with one degree of freedom, halved (the log-likelihood drop at the band's edge)
_HALF_CHI2 = {0.90: 2.705543 / 2, 0.95: 3.841459 / 2, 0.99: 6.634897 / 2}


@dataclass(frozen=True, slots=True)
class Rate:
    """Changes per day, with its band; ``intervals`` and ``changes`` are what it was estimated from."""

    per_day: float
    low: float
    high: float
    intervals: int
    changes: int


def _loglik(rate: float, changed: Sequence[float], unchanged: Sequence[float], weights: Sequence[float]) -> float:
    # unchanged intervals contribute -r t each (with their weights); changed ones ln(1 - e^{-r t})
    total = -rate * sum(t * w for t, w in zip(unchanged, weights, strict=True))
    for t in changed:
        p = -math.expm1(-rate * t)
        if p <= 0.0:
            return -math.inf
        total += math.log(p)
    return total


def _score(rate: float, changed: Sequence[float], unchanged_time: float) -> float:
    """d loglik / d rate: sum of t / (e^{r t} - 1) over changed intervals minus the unchanged time."""
    # t / (e^{r t} - 1) vanishes for long intervals (and would overflow past r t ~ 709)
    return sum(t / math.expm1(rate * t) for t in changed if rate * t < 700.0) - unchanged_time


def estimate(intervals_days: Sequence[float], changed: Sequence[bool], level: float = 0.95) -> Rate | None:
    """The change rate per day from intervals between consecutive valid observations and whether
    each showed a change; ``None`` without a usable interval."""
    pairs = [(t, c) for t, c in zip(intervals_days, changed, strict=True) if t > 0]
    if not pairs:
        return None
    ch = [t for t, c in pairs if c]
    un = [t for t, c in pairs if not c]
    mean_t = sum(t for t, _ in pairs) / len(pairs)
    un_w = [*un, mean_t]
    weights = [*([1.0] * len(un)), 0.5]  # Cho and Garcia-Molina's half visit, unchanged
    unchanged_time = sum(t * w for t, w in zip(un_w, weights, strict=True))
    if not ch:
        best = 0.0
    else:
        # the score falls from +inf (r -> 0) to -unchanged_time: bisect on a log scale
        lo, hi = 1e-12, 1.0 / min(ch)
        while _score(hi, ch, unchanged_time) > 0:
            hi *= 4.0
        for _ in range(200):
            mid = math.sqrt(lo * hi)
            if _score(mid, ch, unchanged_time) > 0:
                lo = mid
            else:
                hi = mid
            if hi / lo < 1.0 + 1e-10:
                break
        best = math.sqrt(lo * hi)
    drop = _HALF_CHI2.get(level)
    if drop is None:
        raise ValueError(f"level must be one of {sorted(_HALF_CHI2)}")
    top = _loglik(best, ch, un_w, weights) if best > 0 else -0.0
    target = top - drop

    def below(rate: float) -> bool:
        return _loglik(rate, ch, un_w, weights) < target

    low = 0.0
    if best > 0 and below(best * 1e-9) is True:
        a, b = best * 1e-9, best
        for _ in range(200):
            m = math.sqrt(a * b)
            a, b = (m, b) if below(m) else (a, m)
            if b / a < 1.0 + 1e-9:
                break
        low = b
    a = best if best > 0 else 1e-12 / max(mean_t, 1e-12)
    b = max(a * 2.0, 1.0 / mean_t)
    while not below(b):
        b *= 2.0
    for _ in range(200):
        m = math.sqrt(a * b)
        a, b = (m, b) if not below(m) else (a, m)
        if b / a < 1.0 + 1e-9:
            break
    return Rate(per_day=best, low=low, high=a, intervals=len(pairs), changes=len(ch))


def naive(intervals_days: Sequence[float], changed: Sequence[bool]) -> float | None:
    """Changes seen per day watched: what the estimator corrects (biased low)."""
    total = sum(t for t in intervals_days if t > 0)
    return None if total <= 0 else sum(1 for t, c in zip(intervals_days, changed, strict=True) if t > 0 and c) / total


def recrawl_interval_days(rate: Rate | None, min_days: float, max_days: float, change_probability: float) -> float:
    """The interval after which a revisit finds new text with ``change_probability``:
    ``-ln(1 - p) / r`` (at p = 0.5, the median wait for the next change), clamped to the bounds.
    A seed whose text never changed while watched gets ``max_days``."""
    if rate is None or rate.per_day <= 0:
        return max_days
    days = -math.log1p(-change_probability) / rate.per_day
    return min(max_days, max(min_days, days))
