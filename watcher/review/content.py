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

from ..config import Config
from ..errors import BlockedAddressError
from ..net.http import FetchResult, HttpFetcher
from .access import Access, Refused

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Content:
    data: bytes | None
    content_type: str | None
    error: str | None = None
    where: str = ""


def _warc(locator: str, url: str, when: datetime, cfg: Config, access: Access) -> Content:
    from ..archive.index import IndexEntry
    from ..archive.warc import RecordLoader

    raw, _, off = locator[len("warc:"):].rpartition("#")
    try:
        offset = int(off)
    except ValueError:
        return Content(None, None, "bad locator", raw[:300])
    path = access.warc(raw, offset)
    entry = IndexEntry(key="", url=url, time=when, path=path, offset=offset, kind="response")
    loader = RecordLoader(cfg)
    try:
        loaded = loader.load(entry)
    finally:
        loader.close()
    return Content(loaded.content, loaded.content_type, loaded.error, path)


class ArchiveOnly:
    """The guarded client, held to the configured archives: a hop outside them is refused, not fetched."""

    def __init__(self, inner: HttpFetcher, access: Access) -> None:
        self.inner = inner
        self.access = access

    async def fetch(self, url: str, **kw: object) -> FetchResult:
        self.access.check_uri(url)
        return await self.inner.fetch(url, **kw)  # type: ignore[arg-type]

    async def close(self) -> None:
        await self.inner.close()


def _memento(uri_m: str, cfg: Config, access: Access) -> Content:
    from ..sources.fetch import fetch_raw, run_batch

    access.check_uri(uri_m)
    # the batch client (address guard, size cap), with the review's own timeout, held to the archives
    cfg = cfg.model_copy(update={"scan": cfg.scan.model_copy(update={"timemap_timeout_s": cfg.review.fetch_timeout_s})})
    res = run_batch(cfg, lambda f: fetch_raw(ArchiveOnly(f, access), uri_m,  # type: ignore[arg-type]
                                             max_redirects=cfg.scan.follow_redirects))
    return Content(res.content, res.content_type, res.error, uri_m)


def load_content(locator: str | None, uri_m: str | None, url: str, when: datetime, cfg: Config,
                 access: Access | None = None) -> Content:
    """The capture's bytes (synchronous: the server calls it in a worker thread); ``access``: what may be
    read (default: the roots and archives ``cfg`` names)."""
    access = access or Access.of(cfg)
    try:
        if locator and locator.startswith("warc:"):
            return _warc(locator, url, when, cfg, access)
        if locator and locator.startswith("file:"):
            p = access.path(locator[len("file:"):])
            with open(p, "rb") as fh:
                data = fh.read(cfg.engine.extract.max_bytes + 1)
            if len(data) > cfg.engine.extract.max_bytes:
                return Content(None, None, f"larger than engine.extract.max_bytes ({cfg.engine.extract.max_bytes})", p)
            return Content(data, None, None, p)
        if uri_m and uri_m.startswith(("http://", "https://")):
            return _memento(uri_m, cfg, access)
    except Refused as exc:
        log.warning("review: refused to read a capture: %s", exc)
        return Content(None, None, f"refused: {exc}", "")
    except BlockedAddressError as exc:
        log.warning("review: %s", exc)
        return Content(None, None, f"refused: {exc}", "")
    except OSError as exc:
        return Content(None, None, f"unreadable: {exc.strerror or type(exc).__name__}", "")
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
