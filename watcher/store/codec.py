"""Byte and JSON forms of fingerprints and verdicts, as the stores keep them.

Why a codec of our own rather than pickle: stored baselines outlive code
versions (a baseline is kept for as long as a seed is crawled), so the format
must be versioned, readable by other tools and safe to load.  The format is
one version byte followed by zlib-compressed JSON; bytes travel as base64,
frozensets as sorted lists, 64-bit shingle hashes as packed little-endian
integers.  Since format 3 the sketches (MinHash, shingle sample), and since format 4 the shingle
set, follow the JSON as raw bytes (they do not compress); older formats are still read.

Baselines are stored in *sketch form* by default: the full text, the token
sequence and the shingle set are dropped (they are large and only a few
measures need them).  Term frequencies are kept (TF-IDF cosine, Jaccard and
Sørensen read them), capped to the most frequent ``max_terms`` terms
(``store.max_terms``, default :data:`MAX_STORED_TERMS`).  The default cap is
high on purpose: on the gold standard the median page has ~250 distinct terms
and 99 % have under 2,000, so a cap of 2,000 saves ~10 % of space on average
while changing Jaccard/Sørensen scores of the largest pages; 20,000 only bounds
the pathological ones (a baseline is then at most ~100 kB).
:func:`reduce_fingerprint` gives exactly what :func:`decode_fingerprint` will
return, so the memory backend and the SQLite backend hand the engine the same
object.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import struct
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

import numpy as np

from ..compact import MAX_STORED_TERMS, reduce_fingerprint
from ..errors import StoreError
from ..model import Fingerprint, MeasureResult, ScholarlyRecord, Verdict, utc
from ..state import HistoryState, Reference

FINGERPRINT_FORMAT = 1  # zlib JSON (read only)
FINGERPRINT_FORMAT_RAW = 3  # zlib JSON of the small fields, then the raw sketches (minhash, shingle sample)
# Format 3, then the shingle set raw (sorted little-endian unsigned 64-bit): in the JSON, base64 of
# random hashes was half of a stored fingerprint's bytes, and zlib spent half of the encoding's time
# on them for nothing (they do not compress); raw, they are the same size and cost nothing.
FINGERPRINT_FORMAT_SHINGLES = 4
_RAW_FIELDS = ("minhash", "shingle_sample")
_U64 = 1 << 64
_I64_MIN = -(1 << 63)
def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


def _sorted_u64(shingles: frozenset[int]) -> bytes | None:
    """The set as sorted little-endian unsigned 64-bit integers, or ``None`` where a value does not
    fit.  Sorted by numpy: Python's sort of a page's set was a third of encoding a fingerprint."""
    try:
        values = np.fromiter(shingles, dtype=np.uint64, count=len(shingles))
    except (OverflowError, ValueError, TypeError):
        return None
    values.sort()
    return bytes(values.astype("<u8", copy=False).tobytes())


def _pack_shingles(shingles: frozenset[int]) -> dict[str, Any]:
    """Packed 8-byte integers when they fit (unsigned or signed 64-bit), else a list."""
    packed = _sorted_u64(shingles)
    if packed is not None:
        return {"u64": _b64(packed)}
    values = sorted(shingles)
    if not values:
        return {"u64": ""}
    if values[0] >= 0 and values[-1] < _U64:
        return {"u64": _b64(struct.pack(f"<{len(values)}Q", *values))}
    if values[0] >= _I64_MIN and values[-1] < (1 << 63):
        return {"i64": _b64(struct.pack(f"<{len(values)}q", *values))}
    return {"list": values}


def _unpack_shingles(obj: Mapping[str, Any], raw_set: bytes = b"") -> frozenset[int]:
    if "raw" in obj:  # format 4: the values after the sketches
        if len(raw_set) != 8 * int(obj["raw"]):
            raise ValueError(f"shingle set of {len(raw_set)} bytes, {obj['raw']} values expected")
        return frozenset(np.frombuffer(raw_set, dtype="<u8").tolist())
    if "list" in obj:
        return frozenset(int(v) for v in obj["list"])
    fmt, key = ("Q", "u64") if "u64" in obj else ("q", "i64")
    raw = _unb64(obj[key])
    return frozenset(struct.unpack(f"<{len(raw) // 8}{fmt}", raw))


def _tag(value: Any) -> Any:
    """JSON form of a field value that keeps its Python type: tuples, sets,
    bytes and mappings are tagged (``$t``, ``$s``, ``$b``, ``$m``), so a field the
    model gains later round-trips without a codec change."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$b": _b64(bytes(value))}
    if isinstance(value, tuple | list):
        return {"$t": [_tag(v) for v in value]}
    if isinstance(value, frozenset | set):
        return {"$s": [_tag(v) for v in sorted(value, key=repr)]}
    if isinstance(value, Mapping):
        return {"$m": [[_tag(k), _tag(v)] for k, v in value.items()]}
    raise StoreError(f"cannot encode a {type(value).__name__} in a fingerprint", reason="store_codec")


