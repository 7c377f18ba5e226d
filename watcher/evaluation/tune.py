"""``driftline tune``: calibrate on labels, and change only what held-out folds support.

Why so careful: a threshold fitted to one collection looks better on that
collection and usually worse on the next (re-tuning the voting thresholds on
the shared gold scores below the shipped ones held out: docs/results/gold-1068.json).  So every
candidate change is fitted on the training folds only and judged on the
held-out fold (grouped by TimeMap, :mod:`watcher.evaluation.crossval`), at several fold
seeds, against what it would change on the same fold.  A change is recommended
only when its held-out gain is positive on average, larger than its own spread
over the folds (sample sd), and positive in more than half of the folds; only
then is an overlay written, holding the keys that change, with the thresholds
fitted on all the labels.

Candidates: the voting thresholds re-tuned (the fixed checks OR the voting
measures under the configured policy), judged against the same rule at the
current thresholds (the engine's verdict also reads what a history remembers,
which no threshold stands for: comparing with it would blame the thresholds
for the rule's simplification); and, under policy ``any``, each scored measure
that does not vote added as a voter, judged against the current verdict, and
each voter (of two or more) dropped, judged as the re-tuned thresholds are.

Too few labels say nothing: with fewer than :data:`MIN_POSITIVES_PER_FOLD`
off-topic captures in a held-out fold, one capture moves that fold's F1 by
0.2 or more, and no gain can be told from noise; the command refuses.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from ..config import Config, PolicyConfig
from ..errors import InputError
from .crossval import Rule, Table, apply_rule, assign_folds, build_table, cross_validate, tune
from .evaluate import Matched
from .metrics import f1_score

log = logging.getLogger(__name__)

MIN_POSITIVES_PER_FOLD = 4
DEFAULT_FOLDS = 5
DEFAULT_SEEDS: tuple[int, ...] = (0, 1, 2)


@dataclass
class Candidate:
    """One change, judged fold by fold against the current verdict."""

    rule: Rule
    change: str  # what the overlay would do, in words
    against: str = "the current verdict"  # what the gain is measured against
    drop: str | None = None  # a voter removed (nothing tuned) rather than thresholds fitted
    f1: list[float] = field(default_factory=list)  # held-out F1 per fold (every seed)
    gain: list[float] = field(default_factory=list)  # held-out F1 minus that of ``against``, same fold
    thresholds: list[dict[str, float | None]] = field(default_factory=list)  # tuned per fold

    @property
    def mean_gain(self) -> float:
        return statistics.fmean(self.gain)

    @property
    def sd_gain(self) -> float:
        return statistics.stdev(self.gain) if len(self.gain) > 1 else 0.0

    @property
    def wins(self) -> int:
        return sum(1 for g in self.gain if g > 1e-12)

    @property
    def supported(self) -> bool:
        return self.mean_gain > 0 and self.mean_gain > self.sd_gain and self.wins * 2 > len(self.gain)


@dataclass
class TuneReport:
    captures: int
    positives: int
    timemaps: int
    folds: int
    seeds: tuple[int, ...]
    current: list[float]  # the current verdict's held-out F1 per fold
    candidates: list[Candidate]
    chosen: Candidate | None
    overlay: dict[str, Any] | None

    def to_json(self) -> dict[str, Any]:
        return {
            "captures": self.captures, "positives": self.positives, "timemaps": self.timemaps,
            "folds": self.folds, "seeds": list(self.seeds),
            "current_f1": _spread(self.current),
            "candidates": [{"name": c.rule.name, "change": c.change, "drop": c.drop, "f1": _spread(c.f1),
                            "against": c.against,
                            "gain": {"mean": c.mean_gain, "sd": c.sd_gain}, "folds_gaining": c.wins,
                            "folds": len(c.gain), "supported": c.supported, "fold_thresholds": c.thresholds}
                           for c in self.candidates],
            "recommended": self.chosen.rule.name if self.chosen else None, "overlay": self.overlay,
        }


def _spread(xs: Sequence[float]) -> dict[str, float]:
    return {"mean": statistics.fmean(xs), "sd": statistics.stdev(xs) if len(xs) > 1 else 0.0,
            "min": min(xs), "max": max(xs)}


def check_enough(t: Table, k: int) -> None:
    """Refuse, in one line, labels too few to tell a gain from noise."""
    pos_tms = {g for g, p in zip(t.groups, t.positive, strict=True) if p}
    need = MIN_POSITIVES_PER_FOLD * k
    npos = int(t.positive.sum())
    if npos < need or len(pos_tms) < k or int((~t.positive).sum()) < need:
        raise InputError(
            f"too few labels to tune: {npos} off-topic and {int((~t.positive).sum())} on-topic captures, "
            f"off-topic ones in {len(pos_tms)} TimeMaps; {k} folds need at least {need} of each "
            f"({MIN_POSITIVES_PER_FOLD} off-topic a held-out fold, else one capture moves a fold's F1 by 0.2 "
            f"or more) in at least {k} TimeMaps", reason="too_few_labels")


def candidates(t: Table, voting: Mapping[str, float | None], policy: PolicyConfig) -> list[Candidate]:
    vote = tuple(m for m in voting if m in t.scores)
    out = [Candidate(Rule(f"voting thresholds re-tuned ({', '.join(vote)})", "verdict", vote, True, policy),
                     "set the voting measures' thresholds", "checks OR voters at the current thresholds")]
    if policy.kind == "any":
        out += [Candidate(Rule(f"add voter {m}", "verdict", (m,), with_default=True), f"add {m} as a voter")
                for m in sorted(t.scores) if m not in voting]
        if len(vote) > 1:
            out += [Candidate(Rule(f"drop voter {m}", "verdict", tuple(v for v in vote if v != m), True, policy),
                              f"stop {m} voting", "checks OR voters at the current thresholds", drop=m)
                    for m in vote]
    return out


def _fixed_f1(t: Table, rule: Rule, fold_of_row: npt.NDArray[np.int64], k: int) -> list[float]:
    """Held-out F1 per fold of ``rule`` at the thresholds the result was scored with (nothing tuned)."""
    flags = apply_rule(t, rule, {m: t.priors.get(m) for m in rule.measures})
    out = []
    for f in range(k):
        test = fold_of_row == f
        fl, p = flags[test], t.positive[test]
        tp = int((fl & p).sum())
        out.append(f1_score(tp, int((fl & ~p).sum()), int(p.sum()) - tp))
    return out


def tune_labels(matched: Matched, voting: Mapping[str, float | None], policy: PolicyConfig | None = None,
                k: int = DEFAULT_FOLDS, seeds: Sequence[int] = DEFAULT_SEEDS) -> TuneReport:
    """Judge every candidate change on held-out folds; pick the best the folds support."""
    policy = policy or PolicyConfig()
    t = build_table(matched)
    check_enough(t, k)
    cands = candidates(t, voting, policy)
    tuned = [c for c in cands if c.drop is None]
    current: list[float] = []
    rules = [Rule("default", "default"), *(c.rule for c in tuned)]
    every_voter = Rule("voters", "verdict", tuple(m for m in voting if m in t.scores), True, policy)
    for seed in seeds:
        rep = cross_validate(matched, k, seed, voting=list(voting), policy=policy, rules=rules)
        base = [float(f["f1"]) for f in rep.results[0].folds]
        current += base
        fold_of = assign_folds(t.groups, list(t.positive), k, seed)  # as cross_validate assigns them
        rows = np.array([fold_of[g] for g in t.groups], dtype=np.int64)
        fixed_all = _fixed_f1(t, every_voter, rows, k)
        for c, rr in zip(tuned, rep.results[1:], strict=True):
            f1s = [float(f["f1"]) for f in rr.folds]
            ref = base if c.rule.with_default else fixed_all
            c.f1 += f1s
            c.gain += [a - b for a, b in zip(f1s, ref, strict=True)]
            c.thresholds += [dict(f["thresholds"]) for f in rr.folds]
        for c in cands:
            if c.drop is not None:  # nothing to fit: the other voters at their thresholds, fold by fold
                f1s = _fixed_f1(t, c.rule, rows, k)
                c.f1 += f1s
                c.gain += [a - b for a, b in zip(f1s, fixed_all, strict=True)]
    supported = sorted((c for c in cands if c.supported), key=lambda c: -c.mean_gain)
    chosen = supported[0] if supported else None
    overlay = None
    if chosen is not None:
        fitted = {} if chosen.drop is not None else tune(t, chosen.rule, np.ones(t.n, dtype=bool))
        measures: dict[str, float | None] = {**voting, **fitted}
        # a fitted None flags nothing: that measure does not vote (in the config, None would mean
        # the measure's default threshold, not "off")
        dropped = {m for m, v in fitted.items() if v is None} | ({chosen.drop} if chosen.drop else set())
        overlay = {"engine": {"measures": {m: (None if v is None else float(v)) for m, v in measures.items()
                                           if m not in dropped}}}
    return TuneReport(t.n, int(t.positive.sum()), len(set(t.groups)), k, tuple(seeds), current, cands, chosen,
                      overlay)


def format_tune(rep: TuneReport, top: int = 8) -> str:
    """Markdown: the current verdict, the candidates (supported first, then the best few), the decision."""
    cur = _spread(rep.current)
    n = len(rep.current)
    lines = [f"## driftline tune: {rep.captures} labelled captures in {rep.timemaps} TimeMaps, {rep.positives} "
             f"off topic; grouped {rep.folds}-fold CV by TimeMap, fold seeds "
             f"{', '.join(str(s) for s in rep.seeds)} ({n} held-out folds)", "",
             f"Current verdict, F1 per held-out fold: {cur['mean']:.3f} ± {cur['sd']:.3f} "
             f"[{cur['min']:.3f}, {cur['max']:.3f}].", "",
             "A change is supported when its held-out gain over what it changes (same fold) is positive on "
             "average, larger than its sd over the folds, and positive in more than half of the folds.", "",
             "| candidate | held-out F1 | gain, mean ± sd | against | folds gaining | supported |",
             "|---|--:|--:|---|--:|---|"]
    # the re-tuned thresholds first (the usual question), then the voters dropped, then those added;
    # within each, the supported first, then by gain
    def order(c: Candidate) -> tuple[int, bool, float]:
        return (2 if c.rule.with_default else 1 if c.drop else 0), not c.supported, -c.mean_gain

    ranked = sorted(rep.candidates, key=order)[:top]
    for c in ranked:
        s = _spread(c.f1)
        lines.append(f"| {c.rule.name} | {s['mean']:.3f} ± {s['sd']:.3f} | {c.mean_gain:+.3f} ± {c.sd_gain:.3f} "
                     f"| {c.against} | {c.wins} of {len(c.gain)} | {'yes' if c.supported else 'no'} |")
    if len(rep.candidates) > top:
        lines.append(f"| ({len(rep.candidates) - top} more, smaller gains, none supported) | | | | | |")
    lines.append("")
    if rep.chosen is None:
        lines.append("Recommendation: **no change**. The folds support none of the candidates; the current "
                     "configuration stays as it is and no overlay is written.")
    else:
        c = rep.chosen
        ths = sorted({f"{v:g}" for th in c.thresholds for v in th.values() if v is not None})
        fitted = ("nothing fitted" if c.drop else
                  f"thresholds tuned per fold: {', '.join(ths) or '-'}; the overlay's are fitted on all labels")
        lines.append(f"Recommendation: **{c.change}** ({c.rule.name}): held-out gain {c.mean_gain:+.3f} ± "
                     f"{c.sd_gain:.3f}, positive in {c.wins} of {len(c.gain)} folds; {fitted}.")
    return "\n".join(lines) + "\n"


def overlay_text(rep: TuneReport) -> str:
    """The overlay as YAML, its evidence in comments."""
    assert rep.chosen is not None and rep.overlay is not None
    c = rep.chosen
    head = [f"# driftline tune: {c.change} ({c.rule.name})",
            f"# held-out F1 gain over {c.against} {c.mean_gain:+.3f} ± {c.sd_gain:.3f}, positive in "
            f"{c.wins} of {len(c.gain)} folds ({rep.folds} folds by TimeMap, seeds "
            f"{', '.join(str(s) for s in rep.seeds)}; {rep.captures} captures, {rep.positives} off topic).",
            "# Only the keys that change; engine.measures is one key and is written whole.",
            "# Check it before use: driftline -c THIS_FILE eval --labels LABELS CAPTURES"]
    return "\n".join(head) + "\n" + yaml.safe_dump(rep.overlay, sort_keys=False)


_DESCRIPTION = """Calibrate on labels.  Each candidate change (the voting thresholds re-tuned; a scored measure
added as a voter; a voter dropped) is fitted on training folds and judged on the held-out fold (grouped by history,
several fold seeds) against what it would change.  A change is recommended, and its config overlay
written, only when its held-out F1 gain is positive on average, larger than its sd over the folds,
and positive in more than half of them; otherwise nothing is written."""
_EXAMPLES = """examples:
  driftline tune gold/                              labels.tsv and html of a gold directory
  driftline tune curator.tsv results.json           curator labels and a scan's result
  driftline tune review.sqlite crawl.warc.gz -o tuned.yaml
  driftline tune --labels labels.tsv crawl.warc.gz  the labels named as 'eval --labels' names them
