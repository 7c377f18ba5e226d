"""Pass one of a WARC/ARC/CDX scan: a small index entry per usable record.

Why an index first: revisit records point at captures that may sit in another
file given later on the command line, and a history's captures are spread
over many files.  Indexing everything first (URL key, time, file, offset,
digest, record kind) and loading bytes per history afterwards keeps peak
memory at one history's content instead of the whole collection.

A malformed or truncated archive never stops the scan: the records read so
far are kept, a warning names the file and offset, and the next input is
indexed.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from warcio.archiveiterator import ArchiveIterator

from ..canonical import url_key
from ..config import Config
from ..errors import InputError
from ..events.fields import parse_digits
from .detect import open_text
from .wacz import open_archive

log = logging.getLogger(__name__)

RecordKind = Literal["response", "resource", "revisit"]
_KEEP: frozenset[str] = frozenset({"response", "resource", "revisit"})
# One object per record kind and per media type for every entry that names it: a scan holds every
# entry of its inputs in memory until it has grouped them (docs/batch.md), and a string the reader
# made for each record (its type, its Content-Type) was a sixth of an entry's 0.7 kB.
_RECORD_KINDS: dict[str, RecordKind] = {k: k for k in ("response", "resource", "revisit")}


def _shared(value: str | None) -> str | None:
    """``value`` as the one object every entry with this value holds (media types repeat)."""
    return sys.intern(value) if value is not None and len(value) <= 200 else value


_DEFAULT_CDX_FIELDS = ["N", "b", "a", "m", "s", "k", "r", "M", "S", "V", "g"]
_CDX9_FIELDS = ["N", "b", "a", "m", "s", "k", "r", "V", "g"]


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """Where one capture's record lives, and what is known without reading it."""

    key: str
    url: str
    time: datetime
    path: str
    offset: int
    kind: RecordKind
    digest: str | None = None
    record_id: str | None = None
    refers_to: str | None = None
    refers_to_uri: str | None = None
    refers_to_date: datetime | None = None
    status: int | None = None
    mime: str | None = None
    source: str = "warc"
    truncated: bool = False
    length: int | None = None  # bytes of the whole record in its file (WARC/ARC indexing only)


def normalise_digest(value: str | None) -> str | None:
    """``sha1:BASE32`` form; CDX files drop the algorithm prefix."""
    if not value or value == "-":
        return None
    value = value.strip()
    if ":" in value:
        algo, _, rest = value.partition(":")
        return f"{algo.lower()}:{rest.upper()}"
    return "sha1:" + value.upper()


def parse_warc_date(value: str | None) -> datetime | None:
    """ISO 8601 WARC-Date (fractions and ``Z`` allowed) or a 14-digit stamp."""
    if not value:
        return None
    value = value.strip()
    try:
        if re.fullmatch(r"\d{4,14}", value):
            padded = value.ljust(14, "0") if len(value) > 4 else value + "0101000000"
            if padded[4:6] == "00":
                padded = padded[:4] + "01" + padded[6:]
            if padded[6:8] == "00":
                padded = padded[:6] + "01" + padded[8:]
            return parse_digits(padded)  # the fields by position (``strptime`` was a fifth of a CDX row)
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def usable_uri(uri: str | None, cfg: Config) -> bool:
    """True for http(s)/ftp URIs that name a host; False for dns:, screenshot:,
    thumbnail: (``events.skip_schemes``), robots.txt (``events.skip_paths``) --
    the same filter the crawl feeds use -- and for garbage read from broken files."""
    if not uri:
        return False
    scheme = uri.split(":", 1)[0].lower()
    if scheme in cfg.events.skip_schemes:
        return False
    try:
        parts = urlsplit(uri)
    except ValueError:
        return False
    if parts.path in cfg.events.skip_paths:  # robots.txt: crawler bookkeeping, not content
        return False
    return parts.scheme.lower() in ("http", "https", "ftp") and bool(parts.netloc) and " " not in uri


