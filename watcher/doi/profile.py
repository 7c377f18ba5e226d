"""The ``doi`` profile: is the scholarly record still at the DOI's endpoint?

Whole-page similarity is the wrong question for a landing page: a platform
redesign replaces menus, footers and sidebars (whole-page containment falls
to 0.30-0.78 on real redesigns) while the article stays.  So this profile
compares the record (:class:`~watcher.model.ScholarlyRecord`) and names what
happened:

=============  ================================================================
``blocked``    a bot challenge or cookie wall stands in front of the page:
               nothing was observed, so it is never drift (retried later
               through the browser)
``gone``       404/410, a soft 404, a parked, expired or suspended domain, an
               empty answer
``error``      a server error (5xx, database error page): nothing observed
``replaced``   a different work (title and DOI gone, or the text gone), or a
               page with no scholarly record where one was
``drifted``    the same work, but its record changed: a replaced paragraph, an
               edited abstract, authors dropped, the DOI no longer shown
``moved``      the same record on a new domain (platform move or hijack: the
               domain change is the signal)
``layout``     the page changed, the record did not (a redesign)
``unchanged``  same bytes, or the same record and the same main text
=============  ================================================================

Checks, each with a reason in words: the DOI is still on the page
(``citation_doi``, ``dc.identifier``, JSON-LD, or the text); the title still
matches the registered title (or the baseline's) by rapidfuzz's token-set
ratio; the baseline's authors are still listed (family names); the baseline
abstract is contained (4-word shingles of the abstract in the current
abstract and main text); each long paragraph of the baseline's main text is
still there (a sample of its shingles in the current main text).  A PDF
landing page is compared by checksum, then by text.

The first capture of a DOI (no baseline yet) is read by :func:`first_doi`:
it becomes the baseline only when it is fit to be one (the step's
``unfit_reason``), is no bot challenge or cookie wall, and shows the
registered title.  Walls are ``blocked`` and never baselines: a wall as
baseline would make the real page, once seen, look ``replaced``.  Both
functions run inside the one scoring step (:meth:`watcher.engine.Engine.score_next`),
so the DOI monitor, the streaming watcher and ``compare --profile doi`` give
the same answer for the same capture.
"""

from __future__ import annotations

import re

from .. import measures as ms
from ..config import DoiThresholds, EngineConfig
from ..extract.record import author_key, shingle_hashes, words
from ..extract.scholarly import box_change
from ..fingerprint import site_of
from ..model import Capture, ChangeClass, Fingerprint, ScholarlyRecord
from ..profiles.base import BaseProfile, Case
from ..profiles.seedkind import Seed
from ..verdict import Decision
from ..wording import fmt, headed

GONE_KINDS = frozenset({"soft-404", "parked", "suspended", "defaced", "under-construction"})
ERROR_KINDS = frozenset({"database-error"})
AUTHORS_MIN_KEPT = 0.8
FULL_TEXT_GONE = 0.8  # share of the baseline's paragraphs gone at once that reads as "full text moved off the page"
PDF_SAME_TEXT = 0.90
_COOKIE_WALL = re.compile(
    r"(accept|agree to|allow) (all )?cookies|cookie (settings|preferences|consent|policy)|we (use|value) cookies|"
    r"consent to (the use of )?cookies|before you continue|manage (your )?(consent|privacy)|"
    r"privacy choices|(akzeptieren|alle akzeptieren)|tout accepter|aceptar (todas las )?cookies",
    re.I,
)
COOKIE_WALL_MAX_WORDS = 400


def _norm_title(t: str) -> str:
    return " ".join(words(t))


def title_similarity(a: str, b: str) -> float:
    """0..1 token-set similarity of two titles (case, punctuation, numbers and word order ignored):
    the one title comparison (:func:`watcher.measures.title_similarity`) over this profile's word
    keys.  A title missing on either side is no match here (0.0): the record's title is what a
    landing page is checked by."""
    sim = ms.title_similarity(_norm_title(a), _norm_title(b))
    return 0.0 if sim is None else sim


def cookie_wall(fp: Fingerprint) -> str | None:
    """Evidence that ``fp`` is a consent wall: a short page whose title or text asks for cookies."""
    if fp.word_count > COOKIE_WALL_MAX_WORDS:
        return None
    m = _COOKIE_WALL.search(fp.title) or _COOKIE_WALL.search((fp.text or "")[:4000])
    return m.group(0) if m else None


