"""``driftline compare A B``: two files side by side with every measure.

For a quick check of one pair (a DOI landing page today versus the cited
version, an article before and after an edit): every registered measure is
scored, and the verdict is the one ``scan`` and the stream give the same pair
(a two-capture history through the same scoring step).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import measures as ms
from .config import EngineConfig
from .engine import Engine
from .errors import InputError
from .job import repeated
from .model import Capture
from .state import HistoryState
from .wording import fmt

# Inputs that are not one page: scoring their bytes as text would give a verdict on nonsense.
_NOT_A_PAGE: tuple[tuple[bytes, str], ...] = (
    (b"WARC/", "a WARC file; score its captures with 'driftline scan'"),
    (b"filedesc://", "an ARC file; score its captures with 'driftline scan'"),
    (b"\x1f\x8b", "gzip-compressed (a .warc.gz? score it with 'driftline scan'; else decompress it first)"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
)


def _page_type(path: str, data: bytes) -> str | None:
    """The content type to score ``data`` as (None: let extraction sniff HTML/text), or InputError."""
    head = data[:4096]
    if head.lstrip().startswith(b"%PDF"):
        return "application/pdf"
    for magic, what in _NOT_A_PAGE:
        if head.startswith(magic):
            raise InputError(f"{path}: not an HTML, text or PDF page: {what}", reason="not_a_page")
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 text
        return None
    controls = sum(1 for c in head if c < 9 or 13 < c < 32)
    if b"\x00" in head or controls > len(head) // 20:
        raise InputError(f"{path}: not an HTML, text or PDF page: binary data", reason="not_a_page")
    return None


def _capture(path: str, when: datetime, url: str | None = None) -> Capture:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc}", reason="unreadable") from exc
    ctype = _page_type(path, data)
    if ctype is None and p.suffix.lower() in (".txt", ".text", ".md"):
        ctype = "text/plain"
    return Capture(url=url or p.resolve().as_uri(), timestamp=when, content=data, content_type=ctype, uri_m=str(p))


def compare_files(a: str, b: str, cfg: EngineConfig, profile: str | None = None,
                  url: str | None = None) -> dict[str, Any]:
    """Score ``b`` against baseline ``a``: a two-capture history through the
    same step as ``scan`` and the stream (so the three agree on a pair), with
    every registered measure reported.

    ``url`` is the address both were captured from: what the page stands for
    (a home page: the organisation; a deep page: its subject) and its host.
    Without it the files' own addresses are used, which read as deep pages.

    Returns ``{"measures": {name: {"score", "status"}}, "overall", "change",
    "reason", "profile"}`` (the ``--json`` output).
    """
    every = {n: cfg.measures.get(n) for n in ms.REGISTRY}
    engine = Engine(cfg.model_copy(update={"report_measures": tuple(n for n in every if n not in cfg.measures)}))
    base_cap = _capture(a, datetime(2000, 1, 1, tzinfo=UTC), url)
    cur_cap = _capture(b, datetime(2000, 1, 2, tzinfo=UTC), url)
    # each capture's Job, by the rules batch and the stream use (a two-capture history)
    job = engine.job("compare", base_cap, HistoryState(), profile)
    prof = job.profile
    base = engine.fingerprint(base_cap, prof, job.seed)
    first, state = engine.score(job, base_cap, base)
    if first.change != "baseline":
        raise InputError(f"{a} cannot be a baseline: {first.reason}", reason="bad_baseline")
    job = engine.job("compare", cur_cap, state, profile)
    cur = repeated(job, None) or engine.fingerprint(cur_cap, prof, job.seed)
    v, _ = engine.score(job, cur_cap, cur)
    measures = {
        name: {"score": r.score, "status": r.status, "threshold": r.threshold,
               "votes": name in engine.config.measures}
        for name, r in v.measures.items()
    }
    return {"measures": measures, "overall": v.status, "change": v.change, "reason": v.reason,
            "profile": prof.name, "checks": list(v.checks), "page_kind": cur.page_kind,
            "languages": [base.language, cur.language], "words": [base.word_count, cur.word_count],
            "read": "main content" if cur.boilerplate_removed else "whole page"}


def format_comparison(result: dict[str, Any]) -> str:
    lines = [f"{'measure':16s} {'score':>9s} {'threshold':>9s}  status", "-" * 50]
    for name, m in result["measures"].items():
        score = "n/a" if m["score"] is None else fmt(m["score"])
        vote = "" if m["votes"] else "  (reported)"
        lines.append(f"{name:16s} {score:>9s} {fmt(m['threshold']):>9s}  {m['status']}{vote}")
    lines.append("-" * 50)
    lines.append(f"overall: {result['overall']}   change: {result['change']}   profile: {result['profile']}   "
                 f"read: {result['read']}")
    lines.append(f"reason:  {result['reason']}")
    return "\n".join(lines)
