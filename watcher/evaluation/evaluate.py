"""Measure a result file against gold labels (``driftline eval``).

Inputs: a gold ``labels.tsv`` (or its directory) and a result file -- JSON in
OTMT's schema (written by driftline or by OTMT itself, with or without OTMT's
older ``{"timemaps": ...}`` wrapper) or driftline's JSONL.  Off-topic
(label 0) is the positive class.

Result URI-Ms are matched to label URIs exactly, then by (canonical URL key
of the original URL, 14-digit capture time), so results of a WARC scan
(synthetic ``<url>@<ts14>`` URI-Ms) match the labels too.  A label whose URI
is an original URL (no capture time in it), not a URI-M, names every capture
of that URL alike: it is matched on (URL, date) only, never exactly, and a
warning says the file was read so when a date is coarser than a second (one
to the second names one capture, as in the labels driftline exports).  Every matched
capture counts in ``n``; one that is unscored (status "empty"/"error", or no
score) counts as not flagged.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import measures as registry
from ..canonical import original_url, url_key
from ..config import CanonicalConfig
from ..errors import InputError, UnknownMeasureError
from ..sources.gold import GoldRow, read_labels
from .metrics import best_threshold, confusion, roc_auc

log = logging.getLogger(__name__)

# OTMT's own measures and comparison directions (its supported_timemap_measures),
# used for result files OTMT wrote (no "threshold" in the measure blocks).
OTMT_MEASURES: dict[str, tuple[str, str]] = {
    "cosine": ("below", "fraction"), "bytecount": ("below", "fraction"), "wordcount": ("below", "fraction"),
    "jaccard": ("above", "fraction"), "sorensen": ("above", "fraction"), "raw_simhash": ("above", "bits"),
    "tf_simhash": ("above", "bits"), "gensim_lsi": ("below", "fraction"), "gensim_lda": ("below", "fraction"),
    "levenshtein": ("above", "count"), "nlevenshtein": ("above", "fraction"),
    "tfintersection": ("above", "count"),
}
_WAYBACK_TS = re.compile(r"/(\d{14})(?:[a-z]{2}_)?/")
_SYNTHETIC = re.compile(r"^(.*)@(\d{14})(?:#\d+)?$")
_OTMT_WARC = re.compile(r"^from-warc::(\d{14})::(.+)$")  # OTMT's URI-Ms for WARC input
UNSCORED_STATUSES = frozenset({"empty", "error", "n/a"})


@dataclass(frozen=True, slots=True)
class Scores:
    """Metrics of one measure (or of the overall verdict)."""

    name: str
    n: int
    unscored: int
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    recall: float
    f1: float
    accuracy: float
    auc: float | None
    direction: str | None = None
    kind: str | None = None
    threshold: float | None = None
    best_threshold: float | None = None
    best_f1: float | None = None


@dataclass(frozen=True, slots=True)
class EvalReport:
    labels_path: str
    result_path: str
    labelled: int
    positives: int
    matched: int
    without_result: int
    results_without_label: int
    overall: Scores
    measures: dict[str, Scores] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ResultRow:
    uri_m: str
    entry: Mapping[str, Any]


# -- reading results ----------------------------------------------------------

def _rows_from_otmt(data: Mapping[str, Any]) -> Iterator[ResultRow]:
    if isinstance(data.get("timemaps"), dict) and len(data) == 1:
        data = data["timemaps"]
    for urit, block in data.items():
        if urit.startswith("__") or not isinstance(block, dict):
            continue
        for urim, entry in block.items():
            if urim.startswith("__") or not isinstance(entry, dict):
                continue
            yield ResultRow(urim, entry)


def load_results(path: str) -> list[ResultRow]:
    """Rows of a JSON (OTMT schema) or JSONL result file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read result file: {exc}", reason="unreadable") from exc
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a result file (not UTF-8 text); expected the JSON or JSONL that "
                         f"'driftline scan' writes", reason="result_format") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict) and "uri_m" not in data:
        return list(_rows_from_otmt(data))
    rows: list[ResultRow] = []
    # by "\n" only: JSON strings hold U+2028, U+2029 and NEL unescaped, and str.splitlines() splits there
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{lineno}: neither OTMT JSON nor JSONL: {exc}", reason="result_format") from exc
        if not isinstance(rec, dict) or "uri_m" not in rec:
            raise InputError(f"{path}:{lineno}: JSONL record without uri_m", reason="result_format")
        rows.append(ResultRow(str(rec["uri_m"]), rec))
    return rows


