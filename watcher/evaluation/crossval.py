"""Grouped K-fold cross-validation of verdict rules (``driftline eval --folds K``).

Why: a threshold picked after the fact on one collection says little about the
next one (the default verdict scored F1 0.773 on the shared collection and 0.33
on a held-out one).  Here every value a rule tunes is tuned on the training
folds only and scored on the held-out fold, and captures of one TimeMap (the
gold ``id``) never straddle folds, so a TimeMap's own pages cannot leak into
the threshold that judges them.

It works on one scored result: the scores are read once and every rule is
re-thresholded from them (no re-scan per fold).  Rules:

- ``default``: the result's own overall verdict, nothing tuned;
- ``<measure>``: that measure alone, threshold tuned (best F1 by sweep);
- ``verdict (re-tuned)``: the fixed checks (page kind, site identity,
  cross-site redirect) OR the voting measures under the configured policy,
  the voting thresholds re-tuned;
- ``a | b``: an OR-pair of two measures (AlNoamany et al.'s best published
  rule was ``cosine < t1 OR wordcount < t2``), both thresholds tuned jointly;
- ``checks | a | b``: the same pair added to the fixed checks.

A capture that is unscored (empty, error) or is its history's baseline is
never flagged by a re-tuned rule, as the engine never flags it.

Figures (off topic = positive class):

- per fold: precision, recall and F1 of the held-out captures, then mean,
  sample standard deviation, min and max over folds;
- micro: pooled over the held-out predictions of all folds;
- macro per TimeMap: the mean F1 over the TimeMaps that have at least one
  off-topic or one flagged capture (the others have no F1: 0/0);
- TimeMap level: a TimeMap is positive if any capture is off topic and
  predicted positive if any capture is flagged; F1 over TimeMaps;
- error concentration: the share of all errors (FP + FN, pooled) made on the
  largest TimeMap (by captures) and on the TimeMap with the most errors.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt

from ..config import PolicyConfig
from ..errors import InputError
from .evaluate import UNSCORED_STATUSES, Matched, measure_shape
from .metrics import f1_score, sweep_thresholds

BoolArr = npt.NDArray[np.bool_]
FloatArr = npt.NDArray[np.float64]

# Fixed checks named in a result's reason text (until results carry
# ``["driftline"]["checks"]``): check name -> phrase.
CHECK_PHRASES: tuple[tuple[str, str], ...] = (
    ("page_kind", "page kind "), ("identity", "site identity lost"), ("redirect", "redirects to another site"),
)
STATS = ("precision", "recall", "f1", "macro_f1", "timemap_f1")
MAX_ROUNDS = 6  # coordinate-ascent rounds when more than two thresholds are tuned jointly


# -- the data -----------------------------------------------------------------

def checks_of(entry: Mapping[str, Any]) -> frozenset[str]:
    """The fixed checks that flagged a capture: the result's ``checks`` list,
    or derived from its reason text."""
    dl = entry.get("driftline")
    if not isinstance(dl, dict):
        return frozenset()
    listed = dl.get("checks")
    if isinstance(listed, list | tuple):
        return frozenset(str(c) for c in listed)
    reason = str(dl.get("reason") or "")
    return frozenset(name for name, phrase in CHECK_PHRASES if phrase in reason)


def _score(block: Any) -> float:
    if not isinstance(block, dict):
        return math.nan
    s = block.get("comparison score")
    if isinstance(s, bool) or not isinstance(s, int | float):
        return math.nan
    return float(s)


@dataclass(frozen=True)
class Table:
    """Matched captures as arrays (one row per labelled capture)."""

    groups: list[str]  # TimeMap id per row
    positive: BoolArr
    default: BoolArr  # the result's overall verdict flagged it
    eligible: BoolArr  # may be flagged by a re-tuned rule
    checks: BoolArr  # a fixed check flagged it
    scores: dict[str, FloatArr]  # NaN = unscored
    shapes: dict[str, tuple[str, str]]  # measure -> (direction, kind)
    priors: dict[str, float | None]  # measure -> threshold the result was scored with (ties go nearest it)

    @property
    def n(self) -> int:
        return len(self.groups)


def build_table(matched: Matched) -> Table:
    """Arrays of labels, verdicts, checks and every measure's scores."""
    entries = [e for _, e in matched.pairs]
    names: list[str] = []
    for e in entries:
        for name in (e.get("timemap measures") or {}):
            if name not in names:
                names.append(name)
    scores: dict[str, FloatArr] = {}
    shapes: dict[str, tuple[str, str]] = {}
    priors: dict[str, float | None] = {}
    for name in names:
        blocks = [(e.get("timemap measures") or {}).get(name) for e in entries]
        arr = np.array([_score(b) for b in blocks], dtype=np.float64)
        by_driftline = any(isinstance(b, dict) and "threshold" in b for b in blocks)
        scores[name] = arr
        shapes[name] = measure_shape(name, by_driftline, [float(s) for s in arr if not math.isnan(s)])
        used = Counter(float(b["threshold"]) for b in blocks
                       if isinstance(b, dict) and isinstance(b.get("threshold"), int | float))
        priors[name] = used.most_common(1)[0][0] if used else None
    status = [e.get("overall topic status") for e in entries]
    change = [(e.get("driftline") or {}).get("change") if isinstance(e.get("driftline"), dict) else None
              for e in entries]
    eligible = np.array([s is not None and s not in UNSCORED_STATUSES and c != "baseline"
                         for s, c in zip(status, change, strict=True)], dtype=bool)
    return Table(
        groups=[g.id for g, _ in matched.pairs],
        positive=np.array([g.label == 0 for g, _ in matched.pairs], dtype=bool),
        default=np.array([s == "off-topic" for s in status], dtype=bool),
        eligible=eligible,
        checks=np.array([bool(checks_of(e)) for e in entries], dtype=bool) & eligible,
        scores=scores, shapes=shapes, priors=priors,
    )


