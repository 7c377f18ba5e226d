"""Pass two of a WARC/ARC/CDX scan: histories with their payloads.

The index (pass one) is grouped by canonical URL key; for each history the
records are loaded from their files (seek to the offset, read one record),
revisits are resolved to the capture they repeat, and the history is handed
out before the next one is loaded.  Peak memory: the index plus one history.

Digests: a response's ``Capture.digest`` is computed over the payload handed
to the engine (decoded), because fabricated or transfer-encoded WARCs carry
declared digests that do not describe those bytes.  A revisit keeps its own
declared payload digest (``WARC-Payload-Digest``), as it has no bytes of its own.
"""

from __future__ import annotations

import logging
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from warcio.archiveiterator import ArchiveIterator

from ..canonical import url_key
from ..config import Config
from ..events.skip import base_mimetype, non_document
from ..model import Capture, payload_digest, ts14
from .index import IndexEntry
from .wacz import open_archive

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Loaded:
    content: bytes | None
    status: int | None
    headers: dict[str, str]
    content_type: str | None
    error: str | None = None


class RevisitResolver:
    """Finds the original capture a revisit repeats, across all inputs.

    Order: WARC-Refers-To record id; then WARC-Refers-To-Target-URI and -Date;
    then the payload digest (same URL first, the latest earlier capture
    preferred; then any URL, for URL-agnostic revisits).
    """

    def __init__(self, entries: Iterable[IndexEntry], cfg: Config) -> None:
        self._cfg = cfg
        self._by_id: dict[str, IndexEntry] = {}
        self._by_digest: dict[str, list[IndexEntry]] = defaultdict(list)
        for e in entries:
            if e.kind == "revisit":
                continue
            if e.record_id and e.record_id not in self._by_id:
                self._by_id[e.record_id] = e
            if e.digest:
                self._by_digest[e.digest].append(e)

    def resolve(self, rev: IndexEntry) -> IndexEntry | None:
        if rev.refers_to and rev.refers_to in self._by_id:
            return self._by_id[rev.refers_to]
        candidates = self._by_digest.get(rev.digest or "", [])
        if rev.refers_to_uri:
            target = url_key(rev.refers_to_uri, self._cfg.engine.canonical)
            for c in candidates:
                if c.key == target and (rev.refers_to_date is None or ts14(c.time) == ts14(rev.refers_to_date)):
                    return c
        if not candidates:
            return None
        same = [c for c in candidates if c.key == rev.key]
        pool = same or candidates
        earlier = [c for c in pool if c.time <= rev.time]
        if earlier:
            return max(earlier, key=lambda c: c.time)
        return min(pool, key=lambda c: c.time)


def _read_record(rec: Any, max_bytes: int) -> Loaded:
    http = rec.http_headers
    headers: dict[str, str] = {}
    status: int | None = None
    content_type: str | None = None
    if http is not None:
        headers = {k: v for k, v in http.headers}
        try:
            status = int(http.get_statuscode())
        except (TypeError, ValueError):
            status = None
        content_type = http.get_header("Content-Type")
    if content_type is None and rec.rec_type == "resource":
        content_type = rec.rec_headers.get_header("Content-Type")
    try:
        content = rec.content_stream().read(max_bytes)
    except Exception as exc:  # bad chunking / content-encoding: keep the raw bytes
        log.debug("content decoding failed (%s); using raw payload", exc)
        content = rec.raw_stream.read(max_bytes)
    missing = bytes_missing(rec.raw_stream) if len(content) < max_bytes else 0
    if missing > 0:
        # The record ends before its Content-Length (a cut file or gzip
        # member): half a page reads like an off-topic page, so no verdict.
        log.warning("record of %s is truncated: %d bytes missing",
                    rec.rec_headers.get_header("WARC-Target-URI"), missing)
        return Loaded(None, status, headers, content_type, error="truncated")
    if len(content) >= max_bytes:
        log.warning("payload of %s cut at %d bytes (extract.max_bytes)",
                    rec.rec_headers.get_header("WARC-Target-URI"), max_bytes)
    return Loaded(content=content, status=status, headers=headers, content_type=content_type)


