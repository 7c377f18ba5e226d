"""Profiles: the question a verdict answers.

One capture can be judged by different questions, and each user group asks
its own:

- ``collection`` (the default, for curators): is the capture still on the
  topic the curator chose when selecting the seed?  A news site's home page
  that shows today's stories is on topic; a parked domain, an error page, a
  site handed to another owner, or a deep page whose article was replaced by
  another one is not.
- ``text`` (content drift, for citations): is the text that was there still
  there?  A fixed typo or comments appended below are ``minor``; a replaced
  paragraph ``drifted``; a completely different document ``off-topic`` ("text
  replaced").  Decided by :mod:`watcher.textprofile`, which shares the subject
  test below.
- ``doi`` (the DOI monitor): is the scholarly record still at the endpoint?
  Decided by :mod:`watcher.doi.profile` when that package is present.

What a seed stands for depends on what it is (:func:`seed_kind`): a site's
home page stands for the organisation, so new stories and redesigns are on
topic and only a lost identity (title and text) or an off-topic page kind
takes it off topic; a section (``/world/egypt``) stands for what it lists, as
a home page does, unless its title names another subject; a deep page stands
for its subject, so a different article of the same site is off topic even
though the title keeps the site's name.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

from rapidfuzz.fuzz import token_set_ratio

from . import measures as ms
from .config import EngineConfig
from .fingerprint import address_key
from .model import Fingerprint, MeasureResult
from .text import title_segments
from .verdict import Decision, fmt, fmt_below, fmt_vs, policy_flags, scored

# Collection profile ------------------------------------------------------------
# Site identity lost: the title lost most of the baseline title's words AND the
# text shares almost nothing.  Two independent signals, so that a redesign by
# the same organisation (same name in the title) or new stories (new words,
# same name) are not flagged.
IDENTITY_TITLE = 0.50
IDENTITY_COSINE = 0.10
# A deep page's subject replaced: its title's own words (the part that is not
# the site's name) changed AND the text shares little with the baseline.
SUBJECT_TITLE = 0.50
SUBJECT_COSINE = 0.90
# On topic, how much of the baseline's text must remain for "minor" rather than
# "drifted".
DRIFT_CONTAINMENT = 0.80
# A title of this many words or fewer reads as a name ("بوابة الأهرام", "CNN Arabic"), not as a
# headline; a first-level heading needs more to read as one (fingerprint: three or more).
NAME_MAX_WORDS = 3
# Text profile ----------------------------------------------------------------
TEXT_REPLACED = 0.20  # containment below (and cosine below TEXT_REPLACED_COSINE): another text
TEXT_REPLACED_COSINE = 0.30

_INDEX_PAGE = re.compile(r"^(index|default|home|main|start|portal|welcome)(\.[a-z0-9]{2,5})?$", re.I)
_LANG_SEGMENT = re.compile(r"^[a-z]{2}(?:[-_][a-z]{2,4})?$", re.I)
# A root segment that names an article, not a section: three or more words
# joined by hyphens or underscores, or a number of four digits or more.
_ARTICLE_SLUG = re.compile(r"^(?:(?:[^-_./]+[-_]){3,}[^-_./]+|\d{4,})(?:\.[a-z0-9]{2,5})?$", re.I)
# A section's address: every segment a plain word or two ("/world/egypt", "/news/middle-east/",
# "/autos/news"; three above the last: "/middle-eastn-africa/egypt"), no digit, no file name.
# Articles carry an id, a date or a longer slug: of the 265 addresses the newspaper and trafilatura
# pages declare for themselves, six more have this form, five of them section, category or practice
# pages ("/news/inspiration/", "/autos/news", "/de/steuerrecht") and one a topic page
# ("/themen/land-und-leute/homo-brandenburgensis"); none of the 181 article addresses of articles-181 has it.
_SECTION_SEGMENT = re.compile(r"^[^\W\d_]+(?:[-_][^\W\d_]+)?$")
_SECTION_PARENT = re.compile(r"^[^\W\d_]+(?:[-_][^\W\d_]+){0,2}$")
SECTION_MAX_DEPTH = 3
# A query that selects one item by its number (WordPress ?p=, CMS ?id=, ?newsid=, ?story_id=...).
_ARTICLE_QUERY = re.compile(r"(?:^|&)(?:p|id|nid|sid|aid|page_id|article(?:_?id)?|news_?id|story(?:_?id)?|"
                            r"item(?:_?id)?|post(?:_?id)?|artikel|noticia|contentid)=\d{2,}(?:&|$)"
                            r"|(?:^|&)(?:v|vid|video(?:_?id)?)=[\w-]{6,}(?:&|$)", re.I)  # a video: watch?v=...
# A person's or an organisation's profile on a platform stands for its owner, as a home page does
# (activist collections hold many): a Facebook page or group (group.php?gid= before 2011's
# /groups/), a YouTube channel, a Flickr photostream, a live-stream channel, a LinkedIn company;
# facebook.com/<name> is a page's or a person's own address ("elshaheeed.co.uk", "ahmed.maher.5").
# One video, post or photo (watch?v=..., /status/N) stays a page.
_PROFILE = re.compile(r"^(?:(?:[\w-]+\.)*facebook\.com/(?:pages/[^/]+/\d+|groups/[^/]+|people/[^/]+/\d+|"
                      r"(?:profile|group)\.php|(?!(?:events|notes|media|watch|hashtag|sharer|photo|video|story)\b|"
                      r"[\w.-]+\.php$)[\w.-]+)|"
                      r"(?:[\w-]+\.)*youtube\.com/(?:user|channel|c)/[^/]+(?:/(?:videos|featured))?|"
                      r"(?:[\w-]+\.)*flickr\.com/(?:photos|people)/[^/]+|(?:[\w-]+\.)*vimeo\.com/channels/[^/]+|"
                      r"(?:[\w-]+\.)*(?:ustream\.tv|bambuser\.com)/channel/[^/]+|"
                      r"(?:[\w-]+\.)*linkedin\.com/(?:company|in)/[^/]+|plus\.google\.com/(?:u/\d+/)?\+?[^/]+"
                      r"(?:/posts)?)/?$", re.I)
def seed_kind(url: str) -> str:
    """``"site"`` for a home page (the path is empty, an index file, or a
    language or section root one segment deep) or a profile on a platform
    (a Facebook page, a YouTube channel), ``"page"`` for a deep page,
    including an article addressed at the root (a slug of four or more words,
    a number) or by a numeric id in the query (``?p=1234``).  Why: a seed
    that names one article stands for its subject wherever the address puts
    it."""
    try:
        split = urlsplit(url if "://" in url else "http://" + url)
    except ValueError:
        return "site"
    path, query = split.path, split.query
    parts = [p for p in path.split("/") if p]
    if _PROFILE.match((split.hostname or "") + path.rstrip("/")):
        return "site"  # a profile on a platform: its owner, as a home page
    if _ARTICLE_QUERY.search(query):
        return "page"  # /?p=1234, /index.php?id=77, /news.aspx?newsid=123: one article by its number
    if not parts:
        return "site"
    if len(parts) == 1 and _ARTICLE_SLUG.search(parts[0]):
        return "page"  # /live-blog-egypt-protests, /12345: an article's slug or number at the root
    if len(parts) == 1 and (_INDEX_PAGE.match(parts[0]) or _LANG_SEGMENT.match(parts[0]) or "." not in parts[0]):
        return "site"
    if len(parts) == 2 and _LANG_SEGMENT.match(parts[0]) and _INDEX_PAGE.match(parts[1]):
        return "site"
    if not query and _is_section(parts):
        return "site"  # a section ("/world/egypt"): it lists the site's stories on a subject, as a home page does
    return "page"


def _is_section(parts: list[str]) -> bool:
    """A path (its segments) of plain words, up to :data:`SECTION_MAX_DEPTH` deep beside a language
    root and an index file: a section's address."""
    segs = parts[1:] if parts and _LANG_SEGMENT.match(parts[0]) else parts
    if len(segs) > 1 and _INDEX_PAGE.match(segs[-1]):
        segs = segs[:-1]
    return 0 < len(segs) <= SECTION_MAX_DEPTH and bool(_SECTION_SEGMENT.match(unquote(segs[-1]))) \
        and all(_SECTION_PARENT.match(unquote(s)) for s in segs[:-1])


