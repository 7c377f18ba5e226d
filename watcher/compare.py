"""``driftline compare A B``: two files side by side with every measure.

For a quick check of one pair (a DOI landing page today versus the cited
version, an article before and after an edit): every registered measure is
scored, with the IDF taken over the two documents.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from . import measures as ms
from .config import EngineConfig
from .engine import Engine, idf_table
from .errors import InputError
from .model import Capture
from .verdict import fmt


def _capture(path: str, when: datetime) -> Capture:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc}", reason="unreadable") from exc
    ctype = "text/plain" if p.suffix.lower() in (".txt", ".text", ".md") else None
    return Capture(url=p.resolve().as_uri(), timestamp=when, content=data, content_type=ctype, uri_m=str(p))


def compare_files(a: str, b: str, cfg: EngineConfig) -> dict[str, Any]:
    """Score ``b`` against baseline ``a`` with every measure.

    Returns ``{"measures": {name: {"score", "status"}}, "overall", "change",
    "reason"}`` (the ``--json`` output).
    """
    every = {n: cfg.measures.get(n) for n in ms.REGISTRY}
    engine = Engine(cfg.model_copy(update={"report_measures": tuple(n for n in every if n not in cfg.measures)}))
    base_cap = _capture(a, datetime(2000, 1, 1, tzinfo=UTC))
    cur_cap = _capture(b, datetime(2000, 1, 2, tzinfo=UTC))
    base, cur = engine.fingerprint(base_cap), engine.fingerprint(cur_cap)
    df: Counter[str] = Counter()
    for fp in (base, cur):
        df.update(fp.term_freqs.keys())
    results, d = engine.compare(base, cur, idf_table(2, df), math.log(3) + 1.0)
    measures = {
        name: {"score": r.score, "status": r.status, "threshold": r.threshold,
               "votes": name in engine.config.measures}
        for name, r in results.items()
    }
    return {"measures": measures, "overall": d.status, "change": d.change, "reason": d.reason,
            "page_kind": cur.page_kind, "languages": [base.language, cur.language],
            "words": [base.word_count, cur.word_count]}


def format_comparison(result: dict[str, Any]) -> str:
    lines = [f"{'measure':16s} {'score':>9s} {'threshold':>9s}  status", "-" * 50]
    for name, m in result["measures"].items():
        score = "n/a" if m["score"] is None else fmt(m["score"])
        vote = "" if m["votes"] else "  (reported)"
        lines.append(f"{name:16s} {score:>9s} {fmt(m['threshold']):>9s}  {m['status']}{vote}")
    lines.append("-" * 50)
    lines.append(f"overall: {result['overall']}   change: {result['change']}")
    lines.append(f"reason:  {result['reason']}")
    return "\n".join(lines)
