"""What a seed stands for, read once from its address (:class:`Seed`).

A site's home page stands for the organisation, so new stories and redesigns
are on topic and only a lost identity (title and text) or an off-topic page
kind takes it off topic; a section (``/world/egypt``) stands for what it
lists, as a home page does, unless its title names another subject; a deep
page stands for its subject, so a different article of the same site is off
topic even though the title keeps the site's name.  The kind is read from the
address once per history and passed down as a value, never re-parsed by each
rule that needs it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlsplit

SeedKind = Literal["site", "page"]


@dataclass(frozen=True, slots=True)
class Seed:
    """The URL a history stands for and what it is: ``kind`` (:func:`seed_kind`) and ``section``
    (:func:`is_section`), read once (:meth:`of`)."""

    url: str
    kind: SeedKind
    section: bool = False

    @property
    def site(self) -> bool:
        """A home page, a section or a profile on a platform: its title names the organisation."""
        return self.kind == "site"

    @classmethod
    def of(cls, url: str) -> Seed:
        """The seed of ``url`` (cached: a history's events name the same seed again and again)."""
        return _seed(url)


@functools.lru_cache(maxsize=4096)
def _seed(url: str) -> Seed:
    return Seed(url, seed_kind(url), is_section(url))


def as_seed(seed: Seed | str) -> Seed:
    """``seed`` itself, or the seed of a URL given as text (callers outside the engine's edge)."""
    return seed if isinstance(seed, Seed) else Seed.of(seed)


INDEX_PAGE = re.compile(r"^(index|default|home|main|start|portal|welcome)(\.[a-z0-9]{2,5})?$", re.I)
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


def seed_kind(url: str) -> SeedKind:
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
    if len(parts) == 1 and (INDEX_PAGE.match(parts[0]) or _LANG_SEGMENT.match(parts[0]) or "." not in parts[0]):
        return "site"
    if len(parts) == 2 and _LANG_SEGMENT.match(parts[0]) and INDEX_PAGE.match(parts[1]):
        return "site"
    if not query and _is_section(parts):
        return "site"  # a section ("/world/egypt"): it lists the site's stories on a subject, as a home page does
    return "page"


def _is_section(parts: list[str]) -> bool:
    """A path (its segments) of plain words, up to :data:`SECTION_MAX_DEPTH` deep beside a language
    root and an index file: a section's address."""
    segs = parts[1:] if parts and _LANG_SEGMENT.match(parts[0]) else parts
    if len(segs) > 1 and INDEX_PAGE.match(segs[-1]):
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
