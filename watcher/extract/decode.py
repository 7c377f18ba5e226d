"""Bytes to text, following the WHATWG sniffing order, never failing.

Order: BOM, transport (HTTP ``charset``), ``<meta>``/XML-declaration prescan
of the first 1024 bytes, detection (chardetng, Firefox's detector), fallback
(windows-1252).  Archives often send a wrong charset, so a declared
single-byte charset loses to UTF-8 when the bytes are valid UTF-8 with
multi-byte sequences, and a declared multi-byte charset that does not decode
cleanly loses to detection.

Pages are often *mostly* UTF-8: a UTF-8 template around a few legacy bytes
pasted from a database or an old include ("Generación" beside "inglés" in
windows-1252 on one real page of the shared gold collection, 55 of its
captures).  Strict validation calls such a page "not UTF-8", detection then
guesses a single-byte charset, and every non-ASCII word of the page turns into
mojibake, so two captures of one page share none of those words.  When most
high bytes form valid UTF-8 sequences (legacy single-byte and CJK text reach
at most a fifth, mixed pages nearly all), the page is read as UTF-8 and each
stray byte as windows-1252, as Beautiful Soup's ``detwingle`` does.  Whatever
wins, decoding never fails: bad bytes cost a replacement character.
"""

from __future__ import annotations

import codecs
import logging
import re
from functools import lru_cache

import chardetng_py

log = logging.getLogger(__name__)

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.\-]+)""", re.I)
_XML_DECL = re.compile(rb"""^<\?xml[^>]+encoding\s*=\s*["']([a-zA-Z0-9_.\-]+)""")
_CT_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([a-zA-Z0-9_:.\-]+)""", re.I)

# WHATWG label aliases that Python does not map the same way.
_ALIASES = {
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "iso-8859-9": "cp1254",
    "iso-8859-11": "cp874",
    "tis-620": "cp874",
    "x-sjis": "cp932",
    "shift_jis": "cp932",  # WHATWG's Shift_JIS is Windows-31J
    "big5": "big5hkscs",  # WHATWG's Big5 includes HKSCS
    "iso-8859-8-i": "iso8859-8",
    "x-mac-cyrillic": "mac-cyrillic",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "ks_c_5601-1987": "cp949",
    "euc-kr": "cp949",
    "windows-874": "cp874",
    "x-user-defined": "cp1252",
    "utf8": "utf-8",
    "unicode": "utf-16le",
}
_SINGLE_BYTE = {"cp1252", "cp1250", "cp1251", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258",
                "iso8859-2", "iso8859-5", "iso8859-6", "iso8859-7", "iso8859-8", "iso8859-15", "koi8-r",
                "koi8-u", "cp874", "mac-roman", "latin-1"}


def normalise_label(label: str | None) -> str | None:
    """A Python codec name for an encoding label, or ``None`` if unknown."""
    if not label:
        return None
    name = label.strip().strip("\"'").lower()
    name = _ALIASES.get(name, name)
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None
    if info.name in ("utf-16", "utf-32"):  # needs a BOM; handled before
        return None
    return info.name


def _bom(data: bytes) -> tuple[str, int] | None:
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8", 3
    if data.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le", 2
    if data.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be", 2
    return None


def charset_from_content_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    m = _CT_CHARSET.search(content_type)
    return normalise_label(m.group(1)) if m else None


def prescan(data: bytes) -> str | None:
    """Charset declared in the first 1024 bytes (``<meta>`` or XML declaration)."""
    head = data[:1024]
    m = _XML_DECL.match(head) or _META_CHARSET.search(head)
    if not m:
        return None
    name = normalise_label(m.group(1).decode("ascii", "ignore"))
    # A page that says utf-16 in ASCII bytes is not utf-16 (WHATWG rule).
    if name and name.startswith("utf-16"):
        return "utf-8"
    return name


# A valid UTF-8 multi-byte sequence (no overlongs, no surrogates).
_UTF8_SEQ = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
                       rb"|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}"
                       rb"|\xf4[\x80-\x8f][\x80-\xbf]{2}")
_ASCII = bytes(range(0x80))
_SNIFF_BYTES = 262144
_FALLBACK_HANDLER = "driftline-utf8-cp1252"


def _stray_bytes_as_cp1252(exc: UnicodeError) -> tuple[str, int]:
    """Codec error handler: a byte that is not UTF-8 is read as windows-1252."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return exc.object[exc.start:exc.end].decode("cp1252", errors="replace"), exc.end