"""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``driftline tune`` on the CLI's subparsers."""
    p: argparse.ArgumentParser = sub.add_parser(
        "tune", help="calibrate thresholds and voters on labels, recommending only what held-out folds support",
        description=_DESCRIPTION, epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("labels", metavar="LABELS",
                   help="labels in gold format (id, date, URI, label: 1 on topic, 0 off topic), a gold directory, "
                        "or a review store (.sqlite/.db path, postgresql:// DSN)")
    p.add_argument("captures", nargs="?", metavar="CAPTURES",
                   help="the labelled captures: a gold directory or other scan input (scanned with every measure), "
                        "or a scan result JSON/JSONL (default: LABELS, when it is a gold directory)")
    p.add_argument("--labels", dest="labels_source", metavar="SOURCE",
                   help="the labels, as 'eval --labels' takes them (a gold-format TSV or a review store); the "
                        "positional argument is then the captures")
    p.add_argument("--folds", type=int, default=DEFAULT_FOLDS, metavar="K", help="folds (default 5)")
    p.add_argument("--seeds", default="0,1,2", metavar="S,S,...", help="fold seeds (default 0,1,2)")
    p.add_argument("-o", "--output", default="tune-overlay.yaml", metavar="FILE",
                   help="where a supported change's config overlay is written (default tune-overlay.yaml); "
                        "nothing is written when the folds support no change")
    p.add_argument("--json", action="store_true", help="the report as JSON")
    p.add_argument("-j", "--workers", type=int, metavar="N", help="scan worker processes")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on the terminal")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace, cfg: Config) -> int:
    from .cli import captures_result, resolve_labels
    from .evaluate import match_results

    try:
        seeds = tuple(int(s) for s in str(args.seeds).split(",") if s.strip())
    except ValueError:
        raise InputError(f"--seeds {args.seeds!r}: expected whole numbers, e.g. 0,1,2", reason="usage") from None
    if not seeds:
        raise InputError("--seeds: expected at least one fold seed", reason="usage")
    if args.labels_source:  # `tune --labels L CAPTURES`, as `eval --labels L CAPTURES`
        if args.captures is not None:
            raise InputError("with --labels give one CAPTURES argument (a gold directory, scan input or scan "
                             "result), not two", reason="usage")
        args.labels, args.captures = args.labels_source, args.labels
    with tempfile.TemporaryDirectory() as tmp:
        labels = resolve_labels(args.labels, tmp)
        captures = args.captures or (args.labels if Path(args.labels).is_dir() else None)
        if captures is None:
            raise InputError("tune needs CAPTURES (a gold directory, scan input or scan result) unless LABELS is "
                             "a gold directory", reason="usage")
        result = captures_result(captures, cfg, tmp, every_measure=True)
        matched = match_results(labels, result, cfg.engine.canonical)
        rep = tune_labels(matched, cfg.engine.measures, cfg.engine.policy, args.folds, seeds)
    print(json.dumps(rep.to_json(), indent=2) if args.json else format_tune(rep))
    if rep.overlay is None:
        log.info("no overlay written: the folds support no change")
        return 0
    Path(args.output).write_text(overlay_text(rep), encoding="utf-8")
    log.info("wrote %s: %s", args.output, rep.chosen.change if rep.chosen else "")
    return 0