def bytes_missing(raw_stream: Any) -> int:
    """Bytes of the record block that the file does not hold (0: complete).

    The payload reader may stop before the block ends (a chunked body's
    trailer, bytes after a gzip stream), so the rest is read and dropped;
    what the block's length still promises after that is missing.
    """
    try:
        while raw_stream.read(1 << 16):
            pass
    except (OSError, EOFError, ValueError):
        pass
    return int(getattr(raw_stream, "limit", 0) or 0)


class RecordLoader:
    """Loads single records by (file, offset), keeping files open per history."""

    def __init__(self, cfg: Config | None = None, *, max_bytes: int | None = None) -> None:
        if cfg is None and max_bytes is None:
            raise TypeError("RecordLoader needs the configuration or max_bytes")
        self._max = cfg.engine.extract.max_bytes if cfg is not None else int(max_bytes or 0)
        self._files: dict[str, IO[bytes]] = {}

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        self._files.clear()

    def _open(self, path: str) -> IO[bytes]:
        fh = self._files.get(path)
        if fh is None:
            fh = open_archive(path)  # kept open for the history, closed in close()
            self._files[path] = fh
        return fh

    def load(self, entry: IndexEntry) -> Loaded:
        try:
            fh = self._open(entry.path)
        except OSError as exc:
            log.warning("%s: cannot open WARC for %s at offset %d: %s", entry.path, entry.url, entry.offset, exc)
            return Loaded(None, entry.status, {}, entry.mime, error="warc_missing")
        try:
            fh.seek(entry.offset)
            it = ArchiveIterator(fh, arc2warc=True)
            rec = next(iter(it))
            if rec.rec_headers.get_header("WARC-Target-URI") != entry.url and entry.source in ("warc", "arc"):
                raise ValueError("record at offset does not match the index")
            return _read_record(rec, self._max)
        except Exception as exc:  # not seekable (single-stream gzip) or a bad offset: scan the file
            log.debug("%s: direct load at %d failed (%s); scanning sequentially", entry.path, entry.offset, exc)
        return self._scan(entry)

    def _scan(self, entry: IndexEntry) -> Loaded:
        try:
            with open_archive(entry.path) as fh:
                it = ArchiveIterator(fh, arc2warc=True)
                for rec in it:
                    uri = rec.rec_headers.get_header("WARC-Target-URI")
                    if uri == entry.url and rec.rec_type == entry.kind:
                        date = rec.rec_headers.get_header("WARC-Date") or ""
                        if date[:19].replace("-", "").replace(":", "").replace("T", "") == ts14(entry.time):
                            return _read_record(rec, self._max)
        except Exception as exc:  # corrupt input: report as a capture error, keep going
            log.warning("%s: record of %s at offset %d unreadable: %s", entry.path, entry.url, entry.offset, exc)
        return Loaded(None, entry.status, {}, entry.mime, error="record_unreadable")


def dedupe(entries: Iterable[IndexEntry]) -> list[IndexEntry]:
    """Drop entries seen twice (a WARC given with its own CDX index, a file
    given twice): same record location, or same URL key, second and digest."""
    seen: set[tuple[str, ...]] = set()
    out: list[IndexEntry] = []
    for e in entries:
        loc = ("loc", e.path, str(e.offset))
        ident = ("id", e.key, ts14(e.time), e.digest or "", e.kind) if e.digest else loc
        if loc in seen or ident in seen:
            continue
        seen.add(loc)
        seen.add(ident)
        out.append(e)
    return out


def build_capture(entry: IndexEntry, loaded: Loaded, *, is_revisit: bool, digest: str | None,
                  read_from: IndexEntry | None = None) -> Capture:
    """``read_from``: the record the payload came from (a revisit's original), when not ``entry``."""
    content_type = loaded.content_type or entry.mime
    where = read_from or entry
    return Capture(
        url=entry.url,
        timestamp=entry.time,
        content=loaded.content,
        content_type=content_type,
        status=loaded.status if loaded.status is not None else entry.status,
        headers=loaded.headers,
        digest=digest,
        source=entry.source,
        is_revisit=is_revisit,
        error=loaded.error or ("truncated" if entry.truncated else None),
        locator=f"warc:{os.path.abspath(where.path)}#{where.offset}" if loaded.content is not None else None,
    )


