"""The subject test both page profiles share: what names a page's subject (its title's own words,
its headline, its first heading, the address it declares) and whether a capture keeps it.

The ``collection`` profile asks it of a deep page or a section (another article under the seed's
address is off topic); the ``text`` profile asks it where most of the text is gone (another
document, or the same words in other sentences).  One module, so that the two read a subject alike.
"""

from __future__ import annotations

import functools
import re

from ..fingerprint import address_key
from ..model import Fingerprint
from ..text import title_segments
from .seedkind import INDEX_PAGE

# A deep page's subject replaced: its title's own words (the part that is not
# the site's name) changed AND the text shares little with the baseline.
SUBJECT_TITLE = 0.50
# A title of this many words or fewer reads as a name ("بوابة الأهرام", "CNN Arabic"), not as a
# headline; a first-level heading needs more to read as one (fingerprint: three or more).
NAME_MAX_WORDS = 3
# Another text: containment below TEXT_REPLACED and cosine below TEXT_REPLACED_COSINE (the text
# profile's "text replaced", the collection profile's "page replaced" where no title names a subject).
TEXT_REPLACED = 0.20
TEXT_REPLACED_COSINE = 0.30


def _names_site(segment: str, host: str) -> bool:
    """A short title segment that spells the host's name ("Ahram Online" on
    english.ahram.org.eg, "AlJazeera" on aljazeera.net) names the site, not a
    subject: some of its words are in the host's name and at most one is not
    ("Amnesty condemns arrests" on amnesty.org names a subject)."""
    labels = [x for x in host.lower().split(".") if len(x) >= 4 and x not in ("www", "blogspot", "wordpress")]
    squashed = re.sub(r"[\W_]+", "", segment.lower())
    words = [re.sub(r"[\W_]+", "", w) for w in segment.lower().split()]
    words = [w for w in words if len(w) > 2]
    if squashed and squashed == re.sub(r"[\W_]+", "", host.lower().removeprefix("www.")):
        return True  # the address itself ("AL.com" on al.com)
    if not labels or len(squashed) < 4 or not words:
        return False
    if any(squashed in lab for lab in labels):  # the whole segment is (part of) the host's name
        return True
    own = [w for w in words if any(w in lab or lab in w for lab in labels)]
    return bool(own) and len(words) - len(own) <= 1


