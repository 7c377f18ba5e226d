"""Following one growing crawl.log: complete lines, rotation, truncation, and where reading stands.

Why positions carry more than an offset: Heritrix rotates ``crawl.log`` at
checkpoints (it renames it to ``crawl.log.<suffix>`` and opens a new one),
logrotate may copy and truncate it, and a restart may find the path naming
another file than the one it stopped in.  A :class:`Position` is the file's
identity (device and inode) plus a hash of its first bytes (an inode number
can be reused by a new file) and the byte offset after the last line
consumed.  With it, a restart resumes in the very file it stopped in, found
by identity among the files beside the path (a rotated one), or by its first
bytes (the copy that copytruncate made), and only then goes on with the file
the path names now.

What counts as a line: bytes up to a newline.  The bytes after the last
newline of a growing file are not consumed until their newline arrives (a
crawler writes a line in more than one ``write``); in a file that was rotated
away and no longer grows they are its last line.  A line longer than
``crawl_log.max_line_bytes`` is not held in memory: it is returned cut, with
its real length, so it can be dead-lettered as ``too_large``.

Kept simple on purpose: one file is read at a time per path, synchronously
(reads of a local log are short); the caller decides when to poll again.
Known limit: if a path was rotated twice while driftline was stopped, the file
between the one it stopped in and the current one is not read (pass it with
another ``--crawl-log``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from typing import BinaryIO

from .settings import CrawlLogConfig

log = logging.getLogger(__name__)

HEAD_BYTES = 256  # the first bytes that, with the inode, tell one file from another
_KEPT_OF_LONG_LINE = 4096  # bytes of an over-long line kept for its dead letter
_CHUNK = 1 << 16  # bytes read at a time
_BATCH_BYTES = 8 << 20  # lines returned by one read hold at most about this much (long lines, a big batch)


@dataclass(frozen=True, slots=True)
class Position:
    """Where reading a followed path stands: in which file, and after which byte."""

    dev: int
    ino: int
    offset: int
    head: str  # sha256 of the file's first head_len bytes (up to HEAD_BYTES, consumed or not)
    head_len: int

    @property
    def ident(self) -> tuple[int, int]:
        return self.dev, self.ino

    def to_json(self) -> str:
        return json.dumps({"dev": self.dev, "ino": self.ino, "offset": self.offset, "head": self.head,
                           "head_len": self.head_len}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Position | None:
        """The stored position, or None (with a warning) when it cannot be read."""
        if text is None:
            return None
        try:
            d = json.loads(text)
            return cls(int(d["dev"]), int(d["ino"]), int(d["offset"]), str(d["head"]), int(d["head_len"]))
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("stored crawl.log position %r is unreadable (%s): reading the path from its start", text, exc)
            return None


@dataclass(frozen=True, slots=True)
class Line:
    """One line read from a followed path, or (``data`` None) a move of the position alone."""

    stream: str  # the followed path, absolute: the key its position is stored under
    source: str  # the file the line was read from: path and identity
    start: int  # byte offset of the line's start in that file
    data: bytes | None  # the line without its newline (cut when ``length`` is larger)
    position: Position  # where reading goes on after this line
    length: int = 0  # the line's real length when it was over crawl_log.max_line_bytes (then cut)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _ident(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


class Tail:
    """One followed path (see the module's docstring)."""

    def __init__(self, path: str, cfg: CrawlLogConfig, saved: Position | None) -> None:
        self.stream = os.path.abspath(path)
        self.cfg = cfg
        self._saved = saved
        self._started = False
        self._fh: BinaryIO | None = None
        self._name = self.stream  # the file being read (the path, or a rotated file or copy of it)
        self._ident: tuple[int, int] = (0, 0)
        self._offset = 0
        self._head = b""
        self._replaced = False  # the path names another file now: drain this one, then switch
        self._switch = False  # this one is drained: open the path's file next
        self.at_end = False  # nothing left to read right now

    # -- the current file ---------------------------------------------------------

    @property
    def source(self) -> str:
        return f"{self._name}#{self._ident[0]}:{self._ident[1]}"

    def position(self) -> Position:
        """Where reading stands; the head hash covers the file's first bytes as last checked (an
        appended file keeps them; a file truncated and written again has others)."""
        n = min(HEAD_BYTES, len(self._head))
        return Position(self._ident[0], self._ident[1], self._offset, _sha(self._head[:n]), n)

    def _open(self, name: str, offset: int) -> bool:
        try:
            # Unbuffered, read with pread: a buffer would serve bytes a truncation has taken away.
            fh = open(name, "rb", buffering=0)  # noqa: SIM115 - held open across polls: a rotated file is read by its handle
        except FileNotFoundError:
            return False
        self.close()
        self._fh, self._name, self._ident = fh, name, _ident(os.fstat(fh.fileno()))
        self._offset, self._head = offset, os.pread(fh.fileno(), HEAD_BYTES, 0)
        return True

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    @staticmethod
    def _head_of(name: str, n: int) -> str | None:
        try:
            with open(name, "rb") as fh:
                return _sha(fh.read(n))
        except OSError:
            return None

    def _find(self, saved: Position, *, copies: bool) -> str | None:
        """A file beside the path that is ``saved``'s file: the same inode and first bytes (a rotated
        file); with ``copies``, also a file named like the path (``crawl.log.1``) of another inode,
        with those first bytes (some must be known) and at least ``saved.offset`` bytes (the copy
        copytruncate made)."""
        folder, name = os.path.split(self.stream)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return None
        for want_ident in (True, False) if copies and saved.head_len else (True,):
            for entry in entries:
                try:
                    if not entry.is_file():
                        continue
                    st = entry.stat()
                except OSError:
                    continue
                if want_ident and _ident(st) != saved.ident:
                    continue
                if not want_ident and (_ident(st) == saved.ident or st.st_size < saved.offset
                                       or not entry.name.startswith(name)):
                    continue
                if self._head_of(entry.path, saved.head_len) == saved.head:
                    return entry.path
        return None

    def _start(self) -> None:
        """Open the file the saved position names, wherever it is now."""
        saved = self._saved
        if saved is None:
            if self._open(self.stream, 0) and not self.cfg.from_start:
                self._offset = self._end_of_last_line()
                log.info("%s: read from its end (crawl_log.from_start is false), at byte %d", self.stream,
                         self._offset)
            return
        try:
            st: os.stat_result | None = os.stat(self.stream)
        except FileNotFoundError:
            st = None
        if st is not None and _ident(st) == saved.ident and st.st_size >= saved.offset \
                and self._head_of(self.stream, saved.head_len) == saved.head:
            self._open(self.stream, saved.offset)
            return
        found = self._find(saved, copies=True)
        if found is not None:
            log.info("%s: resuming in %s at byte %d (the path was rotated or truncated since)", self.stream,
                     found, saved.offset)
            if self._open(found, saved.offset):
                self._replaced = True
                return
        log.warning("%s: the file its position names (inode %d, byte %d) is gone: lines it held after that byte "
                    "are not read; reading the path's file from its start", self.stream, saved.ino, saved.offset)
        self._open(self.stream, 0)

    def _end_of_last_line(self) -> int:
        assert self._fh is not None
        size = os.fstat(self._fh.fileno()).st_size
        back = min(size, self.cfg.max_line_bytes)
        tail = os.pread(self._fh.fileno(), back, size - back)
        cut = tail.rfind(b"\n")
        return size - back + cut + 1 if cut >= 0 else size - back

    # -- reading --------------------------------------------------------------

    def read(self, max_lines: int) -> list[Line]:
        """Up to ``max_lines`` complete lines (and position moves); empty when there is nothing new.

        A position move (a :class:`Line` without data) comes first whenever the file's identity
        grew: the path opened for the first time (a rotation before its first line is consumed is
        still followed), another file switched to, or more of its first bytes known (so that a
        copytruncate is recognised even before a line of the file was consumed)."""
        if not self._started:
            self._started = True
            self._start()
            if self._fh is not None and (self._saved is None or self._saved.head_len < len(self._head)):
                return [self._move()]
        if self._switch:
            return self._switch_to_path()
        if self._fh is None:
            if not self._open(self.stream, 0):
                self.at_end = True
                return []
            return [self._move()]  # the path's file appeared
        known = len(self._head)
        if self._rewritten():
            self._check_path()
            self.at_end = False
            return []
        if len(self._head) > known:
            return [self._move()]
        before = self._offset
        lines = self._lines(max_lines, final=False)
        if lines and self._rewritten():
            # Truncated (and written again) under the handle while these were read: they may be bytes
            # of the new content read at the old offset.  Dropped; the rest is read from the copy.
            self._offset, lines = before, []
        if lines:
            self.at_end = False
            return lines
        if self._replaced:
            # Drained (one poll after the path was seen naming another file): its last bytes are its last line.
            return self._lines(max_lines, final=True) or self._switch_to_path()
        self._check_path()
        self.at_end = not (self._replaced or self._switch)
        return []

    def _move(self) -> Line:
        return Line(self.stream, self.source, self._offset, None, self.position())

    def _lines(self, max_lines: int, *, final: bool) -> list[Line]:
        """Up to ``max_lines`` lines from the position on (``final``: the bytes after the last newline
        too, and an over-long line without its newline)."""
        assert self._fh is not None
        fd = self._fh.fileno()
        limit = self.cfg.max_line_bytes
        out: list[Line] = []
        buf, at = b"", 0  # buf holds the file's bytes from self._offset on; at: where the next line starts in it
        first = self._offset
        while len(out) < max_lines and self._offset - first < _BATCH_BYTES:
            nl = buf.find(b"\n", at)
            if nl >= 0:
                start, size = self._offset, nl + 1 - at
                self._offset += size
                if size - 1 > limit:  # over-long, though read whole: held no longer than it takes to cut it
                    out.append(Line(self.stream, self.source, start, buf[at:at + _KEPT_OF_LONG_LINE],
                                    self.position(), size))
                else:
                    out.append(Line(self.stream, self.source, start, buf[at:nl].rstrip(b"\r"), self.position()))
                at = nl + 1
                continue
            if len(buf) - at > limit:
                line = self._long_line(buf[at:at + _KEPT_OF_LONG_LINE], self._offset + len(buf) - at, final)
                if line is None:
                    break  # its newline has not arrived yet
                out.append(line)
                buf, at = b"", 0
                continue
            more = os.pread(fd, _CHUNK, self._offset + len(buf) - at)
            if not more:
                if final and len(buf) > at:
                    start = self._offset
                    self._offset += len(buf) - at
                    out.append(Line(self.stream, self.source, start, buf[at:].rstrip(b"\r"), self.position()))
                break  # else a partial line: wait for its newline
            buf, at = buf[at:] + more, 0
        return out

    def _long_line(self, kept: bytes, scan_from: int, final: bool) -> Line | None:
        """The over-long line at the position, cut to ``kept``, once its end is known (None before)."""
        assert self._fh is not None
        fd, end = self._fh.fileno(), scan_from
        while True:
            more = os.pread(fd, _CHUNK, end)
            if not more:
                if not final:
                    return None
                break
            nl = more.find(b"\n")
            if nl >= 0:
                end += nl + 1
                break
            end += len(more)
        start, self._offset = self._offset, end
        return Line(self.stream, self.source, start, kept, self.position(), end - start)

    def _rewritten(self) -> bool:
        """The open file no longer holds what was read from it: shorter than the position, or other
        first bytes (copytruncate truncated it in place, and the crawler wrote new lines since)."""
        assert self._fh is not None
        fd = self._fh.fileno()
        if os.fstat(fd).st_size < self._offset:
            return True
        now = os.pread(fd, HEAD_BYTES, 0)
        n = min(len(now), len(self._head))
        if now[:n] != self._head[:n]:
            return True
        if len(now) > len(self._head):
            self._head = now
        return False

    def _check_path(self) -> None:
        """At the end of the current file: has the path been rotated to a new file, or truncated?"""
        try:
            st = os.stat(self.stream)
        except FileNotFoundError:
            return  # rotated away and the new file not made yet: keep the old one open
        if _ident(st) != self._ident:
            log.info("%s now names a new file: finishing %s first", self.stream, self._name)
            self._replaced = True
            return
        if self._name != self.stream:
            return
        pos = self.position()
        if st.st_size >= self._offset and self._head_of(self.stream, pos.head_len) == pos.head:
            return
        copy = self._find(pos, copies=True)
        if copy is not None and copy != self.stream:
            log.info("%s was truncated: reading the rest of its copy %s from byte %d", self.stream, copy,
                     self._offset)
            if self._open(copy, self._offset):
                self._replaced = True
                return
        log.warning("%s was truncated (at byte %d, now %d bytes) and no copy of it was found: lines written "
                    "between the last read and the truncation are lost; reading it from its start",
                    self.stream, self._offset, st.st_size)
        self._switch = True

    def _switch_to_path(self) -> list[Line]:
        """Go on with the file the path names now, from its start; the move itself is a position."""
        if not self._open(self.stream, 0):
            self.at_end = True
            return []  # not made yet: the old file stays the position until it is
        self._replaced = self._switch = False
        self.at_end = False
        return [Line(self.stream, self.source, 0, None, self.position())]