# -- folds ----------------------------------------------------------------------

def assign_folds(groups: Sequence[str], positive: Sequence[bool], k: int, seed: int) -> dict[str, int]:
    """TimeMap id -> fold.  All captures of one TimeMap share a fold.

    Deterministic given ``seed``: TimeMaps are shuffled by the seed, those with
    off-topic captures placed first (most positives first, each into the fold
    with fewest positives, then fewest captures), then the rest, each into the
    fold with fewest captures.  Ties go to the lower fold number.
    """
    caps: dict[str, int] = {}
    pos: dict[str, int] = {}
    for g, p in zip(groups, positive, strict=True):
        caps[g] = caps.get(g, 0) + 1
        pos[g] = pos.get(g, 0) + int(bool(p))
    if k < 2:
        raise InputError(f"--folds must be at least 2, not {k}", reason="folds")
    if k > len(caps):
        raise InputError(f"--folds {k} exceeds the {len(caps)} TimeMaps in the labels", reason="folds")
    ids = sorted(caps)
    random.Random(seed).shuffle(ids)
    with_pos = sorted((g for g in ids if pos[g]), key=lambda g: -pos[g])  # stable: ties stay shuffled
    without = [g for g in ids if not pos[g]]
    load_pos = [0] * k
    load_caps = [0] * k
    out: dict[str, int] = {}
    for g in with_pos:
        f = min(range(k), key=lambda i: (load_pos[i], load_caps[i], i))
        out[g] = f
        load_pos[f] += pos[g]
        load_caps[f] += caps[g]
    for g in without:
        f = min(range(k), key=lambda i: (load_caps[i], i))
        out[g] = f
        load_caps[f] += caps[g]
    return out


# -- rules and tuning -----------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    name: str
    kind: str  # default | measure | verdict | pair | checks+pair
    measures: tuple[str, ...] = ()
    with_checks: bool = False
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    with_default: bool = False  # OR the result's own verdict (an extra voter added to the default)


def _flags(t: Table, name: str, threshold: float | None) -> BoolArr:
    if threshold is None:
        return np.zeros(t.n, dtype=bool)
    s = t.scores[name]
    with np.errstate(invalid="ignore"):
        f = s < threshold if t.shapes[name][0] == "below" else s > threshold
    return np.asarray(f & t.eligible, dtype=bool)


def _candidates(t: Table, name: str, train: BoolArr) -> list[float]:
    s = t.scores[name][train & t.eligible]
    s = s[~np.isnan(s)]
    if s.size == 0:
        return []
    return sweep_thresholds(float(s.min()), float(s.max()), t.shapes[name][1])


