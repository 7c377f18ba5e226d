"""The data that flows between pipeline stages.

``Capture`` (what was captured) -> ``Fingerprint`` (everything later stages
need, computed from one parse) -> ``Verdict`` (scores, status, change class,
reason).  Stages exchange these frozen objects only, so a measure never sees
HTML and a consumer never sees a parser.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, get_args

from .text import normalise

# HTTP redirects: a response's content is at its Location (the fetchers follow them; a captured one
# is read by its target, never by its "Moved Permanently" body).  304 is a revisit, not a redirect.
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

# Topic statuses of one measure or of a capture.  "empty" is a status of its
# own: a capture with no content is neither on- nor off-topic.
TopicStatus = Literal["on-topic", "off-topic", "empty", "error", "baseline", "n/a"]
# Change classes.  "layout", "replaced", "gone", "blocked" and "moved" are the
# ``doi`` profile's (a redesign that kept the record, a different work, a dead
# or lost endpoint, a bot wall, the record on a new domain).
# The one list of change classes: every other list (output columns, metrics series, review queue
# order, seed reports) derives from it or is checked against it (tests/output/test_output.py).
ChangeClass = Literal["baseline", "unchanged", "minor", "drifted", "off-topic", "empty", "error",
                      "layout", "replaced", "gone", "blocked", "moved"]
CHANGE_CLASSES: tuple[ChangeClass, ...] = get_args(ChangeClass)
ContentKind = Literal["html", "text", "pdf", "binary", "empty"]


def utc(dt: datetime) -> datetime:
    """Return ``dt`` as an aware UTC datetime (naive values are taken as UTC)."""
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def ts14(dt: datetime) -> str:
    """14-digit archive timestamp (``YYYYmmddHHMMSS``) of ``dt`` in UTC."""
    return utc(dt).strftime("%Y%m%d%H%M%S")


def payload_digest(data: bytes) -> str:
    """``sha1:<BASE32>``, the form Heritrix, warcprox and WARC files use."""
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


@dataclass(frozen=True, slots=True)
class Capture:
    """One capture of one URL, as any input delivers it.

    ``content`` is the HTTP *payload* (entity body after transfer and content
    decoding), or ``None`` when it was not obtained; ``error`` then says why.
    ``history`` overrides the grouping key (gold directories name histories
    explicitly, a DOI check names ``doi:<doi>``); otherwise captures are
    grouped by the canonical URL key.  ``doi`` and ``expected_title`` are what
    a DOI check watches (the registered DOI and title): the ``doi`` profile
    judges the record against them rather than only against the baseline.
    """

    url: str
    timestamp: datetime
    content: bytes | None = None
    content_type: str | None = None
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    digest: str | None = None
    uri_m: str | None = None
    source: str | None = None
    history: str | None = None
    is_revisit: bool = False
    redirects: tuple[str, ...] = ()
    error: str | None = None
    seed: str | None = None
    job: str | None = None
    label: int | None = None  # gold label (1 on-topic, 0 off-topic) when known
    doi: str | None = None
    expected_title: str | None = None
    # Where the payload can be read again (``warc:<file>#<offset>``, ``file:<path>``): written to scan
    # results so that ``driftline review`` re-reads a capture from the input the scan read.
    locator: str | None = None

    @property
    def effective_digest(self) -> str | None:
        if self.digest:
            return self.digest
        if self.content is not None:
            return payload_digest(self.content)
        return None


@dataclass(frozen=True, slots=True)
class ScholarlyRecord:
    """What a landing page says about the work it stands for (watcher/extract/record.py).

    The doi profile compares this, not the page: a publisher's redesign
    replaces menus, footers and sidebars while the record stays.  Metadata
    comes from ``citation_*`` (Highwire), Dublin Core, schema.org JSON-LD and
    ``og:`` meta; the main text is the record's text (the abstract and the
    body, without the site's chrome: watcher/extract/scholarly.py).
    ``main_sample`` is a bottom-k sample of the main text's 4-word shingle
    hashes (estimates containment from stored baselines), ``paragraphs`` a
    small sample per paragraph of the record (which paragraph changed), and
    ``main_shingles`` the full set of the main text's and the whole page's
    shingles (where a baseline's text is looked for: still shown anywhere on
    the page is still shown), kept on fresh captures only.
    """

    title: str = ""
    authors: tuple[str, ...] = ()
    abstract: str = ""
    doi: str | None = None
    date: str | None = None
    container: str = ""
    sources: tuple[str, ...] = ()
    schema_types: tuple[str, ...] = ()
    main_digest: str = ""
    main_sample: tuple[int, ...] = ()
    paragraphs: tuple[tuple[int, ...], ...] = ()
    main_shingles: frozenset[int] | None = None
    body_dois: frozenset[str] = frozenset()
    boxes: tuple[str, ...] = ()  # boxes beside the abstract (highlights, key points...): layout, not the record

    @property
    def has_metadata(self) -> bool:
        """True when the page names a work (title, DOI or authors in its metadata)."""
        return bool(self.sources)


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """Everything the measures read, computed once per capture.

    ``minhash`` holds the MinHash hash values (datasketch ``affine32`` scheme,
    ``uint32``) as bytes; ``shingles`` the 64-bit hashes of word shingles, kept
    only when exact containment is wanted (``None`` for sketch-only
    baselines).  ``tokens`` (the word sequence) is kept for Levenshtein and is
    ``None`` once a fingerprint is reduced to its sketch for storage.
    """

    kind: ContentKind
    digest: str
    byte_count: int
    word_count: int
    language: str | None
    title: str
    headings: tuple[str, ...]
    term_freqs: Mapping[str, int]
    shingle_count: int
    minhash: bytes
    simhash_raw: int
    simhash_tf: int
    dois: frozenset[str]
    citation: Mapping[str, tuple[str, ...]]
    page_kind: str | None
    page_kind_evidence: str | None = None
    host: str = ""
    redirect: str | None = None
    shingles: frozenset[int] | None = None
    tokens: tuple[str, ...] | None = None
    text: str | None = None
    stemmed: bool = False
    boilerplate_removed: bool = False
    error: str | None = None
    # HTTP status of the capture (None when unknown, e.g. gold files): error
    # statuses and redirects are never baselines.
    http_status: int | None = None
    # The 48 smallest shingle hashes (uint64, packed): a bottom-k sample that a
    # baseline keeps instead of its whole shingle set, so that containment of
    # the baseline in a capture stays exact in expectation even when the
    # capture is many times larger (a MinHash estimate is not).
    shingle_sample: bytes = b""
    # The features this fingerprint holds (see watcher.measures: each measure declares what it needs).  A stored
    # baseline records what it kept, so a measure that needs a feature the
    # baseline lacks scores None (n/a), never a number computed from a blank.
    features: frozenset[str] = frozenset()
    record: ScholarlyRecord | None = None
    # The page's own headline (og:title, else citation_title) when the <title> does not contain it:
    # some sites title every page with their name alone, and the headline then still names a deep
    # page's subject.  Empty when the title already says it (the common "Headline | Site").
    headline: str = ""
    # What the crawl got, for the crawl-guidance report (watcher.quality): the main text's UTF-8
    # bytes, its Badness (None: no profile for the language) and the page's boilerplate share.
    # Evidence for the capture's verdict only: a baseline does not keep them (step.state_form).
    text_bytes: int = 0
    badness: float | None = None
    boilerplate_share: float | None = None
    # A page that declares no headline: its longest first-level heading of three words or more
    # (a logo or a section label is shorter), when the title does not contain it.  Weaker evidence
    # than a declared headline: it names a deep page's subject only where the titles name none.
    heading: str = ""
    # The address the page declares for itself (rel="canonical", else og:url) as a canonical URL key
    # (canonical.url_key, read through archive rewriting); empty where it declares none.  What a
    # page says it is, beside what it says (its title): a deep page's subject where the titles name
    # none (profiles.declared_same_page).
    address: str = ""
    # The title and the headline as they are compared (text.normalise: NFKC, case folding, Arabic
    # letter forms), derived once per fingerprint for the title measure and the title-subject test;
    # never stored (the codec skips fields that are not constructor arguments; a decoded
    # fingerprint derives them).
    title_key: str = field(default="", init=False, repr=False, compare=False)
    headline_key: str = field(default="", init=False, repr=False, compare=False)
    heading_key: str = field(default="", init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        title_key = normalise(self.title) if self.title else ""
        object.__setattr__(self, "title_key", title_key)
        for name in ("headline", "heading"):
            key = normalise(getattr(self, name)) if getattr(self, name) else ""
            if key in title_key:  # the title says it already (or there is none): nothing to keep
                object.__setattr__(self, name, "")
                key = ""
            object.__setattr__(self, f"{name}_key", key)

    @property
    def is_empty(self) -> bool:
        return self.kind == "empty"

    def has(self, *names: str) -> bool:
        return all(n in self.features for n in names)


@dataclass(frozen=True, slots=True)
class MeasureResult:
    name: str
    score: float | None
    status: TopicStatus
    threshold: float | None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The result for one capture, as stored, published and written out."""

    verdict_id: str
    history: str
    url: str
    capture_time: datetime
    uri_m: str | None
    digest: str | None
    baseline_time: datetime | None
    baseline_uri_m: str | None
    measures: Mapping[str, MeasureResult]
    status: TopicStatus
    change: ChangeClass
    reason: str
    page_kind: str | None = None
    language: str | None = None
    byte_count: int = 0
    word_count: int = 0
    title: str = ""
    seed: str | None = None
    job: str | None = None
    label: int | None = None
    drift_score: float | None = None
    # The profile that answered (collection, text, doi), the checks that fired
    # besides the measures ("page_kind", "identity", "redirect", "http_error",
    # "replaced"), and the version: a late capture that changes the baseline
    # re-scores later captures, which are re-published under the same id with
    # a higher version.
    profile: str = "collection"
    checks: tuple[str, ...] = ()
    version: int = 1
    # What the crawl got (watcher.quality; the crawl-guidance report reads them): main text bytes,
    # the bytes of it its baseline did not have, Badness and the boilerplate share.
    text_bytes: int = 0
    new_text_bytes: int = 0
    badness: float | None = None
    boilerplate_share: float | None = None
    # The capture's 64-bit term SimHash in hex ("" when not computed): consecutive captures whose
    # text differs in more than 3 of its bits changed (watcher.seeds: Manku et al.'s line).
    text_simhash: str = ""

    @property
    def flagged(self) -> bool:
        """True when this capture is reported off topic (the positive class)."""
        return self.status == "off-topic"


def verdict_id(history: str, capture_time: datetime, digest: str | None) -> str:
    """Deterministic id: canonical URL key + capture time + digest.

    A re-sent verdict or alert carries the same id, so consumers downstream can
    recognise duplicates of the at-least-once pipeline.
    """
    raw = f"{history}|{ts14(capture_time)}|{digest or '-'}".encode()
    return hashlib.sha256(raw).hexdigest()[:32]


Behaviour = Literal["Always On", "Step Function On", "Step Function Off", "Oscillating", "Always Off", "Empty"]


@dataclass(frozen=True, slots=True)
class HistoryResult:
    """All verdicts of one history plus its TimeMap behaviour."""

    history: str
    url: str
    verdicts: tuple[Verdict, ...]
    behaviour: Behaviour
    first_drift: datetime | None
    off_topic_share: float
