"""Pinned floors under the evaluation figures, and the one command that moves them.

Why floors and not equalities: a figure measured on one labelled collection
moves by sampling noise as much as by merit.  A floor equal to today's figure
fails on the first harmless change (one capture of 2,302 decided otherwise
moves F1 by 0.003); a floor far below it catches nothing.  So each floor sits
one standard error below the figure it was set from, and the standard error is
read from the grouped cross-validation in the same results file: the sample sd
of the figure over every held-out fold of every fold seed, divided by the
square root of the number of folds (a fold holds 1/K of the collection), at
least :data:`MIN_TOLERANCE`, rounded up to :data:`STEP`.

A floors file (JSON, :data:`SCHEMA`) holds, per collection, per figure (a
dotted path into the collection's results block, e.g. ``overall.f1``), the
floor, the figure it was set from and the tolerance, plus a log of every
change with its reason.  :func:`update_floors` raises floors freely and
refuses to lower one (or to drop one) without a written reason, which it
records.  :func:`check_floors` is the gate.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import InputError

SCHEMA = "driftline-floors/1"
MIN_TOLERANCE = 0.01
STEP = 0.001
EPS = 1e-9

RULE = ("floor = figure - tolerance; tolerance = sd / sqrt(folds), at least 0.01, rounded up to 0.001, where sd "
        "is the sample standard deviation of the same figure over every held-out fold of every fold seed of the "
        "grouped (by TimeMap) cross-validation in the results file. A move within one standard error of the "
        "collection's figure is sampling noise; a larger drop fails the gate (tests/evaluation/test_eval_floors.py).")

# figure -> where its fold spread is read (a path into the collection block whose value has an "sd")
VERDICT_FIGURES: dict[str, str] = {
    "overall.f1": "cv.default.f1",
    "overall.precision": "cv.default.precision",
    "overall.recall": "cv.default.recall",
    "timemap.f1": "cv.default.timemap_f1",
    "macro_f1": "cv.default.macro_f1",
    "cv.default.f1.mean": "cv.default.f1",
}


def get_path(block: Mapping[str, Any], dotted: str) -> Any:
    """The value at ``a.b.c`` in nested mappings, or None."""
    node: Any = block
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def tolerance(sd: float, folds: int) -> float:
    """One standard error of a collection's figure, from the fold spread (see the module docstring)."""
    se = sd / math.sqrt(max(1, folds))
    return round(max(MIN_TOLERANCE, math.ceil(se / STEP - EPS) * STEP), 3)


def _floor(measured: float, tol: float) -> float:
    return math.floor((measured - tol) * 1000 + EPS) / 1000