def skip_non_documents(entries: list[IndexEntry], resolver: RevisitResolver, cfg: Config,
                       skipped: Counter[str] | None = None) -> list[IndexEntry]:
    """``entries`` less the non-documents (stylesheets, scripts, images), by the stream's rule
    (:func:`watcher.events.skip.non_document`, ``events.document_mimetypes``): a stylesheet
    scored as a page reads as a page of many words that never changes.  A revisit is judged by
    its own type, or else its original's.  ``skipped`` counts them by MIME type."""
    kept: list[IndexEntry] = []
    for e in entries:
        mime = e.mime
        if mime is None and e.kind == "revisit":
            original = resolver.resolve(e)
            mime = original.mime if original is not None else None
        if non_document(mime, cfg.events):
            if skipped is not None:
                skipped[base_mimetype(mime)] += 1
            continue
        kept.append(e)
    return kept


@dataclass(frozen=True, slots=True)
class ArchiveHistory:
    """A history's records, read where the history is scored rather than where the archives were
    indexed.  Why: a scan's main process read every record and sent each payload to a worker, at
    about a fifth of a worker's CPU per capture, so it could feed four or five workers and no more;
    only these entries travel now.  ``records``: each record in capture-time order with, for a
    revisit, the original it repeats (``None`` when none is among the inputs)."""

    key: str
    records: tuple[tuple[IndexEntry, IndexEntry | None], ...]
    max_bytes: int

    def load(self) -> list[Capture]:
        """The captures with their payloads, revisits with their originals' payloads."""
        loader = RecordLoader(max_bytes=self.max_bytes)
        try:
            return [_capture_for(e, loader, original) for e, original in self.records]
        finally:
            loader.close()


def archive_histories(entries: list[IndexEntry], cfg: Config,
                      skipped: Counter[str] | None = None) -> Iterator[ArchiveHistory]:
    """Group ``entries`` by URL key, in key order, each history's records in capture-time order
    (duplicates dropped, revisits paired with their originals, non-documents left out and counted
    in ``skipped``, see :func:`skip_non_documents`)."""
    entries = dedupe(entries)
    resolver = RevisitResolver(entries, cfg)
    entries = skip_non_documents(entries, resolver, cfg, skipped)
    groups: dict[str, list[IndexEntry]] = defaultdict(list)
    for e in entries:
        groups[e.key].append(e)
    for key in sorted(groups):
        ordered = sorted(groups[key], key=lambda x: (x.time, x.offset))
        yield ArchiveHistory(key, tuple((e, resolver.resolve(e) if e.kind == "revisit" else None) for e in ordered),
                             cfg.engine.extract.max_bytes)


def _capture_for(e: IndexEntry, loader: RecordLoader, original: IndexEntry | None) -> Capture:
    if e.kind != "revisit":
        if e.truncated:  # found cut while indexing: not read again
            return build_capture(e, Loaded(None, e.status, {}, e.mime, error="truncated"), is_revisit=False,
                                 digest=e.digest)
        loaded = loader.load(e)
        digest = payload_digest(loaded.content) if loaded.content is not None else e.digest
        return build_capture(e, loaded, is_revisit=False, digest=digest)
    if original is None:
        log.info("revisit of %s at %s: original capture not among the inputs", e.url, ts14(e.time))
        return build_capture(e, Loaded(None, e.status, {}, e.mime), is_revisit=True, digest=e.digest)
    orig = loader.load(original)
    status = e.status if e.status is not None else orig.status
    loaded = Loaded(orig.content, status, orig.headers, orig.content_type or original.mime, orig.error)
    digest = e.digest or (payload_digest(orig.content) if orig.content is not None else None)
    return build_capture(e, loaded, is_revisit=True, digest=digest, read_from=original)
