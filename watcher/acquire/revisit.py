"""The payload a WARC revisit record repeats (:class:`RevisitFinder`).

Why: a crawler that deduplicates writes a ``revisit`` record (no payload)
when it fetches bytes it has stored before.  The streaming watcher used to
get that payload from the history's baseline digest, so a revisit that
arrived before its original was scored (the crawler's feed is unkeyed: any
order is possible) was dead-lettered.  The record itself says where the
payload is: ``WARC-Refers-To`` (the original's record id), or
``WARC-Refers-To-Target-URI`` and ``-Date``, and always its payload digest.
This module looks the original up as the batch scanner does
(:class:`~watcher.archive.warc.RevisitResolver`: record id, then target and
date, then digest, same URL first), first in the revisit's own WARC, then in
the other WARC files of its folder, newest first, and reads its payload.  So
a revisit gets batch's verdict whatever the arrival order, and the events
carry nothing Heritrix's feed does not.

Indexes of the files searched are cached (a few files, extended when a file
grows, as Heritrix appends to an open WARC); indexing runs in the caller's
thread, under a lock.
"""

from __future__ import annotations

import io
import logging
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from ..archive.index import IndexEntry, index_archive, normalise_digest, parse_warc_date
from ..archive.warc import Loaded, RecordLoader, RevisitResolver
from ..canonical import url_key
from ..config import Config
from ..errors import AcquireError
from ..model import payload_digest

log = logging.getLogger(__name__)

# Other WARC files of the revisit's folder searched (newest first) when its own file lacks the original:
# a crawl's deduplication mostly points into its own recent files, and each file searched is read whole
# once (4-35 MB/s compressed, measured on the shared WARCs: a 1 GB WARC takes 30 s to 4 min).  So the
# search takes the newest files up to MAX_OTHER_BYTES (at least MIN_OTHER_FILES of them, at most
# MAX_OTHER_FILES): a folder of small files is searched whole, whatever order a copy gave their times.
# The cache holds every file one lookup searches, so lookups never evict each other's indexes.
MIN_OTHER_FILES = 3
MAX_OTHER_FILES = 32
MAX_OTHER_BYTES = 256 * 1024 * 1024
_CACHED_FILES = MAX_OTHER_FILES + 3
_WARC_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz", ".warc.open", ".warc.gz.open")


@dataclass(frozen=True, slots=True)
class Resolved:
    """The original a revisit repeats, loaded: what batch hands the engine for that revisit."""

    original: IndexEntry
    content: bytes | None
    status: int | None
    headers: dict[str, str]
    content_type: str | None
    digest: str | None


def revisit_entry(data: bytes, path: str, cfg: Config) -> IndexEntry:
    """The revisit record in ``data`` (one record's bytes) as an index entry (its references, digest, status)."""
    try:
        record = next(iter(ArchiveIterator(io.BytesIO(data), check_digests=False)))
        headers = record.rec_headers
        uri = headers.get_header("WARC-Target-URI") or ""
        time = parse_warc_date(headers.get_header("WARC-Date"))
        http = record.http_headers
        code = http.get_statuscode() if http is not None else None
        status = int(code) if code and str(code).isdigit() else None
        mime = http.get_header("Content-Type") if http is not None else None
    except (StopIteration, OSError, EOFError, ValueError) as exc:
        raise AcquireError(f"unreadable revisit record: {exc!r}", reason="warc_unreadable") from None
    if time is None or not uri:
        raise AcquireError("revisit record has no WARC-Target-URI or WARC-Date", reason="warc_revisit")
    return IndexEntry(
        key=url_key(uri, cfg.engine.canonical), url=uri, time=time, path=path, offset=0, kind="revisit",
        digest=normalise_digest(headers.get_header("WARC-Payload-Digest")),
        record_id=headers.get_header("WARC-Record-ID"), refers_to=headers.get_header("WARC-Refers-To"),
        refers_to_uri=headers.get_header("WARC-Refers-To-Target-URI"),
        refers_to_date=parse_warc_date(headers.get_header("WARC-Refers-To-Date")), status=status, mime=mime,
    )


@dataclass
class _Index:
    size: int
    end: int
    entries: list[IndexEntry]


class RevisitFinder:
    """Finds and loads the original capture of a revisit record (blocking: call it in a thread)."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, _Index] = OrderedDict()

    def _originals(self, path: str) -> list[IndexEntry]:
        """The response/resource records of ``path`` (indexed once, extended when the file grew)."""
        try:
            size = os.stat(path).st_size
        except OSError:
            return []
        cached = self._cache.get(path)
        if cached is not None and cached.size == size:
            self._cache.move_to_end(path)
            return cached.entries
        if cached is None or size < cached.end:
            cached = _Index(-1, 0, [])
        end = cached.end
        for entry in index_archive(path, self.cfg, start=cached.end, growing=True):
            if entry.truncated:
                break
            end = entry.offset + (entry.length or 0)
            if entry.kind != "revisit":
                cached.entries.append(entry)
        cached.size, cached.end = size, end
        self._cache[path] = cached
        self._cache.move_to_end(path)
        while len(self._cache) > _CACHED_FILES:
            self._cache.popitem(last=False)
        return cached.entries

    def _candidates(self, path: Path) -> list[str]:
        """The revisit's own file, then the other WARC files of its folder, newest first."""
        others: list[tuple[float, str, int]] = []
        try:
            with os.scandir(path.parent) as it:
                for item in it:
                    if item.name != path.name and item.name.endswith(_WARC_SUFFIXES) and item.is_file():
                        st = item.stat()
                        others.append((-st.st_mtime, item.name, st.st_size))
        except OSError:
            pass
        others.sort()  # newest first, ties by name: the same order on every machine
        chosen: list[str] = []
        total = 0
        for _, name, size in others[:MAX_OTHER_FILES]:
            if len(chosen) >= MIN_OTHER_FILES and total + size > MAX_OTHER_BYTES:
                break
            chosen.append(str(path.parent / name))
            total += size
        return [str(path), *chosen]

    def find(self, path: Path, data: bytes) -> Resolved:
        """The original of the revisit record ``data`` read from ``path``; :class:`AcquireError` if none is found."""
        rev = revisit_entry(data, str(path), self.cfg)
        original = None
        with self._lock:
            for candidate in self._candidates(path):
                original = RevisitResolver(self._originals(candidate), self.cfg).resolve(rev)
                if original is not None:
                    break
        if original is None:
            raise AcquireError(f"revisit of {rev.url[:200]}: its original capture is neither in {path.name} nor in "
                               f"the other WARC files of its folder", reason="warc_revisit")
        loader = RecordLoader(self.cfg)
        try:
            loaded: Loaded = loader.load(original)
        finally:
            loader.close()
        if loaded.content is None:
            raise AcquireError(f"revisit of {rev.url[:200]}: its original at {Path(original.path).name}:"
                               f"{original.offset} is unreadable ({loaded.error})", reason="warc_revisit")
        log.debug("revisit of %s resolved to %s:%d", rev.url, original.path, original.offset)
        return Resolved(
            original=original, content=loaded.content,
            status=rev.status if rev.status is not None else loaded.status, headers=loaded.headers,
            content_type=loaded.content_type or original.mime,
            digest=rev.digest or payload_digest(loaded.content),
        )
