"""Classification metrics for :mod:`watcher.evaluation.evaluate`, without scikit-learn.

Off-topic is the positive class throughout.  ROC AUC is computed with the
rank (Mann-Whitney U) formula, ties sharing their average rank, so it equals
the probability that a random off-topic capture scores higher than a random
on-topic one (ties count one half).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

MAX_SWEEP_STEPS = 5000


@dataclass(frozen=True, slots=True)
class Confusion:
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        return f1_score(self.tp, self.fp, self.fn)

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / self.n if self.n else 0.0


def f1_score(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def confusion(flags: Sequence[bool], positives: Sequence[bool]) -> Confusion:
    tp = sum(1 for f, p in zip(flags, positives, strict=True) if f and p)
    fp = sum(1 for f, p in zip(flags, positives, strict=True) if f and not p)
    fn = sum(1 for f, p in zip(flags, positives, strict=True) if not f and p)
    return Confusion(tp, fp, fn, len(flags) - tp - fp - fn)


def roc_auc(scores: Sequence[float], positives: Sequence[bool]) -> float | None:
    """ROC AUC of ``scores`` (larger = more likely positive); None when one
    class is absent.  Unscored items should be passed as ``-inf``."""
    n = len(scores)
    pos = sum(1 for p in positives if p)
    neg = n - pos
    if pos == 0 or neg == 0:
        return None
    order = sorted(range(n), key=lambda i: scores[i])
    ranks = [0.0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and scores[order[j + 1]] == scores[order[i]]:
            j += 1
        avg = (i + j) / 2 + 1  # ranks are 1-based
        for k in range(i, j + 1):
            ranks[order[k]] = avg
        i = j + 1
    rank_sum = sum(r for r, p in zip(ranks, positives, strict=True) if p)
    return (rank_sum - pos * (pos + 1) / 2) / (pos * neg)


def sweep_thresholds(lo: float, hi: float, kind: str) -> list[float]:
    """Candidate thresholds covering ``[lo, hi]`` plus one step either side:
    0.01 steps for fractions, 1 for bits and counts (coarser if the range
    would need more than MAX_SWEEP_STEPS steps)."""
    if kind == "fraction":
        start = math.floor(lo * 100) - 1
        stop = math.ceil(hi * 100) + 1
        step = max(1, math.ceil((stop - start) / MAX_SWEEP_STEPS))
        return [round(k / 100, 2) for k in range(start, stop + 1, step)]
    start_i = math.floor(lo) - 1
    stop_i = math.ceil(hi) + 1
    step_i = max(1, math.ceil((stop_i - start_i) / MAX_SWEEP_STEPS))
    return [float(k) for k in range(start_i, stop_i + 1, step_i)]


def best_threshold(scores: Sequence[float | None], positives: Sequence[bool], direction: str,
                   kind: str) -> tuple[float | None, float | None]:
    """The threshold with the best F1 (first one on ties) and that F1.

    ``direction`` "below" flags ``score < t``, "above" flags ``score > t``;
    unscored items (None) are never flagged.  Counting uses sorted scores and
    bisection, so a sweep costs O(steps * log n).
    """
    pos_scores = sorted(s for s, p in zip(scores, positives, strict=True) if p and s is not None)
    neg_scores = sorted(s for s, p in zip(scores, positives, strict=True) if not p and s is not None)
    total_pos = sum(1 for p in positives if p)
    observed = pos_scores + neg_scores
    if not observed or total_pos == 0:
        return None, None
    best_t: float | None = None
    best_f = -1.0
    for t in sweep_thresholds(min(observed), max(observed), kind):
        if direction == "below":
            tp = bisect_left(pos_scores, t)
            fp = bisect_left(neg_scores, t)
        else:
            tp = len(pos_scores) - bisect_right(pos_scores, t)
            fp = len(neg_scores) - bisect_right(neg_scores, t)
        f = f1_score(tp, fp, total_pos - tp)
        if f > best_f:
            best_f, best_t = f, t
    return best_t, best_f
