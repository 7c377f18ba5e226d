"""Recognise a batch input by its content, never by its file name.

Why content: archives are renamed freely (``.warc.gz`` holding an ARC,
``.txt`` TimeMaps, CDX files without extension), and a wrong guess by
extension would make a scan silently read nothing.  Detection looks at the
magic bytes, the first decompressed bytes of gzip files and the first
non-empty lines of text files.
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path
from typing import Literal, TextIO

from ..errors import InputError
from .wacz import is_wacz, open_archive, split_member

InputKind = Literal["warc", "arc", "wacz", "timemap", "cdxj", "cdx", "gold", "unknown"]

_PEEK_BYTES = 8192
_CDXJ_ROW = re.compile(r"^\S+ \d{4,14} \{")
_CDXJ_TIMEMAP_ROW = re.compile(r"^\d{14} \{")
_CDX_HEADER = re.compile(r"^ ?CDX(?: [A-Za-z])+\s*$")
_CDX_ROW = re.compile(r"^\S+ \d{14} \S+ \S+ \S+ \S+ ")
_LINK_ENTRY = re.compile(r"^\s*<[^>]*>\s*;")
_GOLD_LABELS = ("labels.tsv",)


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def gold_labels_file(path: Path) -> Path | None:
    """The labels file of a gold-standard directory (``labels.tsv`` or the
    original study's ``*_label_gold.fixed.txt``), or None."""
    for name in _GOLD_LABELS:
        if (path / name).is_file():
            return path / name
    found = sorted(path.glob("*_label_gold.fixed.txt"))
    return found[0] if found else None


def peek(path: Path, size: int = _PEEK_BYTES) -> bytes:
    """The first ``size`` bytes of ``path``, decompressed when it is gzip."""
    try:
        with open_archive(str(path)) as fh:
            head = fh.read(size)
    except OSError as exc:
        raise InputError(f"{path}: cannot read input: {exc}", reason="unreadable") from exc
    if head[:2] == b"\x1f\x8b":
        try:
            with open_archive(str(path)) as raw, gzip.open(raw, "rb") as gz:
                return gz.read(size)
        except (OSError, EOFError, zlib.error):
            # A truncated gzip still yields its first bytes through zlib directly.
            try:
                return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, size)
            except zlib.error:
                return b""
    return head


def open_text(path: Path) -> TextIO:
    """Open a text input (index, TimeMap), gzipped or not, decoding as UTF-8
    with replacement (index files are ASCII; TimeMaps may carry odd bytes)."""
    with path.open("rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    if gz:
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return path.open("r", encoding="utf-8", errors="replace")


def classify_text(head: bytes) -> InputKind:
    """Classify decoded leading bytes of a non-archive input."""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return "unknown"
    first = lines[0]
    if _CDX_HEADER.match(first):
        return "cdx"
    if _LINK_ENTRY.match(first) or (first.lstrip().startswith("<") and "rel=" in text):
        return "timemap"
    if first.lstrip().startswith("{") and ('"mementos"' in text or '"original_uri"' in text
                                           or ('"timestamp"' in first and '"url"' in first)):
        return "timemap"  # a JSON TimeMap: the Memento aggregator's or MemGator's, or pywb's lines
    rows = [ln for ln in lines if not ln.startswith("!")]
    if any(ln.startswith("!context") or ln.startswith("!meta") for ln in lines[:10]) and (
        not rows or _CDXJ_TIMEMAP_ROW.match(rows[0])
    ):
        return "timemap"  # a CDXJ TimeMap (ipwb / MementoMap style)
    if rows and _CDXJ_TIMEMAP_ROW.match(rows[0]) and '"filename"' not in rows[0]:
        return "timemap"
    if rows and _CDXJ_ROW.match(rows[0]):
        return "cdxj"
    if rows and _CDX_ROW.match(rows[0]):
        return "cdx"
    return "unknown"


_ARCHIVE_KINDS = ("warc", "arc", "wacz")
_INDEX_KINDS = ("cdxj", "cdx")


def archive_dir_files(path: Path) -> list[str]:
    """The archives in a directory that is not a gold directory, for ``driftline scan DIR``.

    Its WARC/ARC files (recognised by content, in every subdirectory, hidden
    files left out); when it holds none, its CDX/CDXJ indexes.  Raises
    :class:`InputError` when it holds neither, saying what a directory input may be.
    """
    found: dict[str, list[str]] = {"archive": [], "index": []}
    for f in sorted(path.rglob("*")):
        if any(part.startswith(".") for part in f.relative_to(path).parts) or not f.is_file():
            continue
        try:
            kind = detect_input(str(f))
        except InputError:
            continue  # unreadable: not an archive of this directory
        if kind in _ARCHIVE_KINDS:
            found["archive"].append(str(f))
        elif kind in _INDEX_KINDS:
            found["index"].append(str(f))
    files = found["archive"] or found["index"]
    if not files:
        raise InputError(f"{path}: a directory with no WARC/ARC files or CDX(J) indexes, and not a gold-standard "
                         "directory (labels.tsv + html/)", reason="unknown_input")
    return files


def detect_input(path: str) -> InputKind:
    """Return what ``path`` holds: warc, arc, wacz, timemap, cdxj, cdx, gold or unknown
    (a WACZ package's WARC member, ``PACKAGE.wacz!/archive/NAME``, is a warc).

    An http(s) URL is taken to be a TimeMap (the only remote input).  A
    missing or unreadable path raises :class:`InputError`; a readable file of
    an unknown kind returns ``"unknown"`` (callers that need a kind raise).
    """
    if is_url(path):
        return "timemap"
    p = Path(path)
    if p.is_dir():
        return "gold" if gold_labels_file(p) is not None else "unknown"
    if not p.exists() and not ((m := split_member(path)) and Path(m[0]).is_file()):
        raise InputError(f"{path}: no such file or directory", reason="missing")
    head = peek(p)
    if is_wacz(head, path):
        return "wacz"
    if head.startswith(b"WARC/"):
        return "warc"
    if head.startswith(b"filedesc://"):
        return "arc"
    if b"\x00" in head[:2048]:
        return "unknown"
    return classify_text(head)