def match_key(uri: str, entry: Mapping[str, Any] | None = None,
              canonical: CanonicalConfig | None = None) -> tuple[str, str] | None:
    """(canonical key of the original URL, 14-digit time) of a URI-M or result, under ``canonical`` (the
    ``engine.canonical`` that grouped the histories: labels and results are matched by the same rules)."""
    dl = entry.get("driftline") if entry else None
    when = (dl.get("capture_time") or dl.get("capture time")) if isinstance(dl, dict) else None
    if isinstance(dl, dict) and dl.get("url") and when:
        stamp = re.sub(r"\D", "", str(when))[:14]
        return url_key(str(dl["url"]), canonical), stamp
    m = _SYNTHETIC.match(uri)
    if m:
        return url_key(m.group(1), canonical), m.group(2)
    o = _OTMT_WARC.match(uri)
    if o:
        return url_key(o.group(2), canonical), o.group(1)
    t = _WAYBACK_TS.search(uri)
    if t:
        return url_key(original_url(uri), canonical), t.group(1)
    return None


def _host(key: str) -> str:
    """The SURT host part of a canonical key (``org,example)``)."""
    return key.split(")", 1)[0]


# -- per-measure facts ----------------------------------------------------------

def measure_shape(name: str, written_by_driftline: bool, scores: list[float]) -> tuple[str, str]:
    """(direction, kind) of a measure: driftline's registry for driftline
    output, OTMT's table for OTMT output, else a guess from the scores."""
    spec: registry.MeasureSpec | None
    try:
        spec = registry.get(name)
    except UnknownMeasureError:
        spec = None
    if not written_by_driftline and name in OTMT_MEASURES:
        return OTMT_MEASURES[name]
    if spec is not None:
        return spec.direction, spec.kind
    if name in OTMT_MEASURES:
        return OTMT_MEASURES[name]
    kind = "fraction" if scores and all(abs(s) <= 1 for s in scores) else "count"
    return "above", kind


def _score_of(block: Any) -> float | None:
    if not isinstance(block, dict):
        return None
    s = block.get("comparison score")
    if isinstance(s, bool) or not isinstance(s, int | float) or math.isnan(s):
        return None
    return float(s)


def _scores(name: str, flags: list[bool], unscored: int, positives: list[bool], ranked: list[float],
            **extra: Any) -> Scores:
    c = confusion(flags, positives)
    return Scores(name=name, n=c.n, unscored=unscored, tp=c.tp, fp=c.fp, fn=c.fn, tn=c.tn,
                  precision=c.precision, recall=c.recall, f1=c.f1, accuracy=c.accuracy,
                  auc=roc_auc(ranked, positives), **extra)


@dataclass(frozen=True, slots=True)
class Matched:
    """Gold rows paired with their result entries (see :func:`match_results`)."""

    gold: list[GoldRow]
    pairs: list[tuple[GoldRow, Mapping[str, Any]]]
    without_result: int
    results_without_label: int


def match_results(labels: str | os.PathLike[str], result: str | os.PathLike[str],
                  canonical: CanonicalConfig | None = None) -> Matched:
    """Pair each labelled capture with its result entry (exact URI-M, then
    canonical key and second, then host and second when unambiguous)."""
    gold = read_labels(Path(labels))
    rows = load_results(str(result))
    originals = coarse = 0
    exact: dict[str, ResultRow] = {}
    by_key: dict[tuple[str, str], ResultRow] = {}
    by_host: dict[tuple[str, str], list[ResultRow]] = {}
    for r in rows:
        exact.setdefault(r.uri_m, r)
        rk = match_key(r.uri_m, r.entry, canonical)
        if rk is not None:
            by_key.setdefault(rk, r)
            by_host.setdefault((_host(rk[0]), rk[1]), []).append(r)
    pairs: list[tuple[GoldRow, Mapping[str, Any]]] = []
    used: set[int] = set()
    missing = 0
    for g in gold:
        k = match_key(g.uri, canonical=canonical)
        date = re.sub(r"\D", "", g.date)[:14]
        if k is None and g.uri.lower().startswith(("http://", "https://")):
            # An original URL, not a URI-M: the same string for every capture of the URL, so an exact
            # match would give every label of it the first capture's result.  Its date says which.
            originals += 1
            coarse += len(date) < 14
            k = (url_key(g.uri, canonical), date)
            row = None
        else:
            row = exact.get(g.uri)
        if row is None:
            row = by_key.get((k[0], date)) if k else None
            if row is None and k is not None:
                # same host, same second, one candidate: a URL spelled differently
                # (e.g. "/??" vs "/") in the labels than in the scanned capture
                cands = by_host.get((_host(k[0]), date), [])
                row = cands[0] if len(cands) == 1 else None
        if row is None:
            missing += 1
            continue
        used.add(id(row))
        pairs.append((g, row.entry))
    if not pairs:
        # A report over nothing would read as a real (perfect or empty) evaluation: refuse it.
        if not gold:
            raise InputError(f"nothing matched: {labels} holds no labelled rows", reason="nothing_matched")
        raise InputError(f"nothing matched: none of the {len(gold)} labelled captures has one of the {len(rows)} "
                         f"rows of {result}; labels and results must name the same URI-Ms, or the same URL and "
                         f"14-digit time", reason="nothing_matched")
    if coarse:
        # A date to the second names one capture (the labels driftline exports for a WARC scan are so);
        # a coarser one may name several, which is worth a warning.
        log.warning("%s: %d of %d labels name an original URL, not a URI-M, with a date coarser than a second; "
                    "matched by (URL, date)", labels, coarse, len(gold))
    elif originals:
        log.info("%s: %d of %d labels name an original URL and a 14-digit date; matched by (URL, date)", labels,
                 originals, len(gold))
    shared = len(pairs) - len({id(e) for _, e in pairs})
    if shared:
        log.warning("%s: %d labels share a result with another label (two labels for one capture?)", labels, shared)
    if missing:
        log.info("%d labelled captures have no result in %s", missing, result)
    return Matched(gold, pairs, missing, len(rows) - len(used))