def _kept(sample: tuple[int, ...] | frozenset[int] | set[int], cur_full: frozenset[int] | set[int] | None,
          cur_sample: tuple[int, ...]) -> float | None:
    """Share of ``sample`` found in the current text: exact against the full
    shingle set; from two bottom-k samples, over the hashes both samples cover."""
    if not sample:
        return None
    if cur_full is not None:
        return sum(1 for h in sample if h in cur_full) / len(sample)
    if not cur_sample:
        return 0.0
    limit = max(cur_sample)
    covered = [h for h in sample if h <= limit]
    if not covered:
        return None
    cur = set(cur_sample)
    return sum(1 for h in covered if h in cur) / len(covered)


def _doi_on_page(doi: str, cur: Fingerprint, rec: ScholarlyRecord | None) -> bool:
    if rec is not None and (rec.doi == doi or doi in rec.body_dois):
        return True
    return doi in cur.dois or (cur.text is not None and doi in cur.text.lower())


def _doi_shown(doi: str | None, cur: Fingerprint, rec: ScholarlyRecord | None, base: Fingerprint,
               brec: ScholarlyRecord | None) -> bool | None:
    """Whether the page still shows ``doi``; ``None`` when there is no DOI to look for or the
    baseline never showed it: a DOI that was never on the page cannot have gone from it."""
    if not doi or not _doi_on_page(doi, base, brec):
        return None
    return _doi_on_page(doi, cur, rec)


def _pdf(base: Fingerprint, cur: Fingerprint) -> Decision:
    if cur.kind != "pdf":
        return Decision("off-topic", "replaced", f"the landing page was a PDF and is now {cur.kind}", 0.9)
    if base.shingles is not None and cur.shingles is not None and base.shingles:
        kept = len(base.shingles & cur.shingles) / len(base.shingles)
    else:
        from .. import measures as ms

        kept = ms.containment(base, cur, ms.Context()) or 0.0
    if kept >= PDF_SAME_TEXT:
        return Decision("on-topic", "layout", f"PDF checksum changed, text the same ({fmt(kept)} of the baseline's "
                        "text kept)", 0.1)
    if kept >= 0.3:
        return Decision("on-topic", "drifted", f"PDF text changed: {fmt(kept)} of the baseline's text kept", 0.4)
    return Decision("off-topic", "replaced", f"a different PDF: {fmt(kept)} of the baseline's text kept", 0.9)