def _best_added(t: Table, name: str, train: BoolArr, base: BoolArr,
                cands: list[float] | None = None) -> tuple[float | None, float]:
    """Threshold of ``name`` maximising training F1 of ``base OR name``
    (ties: see :func:`_tie_break`)."""
    cands = _candidates(t, name, train) if cands is None else cands
    pos = t.positive[train]
    total = int(pos.sum())
    b = base[train]
    if not cands or total == 0:
        return None, f1_score(int((b & pos).sum()), int((b & ~pos).sum()), total - int((b & pos).sum()))
    s = t.scores[name][train]
    rest = ~b & t.eligible[train] & ~np.isnan(s)
    rp, rn = np.sort(s[rest & pos]), np.sort(s[rest & ~pos])
    c = np.array(cands)
    tp0, fp0 = int((b & pos).sum()), int((b & ~pos).sum())
    if t.shapes[name][0] == "below":
        tp = tp0 + np.searchsorted(rp, c, "left")
        fp = fp0 + np.searchsorted(rn, c, "left")
    else:
        tp = tp0 + rp.size - np.searchsorted(rp, c, "right")
        fp = fp0 + rn.size - np.searchsorted(rn, c, "right")
    f1 = np.where(tp > 0, 2 * tp / np.maximum(1, 2 * tp + fp + (total - tp)), 0.0)
    i = _tie_break(c, f1, t.priors.get(name), t.shapes[name][0])
    return float(c[i]), float(f1[i])


def _tie_break(cands: FloatArr, f1: FloatArr, prior: float | None, direction: str) -> int:
    """Index of the best F1; among equal F1s the candidate nearest ``prior``
    (the threshold in use): where training cannot tell two thresholds apart,
    it is no reason to move the one in use.  Without a prior, the candidate
    that flags least (lowest for "below", highest for "above")."""
    best = np.flatnonzero(f1 >= f1.max() - 1e-12)
    if best.size == 1:
        return int(best[0])
    if prior is None:
        return int(best[0] if direction == "below" else best[-1])
    return int(best[np.argmin(np.abs(cands[best] - prior))])


def _train_f1(flags: BoolArr, t: Table, train: BoolArr) -> float:
    f, p = flags[train], t.positive[train]
    tp = int((f & p).sum())
    return f1_score(tp, int((f & ~p).sum()), int(p.sum()) - tp)


def _policy(t: Table, rule: Rule, thresholds: Mapping[str, float | None]) -> BoolArr:
    """Flags of the rule's voting measures under its policy (as verdict.py)."""
    if not rule.measures:
        return np.zeros(t.n, dtype=bool)
    flagged = np.stack([_flags(t, m, thresholds.get(m)) for m in rule.measures])
    scored = np.stack([~np.isnan(t.scores[m]) for m in rule.measures])
    nf, ns = flagged.sum(axis=0), scored.sum(axis=0)
    pol = rule.policy
    if pol.kind == "any":
        out = nf > 0
    elif pol.kind == "all":
        out = (nf == ns) & (ns > 0)
    elif pol.kind == "k-of-n":
        out = (nf >= np.minimum(pol.k, ns)) & (ns > 0)
    else:
        w = np.array([pol.weights.get(m, 1.0) for m in rule.measures])[:, None]
        tot = (w * scored).sum(axis=0)
        got = (w * flagged).sum(axis=0)
        out = (ns > 0) & (np.divide(got, tot, out=np.zeros_like(got), where=tot > 0) >= pol.weighted_threshold)
    return np.asarray(out, dtype=bool)


def apply_rule(t: Table, rule: Rule, thresholds: Mapping[str, float | None]) -> BoolArr:
    if rule.kind == "default":
        return t.default.copy()
    flags = _policy(t, rule, thresholds)
    return flags | _base(t, rule)


def _base(t: Table, rule: Rule) -> BoolArr:
    """What the rule flags whatever its thresholds: fixed checks, default verdict."""
    base = np.zeros(t.n, dtype=bool)
    if rule.with_checks:
        base |= t.checks
    if rule.with_default:
        base |= t.default
    return base


