"""What the review server may read: files under the operator's roots, mementos under configured archives.

Why: a scan result is input, and its locators and URI-Ms are whatever the file says.  A result whose
locator is ``file:/etc/passwd`` must not turn the curator's page into a file server, and a URI-M that
is a live address must not be fetched (that would show today's page as archived and tell the site the
curator's address).  So:

- a ``warc:<file>#<offset>`` or ``file:<path>`` locator is read only when the path, with symlinks
  resolved (``realpath``), lies under one of the roots the operator gave: the scan result's folder,
  ``acquire.warc_dirs`` (``review --warc-dir``), the DOI monitor's WARC folder (``doi.warc_dir``);
  a path with ``..`` in it, a relative path, or one that is not a regular file is refused;
- a ``warc:`` locator must name a WARC/ARC file (its first bytes: gzip, zstd or ``WARC/``), so a
  text file is never handed to the record parser (whose errors quote the file's first line);
- a URI-M is fetched only when it lies under one of ``review.archives`` (scheme, host, port and a
  path prefix ending at a ``/``), and every redirect hop of that fetch is held to the same test.

Errors name the path or URI and what is wrong with it, never anything read from the file.
"""

from __future__ import annotations

import os
import re
import stat
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..config import Config
from ..errors import BlockedAddressError

_DEFAULT_PORT = {"http": 80, "https": 443}


_ARC_LINE = re.compile(rb"^\S+ \S+ \d{14} \S+ \d+\r?\n")


def _is_record(head: bytes) -> bool:
    """Whether ``head`` starts a WARC/ARC record: plain, in a gzip member, or a zstd frame (trusted)."""
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return True
    if head.startswith(b"\x1f\x8b"):
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 256)
        except zlib.error:
            return False
    return head.startswith((b"WARC/", b"filedesc://")) or bool(_ARC_LINE.match(head))


class Refused(Exception):  # noqa: N818 - a refusal with a message for the curator, not a crash
    """A locator or URI-M outside what the operator allowed; the message holds no file content."""


@dataclass(frozen=True)
class Archive:
    scheme: str
    host: str
    port: int
    path: str  # ends with "/"

    @classmethod
    def parse(cls, prefix: str) -> Archive | None:
        try:
            p = urlsplit(prefix.strip())
            port = p.port
        except ValueError:
            return None
        scheme = p.scheme.lower()
        if scheme not in _DEFAULT_PORT or not p.hostname or p.username or p.password:
            return None
        path = p.path if p.path.endswith("/") else p.path + "/"
        return cls(scheme, p.hostname.lower().rstrip("."), port or _DEFAULT_PORT[scheme], path)

    def holds(self, uri: str) -> bool:
        try:
            p = urlsplit(uri)
            port = p.port
        except ValueError:
            return False
        scheme = p.scheme.lower()
        if scheme != self.scheme or p.username or p.password or "\\" in uri or not p.hostname:
            return False
        return (p.hostname.lower().rstrip(".") == self.host and (port or _DEFAULT_PORT[scheme]) == self.port
                and (p.path + "/").startswith(self.path))


@dataclass(frozen=True)
class Access:
    """The roots locators may name and the archives URI-Ms may be fetched from."""

    roots: tuple[str, ...]  # real paths
    archives: tuple[Archive, ...]

    @classmethod
    def of(cls, cfg: Config, result: Path | None = None, extra_roots: Iterable[str] = ()) -> Access:
        """The roots and archives ``cfg`` names, plus the folder of the scan result ``result``."""
        dirs: list[str] = []
        if result is not None:
            dirs.append(str(Path(result).parent))
        dirs += [*extra_roots, *cfg.acquire.warc_dirs, cfg.doi.warc_dir]
        roots = tuple(dict.fromkeys(os.path.realpath(d) for d in dirs if d))
        archives = tuple(a for a in (Archive.parse(p) for p in cfg.review.archives) if a is not None)
        return cls(roots, archives)

    def path(self, raw: str) -> str:
        """The real path of a locator's file, when it is a regular file under a root; else :class:`Refused`."""
        if not raw or "\x00" in raw:
            raise Refused("empty locator path")
        p = Path(raw)
        if not p.is_absolute() or ".." in p.parts:
            raise Refused(f"{raw[:300]}: not an absolute path without '..'")
        real = os.path.realpath(p)
        if not any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in self.roots):
            raise Refused(f"{raw[:300]}: outside the folders review reads (the result's folder, "
                          "acquire.warc_dirs or review --warc-dir, doi.warc_dir)")
        try:
            st = os.stat(real)
        except OSError:
            raise Refused(f"{raw[:300]}: no such file") from None
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{raw[:300]}: not a regular file")
        return real

    def warc(self, raw: str, offset: int = 0) -> str:
        """:meth:`path`, and the file must hold a WARC or ARC record at ``offset`` (read before the record
        parser sees it: its errors quote the first line of whatever it was given)."""
        real = self.path(raw)
        try:
            with open(real, "rb") as fh:
                fh.seek(max(0, offset))
                head = fh.read(4096)
        except OSError:
            raise Refused(f"{raw[:300]}: unreadable") from None
        if not _is_record(head):
            raise Refused(f"{raw[:300]}: no WARC record at offset {offset}")
        return real

    def archive_of(self, uri: str) -> Archive | None:
        return next((a for a in self.archives if a.holds(uri)), None)

    def check_uri(self, uri: str) -> None:
        """Raise :class:`BlockedAddressError` for a URI under no configured archive (every fetch hop)."""
        if self.archive_of(uri) is None:
            raise BlockedAddressError(f"{uri[:300]}: not under an archive in review.archives: not fetched",
                                      reason="not_archive")