def _int(value: Any) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def index_archive(
    path: str, cfg: Config, source: str = "warc", *, start: int = 0, growing: bool = False,
    problems: list[str] | None = None,
) -> Iterator[IndexEntry]:
    """Index every response/resource/revisit record of one WARC or ARC file,
    from offset ``start`` (a record boundary).

    Reads each record to its end (nothing kept) so offsets are exact; a
    record whose declared length runs past the end of the file is marked
    ``truncated``.  Any failure of the archive reader ends this file with a
    warning and keeps the records indexed before it.  ``growing``: the file is
    still being written, so a torn tail is expected and logged at debug level.
    ``problems`` (batch scans) collects a line per part of the file that
    could not be read.
    """
    last_offset = start
    end = start
    count = 0
    problem = log.debug if growing else log.warning
    try:
        with open_archive(path) as fh:
            fh.seek(start)
            it = ArchiveIterator(fh, arc2warc=True)  # offsets are absolute: it starts from fh.tell()
            while True:
                try:
                    rec = next(it)
                except StopIteration:
                    break
                rec_type = rec.rec_type
                headers = rec.rec_headers
                uri = headers.get_header("WARC-Target-URI")
                offset = it.get_record_offset()  # reads the record to its end
                last_offset = offset
                end = offset + it.get_record_length()
                if rec_type not in _KEEP or not usable_uri(uri, cfg):
                    continue
                time = parse_warc_date(headers.get_header("WARC-Date"))
                if time is None:
                    log.warning("%s: record at offset %d has no usable WARC-Date; skipped", path, offset)
                    continue
                remaining = getattr(rec.raw_stream, "limit", 0) or 0
                truncated = remaining > 0
                if truncated:
                    problem("%s: record at offset %d (%s) is truncated: %d bytes missing", path, offset, uri, remaining)
                http = rec.http_headers
                status = _int(http.get_statuscode()) if http is not None else None
                mime = None
                if http is not None:
                    mime = http.get_header("Content-Type")
                if mime is None and rec_type == "resource":
                    mime = headers.get_header("Content-Type")
                count += 1
                yield IndexEntry(
                    key=url_key(uri, cfg.engine.canonical),
                    url=uri,
                    time=time,
                    path=path,
                    offset=offset,
                    kind=_RECORD_KINDS[rec_type],
                    digest=normalise_digest(headers.get_header("WARC-Payload-Digest")),
                    record_id=headers.get_header("WARC-Record-ID"),
                    refers_to=headers.get_header("WARC-Refers-To"),
                    refers_to_uri=headers.get_header("WARC-Refers-To-Target-URI"),
                    refers_to_date=parse_warc_date(headers.get_header("WARC-Refers-To-Date")),
                    status=status,
                    mime=_shared(mime),
                    source=source,
                    truncated=truncated,
                    length=end - offset,
                )
    except OSError as exc:
        raise InputError(f"{path}: cannot read archive: {exc}", reason="unreadable") from exc
    except Exception as exc:  # corrupt third-party input must not stop a batch
        problem("%s: archive unreadable after offset %d (%d records indexed): %s: %s",
                path, last_offset, count, type(exc).__name__, exc)
        if problems is not None and not growing:
            problems.append(f"{path}: unreadable after offset {last_offset}")
        return
    if not growing:
        _check_tail(path, end, count, problems)


def _check_tail(path: str, end: int, count: int, problems: list[str] | None = None) -> None:
    """Warn when bytes after the last complete record were not read: the
    reader stops quietly inside a truncated gzip member."""
    try:
        with open_archive(path) as fh:
            fh.seek(end)
            tail = fh.read(65_536)
    except OSError:
        return
    if tail.strip(b"\r\n \t\x00"):
        log.warning("%s: %d+ bytes after offset %d unreadable (truncated or corrupt record); "
                    "%d records indexed before it", path, len(tail), end, count)
        if problems is not None:
            problems.append(f"{path}: unreadable after offset {end}")


def _cdx_fields(header: str) -> list[str]:
    letters = header.split()
    if letters and letters[0] == "CDX":
        letters = letters[1:]
    return letters


@functools.lru_cache(maxsize=4096)  # an index names few files in many rows: look each up once
def _resolve(index_path: Path, filename: str, warc_dirs: tuple[str, ...] = ()) -> str:
    """Where the archive a CDX row names is: an absolute path as given; else beside the index,
    then under each of ``warc_dirs`` (``acquire.warc_dirs``, ``scan --warc-dir``), by the
    name as written and by its last part.  Not found anywhere: the path beside the index (the
    capture is then reported unreadable, naming that path)."""
    p = Path(filename)
    if p.is_absolute():
        return str(p)
    here = index_path.parent / p
    if here.is_file():
        return str(here)
    for d in warc_dirs:
        for candidate in (Path(d) / p, Path(d) / p.name):
            if candidate.is_file():
                return str(candidate)
    return str(here)