def proposed_floors(block: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """Floors for one collection's results block: the verdict's figures, and each
    measure's AUC where it ranks better than chance even at its floor (and, for a
    voting measure, its F1 at its threshold)."""
    folds = int(get_path(block, "cv.folds") or 1)
    out: dict[str, dict[str, float]] = {}

    def add(key: str, spread_at: str) -> None:
        value = get_path(block, key)
        sd = get_path(block, f"{spread_at}.sd")
        if isinstance(value, int | float) and isinstance(sd, int | float):
            tol = tolerance(float(sd), folds)
            out[key] = {"floor": _floor(float(value), tol), "measured": float(value), "tolerance": tol}

    for key, spread_at in VERDICT_FIGURES.items():
        add(key, spread_at)
    for name, m in sorted((block.get("measures") or {}).items()):
        auc = m.get("auc")
        if isinstance(auc, int | float) and auc > 0.5:
            add(f"measures.{name}.auc", f"measures.{name}.cv_fixed.auc")
            if out.get(f"measures.{name}.auc", {}).get("floor", 1.0) <= 0.5:
                del out[f"measures.{name}.auc"]  # no better than chance at its floor: nothing to keep
        if m.get("voting"):
            add(f"measures.{name}.f1", f"measures.{name}.cv_fixed.f1")
    return out


def load_floors(path: str | os.PathLike[str], missing_ok: bool = False) -> dict[str, Any]:
    p = Path(path)
    if missing_ok and not p.exists():
        return {"schema": SCHEMA, "rule": RULE, "collections": {}, "log": []}
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{p}: cannot read floors: {exc}", reason="floors_format") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("collections"), dict):
        raise InputError(f"{p}: not a floors file of schema {SCHEMA!r}", reason="floors_format")
    return data


def check_floors(results: Mapping[str, Any], floors: Mapping[str, Any]) -> tuple[int, list[str]]:
    """(figures checked, one line per figure below its floor or missing) for every
    collection that both files hold."""
    failures: list[str] = []
    checked = 0
    for name, pinned in floors["collections"].items():
        block = results.get("collections", {}).get(name)
        if block is None:
            continue
        for key, f in pinned.items():
            checked += 1
            value = get_path(block, key)
            if not isinstance(value, int | float):
                failures.append(f"{name} {key}: no such figure in the results (floor {f['floor']})")
            elif value < f["floor"] - EPS:
                failures.append(f"{name} {key}: {value:.4f} < floor {f['floor']:.3f} (set from {f['measured']:.4f}"
                                f" with tolerance {f['tolerance']:.3f})")
    return checked, failures


def update_floors(path: str | os.PathLike[str], results: Mapping[str, Any], reason: str | None = None,
                  collections: list[str] | None = None) -> list[str]:
    """Set the floors of ``path`` from ``results``; one line per change.

    A floor that rises, or a new one, is written freely.  A floor that would
    fall, or disappear, is written only with ``reason`` (recorded in the
    file's log with every change).  Without one, such a floor keeps its
    value, the rises are still written (one figure's noise must not block
    another's gain), and an :class:`InputError` then names every floor that
    was not lowered.
    """
    data = load_floors(path, missing_ok=True)
    when = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    reason = (reason or "").strip() or None
    changes: list[tuple[str, str, float | None, float | None, bool]] = []  # collection, key, old, new, lowers
    refused: list[str] = []
    new_collections = dict(data["collections"])
    for name, block in results.get("collections", {}).items():
        if collections and name not in collections:
            continue
        old = data["collections"].get(name, {})
        new = proposed_floors(block)
        merged: dict[str, dict[str, float]] = {}
        for key in sorted(set(old) | set(new)):
            o = old.get(key, {}).get("floor")
            n = new.get(key, {}).get("floor")
            lowers = o is not None and (n is None or n < o - EPS)
            if lowers and reason is None:
                refused.append(f"{name} {key} {o} -> {'(dropped)' if n is None else n}")
                merged[key] = old[key]
            elif n is None:
                changes.append((name, key, o, None, True))
            elif o is None or abs(n - o) > EPS:
                changes.append((name, key, o, n, lowers))
                merged[key] = new[key]
            else:
                merged[key] = old[key]
        new_collections[name] = merged
    lines = []
    if changes:
        data["collections"] = new_collections
        log = list(data.get("log") or [])
        for c, k, o, n, lowers in changes:
            why = reason or ("figure rose" if o is not None else "new floor")
            log.append({"when": when, "collection": c, "figure": k, "from": o, "to": n, "reason": why})
            verb = "added" if o is None else ("dropped" if n is None else ("lowered" if lowers else "raised"))
            lines.append(f"{c} {k}: {verb} {'' if o is None else f'{o} -> '}{'-' if n is None else n}")
        data["log"] = log
        ordered = {"schema": SCHEMA, "rule": RULE,
                   **{k: v for k, v in data.items() if k not in ("schema", "rule")}}
        Path(path).write_text(json.dumps(ordered, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if refused:
        done = f" ({len(lines)} other change(s) written)" if lines else ""
        raise InputError(f"refusing to lower {len(refused)} floor(s) without --reason{done}: {'; '.join(refused)}",
                         reason="floors_lowered")
    return lines
