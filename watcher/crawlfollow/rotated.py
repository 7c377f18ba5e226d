"""A followed path's rotated files: which they are, in which order, and how to read a compressed one.

Why order by modification time: a rotated file holds the log's lines up to
its last write, and every later rotated file (or the live one) was written
after it.  That holds for every way a crawl.log is rotated -- Heritrix's
rename (``crawl.log.<14 digits>``, ``crawl.log.cp00001-<14 digits>``),
logrotate's rename or copytruncate (``crawl.log.1``, ``.2``, ... with the
numbers shifting at each rotation: a renamed file keeps its inode and its
modification time, not its name), ``dateext`` names, and a compressed
rotation (``gzip``, ``bzip2`` and ``xz`` keep the modification time of the
file they compress).  Names only break ties (two rotations in one clock tick):
a smaller ``.N`` is newer, a larger stamp is newer.

A rotated file is recognised as one already read by a hash of its first
bytes (decompressed, for a compressed file), so a copy of a file (the
compressed one while ``gzip`` still writes it, or after) is never read twice.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import logging
import lzma
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

log = logging.getLogger(__name__)

HEAD_BYTES = 256  # the first bytes that, with the inode, tell one file from another
COMPRESSED: dict[str, Callable[[BinaryIO], io.BufferedIOBase]] = {
    ".gz": lambda f: gzip.GzipFile(fileobj=f, mode="rb"), ".bz2": lambda f: bz2.BZ2File(f, "rb"),
    ".xz": lambda f: lzma.LZMAFile(f, "rb"),  # noqa: SIM115 - closed by Source.close
}
_NUMBERED = re.compile(r"^[.\-_](\d{1,4})$")  # logrotate's crawl.log.1 (newest) .. crawl.log.N (oldest)
_STAMP = re.compile(r"(\d{6,})")  # a date or time in the name (crawl.log.20240601000000, crawl.log-20240601)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def short(data: bytes) -> str:
    """What a finished file is remembered by: the hash of its first (up to :data:`HEAD_BYTES`) bytes."""
    return sha(data[:HEAD_BYTES])[:16]


def compression(name: str) -> str | None:
    """The compressed-file suffix ``name`` ends with, if any."""
    return next((ext for ext in COMPRESSED if name.endswith(ext)), None)


def rank(base: str, name: str) -> tuple[int, int]:
    """Where ``name`` (a rotated file of ``base``) stands among rotated files of one clock tick."""
    ext = compression(name)
    suffix = name[len(base):len(name) - len(ext) if ext else None]
    numbered = _NUMBERED.match(suffix)
    if numbered:
        return 0, -int(numbered.group(1))
    stamps = _STAMP.findall(suffix)
    return 1, int(stamps[-1]) if stamps else 0


@dataclass(frozen=True, slots=True)
class Rotated:
    """A file beside the followed path named like it (``crawl.log.1``, ``crawl.log.20240601.gz``)."""

    path: str
    ident: tuple[int, int]
    mtime: int  # ns
    size: int  # on disk (compressed, for a compressed file)
    rank: tuple[int, int]
    compressed: bool

    @property
    def key(self) -> tuple[int, tuple[int, int]]:
        return self.mtime, self.rank


def rotated_files(stream: str) -> list[Rotated]:
    """The regular files in ``stream``'s directory named ``<its name>`` followed by ``.``,
    ``-`` or ``_`` and more (never the path itself)."""
    folder, base = os.path.split(stream)
    out: list[Rotated] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return out
    for entry in entries:
        name = entry.name
        if len(name) <= len(base) or not name.startswith(base) or name[len(base)] not in ".-_":
            continue
        try:
            if not entry.is_file():
                continue
            st = entry.stat()
        except OSError:
            continue
        out.append(Rotated(entry.path, (st.st_dev, st.st_ino), st.st_mtime_ns, st.st_size, rank(base, name),
                           compression(name) is not None))
    return out


class Source:
    """One file being read, plain (``pread`` on an unbuffered handle: a buffer would serve bytes a
    truncation has taken away) or compressed (decompressed as it is read; seeking back starts over)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.compressed = compression(os.path.basename(path)) is not None
        self.error: str | None = None  # why a compressed file could not be read to its end
        self._packed: io.BufferedIOBase | None = None
        self._at = 0
        # Held open across polls: a rotated file is read by its handle.
        self._raw: BinaryIO = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        st = os.fstat(self._raw.fileno())
        self.ident = (st.st_dev, st.st_ino)
        if self.compressed:
            self._packed = COMPRESSED[compression(path) or ".gz"](self._raw)

    def pread(self, n: int, offset: int) -> bytes:
        if self._packed is None:
            return os.pread(self._raw.fileno(), n, offset)
        if self.error is not None:
            return b""
        try:
            if offset != self._at:
                self._packed.seek(offset)
            data = self._packed.read(n)
        except (OSError, EOFError, lzma.LZMAError) as exc:
            self.error = str(exc) or type(exc).__name__
            log.error("%s cannot be decompressed past byte %d (%s)", self.path, offset, self.error)
            return b""
        self._at = offset + len(data)
        return data

    def stat(self) -> tuple[int, int]:
        """(size, mtime in ns); a compressed file does not change, its size is unknown (-1)."""
        st = os.fstat(self._raw.fileno())
        return (-1 if self._packed is not None else st.st_size), st.st_mtime_ns

    def close(self) -> None:
        if self._packed is not None:
            self._packed.close()
            self._packed = None
        self._raw.close()


def head_of(path: str, n: int = HEAD_BYTES) -> bytes | None:
    """The first ``n`` bytes of ``path`` (decompressed), or None if it cannot be read."""
    try:
        src = Source(path)
    except OSError:
        return None
    try:
        data = src.pread(n, 0)
        return None if src.error is not None else data
    finally:
        src.close()
