"""Reading ONE WARC record at a known offset, from disk or over HTTP.

Crawl feeds give ``warc_filename`` + ``warc_offset`` (and sometimes the record
length).  Reading the whole WARC would cost gigabytes per event, so the
reader seeks (or sends an HTTP ``Range``) and stops at the end of the record:
for a gzipped WARC at the end of the gzip member holding it, for a plain WARC
after ``Content-Length`` bytes of block.  :class:`RecordExtent` finds that end
incrementally so an open-ended range (``bytes=OFFSET-``) is not read to EOF.
"""

from __future__ import annotations

import io
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from ..archive.warc import bytes_missing
from ..errors import AcquireError, TooLargeError

_HEADER_LIMIT = 256 * 1024
_CONTENT_LENGTH = re.compile(rb"^content-length:\s*(\d+)\s*$", re.IGNORECASE | re.MULTILINE)
_SAFE_NAME = re.compile(r"^[^/\\\x00]+$")


class RecordExtent:
    """Feed the bytes from a record's offset; learns where the record ends.

    :meth:`feed` returns the record's total length in bytes once known.
    """

    def __init__(self) -> None:
        self._head = b""
        self._gzip: zlib._Decompress | None = None
        self._mode: str | None = None
        self._fed = 0
        self.length: int | None = None

    def feed(self, chunk: bytes) -> int | None:
        if self.length is not None:
            return self.length
        if self._mode is None:
            self._head += chunk
            if len(self._head) < 5:
                return None
            if self._head[:2] == b"\x1f\x8b":
                self._mode = "gzip"
                self._gzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
                chunk, self._head = self._head, b""
            elif self._head[:5] == b"WARC/":
                self._mode = "plain"
                return self._plain_length()
            else:
                raise AcquireError("no WARC record at this offset", reason="warc_unreadable")
        if self._mode == "plain":
            self._head += chunk
            return self._plain_length()
        assert self._gzip is not None
        try:
            # Output is discarded: only the member boundary matters here.
            self._gzip.decompress(chunk, 1 << 20)
            while self._gzip.unconsumed_tail and not self._gzip.eof:
                self._gzip.decompress(self._gzip.unconsumed_tail, 1 << 20)
        except zlib.error as exc:
            raise AcquireError(f"corrupt gzip member: {exc}", reason="warc_unreadable") from None
        self._fed += len(chunk)
        if self._gzip.eof:
            self.length = self._fed - len(self._gzip.unused_data)
        return self.length

    def _plain_length(self) -> int | None:
        end = self._head.find(b"\r\n\r\n")
        if end == -1:
            if len(self._head) > _HEADER_LIMIT:
                raise AcquireError("WARC record header too long", reason="warc_unreadable")
            return None
        m = _CONTENT_LENGTH.search(self._head[:end])
        if m is None:
            raise AcquireError("WARC record header has no Content-Length", reason="warc_unreadable")
        self.length = end + 4 + int(m.group(1)) + 4  # header, block, trailing CRLFCRLF
        return self.length


@dataclass(frozen=True, slots=True)
class WarcPayload:
    """The HTTP payload (or resource block) of one record."""

    record_type: str
    target_uri: str | None
    status: int | None
    content_type: str | None
    headers: dict[str, str]
    payload: bytes
    payload_digest: str | None


def safe_warc_name(name: str) -> str:
    """Refuse names that could escape the WARC directories (events are untrusted)."""
    if not _SAFE_NAME.match(name) or name in (".", ".."):
        raise AcquireError(f"refusing WARC file name {name[:100]!r}", reason="bad_warc_name")
    return name


def find_warc(name: str, dirs: tuple[str, ...]) -> Path:
    """The path of ``name`` (or of Heritrix's in-progress ``name.open``) under ``dirs``."""
    safe_warc_name(name)
    for d in dirs:
        for candidate in (Path(d) / name, Path(d) / (name + ".open")):
            if candidate.is_file():
                return candidate
    # The folders by name, as `feed` names them: the watcher and `feed` each read their own config (two
    # terminals), and a count ("1 configured directories") could not show that they differ.
    shown = ", ".join(dirs[:5]) + (f" and {len(dirs) - 5} more" if len(dirs) > 5 else "") if dirs else "none configured"
    raise AcquireError(f"WARC {name} not found under acquire.warc_dirs ({shown})", reason="warc_missing")