def decide_doi(base: Fingerprint, cur: Fingerprint, cfg: EngineConfig, expected_title: str | None = None, *,
               params: DoiThresholds | None = None, doi: str | None = None) -> Decision:
    """Change class of ``cur`` against the baseline ``base`` under the doi profile.

    ``expected_title`` is the registered title (from the DOI list or import),
    preferred over the baseline's; ``doi`` the watched DOI, preferred over the
    baseline's ``citation_doi``; ``params`` the thresholds (``engine.doi``).
    ``cfg`` is the engine configuration the fingerprints were made with.
    """
    p = params or DoiThresholds()
    br, cr = base.record, cur.record
    # -- nothing observed, or nothing there ---------------------------------
    ref_title = expected_title or (br.title if br is not None and br.title else base.title)
    cur_title = cr.title if cr is not None and cr.title else cur.title
    title_sim = title_similarity(ref_title, cur_title) if ref_title else None
    record_here = title_sim is not None and title_sim >= p.title_min_similarity and cr is not None
    if cur.page_kind == "bot-challenge" and not record_here:
        return Decision("error", "blocked", f"bot challenge ({cur.page_kind_evidence}): not observed, retry through "
                        "the browser", 0.0)
    if cur.is_empty:
        return Decision("off-topic", "gone", headed("no content", cur.error, "empty answer"), 1.0)
    if cur.http_status in (404, 410) and not record_here:
        return Decision("off-topic", "gone", f"HTTP {cur.http_status}", 1.0)
    if cur.http_status is not None and (cur.http_status >= 500 or cur.http_status == 429) and not record_here:
        return Decision("error", "error", f"HTTP {cur.http_status}: not observed", 0.0)
    if cur.page_kind in ERROR_KINDS and not record_here:
        return Decision("error", "error", f"server error ({cur.page_kind_evidence}): not observed", 0.0)
    if cur.page_kind in GONE_KINDS and not record_here:
        return Decision("off-topic", "gone", f"page kind {cur.page_kind} ({cur.page_kind_evidence})", 1.0)
    if cur.digest == base.digest:
        return Decision("on-topic", "unchanged", "same digest as the baseline", 0.0)
    if base.kind == "pdf":
        return _pdf(base, cur)
    wall = None if record_here else cookie_wall(cur)
    if wall:
        return Decision("error", "blocked", f"cookie wall ({wall!r}): not observed, retry through the browser", 0.0)
    if br is None or not br.has_metadata:
        return _without_record(base, cur, p)
    if cr is None or not cr.has_metadata:
        return Decision("off-topic", "replaced", "no scholarly record on the page (no citation_*, Dublin Core or "
                        "schema.org metadata)" + (f"; title {cur.title[:80]!r}" if cur.title else ""), 0.9)
    # -- the record ------------------------------------------------------------
    the_doi = doi or br.doi
    doi_here = _doi_shown(the_doi, cur, cr, base, br)
    main_kept = _kept(br.main_sample, cr.main_shingles, cr.main_sample)
    ab_kept = None
    if br.abstract:
        cur_ab = shingle_hashes(words(cr.abstract))
        if cr.main_shingles is not None:
            cur_ab |= cr.main_shingles
        ab_kept = _kept(shingle_hashes(words(br.abstract)), cur_ab, ())
    title_ok = title_sim is None or title_sim >= p.title_min_similarity
    if not title_ok and not doi_here:
        why = f"a different work: title {cur_title[:80]!r} ({fmt(title_sim or 0.0)} like {ref_title[:80]!r})"
        if the_doi:
            why += f", DOI {the_doi} not on the page"
        return Decision("off-topic", "replaced", why, 0.9)
    if not title_ok and (ab_kept or 0.0) < 0.5 and (main_kept or 0.0) < p.main_min_containment:
        return Decision("off-topic", "replaced", f"a different work: title {cur_title[:80]!r} and the text changed "
                        f"(abstract {fmt(ab_kept or 0.0)}, main text {fmt(main_kept or 0.0)} kept)", 0.9)
    changes: list[str] = []
    if not title_ok:
        changes.append(f"title changed to {cur_title[:80]!r} ({fmt(title_sim or 0.0)} like {ref_title[:80]!r})")
    if doi_here is False:
        changes.append(f"DOI {the_doi} no longer on the page")
    if br.authors:
        bk = {author_key(a) for a in br.authors} - {""}
        ck = {author_key(a) for a in cr.authors} - {""}
        text = (cur.text or "").lower()
        kept = [k for k in bk if k in ck or (not ck and k in text)]
        if bk and len(kept) / len(bk) < AUTHORS_MIN_KEPT:
            lost = sorted(bk - set(kept))
            changes.append(f"authors dropped: {', '.join(lost[:5])} ({len(kept)} of {len(bk)} kept)")
    if ab_kept is not None and ab_kept < p.abstract_min_containment:
        changes.append(f"abstract edited ({fmt(ab_kept)} of its text kept)")
    notes: list[str] = []
    if br.paragraphs and cr.main_shingles is not None:
        changed = [i for i, para in enumerate(br.paragraphs, 1)
                   if (_kept(para, cr.main_shingles, ()) or 0.0) < p.paragraph_min_containment]
        if len(changed) >= FULL_TEXT_GONE * len(br.paragraphs) and len(br.paragraphs) > 0 and not changes:
            # Title, DOI, authors and abstract stayed, the body went as a whole: a
            # redesign that moved the full text off the landing page, not an edit.
            notes.append(f"full text no longer on the landing page ({len(changed)} of {len(br.paragraphs)} "
                         "paragraphs elsewhere)")
        elif changed:
            where = ", ".join(str(i) for i in changed[:5]) + ("..." if len(changed) > 5 else "")
            changes.append(f"{len(changed)} of {len(br.paragraphs)} paragraphs changed (paragraph {where})")
    if changes:
        if main_kept is not None:
            changes.append(f"main text {fmt(main_kept)} kept")
        return Decision("on-topic", "drifted", "; ".join(changes), 0.5)
    boxes = box_change(br.boxes, cr.boxes)
    if boxes:
        notes.insert(0, boxes)
    if the_doi and doi_here is None and not _doi_on_page(the_doi, cur, cr):
        notes.append(f"evidence: the page does not show its DOI {the_doi}, nor did the baseline")
    bs, cs = site_of(base.host), site_of(cur.host)
    if bs and cs and bs != cs:
        return Decision("on-topic", "moved", f"same record on a new domain: {base.host} -> {cur.host}", 0.3)
    if br.main_digest == cr.main_digest and br.abstract == cr.abstract and not boxes:
        return Decision("on-topic", "unchanged", "same record and main text; the page around them changed"
                        + "".join(f"; {n}" for n in notes), 0.0)
    return Decision("on-topic", "layout", "the page changed, the record did not (title, DOI, authors and abstract "
                    f"kept; main text {fmt(main_kept if main_kept is not None else 1.0)} kept)"
                    + "".join(f"; {n}" for n in notes), 0.1)


