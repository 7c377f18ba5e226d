"""Per-capture verdicts: what every profile's decision is made of.

The :class:`Decision` (status, change class, reason), the measures scored
against the baseline, the policy over the voting measures (any, all, k-of-n,
weighted) and the ranking score.  Who decides is the profile
(:mod:`watcher.profiles`); this module knows no profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from . import measures as ms
from .config import EngineConfig
from .fingerprint import EXTRACT_FAILED, UNREADABLE
from .model import ChangeClass, Fingerprint, MeasureResult, TopicStatus


@dataclass(frozen=True, slots=True)
class Decision:
    status: TopicStatus
    change: ChangeClass
    reason: str
    drift_score: float
    checks: tuple[str, ...] = ()


def extraction_failed(fp: Fingerprint) -> bool:
    """The capture could not be read or extracted: an error, not a page."""
    return bool(fp.error and fp.error.startswith((EXTRACT_FAILED, UNREADABLE)))


def scored(results: Mapping[str, MeasureResult], name: str) -> float | None:
    r = results.get(name)
    return None if r is None else r.score


def score_measures(base: Fingerprint, cur: Fingerprint, cfg: EngineConfig, ctx: ms.Context) -> dict[str, MeasureResult]:
    """Score every configured measure; ``None`` scores get status ``n/a``."""
    out: dict[str, MeasureResult] = {}
    wanted: dict[str, float | None] = dict(cfg.measures)
    for name in cfg.report_measures:
        wanted.setdefault(ms.get(name).name, None)
    for name, threshold in wanted.items():
        spec = ms.get(name)
        t = spec.threshold if threshold is None else float(threshold)
        # A feature missing on either side (a baseline kept without it) is n/a, never a number.
        score = spec.fn(base, cur, ctx) if ms.applicable(spec, base, cur) else None
        if score is None:
            out[spec.name] = MeasureResult(spec.name, None, "n/a", t)
        else:
            status: TopicStatus = "off-topic" if spec.off_topic(score, t) else "on-topic"
            out[spec.name] = MeasureResult(spec.name, round(float(score), 6), status, t)
    return out


def policy_flags(results: Mapping[str, MeasureResult], cfg: EngineConfig,
                 abstain: frozenset[str] = frozenset()) -> tuple[bool, list[MeasureResult]]:
    """Whether the voting measures call the capture off topic, and which flagged it; the measures
    in ``abstain`` do not vote (as if n/a)."""
    voting = set(cfg.measures) - abstain
    scored = [r for r in results.values() if r.score is not None and r.name in voting]
    flagged = [r for r in scored if r.status == "off-topic"]
    pol = cfg.policy
    if not scored:
        return False, []
    if pol.kind == "any":
        return bool(flagged), flagged
    if pol.kind == "all":
        return len(flagged) == len(scored), flagged
    if pol.kind == "k-of-n":
        return len(flagged) >= min(pol.k, len(scored)), flagged
    total = sum(pol.weights.get(r.name, 1.0) for r in scored)
    got = sum(pol.weights.get(r.name, 1.0) for r in flagged)
    return (got / total if total else 0.0) >= pol.weighted_threshold, flagged


def drift_score(results: Mapping[str, MeasureResult], d: Decision) -> float:
    """A 0..1 "how off topic" score for ranking (ROC AUC): 1 - the best of
    cosine and containment, damped by word loss; off-topic verdicts rank above
    every on-topic one."""
    sims = [results[n].score for n in ("cosine", "containment") if n in results and results[n].score is not None]
    raw = 1.0 - max(s for s in sims if s is not None) if sims else 0.5
    wc = results.get("wordcount")
    if wc is not None and wc.score is not None:
        raw = 0.8 * raw + 0.2 * min(1.0, -wc.score)
    raw = max(0.0, min(1.0, raw))
    if d.status == "off-topic":
        return round(0.5 + 0.5 * max(raw, d.drift_score), 4)
    if d.status in ("on-topic", "baseline"):
        return round(0.49 * raw, 4)
    return 0.0


