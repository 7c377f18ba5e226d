"""Undo HTTP content codings (gzip, deflate, brotli, zstd) on captured bodies.

Why: archives store many bodies exactly as sent with ``Content-Encoding``,
and not every reader undoes the coding (warcio does for gzip, deflate and br
when the header is there; gold files, inline events and headerless records
keep the coded bytes).  Coded bytes read as binary, and a binary page loses
its site's identity: a false off-topic verdict repeated for every capture
with the same digest.  So every input path goes through :func:`decode_body`
once, in :func:`watcher.fingerprint.fingerprint`.

What is decoded: the codings named by the ``Content-Encoding`` header (last
applied first), then whatever the bytes say they are -- gzip (``1f 8b 08``),
zlib (``78`` + a valid FCHECK byte), a zstd frame (``28 b5 2f fd``) -- layer
after layer (double gzip happens).  Brotli and raw deflate have no magic
bytes: they are tried when the header names them, or when the bytes are not
text and a small bounded trial decode yields text.  A coding that does not
decode is left alone: bodies that merely start like gzip stay as they are,
and bodies a reader already decoded (header kept, bytes plain) too.

Bounds: decoding streams, never inflating more than ``max_bytes`` of output
(the rest is cut: ``truncated``), and stops as soon as the output outgrows
``max_ratio`` times the input consumed so far, once past ``RATIO_FLOOR_BYTES``
(``bomb``).  So a gigabyte of zeros in a megabyte of gzip costs about a
megabyte of memory, never a gigabyte.
"""

from __future__ import annotations

import logging
import re
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import brotli
import zstandard

from ..errors import ExtractError

log = logging.getLogger(__name__)

# Below this much output, no ratio is a bomb: small pages compress very well
# and cost nothing.
RATIO_FLOOR_BYTES = 1 << 20
MAX_LAYERS = 4
_IN_CHUNK = 16 * 1024
_OUT_CHUNK = 256 * 1024
_PROBE_OUT = 64 * 1024
_ZSTD_IN_CHUNK = 512
# Brotli reports no input consumed: small pieces keep the ratio check tight.
_BROTLI_IN_CHUNK = 4096

_GZIP_MAGIC = b"\x1f\x8b\x08"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZLIB_SECOND = (0x01, 0x5E, 0x9C, 0xDA)
_HTML_SNIFF = re.compile(rb"<\s*(!doctype|html|head|body|title|meta|div|p|table|script|a\s|\?xml)", re.I)
# Formats with magic bytes of their own: never tried as brotli or raw deflate.
_BINARY_MAGIC = (b"%PDF", b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"PK\x03\x04", b"RIFF", b"\x00\x00\x01\x00",
                 b"OggS", b"fLaC", b"ID3", b"wOF", b"\x1a\x45\xdf\xa3")
_ALIASES = {"x-gzip": "gzip", "x-deflate": "deflate", "zstd": "zstd", "br": "br", "gzip": "gzip",
            "deflate": "deflate"}