def is_section(url: str) -> bool:
    """A seed that :func:`seed_kind` reads as a site because its address names a section two or
    three segments deep (``/world/egypt``): it stands for what it lists, yet a title that names
    another subject still says another page was put at its address (a live blog's)."""
    try:
        split = urlsplit(url if "://" in url else "http://" + url)
    except ValueError:
        return False
    parts = [p for p in split.path.split("/") if p]
    # (seed_kind reads every such address as a site: no rule before its section test takes one)
    return len(parts) > 1 and not split.query and _is_section(parts) \
        and not _PROFILE.match((split.hostname or "") + split.path.rstrip("/"))


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
    if not base.address or not cur.address or _is_root(base.address):
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


def _is_root(address: str) -> bool:
    """A declared address (a canonical key, ``org,example)/path``) that is the site's home page."""
    path = address.partition(")")[2].partition("?")[0].strip("/")
    return not path or bool(_INDEX_PAGE.match(path) and "/" not in path)


def measure_reasons(results: Mapping[str, MeasureResult], cfg: EngineConfig,
                     abstain: frozenset[str] = frozenset()) -> tuple[bool, list[str]]:
    flagged_by_policy, flagged = policy_flags(results, cfg, abstain)
    reasons = []
    for r in flagged:
        spec = ms.get(r.name)
        op = "<" if spec.direction == "below" else ">"
        reasons.append(f"{r.name} {fmt_vs(r.score or 0.0, r.threshold or 0.0)} {op} {fmt(r.threshold or 0.0)}")
    return flagged_by_policy, reasons if flagged_by_policy else []