codecs.register_error(_FALLBACK_HANDLER, _stray_bytes_as_cp1252)


def _high_bytes(data: bytes) -> bytes:
    """The non-ASCII bytes of the sniff window, in order (one C-speed pass)."""
    return data[:_SNIFF_BYTES].translate(None, _ASCII)


def _mostly_utf8(data: bytes, high: bytes) -> bool:
    """True when at least half the high bytes form valid UTF-8 sequences.

    Only reached for bytes that are not clean UTF-8.  Measured on the 401
    real pages in ``shared/data`` that are not: legacy pages (windows-125x,
    ISO-8859, EUC-KR) score 0.0 to 0.2, UTF-8 pages with stray legacy bytes
    0.8 to 1.0; one half is the line between.
    """
    if not high:
        return False
    return _in_utf8_sequences(data[:_SNIFF_BYTES], high) * 2 >= len(high)


def _in_utf8_sequences(window: bytes, high: bytes) -> int:
    """How many of ``window``'s high bytes belong to well-formed UTF-8 sequences (what
    :data:`_UTF8_SEQ` matches): the strict decoder escapes every other byte as a lone surrogate,
    which encoding back drops.  Two C-level passes, where the pattern took a millisecond a page."""
    kept = window.decode("utf-8", "surrogateescape").encode("utf-8", "ignore")
    return len(high) - (len(window) - len(kept))


def _clean_utf8(data: bytes) -> bool:
    """True when ``data`` is valid UTF-8 (a truncated last sequence is tolerated)."""
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 3 and exc.reason == "unexpected end of data"


_TLD = re.compile(r"[a-z0-9-]{1,63}")
# Bytes that are the same punctuation or symbol in windows-1250 to windows-1258.
_WINDOWS_PUNCTUATION = frozenset(b"\x82\x84\x85\x86\x87\x89\x8b\x91\x92\x93\x94\x95\x96\x97\x99\x9b"
                                 b"\xa0\xa6\xa7\xa9\xab\xac\xad\xae\xb0\xb1\xb6\xb7\xbb")


def _tld_hint(tld: str | None) -> bytes | None:
    """The top-level domain as chardetng takes it (ASCII, lower case, punycode), or ``None``.

    chardetng panics on a label with a period, upper case or non-ASCII, so
    anything else is dropped rather than passed."""
    if not tld:
        return None
    try:
        label = tld.strip().lower().encode("idna")
    except UnicodeError:
        return None
    return label if _TLD.fullmatch(label.decode("ascii")) and not label.isdigit() else None


def _detect(data: bytes, high: bytes, tld: str | None = None) -> str | None:
    """Firefox's detector (chardetng) on the sniff window, hinted by the site's TLD.

    It answers only encodings a browser decodes (the WHATWG set), as a
    browser would for an undeclared page: the reason it beats uchardet
    (``cchardet``), which guessed DOS and Mac code pages (cp865, cp852,
    mac-latin2) for web pages.  On the 275 real pages here that declare a
    legacy charset, with the declaration removed: uchardet 237 right (Arabic
    windows-1256 53 of 65), chardetng 269, with the TLD 275.

    A page whose only non-ASCII bytes are punctuation that all nine Windows
    code pages share (curly quotes, dashes, « », ©, no-break space) reads the
    same in any of them, so it is read as windows-1252 without asking:
    chardetng guessed ISO-8859-2 from « » alone (gold's syriahr.com: "Ť...ť").
    """
    if set(high) <= _WINDOWS_PUNCTUATION:
        return "cp1252"  # any Windows code page reads these bytes alike; there is nothing to detect
    name = chardetng_py.detect(data[:_SNIFF_BYTES], allow_utf8=False, tld=_tld_hint(tld))
    return normalise_label(name)