def tune(t: Table, rule: Rule, train: BoolArr) -> dict[str, float | None]:
    """Thresholds of the rule's measures with the best F1 on ``train``.

    One measure: an exact sweep.  Two under "any": every candidate of the
    measure with fewer candidates, each with the other's exact best.  More, or
    another policy: coordinate ascent from each measure's own best, a few
    rounds, each step a full sweep of one threshold with the others fixed.
    """
    base = _base(t, rule)
    ms = list(rule.measures)
    if not ms:
        return {}
    if rule.policy.kind == "any" and len(ms) <= 2:
        if len(ms) == 1:
            return {ms[0]: _best_added(t, ms[0], train, base)[0]}
        a, b = sorted(ms, key=lambda m: (len(_candidates(t, m, train)), ms.index(m)))
        prior = t.priors.get(a)
        best: tuple[float, float, float | None, float | None] = (-1.0, -math.inf, None, None)
        cands_b = _candidates(t, b, train)
        for ta in [None, *_candidates(t, a, train)]:
            tb, f = _best_added(t, b, train, base | _flags(t, a, ta), cands_b)
            near = -math.inf if ta is None else (0.0 if prior is None else -abs(ta - prior))
            if f > best[0] + 1e-12 or (f > best[0] - 1e-12 and near > best[1]):
                best = (f, near, ta, tb)
        return {a: best[2], b: best[3]}
    th: dict[str, float | None] = {m: _best_added(t, m, train, base)[0] for m in ms}
    current = _train_f1(apply_rule(t, rule, th), t, train)
    for _ in range(MAX_ROUNDS):
        improved = False
        for m in ms:
            for c in [None, *_candidates(t, m, train)]:
                trial = {**th, m: c}
                f = _train_f1(apply_rule(t, rule, trial), t, train)
                if f > current + 1e-12:
                    current, th, improved = f, trial, True
        if not improved:
            break
    return th


# -- figures --------------------------------------------------------------------

def _prf(flags: BoolArr, pos: BoolArr) -> dict[str, float | int]:
    tp = int((flags & pos).sum())
    fp = int((flags & ~pos).sum())
    fn = int((~flags & pos).sum())
    return {"tp": tp, "fp": fp, "fn": fn, "tn": int(flags.size) - tp - fp - fn,
            "precision": tp / (tp + fp) if tp + fp else 0.0, "recall": tp / (tp + fn) if tp + fn else 0.0,
            "f1": f1_score(tp, fp, fn)}


def _per_timemap(groups: Sequence[str], flags: BoolArr, pos: BoolArr) -> tuple[list[str], dict[str, Any]]:
    """TimeMap ids (sorted) and per-TimeMap counts: tp, fp, fn, captures, positives, flagged."""
    ids, inv = np.unique(np.asarray(groups, dtype=object).astype(str), return_inverse=True)
    m = len(ids)

    def count(w: BoolArr) -> npt.NDArray[np.int64]:
        return np.bincount(inv, weights=w.astype(np.float64), minlength=m).astype(np.int64)

    return [str(x) for x in ids], {"tp": count(flags & pos), "fp": count(flags & ~pos), "fn": count(~flags & pos),
                                   "captures": np.bincount(inv, minlength=m), "positives": count(pos),
                                   "flagged": count(flags)}


def macro_f1(groups: Sequence[str], flags: BoolArr, pos: BoolArr) -> float | None:
    """Mean F1 over the TimeMaps with an off-topic or a flagged capture."""
    _, c = _per_timemap(groups, flags, pos)
    keep = (c["tp"] + c["fp"] + c["fn"]) > 0
    if not keep.any():
        return None
    tp, fp, fn = c["tp"][keep], c["fp"][keep], c["fn"][keep]
    return float(np.mean(np.where(tp > 0, 2 * tp / np.maximum(1, 2 * tp + fp + fn), 0.0)))


def timemap_level(groups: Sequence[str], flags: BoolArr, pos: BoolArr) -> dict[str, float | int]:
    """TimeMap-level confusion: positive if any capture is off topic,
    predicted positive if any capture is flagged."""
    _, c = _per_timemap(groups, flags, pos)
    return _prf(np.asarray(c["flagged"] > 0, dtype=bool), np.asarray(c["positives"] > 0, dtype=bool))


def error_shares(groups: Sequence[str], flags: BoolArr, pos: BoolArr) -> dict[str, Any]:
    """Share of errors (FP + FN) on the largest TimeMap and on the worst one
    (ties: the first TimeMap id in sort order)."""
    ids, c = _per_timemap(groups, flags, pos)
    errs = c["fp"] + c["fn"]
    total = int(errs.sum())
    li = int(np.argmax(c["captures"]))
    wi = int(np.argmax(errs))
    return {"errors": total, "largest_timemap": ids[li], "largest_captures": int(c["captures"][li]),
            "largest_share": int(errs[li]) / total if total else 0.0,
            "worst_timemap": ids[wi], "worst_errors": int(errs[wi]),
            "worst_share": int(errs[wi]) / total if total else 0.0}


