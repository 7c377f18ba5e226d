"""The ``collection`` profile: is the capture still on the topic the curator chose?

The default, for curators.  A news site's home page that shows today's stories is on topic; a
parked domain, an error page, a site handed to another owner, or a deep page whose article was
replaced by another one is not.  What a seed stands for depends on what it is
(:class:`watcher.profiles.seedkind.Seed`): a home page stands for the organisation, a section for
what it lists, a deep page for its subject (:mod:`watcher.profiles.subject`).

What its history remembers (:func:`remember`): the names a site was judged on topic under since
its baseline (a rename, a second language), so that a later capture under that name keeps its
identity.  Its alerts: off-topic captures only (on gold 64 % of captures are "drifted": home pages
with new stories).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import measures as ms
from ..model import ChangeClass, Fingerprint, MeasureResult, Verdict
from ..state import HistoryState
from ..text import normalise
from ..verdict import Decision, scored
from ..wording import fmt, fmt_below
from .base import BaseProfile, Case
from .seedkind import Seed
from .shared import extraction_collapse, measure_reasons, similarity
from .subject import (
    SUBJECT_TITLE,
    TEXT_REPLACED,
    TEXT_REPLACED_COSINE,
    is_root,
    page_subject,
    title_subject,
)

if TYPE_CHECKING:
    from ..config import EngineConfig

# Site identity lost: the title lost most of the baseline title's words AND the
# text shares almost nothing.  Two independent signals, so that a redesign by
# the same organisation (same name in the title) or new stories (new words,
# same name) are not flagged.
IDENTITY_TITLE = 0.50
IDENTITY_COSINE = 0.10
# A deep page's subject replaced (with SUBJECT_TITLE): the text shares little with the baseline.
SUBJECT_COSINE = 0.90
# On topic, how much of the baseline's text must remain for "minor" rather than
# "drifted".
DRIFT_CONTAINMENT = 0.80
# What the history remembers: a site's newest names besides its baseline's (a rename, a second
# language), each cut to this much UTF-8 (a site's name fits; the state stays <= 2 kB per URL).
NAMES_KEPT = 2
NAME_MAX_BYTES = 64


def known_name(names: tuple[str, ...], cur: Fingerprint) -> tuple[float, str] | None:
    """The best title similarity of ``cur`` to a name the site was judged on topic under since its
    baseline (:func:`remember`), and that name; None without one."""
    if not names or not cur.title_key:
        return None
    return max((ms.title_similarity(n, cur.title_key) or 0.0, n) for n in names)


def collection(base: Fingerprint, cur: Fingerprint, results: Mapping[str, MeasureResult], cfg: EngineConfig,
               seed: Seed, names: tuple[str, ...] = ()) -> Decision:
    """Is the capture still on the topic the curator chose?  ``names``: the site's other names it
    was judged on topic under since the baseline."""
    reasons: list[str] = []
    checks: list[str] = []
    cos = similarity(results, "cosine", base, cur)
    title = similarity(results, "title", base, cur)
    # An organisation renames or translates its site: a name it was judged on topic under since the
    # baseline (by its text) is its name too, so the identity test and the kept-name rule read the
    # capture's title against it where the baseline's title no longer matches.
    named, renamed = base.title_key, False
    best = known_name(names, cur) if title is not None and title < IDENTITY_TITLE else None
    if best is not None and best[0] >= IDENTITY_TITLE:
        (title, named), renamed = best, True
    # A capture without a title is no evidence that the name was lost (frames, script-built pages,
    # bot walls without a <title>): the identity check needs a title on both sides.
    identity_lost = cfg.site_identity and cur.kind != "binary" and title is not None and cos is not None \
        and bool(cur.title.strip()) and title < IDENTITY_TITLE and cos < IDENTITY_COSINE
    kind = seed.kind
    unnamed = False  # a deep page whose titles and headings name no subject: "same subject" is not known
    # The page's name kept: a home page's title (the organisation), a deep page's subject line.  A
    # home page's title words of its own count, not a platform's or the site's name beside them: a
    # Facebook page's "We are all Khaled Said | Facebook" and the front door "Welcome to Facebook -
    # Log In, Sign Up or Learn More" share "Facebook" (title similarity 0.5 and more).
    name_kept = kind == "site" and cfg.site_identity and title is not None and title >= IDENTITY_TITLE
    if name_kept:
        own = title_subject(named, cur.title_key, base.host or cur.host)
        name_kept = own is None or own >= SUBJECT_TITLE
    # A deep page stands for its subject: another article of the site under its address is "page
    # replaced", asked first; its new headline and text also fail the identity test, which would
    # call it "site identity lost" although the site is the same.  Identity speaks where the
    # subject rule does not (a home page; a deep page that nothing names).
    section = kind == "site" and seed.section
    if (kind == "page" or section) and cfg.page_subject and cos is not None:
        host = base.host or cur.host
        cont = similarity(results, "containment", base, cur)
        another_text = cont is not None and cont < TEXT_REPLACED and cos < TEXT_REPLACED_COSINE
        named_by, subj = page_subject(base, cur, host, seed.url, another_text)
        if section and named_by == "heading":
            subj = None  # a section's first heading is its top story's, not its name
        if kind == "page":
            unnamed = subj is None
            name_kept = subj is not None and subj >= 1.0
        elif subj is not None and subj >= 1.0:
            name_kept = True
        # The text changed: by the cosine, or by as much as the "drifted" class means (a page whose
        # boilerplate outweighs its article keeps a high cosine when the article is replaced).
        changed = cos < SUBJECT_COSINE or (cont is not None and cont < DRIFT_CONTAINMENT)
        if section:
            # A section renews its list at every crawl: its text says another page only where it
            # shares little, by the "another text" line (a retitled section keeps its beat's words).
            changed = cos < TEXT_REPLACED_COSINE
        if subj is not None and subj < SUBJECT_TITLE and changed:
            checks.append("replaced")
            how = (f"cosine {fmt_below(cos, SUBJECT_COSINE)}" if cos < SUBJECT_COSINE else
                   f"containment {fmt_below(cont or 0.0, DRIFT_CONTAINMENT)}")
            if named_by == "address":
                home = "the site's home page, " if is_root(cur.address) else ""
                reasons.append(f"page replaced: the page declares another address ({home}{cur.address}; the "
                               f"baseline {base.address}), the titles name no subject ({how})")
            else:
                reasons.append(f"page replaced: another subject under the same address ({named_by} words kept "
                               f"{fmt_below(subj, SUBJECT_TITLE)}, {how})")
        # (a section renews its text: only what names its subject, the title, headline or address, speaks)
        elif kind == "page" and subj is not None and subj >= 1.0 and cont is not None and cont < TEXT_REPLACED \
                and cos < IDENTITY_COSINE:
            # The same declared address, or the same subject line, over a text that shares almost
            # nothing (the identity line): a renewed section or live blog keeps its topic's words; a
            # site that declares whatever address was asked for, or titles every page alike (its
            # name and a tagline), serves another article under it.
            checks.append("replaced")
            under, why = (("the address the page still declares", "the titles name no subject") if named_by == "address"
                          else (f"the {named_by} the page still carries", f"{named_by} words kept {fmt(subj)}"))
            reasons.append(f"page replaced: another text under {under} (containment "
                           f"{fmt_below(cont, TEXT_REPLACED)}, cosine {fmt_below(cos, IDENTITY_COSINE)}; {why})")
        elif kind == "page" and (bool(base.title.strip() and cur.title.strip()) if subj is None else subj < 1.0) \
                and cont is not None and cont < TEXT_REPLACED and cos < TEXT_REPLACED_COSINE:
            # The titles name no subject (some sites title every page with their name), or the subject
            # line changed but kept words (a shared template: "Egypt Live Blog" then "Syria Live
            # Blog"): the text decides, by the text profile's own test for "another text".  A
            # missing title stays no evidence; an unchanged subject line keeps the page on topic.
            checks.append("replaced")
            why = "the titles name no subject" if subj is None else f"{named_by} words kept {fmt(subj)}"
            reasons.append(f"page replaced: another text under the same address (containment "
                           f"{fmt_below(cont, TEXT_REPLACED)}, cosine "
                           f"{fmt_below(cos, TEXT_REPLACED_COSINE)}; {why})")
    if identity_lost and not checks:
        checks.append("identity")
        reasons.append(f"site identity lost: title similarity {fmt_below(title or 0.0, IDENTITY_TITLE)} and "
                       f"cosine {fmt_below(cos or 0.0, IDENTITY_COSINE)}")
    # Under a kept name, new topic words are the news (a home page's stories, a live blog's updates),
    # not another page: the top-term measures do not vote there.  Loss of the text (wordcount) still
    # does, and a page kind, an error or a redirect was read before.
    abstain = ms.TOPIC_WORD_MEASURES if name_kept else frozenset()
    collapsed = extraction_collapse(results, base, cur)
    if collapsed is not None:
        abstain = abstain | {"wordcount"}
    off_policy, m_reasons = measure_reasons(results, cfg, abstain)
    if checks or off_policy:
        return Decision("off-topic", "off-topic", "; ".join(reasons + m_reasons), 0.9, tuple(checks))
    # Say why a measure shown as off topic did not decide (the reader sees its status in the table).
    would, set_aside = measure_reasons(results, cfg, abstain - ms.TOPIC_WORD_MEASURES) if name_kept else (False, [])
    aside = (f"; {', '.join(set_aside)} set aside: the {'title' if kind == 'site' else 'subject line'} is "
             "kept, new top words are news" if would else "")
    if collapsed is not None:
        aside += f"; {collapsed}"
    cont = similarity(results, "containment", base, cur)
    doi_r = scored(results, "doi")
    what = "section" if section else "home page" if kind == "site" else "page"
    if renamed:
        what += " under a name it took since the baseline"
    if doi_r is not None and doi_r < 1.0:
        return Decision("on-topic", "drifted", f"on topic; DOI lost ({fmt(doi_r)} of the baseline's kept){aside}", 0.4)
    if cont is not None and cont < DRIFT_CONTAINMENT:
        if kind == "site":
            how = "same site, text replaced" if cont < TEXT_REPLACED else "same site, text changed"
        else:
            change = "text rewritten" if cont < TEXT_REPLACED else "text changed"
            how = f"{change}, no title or heading names its subject" if unnamed else f"same subject, {change}"
        return Decision("on-topic", "drifted",
                        f"on topic ({what}: {how}; containment {fmt_below(cont, DRIFT_CONTAINMENT)}{aside})", 0.3)
    return Decision("on-topic", "minor", f"on topic ({what}: small change"
                    + (f", containment {fmt(cont)}" if cont is not None else "") + f"{aside})", 0.1)


def remember(state: HistoryState, v: Verdict, seed: Seed) -> HistoryState:
    """``state`` after ``v``: a site's title it was judged on topic under, when that title is not its
    baseline's, becomes one of its names (:data:`NAMES_KEPT`, the newest last); the same object
    when nothing changes, so that an unchanged state is not written back.

    Only verdicts judged against a baseline count (an error page before any baseline is no seed
    state), and only a site's (a home page, a section, a profile on a platform), whose title names
    the organisation; a deep page's title names an article, and its rules read the subject line
    instead (:func:`watcher.profiles.subject.page_subject`)."""
    if not seed.site or v.baseline_time is None or v.status != "on-topic" or v.change == "baseline" \
            or not v.title.strip():
        return state
    ref = state.reference_at(v.capture_time)
    if ref is None:
        return state
    # the verdict's own title measure when it was scored (reported by default); the one title comparison else
    scored_title = v.measures.get("title")
    sim = scored_title.score if scored_title is not None and scored_title.score is not None \
        else ms.title_similarity(ref.fingerprint.title_key, normalise(v.title))
    if sim is None or sim >= IDENTITY_TITLE:
        return state  # the baseline's name kept, or no baseline title to tell a rename by
    key = normalise(v.title).encode()[:NAME_MAX_BYTES].decode("utf-8", "ignore").strip()
    if not key or key in state.names:
        return state
    return dataclasses.replace(state, names=(*state.names, key)[-NAMES_KEPT:])


class CollectionProfile(BaseProfile):
    """Is the capture still on the topic the curator chose?"""

    name = "collection"
    alert_classes: tuple[ChangeClass, ...] = ("off-topic",)

    def main_content(self, seed: Seed) -> bool:
        # a deep seed stands for its article, and two articles of one site share the menus around
        # them; a home page stands for the site, menus and all (removal measured to hurt there)
        return seed.kind == "page"

    def decide(self, case: Case) -> Decision:
        names = case.state.names if case.seed.site else ()
        return collection(case.base, case.cur, case.results, case.cfg, case.seed, names)

    def remember(self, state: HistoryState, verdict: Verdict, seed: Seed) -> HistoryState:
        return remember(state, verdict, seed)


PROFILE = CollectionProfile()