def choose_encoding(data: bytes, content_type: str | None = None, fallback: str = "cp1252",
                    tld: str | None = None) -> str:
    """The codec :func:`decode` would use for ``data`` (exposed for tests and logs).

    ``tld``: the top-level domain of the page's address, which tells the
    detector which legacy encodings that web used (``eg`` windows-1256)."""
    bom = _bom(data)
    if bom:
        return bom[0]
    high = _high_bytes(data)
    has_high = bool(high)
    utf8: bool | None = None  # computed once, when first needed

    def is_utf8() -> bool:
        nonlocal utf8
        if utf8 is None:
            utf8 = _clean_utf8(data) or _mostly_utf8(data, high)
        return utf8

    for declared in (charset_from_content_type(content_type), prescan(data)):
        if not declared:
            continue
        if not has_high:
            return declared
        if declared == "utf-8":
            if is_utf8():
                return declared
            continue  # declared UTF-8 but not UTF-8: ask detection
        if declared in _SINGLE_BYTE or declared.startswith("cp125"):
            if is_utf8():
                return "utf-8"  # wrong single-byte label on UTF-8 bytes, common in archives
            return declared
        try:
            data.decode(declared)
            return declared
        except UnicodeDecodeError:
            continue
    if not has_high:
        return "utf-8"
    if is_utf8():
        return "utf-8"
    return _detect(data, high, tld) or normalise_label(fallback) or "cp1252"


def _errors(enc: str) -> str:
    """UTF-8 reads a stray byte as windows-1252; any other codec replaces a bad byte."""
    return _FALLBACK_HANDLER if enc == "utf-8" else "replace"


def decode(data: bytes, content_type: str | None = None, fallback: str = "cp1252",
           tld: str | None = None) -> tuple[str, str]:
    """Decode ``data`` to text; return ``(text, encoding)``.  Never raises.

    UTF-8 is decoded with each stray byte read as windows-1252 (see the
    module's docstring).  NUL and other C0 control characters (except tab and
    newlines) are removed: NULs inside tags break HTML parsers, and none of
    them carry text.
    """
    bom = _bom(data)
    if bom:
        enc, skip = bom
        text = data[skip:].decode(enc, errors=_errors(enc))
    else:
        enc = choose_encoding(data, content_type, fallback, tld)
        try:
            text = data.decode(enc, errors=_errors(enc))
        except LookupError:  # pragma: no cover - normalise_label guards this
            enc = "cp1252"
            text = data.decode(enc, errors="replace")
    if _controls_only_from_control_bytes(enc) and not data.translate(None, _NOT_CONTROL_BYTES):
        return text, enc  # no control byte, so no control character: the substitution would find none
    return strip_controls(text), enc


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTROL_BYTES = frozenset([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_NOT_CONTROL_BYTES = bytes(b for b in range(256) if b not in _CONTROL_BYTES)
# ASCII-compatible multibyte codecs: their bytes below 0x80 are ASCII wherever they stand (a lead
# or trail byte is 0x40 or more), so a control character in the text is a control byte in the data.
_MULTIBYTE_ASCII = frozenset({"utf-8", "gb18030", "gbk", "gb2312", "big5", "big5hkscs", "euc_jp", "euc_kr",
                              "shift_jis", "cp932", "cp949", "cp950", "iso2022_jp"})


@lru_cache(maxsize=64)
def _controls_only_from_control_bytes(enc: str) -> bool:
    """Whether ``enc`` decodes a control character only from that control byte: the multibyte
    codecs above, and every single-byte codec whose 256 bytes say so one by one (not EBCDIC, not
    UTF-16).  Then a page whose bytes hold no control byte needs no pass over its text: the
    substitution cost a tenth of decoding."""
    if enc in _MULTIBYTE_ASCII:
        return True
    try:
        chars = [bytes([b]).decode(enc, "replace") for b in range(256)]
        whole = bytes(range(256)).decode(enc, "replace")
    except (LookupError, UnicodeError):
        return False
    if "".join(chars) != whole or any(len(c) != 1 for c in chars):
        return False  # not one character per byte
    return all(b in _CONTROL_BYTES or not _CONTROL.match(c) for b, c in enumerate(chars))


def strip_controls(text: str) -> str:
    return _CONTROL.sub("", text)