def read_record_bytes(path: Path, offset: int, length: int | None, max_bytes: int) -> bytes:
    """The raw bytes of the record at ``offset`` (blocking; run it in a thread)."""
    if offset < 0:
        raise AcquireError(f"negative WARC offset {offset}", reason="warc_unreadable")
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, io.SEEK_END)
            if offset >= size:
                msg = f"offset {offset} beyond end of {path.name} ({size} bytes)"
                raise AcquireError(msg, reason="warc_unreadable")
            fh.seek(offset)
            if length is not None:
                if length > max_bytes:
                    raise TooLargeError(f"WARC record of {length} bytes exceeds the {max_bytes}-byte cap")
                data = fh.read(length)
                if len(data) < length:
                    raise AcquireError(f"WARC record at {offset} is cut: {len(data)} of {length} bytes in "
                                       f"{path.name}", reason="truncated")
                return data
            tracker = RecordExtent()
            buf = bytearray()
            while True:
                chunk = fh.read(64 * 1024)
                if not chunk:
                    # The file ends before the record does (a cut gzip member,
                    # or fewer bytes than the Content-Length).
                    raise AcquireError(f"WARC record at {offset} is cut: {path.name} ends after {len(buf)} bytes",
                                       reason="truncated")
                buf += chunk
                wanted = tracker.feed(chunk)
                if wanted is not None and len(buf) >= wanted:
                    return bytes(buf[:wanted])
                if len(buf) > max_bytes:
                    raise TooLargeError(f"WARC record exceeds the {max_bytes}-byte cap")
    except OSError as exc:
        raise AcquireError(f"cannot read {path.name}: {exc.strerror}", reason="warc_unreadable") from None


def parse_record(data: bytes, max_bytes: int) -> WarcPayload:
    """Parse the first record of ``data`` (gzip member or plain) and return its payload.

    ``revisit`` records have no payload (reason ``warc_revisit``); request and
    metadata records are not captures (``warc_wrong_record``).  The payload
    is de-chunked and content-decoded by warcio.
    """
    try:
        iterator = ArchiveIterator(io.BytesIO(data), check_digests=False)
        record = next(iter(iterator), None)
        if record is None:
            raise AcquireError("no WARC record at this offset", reason="warc_unreadable")
        rtype = str(record.rec_type)
        target = record.rec_headers.get_header("WARC-Target-URI")
        digest = record.rec_headers.get_header("WARC-Payload-Digest")
        if rtype == "revisit":
            raise AcquireError("record is a revisit (no payload)", reason="warc_revisit")
        if rtype not in ("response", "resource"):
            raise AcquireError(f"record is a {rtype} record, not a capture", reason="warc_wrong_record")
        status: int | None = None
        headers: dict[str, str] = {}
        if rtype == "response" and record.http_headers is not None:
            code = record.http_headers.get_statuscode()
            status = int(code) if code and str(code).isdigit() else None
            for key, value in record.http_headers.headers:
                headers[key] = headers[key] + ", " + value if key in headers else value
            content_type = record.http_headers.get_header("Content-Type")
        else:
            content_type = record.rec_headers.get_header("Content-Type")
        payload = record.content_stream().read(max_bytes + 1)
        missing = bytes_missing(record.raw_stream) if len(payload) <= max_bytes else 0
    except ArchiveLoadFailed as exc:
        raise AcquireError(f"unreadable WARC record: {exc}", reason="warc_unreadable") from None
    except (OSError, EOFError, ValueError, zlib.error) as exc:
        raise AcquireError(f"corrupt WARC record: {exc!r}", reason="warc_unreadable") from None
    if len(payload) > max_bytes:
        raise TooLargeError(f"WARC payload exceeds the {max_bytes}-byte cap")
    if missing > 0:
        raise AcquireError(f"WARC record is cut: {missing} bytes of its block missing", reason="truncated")
    return WarcPayload(rtype, target, status, content_type, headers, payload, digest)
