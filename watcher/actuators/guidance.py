"""From a seed report to a guidance recommendation (or none).

Why prioritise rather than stop: Schäfer and Bildhauer found that a seed's
yield of good documents predicts the yield of a crawl from it, but that a
binary download decision on a text-quality score alone is poor (F1 0.32).  So
a seed with a low yield is *deprioritised* (served after the others), not
dropped; a stop stays the job of the off-topic run in
:mod:`watcher.recommend`.  A seed whose report carries a recrawl interval
gets that interval as advice instead.  Too few captures are no evidence: no
advice below ``actuator.guidance_min_captures``.

Ids are stable while the advice stands (the action and the SURT prefix; for
a recrawl interval, also the interval rounded to a day, or a tenth of a day
under two days), so a seed report re-published after every verdict yields the
same id and the actuator acts once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

from ..recommend import GuidanceRecommendation, Recommendation, RecommendationAction
from .settings import ActuatorConfig


class SeedReportLike(Protocol):
    """The attributes of ``watcher.seeds.report.SeedReport`` that guidance reads."""

    @property
    def seed(self) -> str: ...

    @property
    def surt(self) -> str: ...

    @property
    def captures(self) -> int: ...

    @property
    def yield_(self) -> float | None: ...

    @property
    def new_text_per_byte(self) -> float | None: ...

    @property
    def badness(self) -> float | None: ...

    @property
    def boilerplate_share(self) -> float | None: ...

    @property
    def change_rate_per_day(self) -> float | None: ...

    @property
    def change_rate_low(self) -> float | None: ...

    @property
    def change_rate_high(self) -> float | None: ...

    @property
    def recrawl_interval_days(self) -> float | None: ...

    @property
    def blocked_share(self) -> float | None: ...

    @property
    def error_share(self) -> float | None: ...


EVIDENCE_KEYS = ("captures", "yield", "new_text_per_byte", "badness", "boilerplate_share", "change_rate_per_day",
                 "change_rate_low", "change_rate_high", "recrawl_interval_days", "blocked_share", "error_share")


def evidence_of(report: SeedReportLike, verdicts: Sequence[str] = ()) -> dict[str, object]:
    """The report's figures (``yield`` for ``yield_``) and the verdict ids behind them."""
    out: dict[str, object] = {k: getattr(report, "yield_" if k == "yield" else k, None) for k in EVIDENCE_KEYS}
    out["verdicts"] = list(verdicts)
    return out


def _rounded_interval(days: float) -> str:
    return f"{days:.1f}" if days < 2 else f"{round(days):d}"


def deprioritise_what_to_do(seed: str, surt: str, job: str | None, crawler: str | None, cfg: ActuatorConfig) -> str:
    """What the operator of the crawler that captured the seed does (all three when unknown)."""
    job_name = job or "JOB"
    heritrix = (
        f"Heritrix: pause job {job_name}, run a script that calls "
        f"sheetOverlaysManager.putSheetOverlay('{cfg.heritrix_overlay_sheet}', '{cfg.heritrix_overlay_target}', "
        f"{cfg.heritrix_overlay_value}) and addSurtAssociation('{surt}', '{cfg.heritrix_overlay_sheet}'), unpause "
        f"(the heritrix actuator with act_on deprioritise-seed sends exactly this)"
    )
    brozzler = (f"Brozzler: divide the priority of the queued pages of the site whose seed is {seed} "
                f"(pages table, index priority_by_site) by {cfg.brozzler_priority_divisor}")
    browsertrix = ("Browsertrix (no priorities): if the yield warrants dropping the host, add an exclusion "
                   "for it to the running crawl")
    kind = (crawler or "").lower()
    if kind.startswith("heritrix"):
        return heritrix
    if kind.startswith(("brozzler", "warcprox")):
        return brozzler
    if kind.startswith("browsertrix"):
        return browsertrix
    return ". ".join((heritrix, brozzler, browsertrix))


def guidance_id(action: str, surt: str, interval_days: float | None = None) -> str:
    key = f"{action}|{surt}" + (f"|{_rounded_interval(interval_days)}" if interval_days is not None else "")
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def guidance_for(
    report: SeedReportLike,
    cfg: ActuatorConfig,
    *,
    verdicts: Sequence[str] = (),
    job: str | None = None,
    crawler: str | None = None,
    site_id: str | None = None,
    crawl_id: str | None = None,
) -> GuidanceRecommendation | None:
    """A ``deprioritise-seed`` or ``recrawl-interval`` recommendation for the report's seed, or ``None``.

    ``verdicts`` are the ids of the verdicts the report was computed from
    (the report may carry them as ``verdict_ids`` instead).
    """
    if report.captures < cfg.guidance_min_captures:
        return None
    ids = tuple(verdicts) or tuple(getattr(report, "verdict_ids", ()) or ())
    evidence = evidence_of(report, ids)
    yield_ = report.yield_
    action: RecommendationAction
    if yield_ is not None and yield_ < cfg.deprioritise_below_yield:
        action, interval = "deprioritise-seed", None
        badness = f", Badness {report.badness:.2f}" if report.badness is not None else ""
        reason = (f"yield {yield_:.2f} below {cfg.deprioritise_below_yield:.2f} over {report.captures} captures"
                  f"{badness}: serve this seed's host after the others")
        todo = deprioritise_what_to_do(report.seed, report.surt, job, crawler, cfg)
    elif report.recrawl_interval_days is not None:
        action, interval = "recrawl-interval", report.recrawl_interval_days
        rate = report.change_rate_per_day
        band = ""
        if rate is not None:
            band = f"; text changes {rate:.3f}/day"
            if report.change_rate_low is not None and report.change_rate_high is not None:
                band += f" (band {report.change_rate_low:.3f}-{report.change_rate_high:.3f})"
        reason = f"revisit every {interval:.1f} days{band}, over {report.captures} captures"
        todo = f"schedule the next crawls of {report.seed} every {interval:.1f} days"
    else:
        return None
    return Recommendation(
        id=guidance_id(action, report.surt, interval),
        history=report.surt,
        seed=report.seed,
        job=job,
        crawler=crawler,
        since=datetime.now(UTC),
        captures=ids,
        page_kind=None,
        reason=reason,
        what_to_do=todo,
        surt_prefix=report.surt,
        action=action,
        site_id=site_id,
        evidence=evidence,
        recrawl_interval_days=interval,
        crawl_id=crawl_id,
    )