def _cdx_entry(fields: dict[str, str], index_path: Path, cfg: Config, source: str,
               resolved: dict[str, str]) -> IndexEntry | None:
    """``resolved``: the archive paths found so far in this pass, by the name a row gives (one look
    on disk per file, not per row, and one path object that every entry of the file holds)."""
    url = fields.get("url") or ""
    filename = fields.get("filename")
    offset = _int(fields.get("offset"))
    time = parse_warc_date(fields.get("timestamp"))
    if not usable_uri(url, cfg) or not filename or offset is None or time is None:
        return None
    mime = fields.get("mime")
    kind: RecordKind = "revisit" if mime == "warc/revisit" else "response"
    path = resolved.get(filename)
    if path is None:
        path = resolved[filename] = _resolve(index_path, filename, cfg.acquire.warc_dirs)
    return IndexEntry(
        key=url_key(url, cfg.engine.canonical),
        url=url,
        time=time,
        path=path,
        offset=offset,
        kind=kind,
        digest=normalise_digest(fields.get("digest")),
        status=_int(fields.get("status")),
        mime=None if kind == "revisit" or mime in (None, "-", "unk") else _shared(mime),
        source=source,
    )


_CDX_LETTERS = {"a": "url", "b": "timestamp", "m": "mime", "s": "status", "k": "digest",
                "V": "offset", "v": "offset", "g": "filename"}


def _parse_row(raw: str, kind: str, letters: list[str], index_path: Path,
               cfg: Config, resolved: dict[str, str]) -> IndexEntry | list[str] | None:
    """One index line: an entry, a new CDX field list (header), or None."""
    line = raw.rstrip("\r\n")
    if not line.strip() or line.startswith("!"):
        return None
    if kind == "cdx" and line.lstrip().startswith("CDX "):
        return _cdx_fields(line)
    fields: dict[str, str] = {}
    if kind == "cdxj":
        parts = line.split(" ", 2)
        try:
            data = json.loads(parts[2]) if len(parts) == 3 else None
        except json.JSONDecodeError:
            data = None
        if not isinstance(data, dict):
            return None
        fields = {k: str(v) for k, v in data.items()}
        fields["timestamp"] = parts[1]
    else:
        values = line.split()
        names = letters if len(values) == len(letters) or len(values) != 9 else _CDX9_FIELDS
        for letter, value in zip(names, values, strict=False):
            if letter in _CDX_LETTERS and value != "-":
                fields[_CDX_LETTERS[letter]] = value
    return _cdx_entry(fields, index_path, cfg, kind, resolved)


def index_cdx(path: str, cfg: Config, kind: str) -> Iterator[IndexEntry]:
    """Index rows of a CDXJ or classic CDX file; filenames are resolved
    relative to the index file's directory, then under ``acquire.warc_dirs``.  Unparseable rows are logged and
    skipped, rows without a filename/offset (not pointing into a WARC) too."""
    index_path = Path(path)
    letters = _DEFAULT_CDX_FIELDS
    resolved: dict[str, str] = {}
    bad = 0
    try:
        fh = open_text(index_path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read index: {exc}", reason="unreadable") from exc
    lineno = 0
    with fh:
        try:
            for lineno, raw in enumerate(fh, 1):
                entry = _parse_row(raw, kind, letters, index_path, cfg, resolved)
                if isinstance(entry, list):
                    letters = entry  # a CDX header line
                elif entry is None:
                    if raw.strip() and not raw.startswith("!"):
                        bad += 1
                        log.debug("%s:%d: row skipped (unparseable, or no url/filename/offset)", path, lineno)
                else:
                    yield entry
        except (OSError, EOFError, UnicodeDecodeError) as exc:  # a truncated gzip index: keep the rows read
            log.warning("%s: index unreadable after line %d: %s", path, lineno, exc)
    if bad:
        log.warning("%s: %d index rows skipped (unparseable or not pointing into a WARC)", path, bad)
