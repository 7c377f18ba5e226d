"""A capture's content, re-read for the curator from where the scan read it; text and word diff.

Why re-read: neither a scan result nor a store keeps pages (a store keeps compact fingerprints).  The
locator a scan result records says where the bytes are -- ``warc:<file>#<offset>`` (the record, read
with the scan's own record loader), ``file:<path>`` (a gold directory's HTML) -- and a memento with no
locator is fetched raw (``id_``) from its archive with the batch client (its address guard, size cap
and timeout).  Never the live web: a capture without a locator or URI-M has no content to show.
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..config import Config

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Content:
    data: bytes | None
    content_type: str | None
    error: str | None = None
    where: str = ""


def _warc(locator: str, url: str, when: datetime, cfg: Config) -> Content:
    from ..archive.index import IndexEntry
    from ..archive.warc import RecordLoader

    path, _, off = locator[len("warc:"):].rpartition("#")
    try:
        entry = IndexEntry(key="", url=url, time=when, path=path, offset=int(off), kind="response")
    except ValueError:
        return Content(None, None, "bad locator", locator)
    loader = RecordLoader(cfg)
    try:
        loaded = loader.load(entry)
    finally:
        loader.close()
    return Content(loaded.content, loaded.content_type, loaded.error, path)


def _memento(uri_m: str, cfg: Config) -> Content:
    from ..sources.fetch import fetch_raw, run_batch

    # the batch client (address guard, size cap), with the review's own timeout
    cfg = cfg.model_copy(update={"scan": cfg.scan.model_copy(update={"timemap_timeout_s": cfg.review.fetch_timeout_s})})
    res = run_batch(cfg, lambda f: fetch_raw(f, uri_m, max_redirects=cfg.scan.follow_redirects))
    return Content(res.content, res.content_type, res.error, uri_m)


def load_content(locator: str | None, uri_m: str | None, url: str, when: datetime, cfg: Config) -> Content:
    """The capture's bytes (synchronous: the server calls it in a worker thread)."""
    try:
        if locator and locator.startswith("warc:"):
            return _warc(locator, url, when, cfg)
        if locator and locator.startswith("file:"):
            p = Path(locator[len("file:"):])
            return Content(p.read_bytes(), None, None, str(p))
        if uri_m and uri_m.startswith(("http://", "https://")):
            return _memento(uri_m, cfg)
    except OSError as exc:
        return Content(None, None, f"unreadable: {exc}", locator or "")
    return Content(None, None, "no archived copy is known for this capture")


def page_text(content: Content, max_chars: int) -> str:
    """The page's visible text, as the extractor reads it (whole page, boilerplate kept)."""
    if content.data is None:
        return ""
    from ..extract.decode import decode
    from ..extract.html import read_html

    text, _ = decode(content.data, content.content_type)
    ctype = (content.content_type or "").lower()
    if "html" in ctype or "<" in text[:2048]:
        text = read_html(text).text
    return text[:max_chars]


@dataclass(frozen=True, slots=True)
class Span:
    op: str  # "same", "del" (only in the baseline) or "add" (only in the capture)
    text: str


def word_diff(a: str, b: str) -> list[Span]:
    """Word-level diff of two texts (whitespace kept as it separates words)."""
    wa, wb = a.split(), b.split()
    sm = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
    out: list[Span] = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            out.append(Span("same", " ".join(wa[i1:i2])))
            continue
        if i2 > i1:
            out.append(Span("del", " ".join(wa[i1:i2])))
        if j2 > j1:
            out.append(Span("add", " ".join(wb[j1:j2])))
    return out