def similarity(results: Mapping[str, MeasureResult], name: str, base: Fingerprint, cur: Fingerprint) -> float | None:
    """A measure's score, reusing the result when it was configured."""
    s = scored(results, name)
    if s is None and name not in results:
        spec = ms.get(name)
        s = spec.fn(base, cur, ms.Context()) if ms.applicable(spec, base, cur) else None
    return s


def known_name(names: tuple[str, ...], cur: Fingerprint) -> tuple[float, str] | None:
    """The best title similarity of ``cur`` to a name the site was judged on topic under since its
    baseline (:func:`watcher.step.remember`), and that name; None without one."""
    if not names or not cur.title_key:
        return None
    return max((token_set_ratio(n, cur.title_key) / 100.0, n) for n in names)


def collection(base: Fingerprint, cur: Fingerprint, results: Mapping[str, MeasureResult], cfg: EngineConfig,
               seed_url: str, names: tuple[str, ...] = ()) -> Decision:
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
    kind = seed_kind(seed_url)
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
    section = kind == "site" and is_section(seed_url)
    if (kind == "page" or section) and cfg.page_subject and cos is not None:
        host = base.host or cur.host
        cont = similarity(results, "containment", base, cur)
        another_text = cont is not None and cont < TEXT_REPLACED and cos < TEXT_REPLACED_COSINE
        named_by, subj = page_subject(base, cur, host, seed_url, another_text)
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
                home = "the site's home page, " if _is_root(cur.address) else ""
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
    off_policy, m_reasons = measure_reasons(results, cfg, ms.TOPIC_WORD_MEASURES if name_kept else frozenset())
    if checks or off_policy:
        return Decision("off-topic", "off-topic", "; ".join(reasons + m_reasons), 0.9, tuple(checks))
    # Say why a measure shown as off topic did not decide (the reader sees its status in the table).
    would, set_aside = measure_reasons(results, cfg) if name_kept else (False, [])
    aside = (f"; {', '.join(set_aside)} set aside: the {'title' if kind == 'site' else 'subject line'} is "
             "kept, new top words are news" if would else "")
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