class ContentCodingError(ExtractError):
    """A bounded decode stopped: ``reason`` is ``bomb``, ``corrupt`` or
    ``incomplete``.  Internal: :func:`decode_body` never raises it."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail, reason=reason)


@dataclass(frozen=True, slots=True)
class Decoded:
    """The body after undoing its codings.

    ``codings`` lists what was undone, outermost first (empty: the body was
    not coded).  ``note`` is ``None``, ``"truncated"`` (output cut at
    ``max_bytes``), ``"bomb"`` (output outgrew the ratio cap), ``"corrupt"``
    (the coded stream broke after yielding output) or ``"incomplete"`` (the
    coded stream ended early: a cut body).  On ``bomb``, ``content`` is the
    bounded prefix and must not be scored as the page.
    """

    content: bytes
    codings: tuple[str, ...] = ()
    note: str | None = None
    detail: str = ""


def looks_text(data: bytes) -> bool:
    """Text or markup, judged on the first 4 KiB (NUL and C0 bytes are not text)."""
    sample = data[:4096]
    if not sample:
        return False
    if _HTML_SNIFF.search(sample) and sample.count(0) < 8:
        return True
    printable = sum(32 <= b < 127 or b in (9, 10, 13) or b >= 0xC2 for b in sample)
    return printable / len(sample) > 0.9


def declared_codings(headers: Mapping[str, str] | None) -> list[str]:
    """``Content-Encoding`` codings in the order applied (``identity`` dropped)."""
    if not headers:
        return []
    values = [v for k, v in headers.items() if k.lower() == "content-encoding" and v]
    out: list[str] = []
    for value in values:
        for part in value.split(","):
            name = part.strip().lower()
            if name and name != "identity":
                out.append(_ALIASES.get(name, name))
    return out


def sniff_coding(data: bytes) -> str | None:
    """The coding the bytes announce by their magic, or None."""
    if data.startswith(_GZIP_MAGIC):
        return "gzip"
    if data.startswith(_ZSTD_MAGIC):
        return "zstd"
    if len(data) >= 2 and data[0] == 0x78 and data[1] in _ZLIB_SECOND and (data[0] * 256 + data[1]) % 31 == 0:
        return "deflate"
    return None


def _guard(out_len: int, consumed: int, max_ratio: float, name: str) -> None:
    if out_len > RATIO_FLOOR_BYTES and out_len > max_ratio * max(1, consumed):
        raise ContentCodingError("bomb", f"{name} body inflates over {max_ratio:g}x ({out_len} bytes from {consumed})")


def _zlib_chunks(data: bytes, wbits: int, limit: int, max_ratio: float, name: str) -> Iterator[bytes]:
    """Stream-decompress zlib/gzip/raw deflate; gzip members may follow each other."""
    pos = 0
    produced = 0
    while True:
        d = zlib.decompressobj(wbits)
        fed = 0
        member = data[pos:]
        try:
            while fed < len(member) and not d.eof:
                chunk = member[fed:fed + _IN_CHUNK]
                fed += len(chunk)
                buf = chunk
                while True:
                    out = d.decompress(buf, _OUT_CHUNK)
                    produced += len(out)
                    if out:
                        yield out
                    _guard(produced, pos + fed - len(d.unconsumed_tail), max_ratio, name)
                    if produced >= limit:
                        return
                    buf = d.unconsumed_tail
                    if not buf or d.eof:
                        break
        except zlib.error as exc:
            raise ContentCodingError("corrupt", f"{name}: {exc}") from None
        if not d.eof:
            raise ContentCodingError("incomplete", f"{name} stream ends early")
        rest = d.unused_data
        pos = len(data) - len(rest)
        if not (name == "gzip" and rest.startswith(_GZIP_MAGIC)):
            return


def _brotli_chunks(data: bytes, limit: int, max_ratio: float) -> Iterator[bytes]:
    d = brotli.Decompressor()
    produced = 0
    fed = 0
    try:
        while fed < len(data) and not d.is_finished():
            chunk = data[fed:fed + _BROTLI_IN_CHUNK]
            fed += len(chunk)
            out = d.process(chunk, output_buffer_limit=_OUT_CHUNK)
            while True:
                produced += len(out)
                if out:
                    yield out
                _guard(produced, fed, max_ratio, "br")
                if produced >= limit or d.can_accept_more_data():
                    break
                out = d.process(b"", output_buffer_limit=_OUT_CHUNK)
            if produced >= limit:
                return
    except brotli.error as exc:
        raise ContentCodingError("corrupt", f"br: {exc}") from None
    if not d.is_finished():
        raise ContentCodingError("incomplete", "br stream ends early")


def _zstd_chunks(data: bytes, limit: int, max_ratio: float) -> Iterator[bytes]:
    """zstd frames one after another.  The zstd object has no output bound per
    call, so input goes in small pieces: one RLE block of 4 bytes may expand to
    128 KiB, hence at most ``_ZSTD_IN_CHUNK / 4 * 128 KiB`` per call."""
    dctx = zstandard.ZstdDecompressor()
    pos = 0
    produced = 0
    try:
        while pos < len(data):
            d = dctx.decompressobj()
            while pos < len(data) and not d.eof:
                chunk = data[pos:pos + _ZSTD_IN_CHUNK]
                out = d.decompress(chunk)
                pos += len(chunk) - len(d.unused_data)
                produced += len(out)
                if out:
                    yield out
                _guard(produced, pos, max_ratio, "zstd")
                if produced >= limit:
                    return
            if not d.eof:
                raise ContentCodingError("incomplete", "zstd stream ends early")
            if not data.startswith(_ZSTD_MAGIC, pos):
                return
    except zstandard.ZstdError as exc:
        raise ContentCodingError("corrupt", f"zstd: {exc}") from None


def _chunks(coding: str, data: bytes, limit: int, max_ratio: float) -> Iterator[bytes]:
    if coding == "gzip":
        return _zlib_chunks(data, 16 + zlib.MAX_WBITS, limit, max_ratio, "gzip")
    if coding == "deflate":
        return _zlib_chunks(data, zlib.MAX_WBITS, limit, max_ratio, "deflate")
    if coding == "raw-deflate":
        return _zlib_chunks(data, -zlib.MAX_WBITS, limit, max_ratio, "raw-deflate")
    if coding == "br":
        return _brotli_chunks(data, limit, max_ratio)
    if coding == "zstd":
        return _zstd_chunks(data, limit, max_ratio)
    raise ContentCodingError("corrupt", f"unknown coding {coding}")


def _run(coding: str, data: bytes, max_bytes: int, max_ratio: float) -> Decoded:
    """Decode one layer.  Raises :class:`ContentCodingError` ``corrupt`` when the
    coding yields nothing (the body is not in that coding)."""
    buf = bytearray()
    note: str | None = None
    detail = ""
    try:
        for out in _chunks(coding, data, max_bytes, max_ratio):
            buf += out
            if len(buf) >= max_bytes:
                break
    except ContentCodingError as exc:
        if not buf and exc.reason == "corrupt":
            raise
        note, detail = exc.reason, str(exc)
    if len(buf) > max_bytes:
        del buf[max_bytes:]
    if note is None and len(buf) >= max_bytes:
        note, detail = "truncated", f"{coding} body inflates past {max_bytes} bytes (extract.max_bytes)"
    return Decoded(bytes(buf), (coding,), note, detail)


def _probe(coding: str, data: bytes) -> bool:
    """A small bounded trial: does ``data`` decode as ``coding`` into text?"""
    try:
        head = bytearray()
        for out in _chunks(coding, data, _PROBE_OUT, float("inf")):
            head += out
            if len(head) >= _PROBE_OUT:
                break
    except ContentCodingError as exc:
        if exc.reason != "incomplete" or not head:
            return False
    return bool(head) and looks_text(bytes(head))


def _next_coding(data: bytes, declared: list[str]) -> tuple[list[str], bool]:
    """Codings worth trying on ``data``, best first, and whether only a clean
    decode counts (``strict``).

    The magic bytes win.  A declared coding without magic (brotli, raw
    deflate, or a header naming a coding the bytes do not show) on bytes
    that look like text is tried strictly: usually a reader already undid it,
    and a trial decode of text can yield a few bytes before failing; but
    brotli output can look like text too (uncompressed meta-blocks).
    """
    top = declared.pop() if declared else None
    sniffed = sniff_coding(data)
    if sniffed:
        return [sniffed] + ([top] if top and top != sniffed else []), False
    if top is None:
        return [], False
    return ([top, "raw-deflate"] if top == "deflate" else [top]), looks_text(data)


def _blind(data: bytes, content_type: str | None) -> tuple[str | None, bool]:
    """Brotli or raw deflate for bytes without magic: (coding, strict).

    Bytes that are not text are probed with a small bounded decode that must
    yield text.  Bytes that look like text are tried as brotli only, strictly
    (a whole clean decode into text): brotli output of small pages can be
    nearly the page itself, and a brotli decoder refuses text at once.
    """
    if data.startswith(_BINARY_MAGIC):
        return None, False
    ct = (content_type or "").split(";")[0].strip().lower()
    if ct.startswith(("image/", "video/", "audio/", "font/")) or ct in ("application/pdf", "application/zip"):
        return None, False
    if looks_text(data):
        return "br", True
    for coding in ("br", "raw-deflate"):
        if _probe(coding, data):
            return coding, False
    return None, False


def _attempt(coding: str, data: bytes, max_bytes: int, max_ratio: float, strict: bool) -> Decoded | None:
    """One layer decoded, or None when ``data`` is not in ``coding``."""
    try:
        result = _run(coding, data, max_bytes, max_ratio)
    except ContentCodingError:
        return None
    if strict and (result.note not in (None, "truncated") or not looks_text(result.content)):
        return None
    return result


def decode_body(
    data: bytes, headers: Mapping[str, str] | None = None, *, content_type: str | None = None,
    max_bytes: int = 20_000_000, max_ratio: float = 200.0,
) -> Decoded:
    """Undo the content codings of ``data`` within the caps.  Never raises."""
    declared = declared_codings(headers)
    codings: list[str] = []
    current = data
    for _layer in range(MAX_LAYERS):
        if not current:
            break
        result: Decoded | None = None
        candidates, strict = _next_coding(current, declared)
        for coding in candidates:
            result = _attempt(coding, current, max_bytes, max_ratio, strict)
            if result is not None:
                break
        if result is None:
            if declared:
                continue  # a declared coding already undone upstream: look at the next one
            blind, strict = _blind(current, content_type)
            result = _attempt(blind, current, max_bytes, max_ratio, strict) if blind else None
            if result is None:
                break
        codings.extend(result.codings)
        if result.note is not None:
            log.info("content coding %s: %s", "+".join(codings), result.detail)
            return Decoded(result.content, tuple(codings), result.note, result.detail)
        current = result.content
    return Decoded(current, tuple(codings))

