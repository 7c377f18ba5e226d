"""Per-capture verdicts: measure statuses, overall status, change class, reason.

The overall status comes from a configurable policy over the enabled measures
(any, all, k-of-n, weighted), plus two checks that need no threshold: a
recognised off-topic page kind (soft 404, parked, suspended...) and the loss
of the site's identity (see :func:`identity_lost`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from . import measures as ms
from .config import EngineConfig
from .fingerprint import EXTRACT_FAILED, UNREADABLE, host_of, site_of
from .model import ChangeClass, Fingerprint, MeasureResult, TopicStatus

# When a capture is on topic, how much of the baseline's text must remain for
# the change to count as "minor" rather than "drifted".
DRIFT_CONTAINMENT = 0.80
DRIFT_COSINE = 0.60
IDENTITY_TITLE = 0.50
IDENTITY_COSINE = 0.05


@dataclass(frozen=True, slots=True)
class Decision:
    status: TopicStatus
    change: ChangeClass
    reason: str
    drift_score: float


def extraction_failed(fp: Fingerprint) -> bool:
    """The capture could not be read or extracted: an error, not a page."""
    return bool(fp.error and fp.error.startswith((EXTRACT_FAILED, UNREADABLE)))


def _scored(results: Mapping[str, MeasureResult], name: str) -> float | None:
    r = results.get(name)
    return None if r is None else r.score


def fmt(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2f}"


def fmt_vs(score: float, threshold: float) -> str:
    """``score`` with enough digits that it never reads equal to ``threshold``
    ("-0.9512 < -0.95", not "-0.95 < -0.95")."""
    text = fmt(score)
    if text == fmt(threshold) and score != threshold:
        text = f"{score:.4f}"
    return text


def score_measures(base: Fingerprint, cur: Fingerprint, cfg: EngineConfig, ctx: ms.Context) -> dict[str, MeasureResult]:
    """Score every configured measure; ``None`` scores get status ``n/a``."""
    out: dict[str, MeasureResult] = {}
    wanted: dict[str, float | None] = dict(cfg.measures)
    for name in cfg.report_measures:
        wanted.setdefault(ms.get(name).name, None)
    for name, threshold in wanted.items():
        spec = ms.get(name)
        t = spec.threshold if threshold is None else float(threshold)
        score = spec.fn(base, cur, ctx)
        if score is None:
            out[spec.name] = MeasureResult(spec.name, None, "n/a", t)
        else:
            status: TopicStatus = "off-topic" if spec.off_topic(score, t) else "on-topic"
            out[spec.name] = MeasureResult(spec.name, round(float(score), 6), status, t)
    return out


def _policy_flags(results: Mapping[str, MeasureResult], cfg: EngineConfig) -> tuple[bool, list[MeasureResult]]:
    voting = set(cfg.measures)
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


def identity_lost(base: Fingerprint, cur: Fingerprint, ctx: ms.Context,
                  results: Mapping[str, MeasureResult] | None = None) -> str | None:
    """The capture no longer belongs to the site the curator selected.

    Needs two independent signals, so that a redesign by the same
    organisation (new layout, same name in the title) or a new article on the
    same site (new words, same name) is not flagged: the title lost most of
    the baseline title's words AND the text shares almost no weighted terms
    with the baseline (TF-IDF cosine).
    """
    # Reuse the scores when those measures were configured: no second pass.
    t, cos = (_scored(results, n) if results else None for n in ("title", "cosine"))
    t = ms.title(base, cur, ctx) if t is None else t
    cos = ms.cosine(base, cur, ctx) if cos is None else cos
    if t is not None and cos is not None and t < IDENTITY_TITLE and cos < IDENTITY_COSINE:
        return f"site identity lost: title similarity {fmt(t)} < {fmt(IDENTITY_TITLE)} and cosine {fmt(cos)} < " \
               f"{fmt(IDENTITY_COSINE)}"
    return None


def decide(base: Fingerprint, cur: Fingerprint, results: Mapping[str, MeasureResult], cfg: EngineConfig,
           ctx: ms.Context | None = None) -> Decision:
    """Overall status, change class and reason of one compared capture."""
    if extraction_failed(cur):
        return Decision("error", "error", cur.error or "extraction failed", 0.0)
    if cur.is_empty:
        return Decision("empty", "empty", f"no content ({cur.error or 'empty'})", 0.0)
    if cur.digest == base.digest:
        return Decision("on-topic", "unchanged", "same digest as the baseline", 0.0)
    reasons: list[str] = []
    off = False
    score = _drift_score(results)
    if cur.redirect:
        target = site_of(host_of(cur.redirect))
        home = site_of(base.host or cur.host)
        if target and home and target != home:
            return Decision("off-topic", "off-topic", f"redirects to another site: {cur.redirect}", 0.9)
        return Decision("empty", "empty", f"redirect stub to {cur.redirect} (same site): its content is not "
                        "in this capture", 0.0)
    if cfg.page_kinds and cur.page_kind and cur.page_kind != base.page_kind:
        off = True
        reasons.append(f"page kind {cur.page_kind} ({cur.page_kind_evidence})")
        score = max(score, 0.95)
    if cfg.site_identity and cur.kind != "binary":
        why = identity_lost(base, cur, ctx or ms.Context(), results)
        if why:
            off = True
            reasons.append(why)
            score = max(score, 0.9)
    flagged_by_policy, flagged = _policy_flags(results, cfg)
    if flagged_by_policy:
        off = True
        for r in flagged:
            spec = ms.get(r.name)
            op = "<" if spec.direction == "below" else ">"
            reasons.append(f"{r.name} {fmt_vs(r.score or 0.0, r.threshold or 0.0)} {op} {fmt(r.threshold or 0.0)}")
    if off:
        return Decision("off-topic", "off-topic", "; ".join(reasons), max(score, 0.5))
    cont = results.get("containment")
    cos = results.get("cosine")
    drifted = (cont is not None and cont.score is not None and cont.score < DRIFT_CONTAINMENT) or (
        cont is None and cos is not None and cos.score is not None and cos.score < DRIFT_COSINE
    )
    doi_r = results.get("doi")
    if doi_r is not None and doi_r.score is not None and doi_r.score < 1.0:
        drifted = True
        reasons.append(f"DOI lost ({fmt(doi_r.score)} kept)")
    if drifted:
        if cont is not None and cont.score is not None and cont.score < DRIFT_CONTAINMENT:
            reasons.insert(0, f"containment {fmt(cont.score)} < {fmt(DRIFT_CONTAINMENT)}")
        elif cos is not None and cos.score is not None and cos.score < DRIFT_COSINE:
            reasons.insert(0, f"cosine {fmt(cos.score)} < {fmt(DRIFT_COSINE)}")
        return Decision("on-topic", "drifted", "; ".join(reasons) + " (on topic)", min(score, 0.49))
    return Decision("on-topic", "minor", "content changed, measures within thresholds", min(score, 0.49))


def _drift_score(results: Mapping[str, MeasureResult]) -> float:
    """A 0..1 "how off topic" score for ranking (ROC AUC), from the lexical
    measures: 1 - the best of cosine and containment, damped by word loss."""
    sims = [results[n].score for n in ("cosine", "containment") if n in results and results[n].score is not None]
    base = 1.0 - max(s for s in sims if s is not None) if sims else 0.5
    wc = results.get("wordcount")
    if wc is not None and wc.score is not None:
        base = 0.8 * base + 0.2 * min(1.0, -wc.score)
    return max(0.0, min(1.0, base))