def _untag(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    if "$b" in value:
        return _unb64(value["$b"])
    if "$t" in value:
        return tuple(_untag(v) for v in value["$t"])
    if "$s" in value:
        return frozenset(_untag(v) for v in value["$s"])
    if "$m" in value:
        return {_untag(k): _untag(v) for k, v in value["$m"]}
    raise ValueError(f"untagged object {sorted(value)[:3]}")


_FP_FIELDS = {f.name: f for f in dataclasses.fields(Fingerprint) if f.init}  # not the derived title_key
_REC_FIELDS = [f.name for f in dataclasses.fields(ScholarlyRecord)]
_REC_HASHES = ("main_sample",)


def _record_doc(rec: ScholarlyRecord) -> dict[str, Any]:
    """Compact JSON of a scholarly record: empty fields left out, hash samples packed."""
    out: dict[str, Any] = {}
    for name in _REC_FIELDS:
        value = getattr(rec, name)
        if value in (None, "", (), 0, frozenset()):
            continue
        if name in _REC_HASHES:
            out[name] = _b64(struct.pack(f"<{len(value)}Q", *value))
        elif name == "paragraphs":
            out[name] = [_b64(struct.pack(f"<{len(p)}Q", *p)) for p in value]
        elif name == "main_shingles":
            out[name] = _pack_shingles(value)
        else:
            out[name] = _tag(value)
    return out


def _unpack_u64(text: str) -> tuple[int, ...]:
    raw = _unb64(text)
    return tuple(struct.unpack(f"<{len(raw) // 8}Q", raw))


def _record_from(doc: Mapping[str, Any]) -> ScholarlyRecord:
    kwargs: dict[str, Any] = {}
    for name, value in doc.items():
        if name not in _REC_FIELDS:
            continue
        if name in _REC_HASHES:
            kwargs[name] = _unpack_u64(value)
        elif name == "paragraphs":
            kwargs[name] = tuple(_unpack_u64(p) for p in value)
        elif name == "main_shingles":
            kwargs[name] = _unpack_shingles(value)
        else:
            kwargs[name] = _untag(value)
    return ScholarlyRecord(**kwargs)


def encode_fingerprint(
    fp: Fingerprint, *, keep_text: bool, keep_shingles: bool, max_terms: int = MAX_STORED_TERMS
) -> bytes:
    """Versioned, compressed bytes of the reduced form of ``fp`` (see module doc)."""
    r = reduce_fingerprint(fp, keep_text=keep_text, keep_shingles=keep_shingles, max_terms=max_terms)
    doc: dict[str, Any] = {}
    raw_set: bytes | None = None
    for name in _FP_FIELDS:
        value = getattr(r, name)
        if name in _RAW_FIELDS:
            continue  # raw bytes after the JSON: base64 would grow them by a third and they do not compress
        if name != "features" and _FP_FIELDS[name].default is not dataclasses.MISSING \
                and value == _FP_FIELDS[name].default:
            continue  # at its default (most are): decoding gives it back ("features" tells a format-1 blob)
        if name == "term_freqs":  # the bulk of a sketch: a plain JSON object, not tagged pairs
            doc[name] = {str(k): int(v) for k, v in value.items()}
        elif name == "shingles":
            raw_set = _sorted_u64(value) if value is not None else None
            if raw_set is not None:
                doc[name] = {"raw": len(raw_set) // 8}
            else:  # none, or values past unsigned 64-bit (never made here): in the JSON, as format 3 had them
                doc[name] = _pack_shingles(value) if value is not None else None
        elif name == "record":
            doc[name] = _record_doc(value) if value is not None else None
        else:
            doc[name] = _tag(value)
    body = zlib.compress(json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 9)
    raw = b"".join(struct.pack("<I", len(getattr(r, n))) + getattr(r, n) for n in _RAW_FIELDS)
    if raw_set is None:  # no shingle set (a baseline's sketch form): format 3, byte for byte
        return bytes([FINGERPRINT_FORMAT_RAW]) + struct.pack("<I", len(body)) + body + raw
    raw += struct.pack("<I", len(raw_set)) + raw_set
    return bytes([FINGERPRINT_FORMAT_SHINGLES]) + struct.pack("<I", len(body)) + body + raw


def decode_fingerprint(b: bytes) -> Fingerprint:
    """Inverse of :func:`encode_fingerprint`; raises :class:`StoreError` on
    an unknown format version or damaged bytes.  Fields missing from an older
    blob take their defaults; fields the model no longer has are ignored."""
    if not b:
        raise StoreError("empty fingerprint blob", reason="store_codec")
    if b[0] not in (FINGERPRINT_FORMAT, FINGERPRINT_FORMAT_RAW, FINGERPRINT_FORMAT_SHINGLES):
        raise StoreError(f"unknown fingerprint format version {b[0]}", reason="store_codec")
    try:
        kwargs: dict[str, Any] = {}
        raw_set = b""
        if b[0] == FINGERPRINT_FORMAT:
            doc = json.loads(zlib.decompress(b[1:]).decode("utf-8"))
        else:
            (n,) = struct.unpack_from("<I", b, 1)
            doc = json.loads(zlib.decompress(b[5:5 + n]).decode("utf-8"))
            pos = 5 + n
            for name in _RAW_FIELDS:
                (m,) = struct.unpack_from("<I", b, pos)
                kwargs[name] = bytes(b[pos + 4:pos + 4 + m])
                pos += 4 + m
            if b[0] == FINGERPRINT_FORMAT_SHINGLES:
                (m,) = struct.unpack_from("<I", b, pos)
                raw_set = bytes(b[pos + 4:pos + 4 + m])
        for name in _FP_FIELDS:
            if name not in doc:
                continue  # dataclass default applies (a missing required field fails below)
            value = doc[name]
            if name == "term_freqs":
                kwargs[name] = {str(k): int(v) for k, v in value.items()}
            elif name == "shingles":
                kwargs[name] = _unpack_shingles(value, raw_set) if value is not None else None
            elif name == "record":
                kwargs[name] = _record_from(value) if value is not None else None
            else:
                kwargs[name] = _untag(value)
        if "features" not in doc:  # a format-1 blob from before features were recorded: what it evidently holds
            have = {"terms", "minhash"} if doc.get("kind") in ("html", "text", "pdf") else set()
            have |= {"shingles"} if kwargs.get("shingles") is not None else set()
            have |= {"tokens"} if kwargs.get("tokens") is not None else set()
            have |= {"tf_simhash"} if kwargs.get("simhash_tf") else set()
            have |= {"raw_simhash"} if kwargs.get("simhash_raw") else set()
            kwargs["features"] = frozenset(have)
        return Fingerprint(**kwargs)
    except (zlib.error, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError, struct.error) as exc:
        raise StoreError(f"damaged fingerprint blob: {exc}", reason="store_codec") from exc


# -- verdicts ---------------------------------------------------------------


def iso_utc(dt: datetime) -> str:
    """ISO 8601 in UTC with a ``Z`` suffix (``2008-04-30T20:48:25Z``)."""
    return utc(dt).isoformat().replace("+00:00", "Z")


def parse_iso(text: str) -> datetime:
    """Aware UTC datetime of an ISO 8601 string (naive strings are taken as UTC)."""
    return utc(datetime.fromisoformat(text))


def _score(value: float | None) -> float | str | None:
    """JSON has no NaN/Infinity: write them as strings so output stays strict JSON."""
    if value is not None and not math.isfinite(value):
        return str(value)
    return value


def _unscore(value: Any) -> float | None:
    if value is None:
        return None
    return float(value)


def measure_to_dict(m: MeasureResult) -> dict[str, Any]:
    return {"name": m.name, "score": _score(m.score), "status": m.status, "threshold": _score(m.threshold)}


def measure_from_dict(d: Mapping[str, Any]) -> MeasureResult:
    return MeasureResult(
        name=str(d["name"]), score=_unscore(d.get("score")), status=d["status"], threshold=_unscore(d.get("threshold"))
    )


_V_FIELDS = dataclasses.fields(Verdict)


def _kind(f: dataclasses.Field[Any]) -> str:
    """How a Verdict field is written: by its annotation (a string under
    ``from __future__ import annotations``)."""
    t = str(f.type)
    if f.name == "measures":
        return "measures"
    if "datetime" in t:
        return "datetime"
    if "float" in t:
        return "float"
    if t.startswith("tuple"):
        return "tuple"
    return "plain"


_V_KINDS = {f.name: _kind(f) for f in _V_FIELDS}


def verdict_to_dict(v: Verdict) -> dict[str, Any]:
    """Plain JSON-ready mapping of ``v`` (datetimes as ISO 8601 UTC, measures
    as ``{name: {name, score, status, threshold}}``); every field of the model."""
    out: dict[str, Any] = {}
    for name, kind in _V_KINDS.items():
        value = getattr(v, name)
        if kind == "measures":
            out[name] = {k: measure_to_dict(m) for k, m in value.items()}
        elif kind == "datetime":
            out[name] = iso_utc(value) if value is not None else None
        elif kind == "float":
            out[name] = _score(value)
        else:
            out[name] = value
    return out


def verdict_from_dict(d: Mapping[str, Any]) -> Verdict:
    """Inverse of :func:`verdict_to_dict`; datetimes come back aware, in UTC.
    Keys the model does not know are ignored; missing optional ones take defaults."""
    kwargs: dict[str, Any] = {}
    try:
        for name, kind in _V_KINDS.items():
            if name not in d:
                continue
            value = d[name]
            if kind == "measures":
                kwargs[name] = {str(k): measure_from_dict(m) for k, m in cast(Mapping[str, Any], value or {}).items()}
            elif kind == "datetime":
                kwargs[name] = parse_iso(value) if value else None
            elif kind == "float":
                kwargs[name] = _unscore(value)
            elif kind == "tuple":
                kwargs[name] = tuple(value or ())
            else:
                kwargs[name] = value
        return Verdict(**kwargs)
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(f"damaged verdict record: {exc}", reason="store_codec") from exc


def encode_verdict(v: Verdict) -> str:
    """Strict JSON text of ``v``."""
    return json.dumps(verdict_to_dict(v), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def decode_verdict(text: str | bytes) -> Verdict:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise StoreError(f"damaged verdict JSON: {exc}", reason="store_codec") from exc
    if not isinstance(doc, dict):
        raise StoreError("verdict JSON is not an object", reason="store_codec")
    return verdict_from_dict(doc)


# -- history state ------------------------------------------------------------

STATE_FORMAT = 3  # 2: the references only; 3: and what the history remembers (a reserved byte, names)


def _pack(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def encode_state(state: HistoryState) -> bytes:
    """Versioned bytes of a history's state: per reference (baseline, pinned)
    a flag, the capture time (microseconds since the epoch), the URI-M and the
    fingerprint blob, length-prefixed; no base64, so the bytes per URL are the
    fingerprint's own.  Then what the history remembers: a reserved byte
    (0; it held a flag that is no longer kept, so states written before read
    alike), the number of names and each name, length-prefixed UTF-8
    (``latest`` is the store's, never written here)."""
    out = bytearray([STATE_FORMAT])
    for ref in (state.baseline, state.pinned):
        if ref is None:
            out.append(0)
            continue
        out.append(1)
        out += struct.pack("<q", int(utc(ref.capture_time).timestamp() * 1_000_000))
        out += _pack((ref.uri_m or "").encode("utf-8")) + bytes([ref.uri_m is not None])
        out += _pack(encode_fingerprint(ref.fingerprint, keep_text=True, keep_shingles=True, max_terms=0))
    names = state.names[:255]
    out += bytes([0, len(names)])
    for name in names:
        data = name.encode("utf-8")[:65_535]
        out += struct.pack("<H", len(data)) + data
    return bytes(out)


def decode_state(b: bytes, capture_time: datetime | None = None, uri_m: str | None = None) -> HistoryState:
    """Inverse of :func:`encode_state`; a format-1 blob (a bare baseline
    fingerprint, with its time and URI-M in other columns) is read as a state
    holding that baseline."""
    if b and b[0] == FINGERPRINT_FORMAT:
        if capture_time is None:
            raise StoreError("format-1 baseline without its capture time", reason="store_codec")
        return HistoryState(Reference(utc(capture_time), uri_m, decode_fingerprint(b)))
    if not b or b[0] not in (2, STATE_FORMAT):
        raise StoreError(f"unknown state format {b[:1]!r}", reason="store_codec")
    refs: list[Reference | None] = []
    names: list[str] = []
    try:
        pos = 1
        for _ in range(2):
            flag = b[pos]
            pos += 1
            if not flag:
                refs.append(None)
                continue
            (micros,) = struct.unpack_from("<q", b, pos)
            pos += 8
            (n,) = struct.unpack_from("<I", b, pos)
            u = b[pos + 4:pos + 4 + n].decode("utf-8")
            pos += 4 + n
            has_u = b[pos]
            pos += 1
            (n,) = struct.unpack_from("<I", b, pos)
            fp = decode_fingerprint(b[pos + 4:pos + 4 + n])
            pos += 4 + n
            when = datetime.fromtimestamp(micros / 1_000_000, tz=UTC)
            refs.append(Reference(when, u if has_u else None, fp))
        if b[0] >= 3:  # format 2 remembered nothing: a state written by an earlier version starts afresh
            count = b[pos + 1]  # b[pos]: the reserved byte
            pos += 2
            for _ in range(count):
                (n,) = struct.unpack_from("<H", b, pos)
                if pos + 2 + n > len(b):
                    raise IndexError("a name runs past the end")
                names.append(b[pos + 2:pos + 2 + n].decode("utf-8"))
                pos += 2 + n
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise StoreError(f"damaged state blob: {exc}", reason="store_codec") from exc
    return HistoryState(refs[0], refs[1], names=tuple(names))
