"""Executor side of ``driftline spark``: records read and fingerprinted where they lie.

Each task reads one archive file (or one archive's share of a CDX index, or one gold
history) with the batch scan's own readers (:func:`watcher.archive.index.index_archive`,
:class:`watcher.archive.warc.RecordLoader`, :func:`watcher.sources.gold.iter_gold`), so a
capture is built exactly as ``scan`` builds it, and fingerprints it there.  What leaves the
task is a :class:`Record`: the capture without its payload, its fingerprint and the index
metadata revisit resolution needs -- never the payload, which is what makes the shuffle
small (a fingerprint is a few kB, a page tens of kB).

A revisit has no payload of its own: it leaves the task unfingerprinted, and the job finds
its original by a join (:mod:`watcher.spark.job`) and takes the original's fingerprint.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from ..archive.detect import detect_input
from ..archive.index import IndexEntry, index_archive
from ..archive.warc import Loaded, RecordLoader, build_capture
from ..config import Config
from ..engine import Engine, Readings
from ..errors import DriftlineError
from ..events.skip import base_mimetype, non_document
from ..model import Capture, Fingerprint, payload_digest, utc
from ..profiles.seedkind import Seed
from ..sources.gold import GoldRow, iter_gold

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Record:
    """One capture as it travels: sorted by ``(history, time, tie, where)`` and folded.

    ``entry``: its index entry (None for gold captures), read by revisit resolution and
    the duplicate check; ``fp``: None for a revisit until its original is found."""

    history: str
    time_us: int
    tie: int
    where: str
    capture: Capture
    fp: Fingerprint | None
    entry: IndexEntry | None = None
    # False: a non-document (stylesheet, script, image), not scored but kept as a revisit's
    # possible original, as scan's resolver knows every record
    scored: bool = True

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.history, self.time_us, self.tie, self.where)


@dataclass(frozen=True, slots=True)
class ErrorRow:
    """Something that could not be read and has no capture of its own (a file's unreadable
    tail, a file that is not an archive, a task that failed): written beside the output."""

    source: str
    reason: str
    detail: str


Counts = Counter[str]
"""Counters of the reading stage: ``read``, ``skipped:<kind>`` (errors are counted from their rows)."""


def time_us(when: datetime) -> int:
    t = utc(when)
    return int(t.timestamp()) * 1_000_000 + t.microsecond


# Payloads read kept per archive file (and gold history) for their repeats (Engine.read_once): a file holds
# a URL's captures near one another, and an unchanged page captured again is parsed once.  Bounded, as a
# file is not: on the gold 8 give 1,869 reads of 2,302 captures, 32 give 1,867 and 1 gives 2,001.
READ_KEEP = 8


def _fingerprint(engine: Engine, cap: Capture, seed_url: str, read: Readings | None = None) -> Fingerprint:
    prof = engine.profile()
    if read is None:
        return engine.fingerprint(cap, prof, Seed.of(seed_url))
    return engine.read_once(cap, prof, Seed.of(seed_url), read, keep=READ_KEEP)


def _payloadless(cap: Capture) -> Capture:
    return dataclasses.replace(cap, content=None, headers={})


def archive_records(path: str, cfg: Config, engine: Engine, counts: Counts,
                    errors: list[ErrorRow], entries: Iterable[IndexEntry] | None = None) -> Iterator[Record]:
    """Every response/resource/revisit of the archive at ``path`` as a :class:`Record`.

    ``entries``: the records to read (a CDX index's rows for this file); by default the
    file is indexed here, as ``scan`` indexes it.  Non-documents are left out and counted
    (a revisit without a MIME type of its own is judged once its original is found)."""
    if entries is None:
        problems: list[str] = []
        try:
            kind = detect_input(path)
        except DriftlineError as exc:
            errors.append(ErrorRow(path, exc.reason, str(exc)))
            return
        if kind not in ("warc", "arc"):
            counts[f"skipped:not-an-archive ({kind})"] += 1
            return
        try:
            found = list(index_archive(path, cfg, source=kind, problems=problems))
        except DriftlineError as exc:
            errors.append(ErrorRow(path, exc.reason, str(exc)))
            return
        for p in problems:
            errors.append(ErrorRow(path, "archive_unreadable", p))
        entries = found
    loader = RecordLoader(cfg)
    read: Readings = {}
    try:
        for e in entries:
            counts["read"] += 1
            if e.kind != "revisit" and non_document(e.mime, cfg.events):
                counts[f"skipped:{base_mimetype(e.mime)}"] += 1
                cap = build_capture(e, Loaded(None, e.status, {}, e.mime), is_revisit=False, digest=e.digest)
                yield Record(e.key, time_us(e.time), e.offset, where_of(e), cap, None, e, scored=False)
                continue
            yield _record(e, loader, engine, read)
    finally:
        loader.close()


def _record(e: IndexEntry, loader: RecordLoader, engine: Engine, read: Readings) -> Record:
    """As ``scan`` builds the capture (:func:`watcher.archive.warc._capture_for`), fingerprinted."""
    where = where_of(e)
    if e.kind == "revisit":
        cap = build_capture(e, Loaded(None, e.status, {}, e.mime), is_revisit=True, digest=e.digest)
        return Record(e.key, time_us(e.time), e.offset, where, cap, None, e)
    if e.truncated:
        cap = build_capture(e, Loaded(None, e.status, {}, e.mime, error="truncated"), is_revisit=False,
                            digest=e.digest)
    else:
        loaded = loader.load(e)
        digest = payload_digest(loaded.content) if loaded.content is not None else e.digest
        cap = build_capture(e, loaded, is_revisit=False, digest=digest)
    fp = _fingerprint(engine, cap, e.url, read)
    return Record(e.key, time_us(e.time), e.offset, where, _payloadless(cap), fp, e)


def where_of(e: IndexEntry) -> str:
    return f"{e.path}#{e.offset:015d}"


def revisit_resolved(rev: Record, original: Record | None, engine: Engine) -> Record:
    """``rev`` with the fingerprint of the capture it repeats (``scan``: the original's
    payload under the revisit's own status), or, with no original among the inputs, the
    fingerprint of a capture without payload."""
    e = rev.entry
    assert e is not None
    if original is None or original.fp is None or original.entry is None:
        return dataclasses.replace(rev, fp=_fingerprint(engine, rev.capture, rev.capture.url))
    oc = original.capture
    status = e.status if e.status is not None else oc.status
    cap = dataclasses.replace(
        rev.capture, status=status, content_type=oc.content_type or original.entry.mime, error=oc.error,
        digest=e.digest or oc.digest, locator=oc.locator)
    fp = original.fp
    if status is not None and fp.http_status != status:
        fp = dataclasses.replace(fp, http_status=status)
    return dataclasses.replace(rev, capture=cap, fp=fp)


def gold_records(directory: str, rows: list[GoldRow], engine: Engine, counts: Counts) -> Iterator[Record]:
    """One gold history (``rows`` of one TimeMap id), fingerprinted with the history's seed
    (its earliest capture's URL), as ``scan`` does."""
    for history, captures in iter_gold(directory, rows):
        seed_url = captures[0].url if captures else history
        read: Readings = {}
        for i, cap in enumerate(captures):
            counts["read"] += 1
            fp = _fingerprint(engine, cap, seed_url, read)
            yield Record(history, time_us(cap.timestamp), i, "", _payloadless(cap), fp)


def staged_copy(name: str, data: bytes) -> str:
    """A local file holding ``data`` (an archive read through Hadoop's file system): the
    batch readers seek in files.  The caller removes it."""
    fd, tmp = tempfile.mkstemp(prefix="driftline-spark-", suffix="-" + os.path.basename(name)[-60:])
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return tmp
