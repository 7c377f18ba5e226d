"""Fingerprint a capture once: one decode, one parse, every feature.

Later stages (measures, verdicts, the store) read the :class:`Fingerprint`
only.  Bad content never raises here: empty, undecodable or unparseable
content gives a fingerprint of kind ``"empty"`` with ``error`` saying why,
because an empty capture is a result, not a crash.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from itertools import repeat
from operator import itemgetter
from typing import Any
from urllib.parse import urljoin, urlsplit

import numpy as np
import simhash
import xxhash

from . import lang
from .canonical import original_url, url_key
from .config import EngineConfig
from .extract.decode import decode
from .extract.encoding import decode_body
from .extract.hidden import reveal_hidden
from .extract.html import HtmlDoc, find_dois, normalise_ws, read_html, replay_missing_of
from .extract.pdf import pdf_text
from .extract.record import record_of
from .model import REDIRECT_STATUSES, Capture, ContentKind, Fingerprint, payload_digest
from .pagekinds import detect_page_kind
from .quality import badness
from .text import content_terms
from .text import tokens as text_tokens

log = logging.getLogger(__name__)

_DIGITS = re.compile(r"^[\d\W_]+$")
HEADLINE_MAX = 200  # characters of og:title kept: a headline, not a summary
_HTML_SNIFF = re.compile(rb"<\s*(!doctype\s+html|html|head|body|title|meta|div|p|table|frameset|script|a\s)", re.I)
_DOI_META = ("citation_doi", "dc.identifier", "prism.doi", "dc.identifier.doi", "bepress_citation_doi")
RAW_SIMHASH_MAX_CHARS = 65536
STUB_MAX_WORDS = 20
REPLAY_MISSING_MAX_WORDS = 200  # a replay's "not archived" page is short (extract.html.replay_missing_of)
MINHASH_SEED = 1
MINHASH_CHUNK = 8192
MAX_WORDS = 300_000  # words read per capture (about 2 MB of text); the rest is cut and noted "truncated"
SHINGLE_SAMPLE = 48  # bottom-k sample of shingle hashes a baseline keeps (keeps the state under 2 kB)


def host_of(url: str) -> str:
    try:
        return (urlsplit(url if "://" in url else "http://" + url).hostname or "").lower()
    except ValueError:
        return ""


def site_of(host: str) -> str:
    """Registrable part of a host, approximately: the last two labels, or three
    when the second-level label is a generic one (``org.ar``, ``co.uk``)."""
    labels = [x for x in host.lower().split(".") if x]
    if labels and labels[0].startswith("www"):
        labels = labels[1:]
    if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in _SLD:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


_SLD = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "or", "ne", "go", "gob", "nic", "mil", "sch"})


def _identity(x: int) -> int:
    return x


def sniff_kind(content: bytes, content_type: str | None) -> ContentKind:
    """What the bytes are, trusting the bytes over the declared type."""
    if not content or not content.strip():
        return "empty"
    head = content[:2048].lstrip()
    if head.startswith(b"%PDF"):
        return "pdf"
    ct = (content_type or "").split(";")[0].strip().lower()
    if _HTML_SNIFF.search(content[:4096]) or ct in ("text/html", "application/xhtml+xml"):
        return "html"
    if ct.startswith("text/") or ct in ("application/json", "application/xml", "application/javascript"):
        return "text"
    if ct and not ct.startswith("text/") and ct not in ("", "unk", "unknown", "application/octet-stream"):
        return "binary"
    sample = content[:4096]
    printable = sum(32 <= b < 127 or b in (9, 10, 13) or b >= 0xC2 for b in sample)
    return "text" if printable / max(1, len(sample)) > 0.9 else "binary"


def words(text: str, language: str | None) -> list[str]:
    """Normalised word tokens, script-aware (see :mod:`watcher.text`): scripts
    without spaces become cluster bigrams so counts and overlaps stay
    meaningful."""
    return text_tokens(text)


def terms_of(tokens: Sequence[str], language: str | None, *, stop: bool, stem: bool, stop_max: int = 0) -> list[str]:
    """Content terms: no stop words, no numbers (dates and counters churn
    without the content changing), no one-letter tokens (outside CJK);
    Arabic light stemming (see :mod:`watcher.text`)."""
    out = content_terms(tokens, language, lang.stop_words(language, stop_max) if stop else frozenset())
    if stem:
        st = lang.stemmer(language)
        if st is not None:
            out = list(st.stemWords(out))
    return out


def shingle_sequence(tokens: Sequence[str], size: int) -> np.ndarray:
    """64-bit hashes of the word ``size``-shingles in text order, repeats kept (stable across
    processes); numbers are left out.  A shingle is the UTF-8 of its words joined by single spaces,
    hashed with xxh3-64; every shingle is a slice of the one joined text, cut and hashed in C-level
    iteration (``map``), not joined again word by word."""
    seq = [t for t in tokens if t.isalpha() or not _DIGITS.match(t)]  # a word of letters has no number
    if not seq:
        return np.zeros(0, dtype=np.uint64)
    joined = " ".join(seq)
    data = joined.encode("utf-8", "surrogatepass")
    if len(data) == len(joined):  # ASCII: characters are bytes
        lengths = np.fromiter(map(len, seq), dtype=np.int64, count=len(seq))
    else:
        encoded = map(str.encode, seq, repeat("utf-8"), repeat("surrogatepass"))
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(seq))
    starts = np.zeros(len(seq) + 1, dtype=np.int64)
    np.cumsum(lengths + 1, out=starts[1:])  # word i starts at starts[i]; starts[-1] is len(data) + 1
    n = max(1, len(seq) - size + 1)
    ends = starts[np.minimum(np.arange(n) + size, len(seq))] - 1
    grams = map(data.__getitem__, map(slice, starts[:n].tolist(), ends.tolist()))
    return np.fromiter(map(xxhash.xxh3_64_intdigest, grams), dtype=np.uint64, count=n)


def shingle_hashes(tokens: Sequence[str], size: int) -> np.ndarray:
    """The distinct shingle hashes, sorted: the set the sketches and containment read."""
    return sorted_distinct(shingle_sequence(tokens, size))


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``: a sort and a mask of the values unlike their predecessor, a third of
    the time numpy 2's ``unique`` takes on a page's shingles (which hashes them first)."""
    out = np.sort(values)
    if len(out) < 2:
        return out
    keep = np.empty(len(out), dtype=bool)
    keep[0] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out[keep]