def first_doi(fp: Fingerprint, unfit: str | None, expected_title: str | None,
              params: DoiThresholds | None = None) -> Decision:
    """The change class of a DOI's capture when it has no baseline yet.

    ``unfit`` is why the capture cannot be a baseline (``None``: it can).
    Change ``baseline`` means it becomes the baseline; anything else leaves
    the DOI without one, so the next capture is read as a first one again."""
    p = params or DoiThresholds()
    if fp.page_kind == "bot-challenge":
        return Decision("error", "blocked", f"bot challenge ({fp.page_kind_evidence}): not observed, retry through "
                        "the browser", 0.0)
    if fp.is_empty:
        return Decision("off-topic", "gone", headed("no content", fp.error, "empty answer") + "; no baseline yet", 1.0)
    shown = fp.record.title if fp.record is not None and fp.record.title else fp.title
    sim = title_similarity(expected_title, shown) if expected_title else None
    has_record = fp.record is not None and fp.record.has_metadata
    wall = None if has_record and (sim is None or sim >= p.title_min_similarity) else cookie_wall(fp)
    if wall:
        return Decision("error", "blocked", f"cookie wall ({wall!r}): not observed, retry through the browser", 0.0)
    if fp.http_status in (404, 410) or fp.page_kind in GONE_KINDS:
        what = f"HTTP {fp.http_status}" if fp.http_status in (404, 410) else f"page kind {fp.page_kind}"
        return Decision("off-topic", "gone", f"{what}; no baseline yet", 1.0)
    if unfit is not None:
        return Decision("error", "error", f"not fit to be a baseline ({unfit}); waiting for one", 0.0)
    if expected_title and fp.kind != "pdf" and sim is not None and sim < p.title_min_similarity:
        return Decision("off-topic", "replaced", f"the landing page shows {shown[:80]!r}, not the registered title "
                        f"{expected_title[:80]!r}", 0.9)
    return Decision("on-topic", "baseline", "first observed record: the baseline", 0.0)


def _without_record(base: Fingerprint, cur: Fingerprint, p: DoiThresholds) -> Decision:
    """A baseline without scholarly metadata: compare main texts when there
    are any, else whole-page text, as the plain verdict's containment does."""
    from .. import measures as ms

    br, cr = base.record, cur.record
    kept = _kept(br.main_sample, cr.main_shingles, cr.main_sample) if br and cr else None
    if kept is None:
        kept = ms.containment(base, cur, ms.Context())
    if kept is None:
        return Decision("on-topic", "layout", "the baseline has no scholarly record or text to compare", 0.1)
    if kept >= 0.95:
        return Decision("on-topic", "layout", f"no scholarly record; main text {fmt(kept)} kept", 0.1)
    if kept >= p.main_min_containment:
        return Decision("on-topic", "drifted", f"no scholarly record; main text changed ({fmt(kept)} kept)", 0.5)
    return Decision("off-topic", "replaced", f"no scholarly record; main text replaced ({fmt(kept)} kept)", 0.9)


class DoiProfile(BaseProfile):
    """Is the scholarly record still at the DOI's endpoint?  It reads errors, walls and redirects
    of a landing page its own way (``own_checks``), compares the record (``reads_record``: the
    baseline keeps it), and reads a first capture itself (:func:`first_doi`)."""

    name = "doi"
    alert_classes: tuple[ChangeClass, ...] = ("drifted", "replaced", "gone", "moved")
    own_checks = True
    reads_record = True

    def main_content(self, seed: Seed) -> bool:
        return False  # the record reads the main text itself; the page stays whole

    def decide(self, case: Case) -> Decision:
        cap = case.capture
        return decide_doi(case.base, case.cur, case.cfg, cap.expected_title if cap else None,
                          params=_params(case.params), doi=cap.doi if cap else None)

    def first(self, fp: Fingerprint, unfit: str | None, capture: Capture, params: object | None) -> Decision | None:
        d = first_doi(fp, unfit, capture.expected_title, _params(params))
        return None if d.change == "baseline" else d


def _params(params: object | None) -> DoiThresholds | None:
    return params if isinstance(params, DoiThresholds) else None


PROFILE = DoiProfile()
