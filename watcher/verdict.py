"""Per-capture verdicts: measure statuses, overall status, change class, reason.

The overall status comes from the checks every profile shares (no content,
same payload, redirect stubs, HTTP errors, a recognised off-topic page kind:
soft 404, parked, suspended...), then from the profile's own question
(watcher/profiles.py), which applies a configurable policy over the voting
measures (any, all, k-of-n, weighted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from . import measures as ms
from .config import DoiConfig, EngineConfig
from .fingerprint import EXTRACT_FAILED, UNREADABLE, host_of, site_of
from .model import REDIRECT_STATUSES, ChangeClass, Fingerprint, MeasureResult, TopicStatus
from .wording import headed


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


def fmt(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2f}"


def fmt_vs(score: float, threshold: float) -> str:
    """``score`` with enough digits that it never reads equal to ``threshold``
    ("-0.9512 < -0.95", not "-0.95 < -0.95")."""
    text = fmt(score)
    if text == fmt(threshold) and score != threshold:
        text = f"{score:.4f}"
    return text


def fmt_below(score: float, line: float) -> str:
    """"score < line", the score with enough digits to differ from the line (:func:`fmt_vs`)."""
    return f"{fmt_vs(score, line)} < {fmt(line)}"


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


def decide(base: Fingerprint, cur: Fingerprint, results: Mapping[str, MeasureResult], cfg: EngineConfig,
           seed_url: str = "", profile: str | None = None, *, doi: str | None = None,
           expected_title: str | None = None, doi_params: DoiConfig | None = None, names: tuple[str, ...] = ()
           ) -> Decision:
    """Overall status, change class and reason of one compared capture.

    The checks every profile shares come first (no content, same payload,
    redirect stubs, HTTP errors, off-topic page kinds); then the profile
    answers its own question (watcher/profiles.py).  The ``doi`` profile
    answers all of it itself, against the watched ``doi`` and
    ``expected_title`` (the capture's) with the ``doi_params`` thresholds.
    ``names``: the site's other names it was judged on topic under
    (:func:`watcher.step.remember`), for the ``collection`` profile.
    """
    from . import profiles, textprofile

    prof = profile or cfg.profile
    if extraction_failed(cur):
        return Decision("error", "error", cur.error or "extraction failed", 0.0)
    if prof == "doi":  # the scholarly record, not the page: its own reading of errors, walls and redirects
        from .doi.profile import decide_doi

        return decide_doi(base, cur, cfg, expected_title, params=doi_params, doi=doi)
    if cur.is_empty and not cur.redirect:
        return Decision("empty", "empty", headed("no content", cur.error, "empty"), 0.0)
    if cur.digest == base.digest:
        return Decision("on-topic", "unchanged", "same payload as the baseline", 0.0)
    if cur.redirect:  # a stub, or an HTTP redirect with or without a body: judged by its target
        target = site_of(host_of(cur.redirect))
        home = site_of(base.host or cur.host)
        if target and home and target != home:
            return Decision("off-topic", "off-topic", f"redirects to another site: {cur.redirect}", 0.9, ("redirect",))
        if profiles.seed_kind(seed_url) == "page" and profiles.seed_kind(cur.redirect) == "site":
            # An article that now sends its readers to the home page or a section is gone (a moved
            # article redirects to its new address, not to the front page).
            where = "a section of the site" if profiles.is_section(cur.redirect) else "the site's home page"
            return Decision("off-topic", "off-topic", f"redirects to {where}: {cur.redirect} (the page "
                            "is gone)", 0.9, ("redirect",))
        what = f"HTTP {cur.http_status} redirect" if cur.http_status in REDIRECT_STATUSES else "redirect stub"
        return Decision("empty", "empty", f"{what} to {cur.redirect} (same site): its content is not "
                        "in this capture", 0.0)
    if cur.http_status in REDIRECT_STATUSES:
        # A redirect's body is the server's note ("Moved Permanently"), not the page: judged, a home
        # page that moved to https or www read as "site identity lost" at every crawl.
        return Decision("empty", "empty", f"HTTP {cur.http_status} redirect with no target recorded: its "
                        "content is not in this capture", 0.0)
    if cur.http_status is not None and cur.http_status >= 400:
        return Decision("off-topic", "off-topic", f"HTTP {cur.http_status}: an error page, not the page", 0.9,
                        ("http_error",))
    if cfg.page_kinds and cur.page_kind and cur.page_kind != base.page_kind:
        return Decision("off-topic", "off-topic", f"page kind {cur.page_kind} ({cur.page_kind_evidence})", 0.95,
                        ("page_kind",))
    if prof == "text":
        return textprofile.text(base, cur, results, cfg, seed_url)
    return profiles.collection(base, cur, results, cfg, seed_url, names)


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