@lru_cache(maxsize=8)
def _permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch 2.0's ``affine32`` permutations for ``(num_perm, seed)``: odd multipliers ``a`` and
    offsets ``b`` drawn from ``RandomState(seed)`` as its ``MinHash._init_permutations`` draws them, so
    sketches stored before stay comparable (tests pin the values)."""
    gen = np.random.RandomState(seed)
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    return a, b


def _fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finalizer (datasketch's pre-mix of every input hash), wrapping in uint32."""
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    out: np.ndarray = h ^ (h >> np.uint32(16))
    return out


def minhash_of(hashes: np.ndarray, num_perm: int) -> bytes:
    """MinHash of the shingle hashes: the values datasketch's ``MinHash(scheme="affine32",
    seed=MINHASH_SEED)`` gives for the low 32 bits of each hash, computed here as one permutation
    matrix per chunk.  Why not datasketch itself: its ``update_batch`` calls the hash function once
    per value in Python, and importing it pulls in scipy (a second of every start-up).  Chunks of
    :data:`MINHASH_CHUNK` values keep the (permutations x values) matrix under 5 MB (a 185,000-word
    page at 128 permutations in one piece took 190 MB).  A permutation's values lie in one row, so
    the minimum runs along contiguous memory (twice as fast as down the columns)."""
    a, b = _permutations(num_perm, MINHASH_SEED)
    a, b = a[:, None], b[:, None]
    out = np.full(num_perm, 0xFFFFFFFF, dtype=np.uint32)
    mixed = _fmix32((hashes & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    for i in range(0, len(mixed), MINHASH_CHUNK):
        values = a * mixed[None, i:i + MINHASH_CHUNK]
        values += b
        np.minimum(out, values.min(axis=1), out=out)
    return bytes(out.tobytes())


def _simhash(features: list[str]) -> int:
    if not features:
        return 0
    return int(simhash.simhash(list[Any](features), hasher="xxh3"))


def raw_simhash(raw: str) -> int:
    s = raw[:RAW_SIMHASH_MAX_CHARS]
    return _simhash([s[i:i + 4] for i in range(0, max(1, len(s) - 3))])


EXTRACT_FAILED = "extract_failed"
UNREADABLE = "unreadable"
# Reason slugs (dead letters, metrics) for the failures fingerprint() reports.
_FAILURE_SLUGS = (("bomb", "bomb"), ("incomplete", "truncated"), ("corrupt", "corrupt_encoding"),
                  ("PDF streams inflate", "too_large"))


def failure_reason(error: str | None) -> str:
    """The reason slug of a fingerprint's extraction error (``extract`` when
    nothing more precise is known)."""
    rest = (error or "").partition(":")[2].strip()
    return next((slug for key, slug in _FAILURE_SLUGS if rest.startswith(key)), "extract")


def empty_fingerprint(digest: str, byte_count: int, error: str | None = None,
                      http_status: int | None = None) -> Fingerprint:
    return Fingerprint(
        kind="empty", digest=digest, byte_count=byte_count, word_count=0, language=None, title="",
        headings=(), term_freqs={}, shingle_count=0, minhash=b"", simhash_raw=0, simhash_tf=0,
        dois=frozenset(), citation={}, page_kind=None, error=error, http_status=http_status,
    )


def top_terms(tf: Counter[str], n: int) -> dict[str, int]:
    """The ``n`` most frequent terms, ties broken by the term (deterministic), most frequent first.
    Only the terms at the cut-off count are sorted by term: sorting the whole table by term was
    a thirtieth of a fingerprint's CPU, most of it on terms seen once that the cut leaves out."""
    if len(tf) <= n:
        return dict(tf)
    if n <= 0:
        return {}
    cut = sorted(tf.values(), reverse=True)[n - 1]  # the count of the n-th term
    above = [(t, c) for t, c in tf.items() if c > cut]
    at_cut = sorted(t for t, c in tf.items() if c == cut)[: n - len(above)]
    above.sort()  # by term, then (a stable sort) by count, most first
    above.sort(key=itemgetter(1), reverse=True)
    return dict(above + [(t, cut) for t in at_cut])


def _redirect_of(doc: HtmlDoc, url: str, n_words: int) -> str | None:
    """Where a stub of fewer than :data:`STUB_MAX_WORDS` words keeps its content, or ``None``.

    Meta refresh is part of HTML: archives replay it and crawlers follow it, so a refresh stub's
    content is elsewhere.  A script-only redirect is judged on what the capture holds (rendering
    follows it when enabled) unless it leaves the site: the site handed its address to another.
    A frameset's content is in its frames, each captured under its own address, and this capture
    holds a "your browser does not support frames" line; a replay shows the frames, so it is a
    redirect in all but name to its main frame (a frameset that frames another site is that
    domain's "masked forwarding").  Targets are read through archive rewriting
    (``/1068/20120302210503/http://x/`` is ``http://x/``)."""
    if n_words >= STUB_MAX_WORDS:
        return None
    if doc.refresh_url:
        return original_url(urljoin(url, doc.refresh_url))
    home = site_of(host_of(url))
    if doc.js_redirect:
        target = original_url(urljoin(url, doc.js_redirect))
        if site_of(host_of(target)) != home:
            return target
    if doc.frames:  # the main frame holds the page (HtmlDoc.frames)
        return original_url(urljoin(url, doc.frames[0]))
    return None


# A declared address longer than this is kept as its start and a hash: Arabic slugs, percent-encoded,
# run to hundreds of characters, and a baseline's bytes are bounded (README: state per URL).
ADDRESS_MAX_CHARS = 100


def declared_address(declared: str, url: str) -> str:
    """The canonical key of the address a page declares for itself (``rel="canonical"``, else
    ``og:url``), resolved against the capture's URL and read through archive rewriting; ``""``
    when it declares none that is a web address."""
    if not declared:
        return ""
    try:
        target = original_url(urljoin(url, declared))
        if urlsplit(target).scheme.lower() not in ("http", "https"):
            return ""
    except ValueError:
        return ""
    return address_key(target)


def address_key(url: str) -> str:
    """An address as declared addresses are kept and compared: its canonical key, lowercased (one
    address whatever the case a template writes it in: IIS ignores case), bounded.  The default
    canonical rules on purpose: both sides of the comparison (the page's declared address and the
    seed's, :func:`watcher.profiles.subject.page_subject`) are keyed here, never a history key."""
    key = url_key(original_url(url)).lower()
    if len(key) > ADDRESS_MAX_CHARS:
        key = key[:ADDRESS_MAX_CHARS - 17] + "~" + xxhash.xxh64_hexdigest(key.encode("utf-8"))
    return key


# The capture's HTTP headers a fingerprint reads (the body's codings, a redirect's target).  fingerprint()
# sees only these, so no other header can change a fingerprint and reading_key() below is exact.
HEADERS_READ = frozenset({"content-encoding", "location"})


def headers_read(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` less those no fingerprint reads (:data:`HEADERS_READ`)."""
    return {k: v for k, v in headers.items() if k.lower() in HEADERS_READ}


def reading_key(capture: Capture, *, record: bool, words_kept: bool, main_content: bool) -> tuple[Any, ...] | None:
    """Everything :func:`fingerprint` reads of ``capture`` (its payload by length and a 128-bit hash)
    and how, for a capture with a payload (``None`` otherwise).  Two captures with one key have one
    fingerprint: a scan parses a payload its history repeated once, not at every capture (an
    unchanged page after a change, which the baseline's same-digest test does not catch: 482 of
    the gold's 2,119 pages read)."""
    content = capture.content
    if content is None:
        return None
    heads = tuple(sorted(headers_read(capture.headers).items()))
    return (capture.url, capture.status, capture.content_type, heads, capture.effective_digest, len(content),
            xxhash.xxh3_128_digest(content), record, words_kept, main_content)


def _location(capture: Capture) -> str | None:
    """An HTTP redirect's target, read through archive rewriting, or ``None`` when the capture
    recorded no ``Location``."""
    loc = next((v for k, v in capture.headers.items() if k.lower() == "location" and v.strip()), None)
    return original_url(urljoin(capture.url, loc.strip())) if loc else None


def _targeted(fp: Fingerprint, capture: Capture) -> Fingerprint:
    """An HTTP redirect without a readable body (none, or a binary one: crawlers often store a 301
    bare) still names its target: a seed handed to another site redirects there."""
    if capture.status in REDIRECT_STATUSES and not fp.redirect:
        return replace(fp, redirect=_location(capture))
    return fp


def _replayed_redirect(notice: tuple[int | None, str | None], capture: Capture, digest: str,
                       byte_count: int) -> Fingerprint:
    """A Wayback replay's redirect notice is the HTTP redirect the crawler recorded (its status), or
    the replay's hop to its nearest capture (a stub), with its target read through the replay's
    rewriting (``/web/2013.../http://x/`` is ``http://x/``)."""
    status, link = notice
    target = original_url(urljoin(capture.url, link)) if link else None
    return replace(empty_fingerprint(digest, byte_count, http_status=status or capture.status), redirect=target)


def fingerprint(capture: Capture, cfg: EngineConfig, *, record: bool = True, words_kept: bool = False,
                main_content: bool | None = None) -> Fingerprint:
    """Fingerprint ``capture``; never raises on bad content.

    ``record``: read the scholarly record (citation, Dublin Core, schema.org meta and the main
    text), which only the ``doi`` profile compares; it is a fifth of the cost of a fingerprint.
    ``words_kept``: keep the word sequence (as ``tokens.keep_tokens`` does), which the ``text``
    profile aligns to tell a fixed typo from a reworded sentence.
    ``main_content``: remove boilerplate first (default: ``extract.main_content`` where it is set,
    else not; Engine.fingerprint passes the scored profile's answer for the seed)."""
    if main_content is None:
        main_content = cfg.extract.main_content_for(False)  # the profile's answer comes from the engine
    if any(k.lower() not in HEADERS_READ for k in capture.headers):
        capture = replace(capture, headers=headers_read(capture.headers))
    content = capture.content or b""
    digest = capture.effective_digest or payload_digest(content)
    if capture.content is None:
        if capture.error:
            # The input named a capture that could not be read (missing WARC,
            # cut record, failed fetch): an error, never an empty page.
            return empty_fingerprint(digest, 0, f"{UNREADABLE}: {capture.error}", capture.status)
        return _targeted(empty_fingerprint(digest, 0, "no content", capture.status), capture)
    byte_count = len(content)
    truncated = False
    # Bodies stored as sent with Content-Encoding (or coded twice) are
    # undone here, once, for every input path; the digest stays the payload's.
    body = decode_body(content, capture.headers, content_type=capture.content_type,
                       max_bytes=cfg.extract.max_bytes, max_ratio=cfg.extract.max_decompress_ratio)
    if body.note is not None and body.note != "truncated":
        # A bomb, or a coded body that breaks off: never a verdict on a part of a page.
        error = f"{EXTRACT_FAILED}: {body.note} ({body.detail})"
        return replace(empty_fingerprint(digest, byte_count, error, capture.status), kind="binary")
    content, truncated = body.content, body.note == "truncated"
    if body.codings:
        byte_count = len(content)  # the page's bytes, comparable with an uncoded capture's
    if len(content) > cfg.extract.max_bytes:
        content = content[: cfg.extract.max_bytes]
        truncated = True
    kind = sniff_kind(content, capture.content_type)
    if kind == "empty":
        return _targeted(empty_fingerprint(digest, byte_count, "no content", capture.status), capture)
    raw = ""
    doc = HtmlDoc()
    if kind == "pdf":
        pdf = pdf_text(content, cfg.extract.pdf_max_pages, cfg.extract.max_bytes)
        if pdf.failure:
            return replace(empty_fingerprint(digest, byte_count, f"{EXTRACT_FAILED}: {pdf.failure}", capture.status),
                           kind="pdf")
        truncated = truncated or pdf.truncated
        text = pdf.text
        doc.text, doc.title = text, pdf.title
        doc.dois = find_dois(text[:200_000])
    elif kind in ("html", "text"):
        raw, _enc = decode(content, capture.content_type, cfg.extract.fallback_encoding,
                           host_of(capture.url).rpartition(".")[2])
        if kind == "html":
            doc = read_html(reveal_hidden(raw), banners=cfg.extract.remove_banners, main_content=main_content)
            if doc.replay_redirect is not None:
                return _replayed_redirect(doc.replay_redirect, capture, digest, byte_count)
        else:
            doc.text = normalise_ws(raw)
            doc.dois = find_dois(raw[:200_000])
    else:
        # Other non-text types: structural measures only.
        return _targeted(Fingerprint(
            kind="binary", digest=digest, byte_count=byte_count, word_count=0, language=None, title="",
            headings=(), term_freqs={}, shingle_count=0, minhash=b"", simhash_raw=0, simhash_tf=0,
            dois=frozenset(), citation={}, page_kind=None, error="truncated" if truncated else None,
            http_status=capture.status,
        ), capture)
    text = doc.text
    language = lang.detect(text, doc.lang_attr)
    tokens = words(text, language)
    if kind == "html" and len(tokens) < REPLAY_MISSING_MAX_WORDS and (gone := replay_missing_of(text)):
        # No verdict and never a baseline, as a download that came back empty: it says nothing of the
        # page (gold's empty downloads are mostly labelled on topic, 107 of 121).
        return empty_fingerprint(digest, byte_count, f"the replay has no capture: \"{gone}\"", capture.status)
    if len(tokens) > MAX_WORDS:  # bounds the shingles, the MinHash input and the term table
        tokens = tokens[:MAX_WORDS]
        truncated = True
    truncated = truncated or doc.capped is not None
    needed = {*cfg.measures, *cfg.report_measures}
    tok = cfg.tokens
    terms = terms_of(tokens, language, stop=cfg.tokens.stop_words, stem=cfg.tokens.stemming,
                     stop_max=cfg.tokens.stop_words_max)
    tf = Counter(terms)
    hashes = shingle_hashes(tokens, cfg.tokens.shingle_size)
    citation = {k: tuple(v) for k, v in doc.meta.items() if k.startswith("citation_")}
    meta_dois = {d for k in _DOI_META for v in doc.meta.get(k, []) for d in find_dois(v)}
    dois = frozenset(meta_dois or set(sorted(doc.dois)[:50]))
    # an HTTP redirect by its Location (None where none was recorded: still not the page, profiles.shared.checks)
    redirect = _location(capture) if capture.status in REDIRECT_STATUSES else _redirect_of(doc, capture.url,
                                                                                           len(tokens))
    pk = detect_page_kind(doc.title, doc.headings, text, len(tokens), capture.status) if cfg.page_kinds else None
    # kept by the Fingerprint only where the title does not contain it (see Fingerprint.headline)
    headline = normalise_ws((doc.meta.get("og:title") or doc.meta.get("citation_title") or [""])[0])[:HEADLINE_MAX]
    # no declared headline: the longest first-level heading that reads as one (three words or more)
    headings = [h for h in doc.h1 if len(h.split()) >= 3] if not headline else []
    heading = max(headings, key=len)[:HEADLINE_MAX] if headings else ""
    features = {"terms", "minhash", "shingles", "sample"}
    if "raw_simhash" in needed:
        features.add("raw_simhash")
    if "tf_simhash" in needed:
        features.add("tf_simhash")
    if tok.keep_shingles:
        features.add("shingles")
    keep_words = tok.keep_tokens or words_kept
    if keep_words:
        features.add("tokens")
    if tok.keep_text:
        features.add("text")
    return Fingerprint(
        kind=kind,
        digest=digest,
        byte_count=byte_count,
        word_count=len(tokens),
        language=language,
        title=doc.title,
        headline=headline,
        heading=heading,
        address=declared_address(doc.declared, capture.url),
        headings=tuple(doc.headings),
        term_freqs=top_terms(tf, tok.max_terms),
        shingle_count=len(hashes),
        minhash=minhash_of(hashes, cfg.tokens.minhash_permutations) if len(hashes) else b"",
        simhash_raw=raw_simhash(raw or text) if "raw_simhash" in needed else 0,
        simhash_tf=_simhash(terms) if "tf_simhash" in needed else 0,
        dois=dois,
        citation=citation,
        page_kind=pk.kind if pk else None,
        page_kind_evidence=f"{pk.where}: {pk.evidence}" if pk else None,
        host=host_of(capture.url),
        redirect=redirect,
        # The whole set while the capture is scored (and kept for re-scoring); a baseline keeps the sample.
        shingles=frozenset(hashes.tolist()),
        shingle_sample=hashes[:SHINGLE_SAMPLE].astype("<u8").tobytes(),
        tokens=tuple(tokens) if keep_words else None,
        text=text if tok.keep_text else None,
        stemmed=tok.stemming,
        boilerplate_removed=main_content,
        error="truncated" if truncated else None,
        http_status=capture.status,
        features=frozenset(features),
        record=record_of(raw, doc.meta, doc.dois) if record and kind == "html" else None,
        text_bytes=len(text.encode("utf-8")),
        badness=badness(tokens, language),
        boilerplate_share=doc.boilerplate_share,
    )
