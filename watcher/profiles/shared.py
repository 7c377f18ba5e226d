"""The checks every profile shares, and the one place a profile is asked for a verdict.

:func:`checks` reads what no profile's question changes: no content, the same payload, a redirect
(to another site, or an article sent to the home page), an HTTP error or redirect status, an
off-topic page kind.  A profile calls them through :func:`judge` unless it declares that it
replaces them (``own_checks``: the ``doi`` profile, which reads errors, walls and redirects of a
landing page its own way).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import measures as ms
from ..fingerprint import host_of, site_of
from ..model import REDIRECT_STATUSES, Fingerprint, MeasureResult
from ..verdict import Decision, extraction_failed, policy_flags, scored
from ..wording import fmt, fmt_vs, headed
from .seedkind import Seed

if TYPE_CHECKING:
    from ..config import EngineConfig
    from .base import Case, Profile


def judge(profile: Profile, case: Case) -> Decision:
    """The verdict on ``case`` under ``profile``: a capture that could not be read is an error under
    every profile; then the shared checks (unless the profile replaces them), then the profile."""
    cur = case.cur
    if extraction_failed(cur):
        return Decision("error", "error", cur.error or "extraction failed", 0.0)
    if not profile.own_checks:
        shared = checks(case.base, cur, case.seed, case.cfg)
        if shared is not None:
            return shared
    return profile.decide(case)


def checks(base: Fingerprint, cur: Fingerprint, seed: Seed, cfg: EngineConfig) -> Decision | None:
    """The verdict the shared checks give, or ``None`` when the profile's own question decides."""
    if cur.is_empty and not cur.redirect:
        return Decision("empty", "empty", headed("no content", cur.error, "empty"), 0.0)
    if cur.digest == base.digest:
        return Decision("on-topic", "unchanged", "same payload as the baseline", 0.0)
    if cur.redirect:  # a stub, or an HTTP redirect with or without a body: judged by its target
        target = site_of(host_of(cur.redirect))
        home = site_of(base.host or cur.host)
        if target and home and target != home:
            return Decision("off-topic", "off-topic", f"redirects to another site: {cur.redirect}", 0.9, ("redirect",))
        to = Seed.of(cur.redirect) if seed.kind == "page" else None
        if to is not None and to.kind == "site":
            # An article that now sends its readers to the home page or a section is gone (a moved
            # article redirects to its new address, not to the front page).
            where = "a section of the site" if to.section else "the site's home page"
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
    return None


def measure_reasons(results: Mapping[str, MeasureResult], cfg: EngineConfig,
                     abstain: frozenset[str] = frozenset()) -> tuple[bool, list[str]]:
    flagged_by_policy, flagged = policy_flags(results, cfg, abstain)
    reasons = []
    for r in flagged:
        spec = ms.get(r.name)
        op = "<" if spec.direction == "below" else ">"
        reasons.append(f"{r.name} {fmt_vs(r.score or 0.0, r.threshold or 0.0)} {op} {fmt(r.threshold or 0.0)}")
    return flagged_by_policy, reasons if flagged_by_policy else []


# The HTML kept its size: it lost less than the byte-count measure's own published line (-0.43,
# OTMT's default) marks as a page that shrank.
HTML_KEPT_BYTES = -0.43


def extraction_collapse(results: Mapping[str, MeasureResult], base: Fingerprint, cur: Fingerprint) -> str | None:
    """Why the word-count vote is set aside, or ``None``: the text collapsed while the HTML kept its
    size.  A page that lost its content loses its markup with it (every word-count flag on the shared
    gold that was right came with bytes down 55 % or more); words gone from HTML of the same size
    were not read (a script shows them, or markup the parser reads otherwise: gold's 522, 449 words
    then 20 from 23 kB of HTML that still holds them).  That is a failure of the extraction, not
    drift: the word count must not call it off topic on its own; the other measures still vote."""
    wc = results.get("wordcount")
    if wc is None or wc.score is None or wc.status != "off-topic":
        return None  # no collapse by the word count's own line
    bc = similarity(results, "bytecount", base, cur)
    if bc is None or bc < HTML_KEPT_BYTES:
        return None
    return (f"wordcount {fmt(wc.score)} set aside: the text collapsed while the HTML kept its size (bytes "
            f"{fmt(bc)} >= {fmt(HTML_KEPT_BYTES)}), an extraction failure, not drift")


def similarity(results: Mapping[str, MeasureResult], name: str, base: Fingerprint, cur: Fingerprint) -> float | None:
    """A measure's score, reusing the result when it was configured."""
    s = scored(results, name)
    if s is None and name not in results:
        spec = ms.get(name)
        s = spec.fn(base, cur, ms.Context()) if ms.applicable(spec, base, cur) else None
    return s
