"""The evaluation as a file: ``driftline eval --results FILE``.

Why a file: figures typed by hand into prose drift from what the code does,
and a gate can only compare numbers it can read.  One run of ``driftline eval``
measures one labelled collection and writes its block into a results file
(JSON, versioned by :data:`SCHEMA`); the floors gate (:mod:`watcher.evaluation.floors`)
and the documentation's tables (:mod:`watcher.evaluation.report`) read that file and
nothing else.

A collection's block holds:

- ``overall``: the default verdict's confusion counts, precision, recall, F1,
  accuracy and ROC AUC (ranked by the drift score), in sample;
- ``timemap`` and ``macro_f1``: the same verdicts judged per TimeMap (positive
  if any capture is off topic) and averaged over TimeMaps (see
  :mod:`watcher.evaluation.crossval`);
- ``measures``: each measure's own figures at the threshold it was scored
  with, its best threshold in sample, and two held-out views: the threshold
  kept (``cv_fixed``: F1 and AUC per fold) and the threshold re-tuned on the
  training folds (``cv_tuned``);
- ``profiles``: the default verdict's figures per profile that judged the
  captures;
- ``cv``: grouped K-fold cross-validation by TimeMap at several fold seeds:
  per seed and pooled over every fold of every seed, mean, sample sd, min and
  max, for the default verdict and for the verdict with its voting thresholds
  re-tuned on the training folds; ``micro`` pools the held-out predictions
  of all folds of one seed.

Off topic is the positive class throughout.  Floats are rounded to four
places so that a re-run that changes nothing changes no byte.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..config import CanonicalConfig, PolicyConfig
from ..errors import InputError
from .crossval import (
    STATS,
    Rule,
    apply_rule,
    assign_folds,
    build_table,
    cross_validate,
    macro_f1,
    spread,
    timemap_level,
)
from .evaluate import EvalReport, Matched, Scores, evaluate, match_results
from .metrics import roc_auc

log = logging.getLogger(__name__)

SCHEMA = "driftline-eval-results/1"
DEFAULT_SEEDS: tuple[int, ...] = (0, 1, 2)
DEFAULT_FOLDS = 5
DIGITS = 4


def _r(x: Any) -> Any:
    """Round floats (recursively) so that the file is stable byte for byte."""
    if isinstance(x, float):
        return None if math.isnan(x) else round(x, DIGITS)
    if isinstance(x, dict):
        return {k: _r(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_r(v) for v in x]
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return _r(float(x))
    return x


def _scores(s: Scores) -> dict[str, Any]:
    out: dict[str, Any] = {"n": s.n, "unscored": s.unscored, "tp": s.tp, "fp": s.fp, "fn": s.fn, "tn": s.tn,
                           "precision": s.precision, "recall": s.recall, "f1": s.f1, "accuracy": s.accuracy,
                           "auc": s.auc}
    if s.direction is not None:
        out.update({"direction": s.direction, "kind": s.kind, "threshold": s.threshold,
                    "best_threshold": s.best_threshold, "best_f1": s.best_f1})
    return out


def _prf(flags: Sequence[bool], pos: Sequence[bool]) -> dict[str, Any]:
    tp = sum(1 for f, p in zip(flags, pos, strict=True) if f and p)
    fp = sum(1 for f, p in zip(flags, pos, strict=True) if f and not p)
    fn = sum(1 for f, p in zip(flags, pos, strict=True) if not f and p)
    return {"captures": len(flags), "positives": sum(1 for p in pos if p), "tp": tp, "fp": fp, "fn": fn,
            "tn": len(flags) - tp - fp - fn, "precision": tp / (tp + fp) if tp + fp else 0.0,
            "recall": tp / (tp + fn) if tp + fn else 0.0, "f1": 2 * tp / (2 * tp + fp + fn) if tp else 0.0}


def _pooled(per_seed: Mapping[int, Sequence[Mapping[str, Any]]], metrics: Sequence[str]) -> dict[str, Any]:
    """Spread of each metric over every fold of every seed, and per seed."""
    out: dict[str, Any] = {}
    for m in metrics:
        every = [float(f[m]) for folds in per_seed.values() for f in folds if f.get(m) is not None]
        if every:
            out[m] = spread(every)
    out["per_seed"] = {str(seed): {m: spread([float(f[m]) for f in folds if f.get(m) is not None])
                                   for m in metrics if any(f.get(m) is not None for f in folds)}
                       for seed, folds in per_seed.items()}
    return out


def _profiles(matched: Matched) -> dict[str, Any]:
    groups: dict[str, tuple[list[bool], list[bool]]] = {}
    for g, e in matched.pairs:
        dl = e.get("driftline")
        name = str(dl.get("profile") or "collection") if isinstance(dl, dict) else "unknown"
        flags, pos = groups.setdefault(name, ([], []))
        flags.append(e.get("overall topic status") == "off-topic")
        pos.append(g.label == 0)
    return {name: _prf(f, p) for name, (f, p) in sorted(groups.items())}


def _measure_folds(matched: Matched, k: int, seeds: Sequence[int]) -> dict[str, dict[int, list[dict[str, Any]]]]:
    """Per measure, per seed, per held-out fold: F1 at the threshold it was scored with, and AUC."""
    t = build_table(matched)
    out: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for seed in seeds:
        fold_of = assign_folds(t.groups, list(t.positive), k, seed)
        rows = np.array([fold_of[g] for g in t.groups])
        for name, scores in t.scores.items():
            flags = apply_rule(t, Rule(name, "measure", (name,)), {name: t.priors.get(name)})
            direction = t.shapes[name][0]
            ranked = np.where(np.isnan(scores), -math.inf, -scores if direction == "below" else scores)
            folds = []
            for f in range(k):
                test = rows == f
                fig = _prf(list(flags[test]), list(t.positive[test]))
                folds.append({"f1": fig["f1"], "auc": roc_auc(list(ranked[test]), list(t.positive[test]))})
            out.setdefault(name, {})[seed] = folds
    return out


def _short(path: str | os.PathLike[str]) -> str:
    """A path as its last two parts: the checked-in file does not name a temporary folder."""
    p = Path(path)
    return p.name if p.is_dir() else "/".join(p.parts[-2:])


def collection_results(labels: str | os.PathLike[str], result: str | os.PathLike[str], *,
                       voting: Sequence[str], policy: PolicyConfig | None = None, k: int = DEFAULT_FOLDS,
                       seeds: Sequence[int] = DEFAULT_SEEDS, canonical: CanonicalConfig | None = None
                       ) -> dict[str, Any]:
    """The results block of one labelled collection (see the module docstring)."""
    if not seeds:
        raise InputError("--seeds needs at least one fold seed", reason="usage")
    policy = policy or PolicyConfig()
    report: EvalReport = evaluate(labels, result, canonical)
    matched = match_results(labels, result, canonical)
    t = build_table(matched)
    vote = tuple(m for m in voting if m in t.scores)
    rules = [Rule("default", "default"),
             Rule(f"verdict re-tuned: checks OR {policy.kind}({', '.join(vote)})", "verdict", vote, True, policy)]
    rules += [Rule(m, "measure", (m,)) for m in sorted(t.scores)]
    by_rule: dict[str, dict[int, list[dict[str, Any]]]] = {}
    micro: dict[str, dict[str, Any]] = {}  # rule -> seed -> the held-out predictions of all folds pooled
    for seed in seeds:
        rep = cross_validate(matched, k, seed, voting=vote, policy=policy, rules=rules)
        for rr in rep.results:
            by_rule.setdefault(rr.rule.name, {})[seed] = rr.folds
            micro.setdefault(rr.rule.name, {})[str(seed)] = rr.micro
    fixed = _measure_folds(matched, k, seeds)
    measures: dict[str, Any] = {}
    for name, s in report.measures.items():
        mb = _scores(s)
        mb["voting"] = name in vote
        if name in fixed:
            mb["cv_fixed"] = _pooled(fixed[name], ("f1", "auc"))
        if name in by_rule:
            mb["cv_tuned"] = _pooled(by_rule[name], ("f1",))
            mb["cv_tuned"]["thresholds"] = sorted({f["thresholds"].get(name) for folds in by_rule[name].values()
                                                      for f in folds if f["thresholds"].get(name) is not None})
        measures[name] = mb
    retuned = by_rule[rules[1].name]
    block: dict[str, Any] = {
        "labels": _short(labels), "result": _short(result),
        "labelled": report.labelled, "matched": report.matched, "positives": int(t.positive.sum()),
        "timemaps": len(set(t.groups)), "without_result": report.without_result,
        "voting": list(vote), "policy": policy.kind,
        "overall": _scores(report.overall),
        "timemap": timemap_level(t.groups, t.default, t.positive),
        "macro_f1": macro_f1(t.groups, t.default, t.positive),
        "profiles": _profiles(matched),
        "measures": measures,
        "cv": {"folds": k, "seeds": list(seeds),
               "default": {**_pooled(by_rule["default"], STATS), "micro": micro["default"]},
               "verdict_retuned": {**_pooled(retuned, STATS), "micro": micro[rules[1].name],
                                   "thresholds": [f["thresholds"] for folds in retuned.values() for f in folds]}},
    }
    log.info("evaluated %d captures: F1 %.3f (%d of %d labelled off topic flagged)", report.matched,
             report.overall.f1, report.overall.tp, report.positives)
    return _r(block)  # type: ignore[no-any-return]


def load_results_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A results file, or an empty one when ``path`` does not exist yet."""
    p = Path(path)
    if not p.exists():
        return {"schema": SCHEMA, "collections": {}}
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{p}: not a results file: {exc}", reason="results_format") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("collections"), dict):
        raise InputError(f"{p}: not a results file of schema {SCHEMA!r} (found {data.get('schema')!r})"
                         if isinstance(data, dict) else f"{p}: not a results file", reason="results_format")
    return data


def write_results(path: str | os.PathLike[str], name: str, block: Mapping[str, Any],
                  config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Put ``block`` into the results file as collection ``name`` (other collections kept)."""
    data = load_results_file(path)
    data["schema"] = SCHEMA
    data["driftline_version"] = __version__
    data["generated"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry = dict(block)
    if config is not None:
        entry["config"] = dict(config)
    data["collections"] = {**data["collections"], name: entry}
    Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return data
