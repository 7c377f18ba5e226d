"""WACZ packages (Browsertrix, ArchiveWeb.page): WARCs in a zip, read where they lie.

A WACZ is a zip holding ``archive/*.warc.gz`` (the captures), ``indexes/*.cdxj`` (their
index), ``pages/pages.jsonl`` (the seeds and pages the crawl was asked for) and
``datapackage.json``.  Its WARCs are read as WARC inputs of their own, named
``PACKAGE.wacz!/archive/NAME.warc.gz`` (a *member path*): the readers open a member path
through :func:`open_archive` and seek in it as in a file, so an index entry's offset, a
revisit's original in another member and a review locator all work unchanged.  The
package's own CDXJ is not needed (the WARCs are indexed as any WARC is, the same way in
``scan`` and ``spark``).

Why no extraction: WACZ writers store WARC members uncompressed in the zip (they are
gzip already), so a member is a byte range of the package, read in place; a deflated
member is read through :mod:`zipfile` (seekable, slower).
"""

from __future__ import annotations

import io
import logging
import zipfile
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)

SEP = "!/"
_ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")


def split_member(path: str) -> tuple[str, str] | None:
    """``(package, member)`` of a member path, or None for a plain path."""
    package, sep, member = path.partition(SEP)
    if not sep or not member:
        return None
    return package, member


def is_wacz(head: bytes, path: str) -> bool:
    """A zip whose members include ``datapackage.json`` or ``archive/`` WARCs."""
    if not head.startswith(b"PK\x03\x04"):
        return False
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except (OSError, zipfile.BadZipFile):
        return False
    return "datapackage.json" in names or any(n.startswith("archive/") for n in names)


def archive_members(package: str) -> list[str]:
    """The member paths of a package's WARC/ARC files, in name order."""
    with zipfile.ZipFile(package) as zf:
        names = sorted(n for n in zf.namelist() if n.startswith("archive/") and n.lower().endswith(_ARCHIVE_SUFFIXES))
        pages = [n for n in zf.namelist() if n.startswith("pages/") and n.endswith(".jsonl")]
        count = 0
        for name in pages:
            with zf.open(name) as fh:
                count += sum(1 for line in fh if line.strip() and b'"format"' not in line)
    log.info("%s: %d WARC files, %d pages listed", package, len(names), count)
    return [f"{package}{SEP}{n}" for n in names]


class _Window(io.RawIOBase):
    """A byte range of a file, seekable as a file of its own (a stored zip member)."""

    def __init__(self, fh: IO[bytes], start: int, size: int) -> None:
        self._fh, self._start, self._size, self._pos = fh, start, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), self._size - self._pos)
        if n <= 0:
            return 0
        self._fh.seek(self._start + self._pos)
        data = self._fh.read(n)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def close(self) -> None:
        self._fh.close()
        super().close()


def open_archive(path: str) -> IO[bytes]:
    """Open an archive input for reading: a file, or a member of a WACZ (a member path).

    Raises :class:`OSError` (a missing package or member), as ``open`` does."""
    parts = split_member(path)
    if parts is None or not Path(parts[0]).is_file():
        return open(path, "rb")  # the caller closes it
    package, member = parts
    try:
        zf = zipfile.ZipFile(package)
        info = zf.getinfo(member)
    except (KeyError, zipfile.BadZipFile) as exc:
        raise OSError(f"{package}: no member {member}: {exc}") from exc
    if info.compress_type == zipfile.ZIP_STORED:
        fh = open(package, "rb")  # noqa: SIM115 - closed with the window
        fh.seek(info.header_offset)
        local = fh.read(30)
        name_len, extra_len = int.from_bytes(local[26:28], "little"), int.from_bytes(local[28:30], "little")
        start = info.header_offset + 30 + name_len + extra_len
        zf.close()
        return io.BufferedReader(_Window(fh, start, info.file_size))
    return zf.open(member)
