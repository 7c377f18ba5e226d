"""Markdown tables from a results file (``driftline eval --results``), for the docs.

Why: the documentation's evaluation tables must say what the checked-in
results file says, not what someone typed.  A page holds a marker
``<!-- results:NAME -->`` alone on a line; at build time every marker is replaced by the
tables of ``<docs_dir>/results/NAME.json`` (every collection in it).

This module imports nothing from the package, so MkDocs can load it as a hook
file by path (``hooks: [watcher/evaluation/report.py]`` in ``mkdocs.yml``): its
:func:`on_page_markdown` is the hook.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# A marker stands alone on its line; one quoted inside a sentence or code (the changelog's) is text.
MARKER = re.compile(r"^<!--\s*results:([A-Za-z0-9_.-]+)\s*-->[ \t]*$", re.MULTILINE)


def _f(x: Any, digits: int = 3) -> str:
    return "-" if not isinstance(x, int | float) else f"{x:.{digits}f}"


def _t(x: Any) -> str:
    return "-" if not isinstance(x, int | float) else f"{x:g}"


def _ms(s: Any) -> str:
    """``mean ± sd [min, max]`` of a spread block."""
    if not isinstance(s, Mapping) or "mean" not in s:
        return "-"
    return f"{s['mean']:.3f} ± {s['sd']:.3f} [{s['min']:.3f}, {s['max']:.3f}]"


def _mean(s: Any) -> str:
    return _f(s.get("mean")) if isinstance(s, Mapping) else "-"


def render_collection(name: str, c: Mapping[str, Any], version: str | None = None,
                      generated: str | None = None) -> str:
    """One collection's figures as Markdown: a summary line, then the verdict,
    profile and measure tables."""
    o, cv = c.get("overall", {}), c.get("cv", {})
    d, rt = cv.get("default", {}), cv.get("verdict_retuned", {})
    seeds = ", ".join(str(s) for s in cv.get("seeds", []))
    k = cv.get("folds", "-")
    made = " ".join(x for x in (f"driftline {version}" if version else "", f"({generated})" if generated else "") if x)
    lines = [
        f"**{name}**: {c.get('matched')} labelled captures in {c.get('timemaps')} TimeMaps, {c.get('positives')} "
        f"off topic (the positive class); voting measures {', '.join(c.get('voting', [])) or '-'} under policy "
        f"`{c.get('policy', '-')}`{'; ' + made if made else ''}.",
        "",
        "| what | F1 | precision | recall | ROC AUC |",
        "|---|--:|--:|--:|--:|",
        f"| default verdict, whole collection | **{_f(o.get('f1'))}** | {_f(o.get('precision'))} "
        f"| {_f(o.get('recall'))} | {_f(o.get('auc'))} |",
        f"| grouped {k}-fold CV by TimeMap, F1 per held-out fold (fold seeds {seeds}) | {_ms(d.get('f1'))} "
        f"| {_mean(d.get('precision'))} | {_mean(d.get('recall'))} | |",
    ]
    for seed, s in (d.get("per_seed") or {}).items():
        lines.append(f"| — fold seed {seed} | {_ms(s.get('f1'))} | {_mean(s.get('precision'))} "
                     f"| {_mean(s.get('recall'))} | |")
    tm = c.get("timemap", {})
    lines += [
        f"| TimeMap level (a TimeMap is off topic if any capture is) | {_f(tm.get('f1'))} | {_f(tm.get('precision'))} "
        f"| {_f(tm.get('recall'))} | |",
        f"| macro: mean F1 over TimeMaps with an off-topic or flagged capture | {_f(c.get('macro_f1'))} | | | |",
        f"| voting thresholds re-tuned on the training folds (held out) | {_ms(rt.get('f1'))} "
        f"| {_mean(rt.get('precision'))} | {_mean(rt.get('recall'))} | |",
    ]
    for seed, s in (rt.get("micro") or {}).items():
        lines.append(f"| — micro (held-out predictions pooled), fold seed {seed} | {_f(s.get('f1'))} "
                     f"| {_f(s.get('precision'))} | {_f(s.get('recall'))} | |")
    lines += [
        "",
        "| profile | captures | off topic | TP | FP | FN | precision | recall | F1 |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for p, s in (c.get("profiles") or {}).items():
        lines.append(f"| {p} | {s['captures']} | {s['positives']} | {s['tp']} | {s['fp']} | {s['fn']} "
                     f"| {_f(s['precision'])} | {_f(s['recall'])} | {_f(s['f1'])} |")
    lines += [
        "",
        "Each measure alone: its figures at the threshold it is scored with, its best threshold on the whole "
        "collection (in sample, fitted), and held out: F1 and ROC AUC per fold at its threshold, and F1 with the "
        "threshold re-tuned on the training folds (mean ± sd over every fold of every seed).",
        "",
        "| measure | votes | flags when | threshold | precision | recall | F1 | ROC AUC | best threshold (in sample) "
        "| best F1 | held-out F1 | held-out AUC | held-out F1, re-tuned |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for m, s in (c.get("measures") or {}).items():
        fixed, tuned = s.get("cv_fixed", {}), s.get("cv_tuned", {})
        lines.append(
            f"| {m} | {'yes' if s.get('voting') else 'no'} | {s.get('direction', '-')} | {_t(s.get('threshold'))} "
            f"| {_f(s.get('precision'))} | {_f(s.get('recall'))} | {_f(s.get('f1'))} | {_f(s.get('auc'))} "
            f"| {_t(s.get('best_threshold'))} | {_f(s.get('best_f1'))} | {_ms(fixed.get('f1'))} "
            f"| {_ms(fixed.get('auc'))} | {_ms(tuned.get('f1'))} |")
    return "\n".join(lines) + "\n"


def render(results: Mapping[str, Any]) -> str:
    """Every collection of a results file, one section each."""
    parts = [render_collection(name, c, results.get("driftline_version"), results.get("generated"))
             for name, c in (results.get("collections") or {}).items()]
    return "\n".join(parts)


def replace_markers(markdown: str, results_dir: str | Path) -> str:
    """``markdown`` with each ``<!-- results:NAME -->`` replaced by the tables of
    ``results_dir/NAME.json``.  A marker naming a missing file raises, so a
    build never publishes a page with its figures silently gone."""

    def one(m: re.Match[str]) -> str:
        path = Path(results_dir) / f"{m.group(1)}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{m.group(0)}: cannot read {path}: {exc}") from exc
        return render(data)

    return MARKER.sub(one, markdown)


def on_page_markdown(markdown: str, page: Any = None, config: Any = None, files: Any = None, **_: Any) -> str:
    """MkDocs hook: replace the results markers of a page (results under ``<docs_dir>/results``)."""
    docs_dir = config["docs_dir"] if config is not None else "docs"
    return replace_markers(markdown, Path(docs_dir) / "results")
