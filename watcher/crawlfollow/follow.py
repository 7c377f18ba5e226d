"""Following one growing crawl.log: complete lines, every rotated file, truncation, and where reading stands.

Why positions carry more than an offset: Heritrix rotates ``crawl.log`` at
checkpoints (it renames it to ``crawl.log.<suffix>`` and opens a new one),
logrotate may rename it or copy and truncate it (and compress the rotated
files), and a restart may find the path naming another file than the one it
stopped in.  A :class:`Position` is the file's identity (device and inode)
plus a hash of its first bytes (an inode number can be reused by a new file),
the byte offset after the last line consumed, and where the file stood among
rotated files (its modification time and name) with the rotated files
finished last.  With it, a restart resumes in the very file it stopped in,
found by identity among the files beside the path (a rotated one), or by its
first bytes (the copy that copytruncate made, or the file compressed).

Every rotated file is read, in order, whatever the reader's lag: once a file
is finished, the next one is the oldest rotated file newer than it (see
:mod:`.rotated`), and only when none is left the file the path names now,
from its start.  Nothing assumes one rotation between two looks.

A gap (lines that can no longer be read: the file stopped in was deleted, a
truncation left no copy, a compressed file is damaged) is returned as a
:class:`Line` carrying a :class:`Gap`, so that the caller records it with the
position that moves past it.

What counts as a line: bytes up to a newline.  The bytes after the last
newline of a growing file are not consumed until their newline arrives (a
crawler writes a line in more than one ``write``); in a file that was rotated
away and no longer grows they are its last line.  A line longer than
``crawl_log.max_line_bytes`` is not held in memory: it is returned cut, with
its real length, so it can be dead-lettered as ``too_large``.

Kept simple on purpose: one file is read at a time per path, synchronously
(reads of a local log are short); the caller decides when to poll again.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field

from .rotated import HEAD_BYTES, Rotated, Source, head_of, rank, rotated_files, sha, short
from .settings import CrawlLogConfig

__all__ = ["HEAD_BYTES", "Gap", "Line", "Position", "Tail"]

log = logging.getLogger(__name__)

_KEPT_OF_LONG_LINE = 4096  # bytes of an over-long line kept for its dead letter
_CHUNK = 1 << 16  # bytes read at a time
_BATCH_BYTES = 8 << 20  # lines returned by one read hold at most about this much (long lines, a big batch)
_DONE_KEPT = 8  # finished rotated files remembered (by their first bytes) so that none is read twice


@dataclass(frozen=True, slots=True)
class Position:
    """Where reading a followed path stands: in which file, and after which byte."""

    dev: int
    ino: int
    offset: int
    head: str  # sha256 of the file's first head_len bytes (up to HEAD_BYTES, consumed or not)
    head_len: int
    mtime: int = 0  # the file's modification time (ns) when last looked at: its place among rotated files
    size: int = 0  # its size then: at least how much is lost if it is gone
    name: str = ""  # its name then
    done: tuple[str, ...] = field(default=())  # the rotated files finished last (short hashes of their heads)
    # Files the path named while reading was behind, not read yet: (dev, ino, size seen, n, hash of first n bytes)
    ahead: tuple[tuple[int, int, int, int, str], ...] = field(default=())

    @property
    def ident(self) -> tuple[int, int]:
        return self.dev, self.ino

    def to_json(self) -> str:
        return json.dumps({"dev": self.dev, "ino": self.ino, "offset": self.offset, "head": self.head,
                           "head_len": self.head_len, "mtime": self.mtime, "size": self.size, "name": self.name,
                           "done": list(self.done), "ahead": [list(a) for a in self.ahead]}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Position | None:
        """The stored position, or None (with a warning) when it cannot be read."""
        if text is None:
            return None
        try:
            d = json.loads(text)
            return cls(int(d["dev"]), int(d["ino"]), int(d["offset"]), str(d["head"]), int(d["head_len"]),
                       int(d.get("mtime", 0)), int(d.get("size", 0)), str(d.get("name", "")),
                       tuple(str(x) for x in d.get("done", ())),
                       tuple((int(a[0]), int(a[1]), int(a[2]), int(a[3]), str(a[4])) for a in d.get("ahead", ())))
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("stored crawl.log position %r is unreadable (%s): reading the path from its start", text, exc)
            return None


@dataclass(frozen=True, slots=True)
class Gap:
    """Bytes of a followed path that can no longer be read."""

    name: str  # the file (as last seen)
    dev: int
    ino: int
    start: int  # first byte lost
    end: int | None  # the file's size when last seen, if larger than ``start`` (at least this much is lost)
    why: str

    def describe(self) -> str:
        upto = f"to byte {self.end}" if self.end is not None else "to its end"
        return f"{self.name} (inode {self.ino}) from byte {self.start} {upto}: {self.why}"


@dataclass(frozen=True, slots=True)
class Line:
    """One line read from a followed path, or (``data`` None) a move of the position alone."""

    stream: str  # the followed path, absolute: the key its position is stored under
    source: str  # the file the line was read from: path and identity
    start: int  # byte offset of the line's start in that file
    data: bytes | None  # the line without its newline (cut when ``length`` is larger)
    position: Position  # where reading goes on after this line
    length: int = 0  # the line's real length when it was over crawl_log.max_line_bytes (then cut)
    gap: Gap | None = None  # with ``data`` None: the move skips these lost bytes


def _ident(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


class Tail:
    """One followed path (see the module's docstring)."""

    def __init__(self, path: str, cfg: CrawlLogConfig, saved: Position | None) -> None:
        self.stream = os.path.abspath(path)
        self._base = os.path.basename(self.stream)
        self.cfg = cfg
        self._saved = saved
        self._started = False
        self._src: Source | None = None
        self._name = self.stream  # the file being read (the path, or a rotated file or copy of it)
        self._ident: tuple[int, int] = (0, 0)
        self._offset = 0
        self._head = b""
        self._mtime = 0
        self._size = 0
        self._done: tuple[str, ...] = saved.done if saved is not None else ()
        # ident -> (size, n, hash of the first n bytes) of files the path named while reading was behind
        self._ahead: dict[tuple[int, int], tuple[int, int, str]] = {
            (a[0], a[1]): (a[2], a[3], a[4]) for a in (saved.ahead if saved is not None else ())}
        self._gaps: list[Gap] = []  # found, not yet returned
        self._replaced = False  # this file is not the path's any more: drain it, then go on with the next
        self._switch = False  # go on with the path's file from its start now
        self.at_end = False  # nothing left to read right now

    # -- the current file ---------------------------------------------------------

    @property
    def source(self) -> str:
        return f"{self._name}#{self._ident[0]}:{self._ident[1]}"

    def position(self) -> Position:
        """Where reading stands; the head hash covers the file's first bytes as last checked (an
        appended file keeps them; a file truncated and written again has others)."""
        n = min(HEAD_BYTES, len(self._head))
        return Position(self._ident[0], self._ident[1], self._offset, sha(self._head[:n]), n, self._mtime,
                        self._size, self._name, self._done,
                        tuple((*ident, *seen) for ident, seen in self._ahead.items()))

    def _open(self, name: str, offset: int) -> bool:
        try:
            src = Source(name)
        except (FileNotFoundError, IsADirectoryError):
            return False
        except OSError as exc:
            log.error("%s cannot be opened (%s)", name, exc)
            return False
        self.close()
        self._src, self._name, self._ident = src, name, src.ident
        self._offset, self._head = offset, src.pread(HEAD_BYTES, 0)
        self._size, self._mtime = src.stat()
        for ident, (_, n, head) in list(self._ahead.items()):  # this file, or a copy of it (compressed)
            if ident == src.ident or (n and len(self._head) >= n and sha(self._head[:n])[:16] == head):
                del self._ahead[ident]
        return True

    def _note_path(self) -> None:
        """If the path names another file than the one being read (reading is behind), remember it, so
        that if it is rotated and deleted before it is read, its loss is reported."""
        try:
            with open(self.stream, "rb") as fh:
                st = os.fstat(fh.fileno())
                head = fh.read(HEAD_BYTES)
        except OSError:
            return
        ident = _ident(st)
        if ident != self._ident and (ident in self._ahead or len(self._ahead) < _DONE_KEPT):
            self._ahead[ident] = (st.st_size, len(head), sha(head)[:16])

    def _unread(self) -> None:
        """At the path's file after the rotated ones: files it named while reading was behind that were
        never read (rotated, then deleted) are gaps."""
        for (dev, ino), (size, _, _) in list(self._ahead.items()):
            if (dev, ino) != self._ident:
                self._lost(Gap(f"{self.stream} (as the path named it then)", dev, ino, 0, size or None,
                               "it was rotated and deleted before it was read"))
        self._ahead.clear()

    def close(self) -> None:
        if self._src is not None:
            self._src.close()
            self._src = None

    def _same_head(self, name: str, saved: Position) -> bool:
        got = head_of(name, saved.head_len)
        return got is not None and len(got) == saved.head_len and sha(got) == saved.head

    def _find(self, saved: Position) -> str | None:
        """``saved``'s file beside the path: the same inode and first bytes (a rotated file), else a file
        of another inode with those first bytes (some must be known) and, if not compressed, at least
        ``saved.offset`` bytes (the copy copytruncate made, or the file compressed)."""
        found = rotated_files(self.stream)
        for r in found:
            if r.ident == saved.ident and self._same_head(r.path, saved):
                return r.path
        if not saved.head_len:
            return None
        copies = [r for r in found if r.ident != saved.ident and (r.compressed or r.size >= saved.offset)
                  and self._same_head(r.path, saved)]
        copies.sort(key=lambda r: (r.compressed, r.path))  # a plain copy before a compressed one
        return copies[0].path if copies else None

    def _next_rotated(self, after: tuple[int, tuple[int, int]] | None, mtime: int) -> Rotated | None:
        """The oldest rotated file newer than the one finished (``after``: its modification time and rank;
        None: only ``mtime`` known, a tie counts as newer), not the path's file and not one finished
        (by its first bytes)."""
        try:
            path_ident: tuple[int, int] | None = _ident(os.stat(self.stream))
        except OSError:
            path_ident = None
        done = set(self._done)
        newer = []
        for r in rotated_files(self.stream):
            if r.ident == path_ident or r.size == 0 or (r.key <= after if after is not None else r.mtime < mtime):
                continue  # the path's file (read last), an empty one (Heritrix's crawl.log.lck), or older
            head = head_of(r.path)
            if head is None or short(head) in done:
                continue
            newer.append(r)
        newer.sort(key=lambda r: (r.key, r.compressed))
        return newer[0] if newer else None

    def _finished(self) -> None:
        """Remember the current file as read to its end (its copies are never read again)."""
        if self._head:
            key = short(self._head)
            self._done = (*[d for d in self._done if d != key], key)[-_DONE_KEPT:]

    def _lost(self, gap: Gap) -> None:
        log.error("%s: lines lost: %s", self.stream, gap.describe())
        self._gaps.append(gap)

    def _go_on(self, after: tuple[int, tuple[int, int]] | None, mtime: int) -> None:
        """Open the next rotated file from its start, or else have the path's file read from its start."""
        nxt = self._next_rotated(after, mtime)
        if nxt is not None and self._open(nxt.path, 0):
            log.info("%s: reading the rotated file %s", self.stream, nxt.path)
            self._replaced, self._switch = True, False
            return
        self._replaced, self._switch = False, True

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
                and self._same_head(self.stream, saved):
            self._open(self.stream, saved.offset)
            return
        found = self._find(saved)
        if found is not None and self._open(found, saved.offset):
            log.info("%s: resuming in %s at byte %d (the path was rotated or truncated since)", self.stream,
                     found, saved.offset)
            self._replaced = True
            return
        self._lost(Gap(saved.name or self.stream, saved.dev, saved.ino, saved.offset,
                       saved.size if saved.size > saved.offset else None,
                       "the file the stored position names is gone (deleted, or truncated without a copy)"))
        if saved.head_len:
            self._done = (*self._done, saved.head[:16])[-_DONE_KEPT:]
        if saved.mtime:
            self._go_on(None, saved.mtime)
        else:
            self._switch = True
        if self._switch:
            self._switch = False
            self._open(self.stream, 0)

    def _end_of_last_line(self) -> int:
        assert self._src is not None
        size = self._src.stat()[0]
        back = min(size, self.cfg.max_line_bytes)
        tail = self._src.pread(back, size - back)
        cut = tail.rfind(b"\n")
        return size - back + cut + 1 if cut >= 0 else size - back

    # -- reading --------------------------------------------------------------

    def read(self, max_lines: int) -> list[Line]:
        """Up to ``max_lines`` complete lines (and position moves); empty when there is nothing new.

        A position move (a :class:`Line` without data) comes first whenever the file's identity
        grew: the path opened for the first time (a rotation before its first line is consumed is
        still followed), another file switched to, or more of its first bytes known (so that a
        copytruncate is recognised even before a line of the file was consumed).  A move that skips
        lost bytes carries its :class:`Gap`."""
        if not self._started:
            self._started = True
            self._start()
            if self._gaps:
                return self._gap_moves()
            if self._src is not None and (self._saved is None or self._saved.head_len < len(self._head)):
                return [self._move()]
        if self._gaps:
            return self._gap_moves()
        if self._switch:
            return self._switch_to_path()
        if self._src is None:
            if not self._open(self.stream, 0):
                self.at_end = True
                return []
            return [self._move()]  # the path's file appeared
        known = len(self._head)
        if self._rewritten():
            self._truncated()
            self.at_end = False
            return self._gap_moves() if self._gaps else [self._move()] if self._replaced else []
        if len(self._head) > known:
            return [self._move()]
        self._note_path()
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
            lines = self._lines(max_lines, final=True)
            if lines:
                return lines
            return self._next()
        self._check_path()
        self.at_end = not (self._replaced or self._switch)
        return []

    def _gap_moves(self) -> list[Line]:
        gaps, self._gaps = self._gaps, []
        return [Line(self.stream, f"{g.name}#{g.dev}:{g.ino}", g.start, None, self.position(), gap=g) for g in gaps]

    def _move(self) -> Line:
        return Line(self.stream, self.source, self._offset, None, self.position())

    def _next(self) -> list[Line]:
        """This rotated file is read to its end: go on with the next one, or the path's file."""
        assert self._src is not None
        if self._src.error is not None:
            self._lost(Gap(self._name, *self._ident, self._offset, None,
                           f"it cannot be decompressed further ({self._src.error})"))
        self._finished()
        name = self._name
        self._go_on((self._mtime, rank(self._base, os.path.basename(name))), self._mtime)
        if self._gaps:
            return self._gap_moves() if not self._switch else self._switch_to_path(self._gap_moves())
        if self._replaced:
            self.at_end = False
            return [self._move()]
        return self._switch_to_path()

    def _lines(self, max_lines: int, *, final: bool) -> list[Line]:
        """Up to ``max_lines`` lines from the position on (``final``: the bytes after the last newline
        too, and an over-long line without its newline)."""
        assert self._src is not None
        src = self._src
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
            more = src.pread(_CHUNK, self._offset + len(buf) - at)
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
        assert self._src is not None
        src, end = self._src, scan_from
        while True:
            more = src.pread(_CHUNK, end)
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
        assert self._src is not None
        if self._src.compressed:
            return False
        size, mtime = self._src.stat()
        if size < self._offset:
            return True
        now = self._src.pread(HEAD_BYTES, 0)
        n = min(len(now), len(self._head))
        if now[:n] != self._head[:n]:
            return True
        self._size, self._mtime = size, mtime
        if len(now) > len(self._head):
            self._head = now
        return False

    def _truncated(self) -> None:
        """The open file was truncated under the handle: read the rest from its copy, or record the loss
        and go on with the rotated files newer than it (a later copy, the file renamed since)."""
        pos = self.position()
        copy = self._find(pos) if pos.head_len else None
        if copy is not None and self._open(copy, pos.offset):
            log.info("%s was truncated: reading the rest of its copy %s from byte %d", pos.name, copy, pos.offset)
            self._replaced = True
            return
        self._lost(Gap(pos.name, pos.dev, pos.ino, pos.offset, pos.size if pos.size > pos.offset else None,
                       "it was truncated and no copy of it was found"))
        self._finished()
        self._go_on(None, pos.mtime)
        if self._switch:  # the truncated file itself, from its start, if it is still the path's
            self._switch = False
            self._open(self.stream, 0)

    def _check_path(self) -> None:
        """At the end of the current file: has the path been rotated to a new file?  (A truncation is
        found by :meth:`_rewritten`.)"""
        try:
            st = os.stat(self.stream)
        except FileNotFoundError:
            return  # rotated away and the new file not made yet: keep the old one open
        if _ident(st) != self._ident:
            log.info("%s now names a new file: finishing %s first", self.stream, self._name)
            self._replaced = True

    def _switch_to_path(self, first: list[Line] | None = None) -> list[Line]:
        """Go on with the file the path names now, from its start; the move itself is a position."""
        if not self._open(self.stream, 0):
            self.at_end = not first
            self._switch = True
            return first or []  # not made yet: the old file stays the position until it is
        self._replaced = self._switch = False
        self.at_end = False
        self._unread()
        first = [*(first or []), *self._gap_moves()]
        moves = [Line(m.stream, m.source, m.start, None, self.position(), gap=m.gap) for m in first]
        return moves or [Line(self.stream, self.source, 0, None, self.position())]