def spread(values: Sequence[float]) -> dict[str, float]:
    """Mean, sample standard deviation (0 for one value), min and max."""
    return {"mean": statistics.fmean(values), "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values)}


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    folds: list[dict[str, Any]]  # per fold: figures of the held-out fold and the tuned thresholds
    stats: dict[str, dict[str, float]]  # metric -> mean/sd/min/max over folds
    micro: dict[str, float | int]
    macro_f1: float | None
    timemap: dict[str, float | int]
    errors: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.rule.name, "kind": self.rule.kind, "measures": list(self.rule.measures),
                "with_checks": self.rule.with_checks, "with_default": self.rule.with_default,
                "folds": self.folds, "stats": self.stats,
                "micro": self.micro, "macro_f1": self.macro_f1, "timemap": self.timemap, "errors": self.errors}


@dataclass(frozen=True)
class CVReport:
    labels_path: str
    result_path: str
    k: int
    seed: int
    captures: int
    positives: int
    timemaps: int
    fold_sizes: list[dict[str, int]]
    results: list[RuleResult]

    def to_json(self) -> dict[str, Any]:
        return {"labels": self.labels_path, "result": self.result_path, "folds": self.k, "seed": self.seed,
                "captures": self.captures, "positives": self.positives, "timemaps": self.timemaps,
                "fold_sizes": self.fold_sizes, "rules": [r.to_json() for r in self.results]}


def run_rule(tables: Sequence[Table], rule: Rule, fold_of_row: npt.NDArray[np.int64], k: int) -> RuleResult:
    """Tune on the training folds, predict each held-out fold, pool
    (``tables``: one per fold, the same rows; scores may differ by fold)."""
    t = tables[0]
    pooled = np.zeros(t.n, dtype=bool)
    folds: list[dict[str, Any]] = []
    for f in range(k):
        t = tables[f]
        test = fold_of_row == f
        th = tune(t, rule, ~test) if rule.kind != "default" else {}
        flags = apply_rule(t, rule, th)
        pooled[test] = flags[test]
        g = [t.groups[i] for i in np.flatnonzero(test)]
        fig = _prf(flags[test], t.positive[test])
        folds.append({"fold": f, **fig, "macro_f1": macro_f1(g, flags[test], t.positive[test]),
                      "timemap_f1": timemap_level(g, flags[test], t.positive[test])["f1"], "thresholds": th})
    stats = {m: spread([float(x[m]) for x in folds if x[m] is not None]) for m in STATS
             if any(x[m] is not None for x in folds)}
    return RuleResult(rule, folds, stats, _prf(pooled, t.positive), macro_f1(t.groups, pooled, t.positive),
                      timemap_level(t.groups, pooled, t.positive), error_shares(t.groups, pooled, t.positive))


def default_rules(t: Table, voting: Sequence[str], policy: PolicyConfig) -> list[Rule]:
    """The rules compared: default verdict, re-tuned verdict, each measure,
    every OR-pair alone and added to the fixed checks."""
    names = sorted(t.scores)
    vote = tuple(m for m in voting if m in t.scores)
    rules = [Rule("default", "default"),
             Rule(f"verdict re-tuned: checks OR {policy.kind}({', '.join(vote)})", "verdict", vote, True, policy)]
    rules += [Rule(m, "measure", (m,)) for m in names]
    for a, b in combinations(names, 2):
        rules.append(Rule(f"{a} OR {b}", "pair", (a, b)))
        rules.append(Rule(f"checks OR {a} OR {b}", "checks+pair", (a, b), True))
    return rules


def cross_validate(matched: Matched, k: int, seed: int = 0, voting: Sequence[str] = ("tfintersection", "wordcount"),
                   policy: PolicyConfig | None = None, rules: Sequence[Rule] | None = None,
                   labels_path: str = "", result_path: str = "",
                   fold_columns: FoldColumns | None = None) -> CVReport:
    """Grouped K-fold cross-validation of every rule on one matched result.

    ``fold_columns(fold, test_mask)``: extra score columns computed for one
    fold from its training rows only (e.g. a collection centroid), as
    ``name -> (scores, direction, kind)``.
    """
    t = build_table(matched)
    if t.n == 0:
        raise InputError("no labelled capture matched a result: nothing to cross-validate", reason="folds")
    fold_of = assign_folds(t.groups, list(t.positive), k, seed)
    fold_of_row = np.array([fold_of[g] for g in t.groups], dtype=np.int64)
    sizes = [{"fold": f, "timemaps": sum(1 for v in fold_of.values() if v == f),
              "captures": int((fold_of_row == f).sum()), "positives": int(t.positive[fold_of_row == f].sum())}
             for f in range(k)]
    tables = [t] * k
    if fold_columns is not None:
        tables = [with_columns(t, fold_columns(f, fold_of_row == f)) for f in range(k)]
    todo = list(rules) if rules is not None else default_rules(tables[0], voting, policy or PolicyConfig())
    return CVReport(labels_path, result_path, k, seed, t.n, int(t.positive.sum()), len(fold_of), sizes,
                    [run_rule(tables, r, fold_of_row, k) for r in todo])