@functools.lru_cache(maxsize=1024)
def _own_segments(base: str, cur: str, host: str
                  ) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The baseline title's segments that do not name the site, each title's segments that the
    other does not share, and the capture's that it shares.  Cached: a capture's subject may read
    the two titles twice (the title, then whether the capture's title names anything of its own)."""
    bs, cs = title_segments(base), title_segments(cur)
    if host:
        bs = [s for s in bs if not _names_site(s, host)]
        cs = [s for s in cs if not _names_site(s, host)]
    return (tuple(bs), tuple(s for s in bs if s not in cs), tuple(s for s in cs if s not in bs),
            tuple(s for s in cs if s in bs))


def title_subject(base: str, cur: str, host: str = "") -> float | None:
    """Similarity of the titles' own words: the segments that name the site
    and the segments the two titles share (a section, "Home") are set aside,
    so "Live blog: protests | Ahram Online" against "Syria talks | Ahram
    Online" compares the subjects only, and a headline kept under a new title
    template ("Egypt protests - Al Jazeera English", then "Egypt protests |
    News | Al Jazeera") is not read as another subject.  ``None`` when the
    titles are no evidence: one is missing, or the baseline's names only the
    site (every page of some sites has the one title "Ahram Online").
    ``base`` and ``cur`` are title keys (:attr:`Fingerprint.title_key`,
    normalised once per fingerprint), so "الأهرام" and "الاهرام" are one
    segment."""
    if not base.strip() or not cur.strip():
        return None  # no title on one side: no evidence either way
    from rapidfuzz.fuzz import token_set_ratio

    bs, b_own, c_own, kept = _own_segments(base, cur, host)
    if not bs:
        return None  # the baseline's title names the site alone
    if not b_own:  # same title (same subject), or the baseline's is all labels the capture repeats
        return 1.0 if not c_own else None
    head = max(bs, key=len)
    if head not in b_own and len(head.split()) > NAME_MAX_WORDS \
            and all(len(s.split()) <= NAME_MAX_WORDS for s in (*b_own, *c_own)):
        # The baseline's headline is kept and only short labels changed (an article moved to another
        # section, "BBC News - Middle East - <headline>" then "<headline> - BBC News"): no evidence
        # of another subject, as a new template is not.  A shared label ("Live blog | Egypt" then
        # "Live blog | Syria") is no headline: its subjects are compared below.
        return None
    if not c_own:
        # Nothing of its own in the capture's title.  With only the site's name left, the subject is
        # gone from it.  Keeping some of the baseline's segments, the title dropped labels or the
        # subject, and which one no rule can tell: "Mubarak trial | Middle East | Al Jazeera" then
        # "Mubarak trial | Al Jazeera" is a section label dropped by a new template, not another
        # subject.  No evidence: the text decides, as where the titles name no subject.
        return None if kept else 0.0
    b_head, c_head = max(b_own, key=len), max(c_own, key=len)
    if len(c_head.split()) <= NAME_MAX_WORDS < len(b_head.split()) and set(c_head.split()) < set(b_head.split()):
        # The capture's title keeps a few of the headline's words and no more ("Egypt | Al Jazeera"
        # after "Egypt's army takes control | Al Jazeera"): a section's name, or a shortened
        # headline.  The token-set ratio calls any subset the same subject (1.0); no evidence
        # either way, the text decides.
        return None
    # Each title's longest segment of its own is its subject: the headline is the long one wherever
    # the template puts it ("News | <headline> | Site"), and section names padded in ("Latest News
    # | Breaking News UK" against "Celebs | Showbiz and TV") would dilute two headlines into a match
    # if all were joined.
    return float(token_set_ratio(b_head, c_head)) / 100.0


def page_subject(base: Fingerprint, cur: Fingerprint, host: str, seed_url: str = "",
                 another_text: bool = False) -> tuple[str, float | None]:
    """What names a deep page's subject in both captures ("headline", "title", "heading" or the
    declared "address") and how much of the baseline's subject the capture keeps (an address: 1.0
    the same, 0.0 another); ``None`` when nothing names it (the text decides then).
    ``seed_url``: the address the history was asked at (a declared address equal to it, or a
    section above it, is no evidence: :func:`declared_same_page`); ``another_text``: the text shares
    almost nothing with the baseline's (the "another text" test), where what a template writes on
    every page (a heading, a headline, a title kept identical) is no evidence (below)."""
    # The page's own headline (og:title) names its subject where the title does not say it (a
    # title that is the site's name, or one padded with section names: "Ebola: nurse named |
    # Latest News | Breaking News UK | Daily Star").  A page keeps a headline only when its
    # title does not contain it, so each page's subject line is its headline if it keeps one,
    # else its title: a site that turns to titling every page with its name, keeping og:title,
    # then compares the old title's headline with the new og:title, not with the site's name.
    same_page = declared_same_page(base, cur, seed_url)
    named_by = "headline" if base.headline or cur.headline else "title"
    subj = title_subject(base.headline_key or base.title_key, cur.headline_key or cur.title_key, host)
    if named_by == "headline" and base.headline_key == cur.headline_key and base.title_key != cur.title_key:
        # One headline on both sides under two titles that each name something of their own is the
        # template's (themes that fill og:title with the site's name on every page: the bench's
        # --site-headlines, F1 0.64 while it read as the subject kept): the titles say which article
        # it is.  A title that turned to the site's name names nothing: the headline still speaks.
        own = _own_segments(base.title_key, cur.title_key, host)
        if own[1] and own[2] and min(len(base.title_key.split()), len(cur.title_key.split())) > NAME_MAX_WORDS:
            by_title = title_subject(base.title_key, cur.title_key, host)
            if by_title is not None:
                named_by, subj = "title", by_title
    if named_by == "title" and base.title_key == cur.title_key and len(base.title_key.split()) <= NAME_MAX_WORDS:
        subj = None  # the one short title reads as a name, not a headline: no evidence (below)
    elif named_by == "title" and base.title_key == cur.title_key and another_text \
            and ((base.heading and cur.heading) or same_page is not None):
        # One title kept over another text may be the site's (its name and a tagline on every page:
        # the bench's --tagline-titles, F1 0.24 while it read as the subject kept) or a live blog's
        # whose entries all rolled over.  Where the pages' own headings or declared addresses can
        # tell, they do (and the text after them); with neither, the kept title keeps the page
        # through renewed entries, short of a text that shares almost nothing (collection()).
        subj = None
    # (a score means both titles are there: title_subject is None without one)
    if named_by == "title" and subj is not None and subj < SUBJECT_TITLE and cur.heading \
            and (len(cur.title_key.split()) <= NAME_MAX_WORDS
                 or not _own_segments(base.title_key, cur.title_key, host)[2]):
        # The capture's title names no subject of its own (the site's name, the baseline's labels),
        # or is short enough to read as a name (one no rule ties to the address): its first-level
        # heading may still carry the baseline title's subject.
        named_by, subj = "heading", title_subject(base.title_key, cur.heading_key, host)
    if subj is None:
        # The titles name no subject: the site's name on every page, one that the rules tie to the
        # address or the one short title (a name no rule ties to the address, as an Arabic name on
        # a Latin one).  A page's first-level heading still may name the subject (a page that
        # declares no headline: Fingerprint.heading).
        b_head, c_head = base.headline_key or base.heading_key, cur.headline_key or cur.heading_key
        if b_head and c_head and (base.heading or cur.heading):
            named_by, subj = "heading", title_subject(b_head, c_head, host)
    template = named_by == "heading" or (named_by == "headline" and base.headline_key == cur.headline_key)
    if template and another_text and subj is not None and subj >= SUBJECT_TITLE:
        # A first-level heading kept over another text is the template's, not the article's: older
        # templates put the site's name in the one <h1> (a logo) and the headline lower, on every
        # page, in whatever script or words (the bench's --logo-headings: 0.36 while it read as the
        # subject kept).  A headline declared by the page or its title keeps its weight.
        named_by, subj = "title", None
    if same_page is not None and (subj is None or (named_by == "heading" and same_page)):
        # The titles name no subject: the address the page declares for itself says which page it
        # is, before its first heading (on a section page, the top story's) and its text (a live
        # blog and a section renew theirs).  A kept heading under a new address is an article
        # moved, as a kept title is.
        named_by, subj = "address", 1.0 if same_page else 0.0
    return named_by, subj


def declared_same_page(base: Fingerprint, cur: Fingerprint, seed_url: str = "") -> bool | None:
    """Whether the capture declares itself the baseline's page (``rel="canonical"``, ``og:url``):
    ``True`` where both declare one address, ``False`` where they declare two.  ``None`` where that
    is no evidence: one declares none, the baseline declares the site's home page or a section above
    the seed (a deep page that does names no page of its own: sites that declare their root on
    every page are common), or both declare the seed's own address.  That one is what was asked
    for: a page declares it whatever it holds when the address is reused for another article (a
    live blog's address that later serves another story) and on sites that echo the request, so it
    tells nothing the address did not (the bench's ``--echo-addresses``: 0.69 while it read as the
    same page)."""
    if not base.address or not cur.address or is_root(base.address):
        return None
    seed = address_key(seed_url) if seed_url else ""
    if seed and _above(base.address, seed):
        return None  # the section above the seed: a page that declares it names no page of its own
    if base.address != cur.address:
        return False
    return None if base.address == seed else True


def _above(address: str, seed: str) -> bool:
    """A declared address that is a folder above the seed's (``/news/`` over ``/news/2015/x``): some
    templates declare their section on every article (the bench's --section-addresses: 0.69 while it
    read as the same page), as others declare the root."""
    return "?" not in address and seed.startswith(address + "/")  # keys keep no trailing slash (url_key)


def is_root(address: str) -> bool:
    """A declared address (a canonical key, ``org,example)/path``) that is the site's home page."""
    path = address.partition(")")[2].partition("?")[0].strip("/")
    return not path or bool(INDEX_PAGE.match(path) and "/" not in path)
