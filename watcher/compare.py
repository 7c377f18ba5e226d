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
from .model import Capture
from .step import HistoryState
from .verdict import fmt


def _capture(path: str, when: datetime) -> Capture:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc}", reason="unreadable") from exc
    ctype = "text/plain" if p.suffix.lower() in (".txt", ".text", ".md") else None
    return Capture(url=p.resolve().as_uri(), timestamp=when, content=data, content_type=ctype, uri_m=str(p))


def compare_files(a: str, b: str, cfg: EngineConfig, profile: str | None = None) -> dict[str, Any]:
    """Score ``b`` against baseline ``a``: a two-capture history through the
    same step as ``scan`` and the stream (so the three agree on a pair), with
    every registered measure reported.

    Returns ``{"measures": {name: {"score", "status"}}, "overall", "change",
    "reason", "profile"}`` (the ``--json`` output).
    """
    every = {n: cfg.measures.get(n) for n in ms.REGISTRY}
    engine = Engine(cfg.model_copy(update={"report_measures": tuple(n for n in every if n not in cfg.measures)}))
    base_cap = _capture(a, datetime(2000, 1, 1, tzinfo=UTC))
    cur_cap = _capture(b, datetime(2000, 1, 2, tzinfo=UTC))
    base, cur = engine.fingerprint(base_cap), engine.fingerprint(cur_cap)
    prof = profile or cfg.profile
    first, state = engine.score_next("compare", HistoryState(), base_cap, base, base_cap.url, prof)
    if first.change != "baseline":
        raise InputError(f"{a} cannot be a baseline: {first.reason}", reason="bad_baseline")
    v, _ = engine.score_next("compare", state, cur_cap, cur, base_cap.url, prof)
    measures = {
        name: {"score": r.score, "status": r.status, "threshold": r.threshold,
               "votes": name in engine.config.measures}
        for name, r in v.measures.items()
    }
    return {"measures": measures, "overall": v.status, "change": v.change, "reason": v.reason,
            "profile": prof, "checks": list(v.checks), "page_kind": cur.page_kind,
            "languages": [base.language, cur.language], "words": [base.word_count, cur.word_count]}


def format_comparison(result: dict[str, Any]) -> str:
    lines = [f"{'measure':16s} {'score':>9s} {'threshold':>9s}  status", "-" * 50]
    for name, m in result["measures"].items():
        score = "n/a" if m["score"] is None else fmt(m["score"])
        vote = "" if m["votes"] else "  (reported)"
        lines.append(f"{name:16s} {score:>9s} {fmt(m['threshold']):>9s}  {m['status']}{vote}")
    lines.append("-" * 50)
    lines.append(f"overall: {result['overall']}   change: {result['change']}   profile: {result['profile']}")
    lines.append(f"reason:  {result['reason']}")
    return "\n".join(lines)