Column = tuple[FloatArr, str, str]  # scores (NaN = unscored), direction, kind
FoldColumns = Callable[[int, BoolArr], Mapping[str, Column]]


def with_columns(t: Table, cols: Mapping[str, Column]) -> Table:
    """``t`` with extra (or replaced) score columns; no prior threshold."""
    return replace(t, scores={**t.scores, **{n: c[0] for n, c in cols.items()}},
                   shapes={**t.shapes, **{n: (c[1], c[2]) for n, c in cols.items()}},
                   priors={**t.priors, **{n: None for n in cols}})


# -- text -----------------------------------------------------------------------

def _ms(s: Mapping[str, float] | None) -> str:
    if not s:
        return "-"
    return f"{s['mean']:.3f} ± {s['sd']:.3f} [{s['min']:.3f}, {s['max']:.3f}]"


def _row(r: RuleResult) -> str:
    e = r.errors
    macro = "-" if r.macro_f1 is None else f"{r.macro_f1:.3f}"
    return (f"| {r.rule.name} | {_ms(r.stats.get('f1'))} | {r.stats['precision']['mean']:.3f} "
            f"| {r.stats['recall']['mean']:.3f} | {r.micro['f1']:.3f} ({r.micro['precision']:.3f} / "
            f"{r.micro['recall']:.3f}) | {macro} | {r.timemap['f1']:.3f} "
            f"| {e['largest_share']:.2f} | {e['worst_share']:.2f} ({e['worst_timemap']}) |")


def format_cv(rep: CVReport, top_pairs: int = 10) -> str:
    """Markdown: fold sizes, then one row per rule (pairs: the best few)."""
    sizes = ", ".join(f"{s['timemaps']} TimeMaps / {s['captures']} captures / {s['positives']} off topic"
                      for s in rep.fold_sizes)
    lines = [f"## Grouped {rep.k}-fold cross-validation (seed {rep.seed}) of `{rep.result_path}` against "
             f"`{rep.labels_path}`", "",
             f"{rep.captures} captures in {rep.timemaps} TimeMaps, {rep.positives} off topic. Folds: {sizes}.", "",
             "F1 per held-out fold as mean ± sd [min, max]; P and R are fold means; micro pools the held-out "
             "predictions of all folds; macro is the mean F1 over TimeMaps with an off-topic or flagged capture; "
             "TimeMap F1 judges a TimeMap by any capture; the last two columns are the share of all errors made "
             "on the largest TimeMap and on the TimeMap with the most errors.", "",
             "| rule | F1 per fold | P | R | micro F1 (P / R) | macro F1 | TimeMap F1 | err. largest "
             "| err. worst (id) |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    by_kind: dict[str, list[RuleResult]] = {}
    for r in rep.results:
        by_kind.setdefault(r.rule.kind, []).append(r)
    for kind in ("default", "verdict", "measure", "pair", "checks+pair"):
        rows = by_kind.get(kind, [])
        if kind in ("pair", "checks+pair", "measure"):
            rows = sorted(rows, key=lambda r: -r.stats.get("f1", {}).get("mean", 0.0))
            if kind != "measure":
                rows = rows[:top_pairs]
        lines.extend(_row(r) for r in rows)
    for r in by_kind.get("verdict", []):
        lines += ["", f"Thresholds tuned per fold for `{r.rule.name}`:", ""]
        for f in r.folds:
            th = ", ".join(f"{m} {'-' if v is None else f'{v:g}'}" for m, v in f["thresholds"].items())
            lines.append(f"- fold {f['fold']}: {th or '(none)'}; held-out F1 {f['f1']:.3f}")
    return "\n".join(lines) + "\n"