def evaluate(labels: str | os.PathLike[str], result: str | os.PathLike[str],
             canonical: CanonicalConfig | None = None) -> EvalReport:
    """Compare ``result`` with the gold ``labels`` (file or directory)."""
    m = match_results(labels, result, canonical)
    gold = m.gold
    matched = [(g.label == 0, e) for g, e in m.pairs]
    positives = [p for p, _ in matched]
    entries = [e for _, e in matched]

    # overall verdict
    flags = [e.get("overall topic status") == "off-topic" for e in entries]
    unscored = sum(1 for e in entries if e.get("overall topic status") in UNSCORED_STATUSES
                   or "overall topic status" not in e)
    ranked: list[float] = []
    for e, f in zip(entries, flags, strict=True):
        dl = e.get("driftline")
        ds = (dl.get("drift_score", dl.get("drift score"))) if isinstance(dl, dict) else None
        if isinstance(ds, int | float) and not isinstance(ds, bool):
            ranked.append(float(ds))
        elif not isinstance(dl, dict):  # OTMT output: only the verdict itself ranks
            ranked.append(1.0 if f else 0.0)
        else:
            ranked.append(-math.inf)
    overall = _scores("overall", flags, unscored, positives, ranked)

    # each measure
    names: list[str] = []
    for e in entries:
        for name in (e.get("timemap measures") or {}):
            if name not in names:
                names.append(name)
    per: dict[str, Scores] = {}
    for name in names:
        blocks = [(e.get("timemap measures") or {}).get(name) for e in entries]
        scores = [_score_of(b) for b in blocks]
        statuses = [b.get("topic status") if isinstance(b, dict) else None for b in blocks]
        by_driftline = any(isinstance(b, dict) and "threshold" in b for b in blocks)
        direction, kind = measure_shape(name, by_driftline, [s for s in scores if s is not None])
        thresholds = Counter(b["threshold"] for b in blocks if isinstance(b, dict) and b.get("threshold") is not None)
        m_flags = [s == "off-topic" for s in statuses]
        m_unscored = sum(1 for s, st in zip(scores, statuses, strict=True) if s is None or st in UNSCORED_STATUSES)
        oriented = [-math.inf if s is None else (-s if direction == "below" else s) for s in scores]
        bt, bf = best_threshold(scores, positives, direction, kind)
        per[name] = _scores(name, m_flags, m_unscored, positives, oriented, direction=direction, kind=kind,
                            threshold=thresholds.most_common(1)[0][0] if thresholds else None,
                            best_threshold=bt, best_f1=bf)
    return EvalReport(labels_path=str(labels), result_path=str(result), labelled=len(gold),
                      positives=sum(1 for g in gold if g.label == 0), matched=len(matched),
                      without_result=m.without_result, results_without_label=m.results_without_label,
                      overall=overall, measures=per)


def _f(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _t(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:g}"


def format_report(report: EvalReport) -> str:
    """The report as Markdown: a header paragraph and one table row per measure."""
    r = report
    lines = [
        f"## Evaluation of `{r.result_path}` against `{r.labels_path}`",
        "",
        f"Labelled captures: {r.labelled} ({r.positives} off-topic = positive class). "
        f"Matched to a result: {r.matched}. Labelled captures without a result: {r.without_result}. "
        f"Results without a label: {r.results_without_label}.",
        "",
        "| measure | dir | n | unscored | TP | FP | FN | TN | precision | recall | F1 | accuracy | ROC AUC "
        "| threshold | best threshold | best F1 |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for s in [r.overall, *r.measures.values()]:
        lines.append(
            f"| {s.name} | {s.direction or '-'} | {s.n} | {s.unscored} | {s.tp} | {s.fp} | {s.fn} | {s.tn} "
            f"| {_f(s.precision)} | {_f(s.recall)} | {_f(s.f1)} | {_f(s.accuracy)} | {_f(s.auc)} "
            f"| {_t(s.threshold)} | {_t(s.best_threshold)} | {_f(s.best_f1)} |"
        )
    return "\n".join(lines) + "\n"
