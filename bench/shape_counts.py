"""Shape counts of the code (issue 36): modules directly under ``watcher/``, import cycles (type-checking
imports included), packages importing each other, private names reached across modules.

Why a script: the counts are stated before and after a refactor, and both must come from the same
rules.  Static (``ast``), so it runs on any tree: ``python bench/shape_counts.py [ROOT]`` (ROOT: a
checkout, default this one) prints one JSON object.

Rules.
- Import graph: every ``import``/``from ... import`` at module level or under ``if TYPE_CHECKING:``
  between modules of ``watcher`` and ``consumers``; imports inside functions (the lazy ones) are left
  out: they do not make a load-time circle.  A cycle is a strongly connected component of two or more
  modules.
- Package graph: the same imports (lazy ones included: a dependency is a dependency) folded to the
  package a module sits in (``watcher.acquire.x`` -> ``watcher.acquire``; modules directly under
  ``watcher/`` are left out); a mutual pair imports each other.
- Private reach: ``from m import _name`` of another module, and ``obj._name`` where ``obj`` is not
  ``self``/``cls`` and ``_name`` is not defined in the same module (a module's own helpers and its own
  classes' attributes are its business).
"""

from __future__ import annotations

import ast
import json
import sys
from collections import defaultdict
from pathlib import Path


def _modules(root: Path) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for top in ("watcher", "consumers"):
        for p in sorted((root / top).rglob("*.py")):
            parts = list(p.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = p
    return out


def _resolve(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(mod: str, path: Path, mods: dict[str, Path], lazy: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(mod, is_pkg, node)
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    found.add(sub if sub in mods else target)
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for h in node.handlers:
                    visit(h.body)
            elif lazy and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With,
                                            ast.AsyncWith, ast.For, ast.While)):
                visit(node.body)

    visit(tree.body)
    return {m for m in found if m in mods and m != mod}


def _sccs(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10_000)

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp: list[str] = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def _package(mod: str, mods: dict[str, Path]) -> str | None:
    parts = mod.split(".")
    if parts[0] != "watcher" or len(parts) < 2:
        return None
    pkg = ".".join(parts[:2])
    return pkg if mods[pkg].name == "__init__.py" else None


def _private_reach(mod: str, path: Path, mods: dict[str, Path]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            own.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
    hits: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _resolve(mod, is_pkg, node)
            if target.split(".")[0] in ("watcher", "consumers"):
                hits += [f"{mod}: from {target} import {a.name}" for a in node.names
                         if a.name.startswith("_") and not a.name.startswith("__")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            v = node.value
            if isinstance(v, ast.Name) and v.id in ("self", "cls"):
                continue
            if node.attr in own:
                continue
            hits.append(f"{mod}:{node.lineno}: .{node.attr}")
    return hits


def counts(root: Path) -> dict[str, object]:
    mods = _modules(root)
    eager = {m: _imports(m, p, mods, lazy=False) for m, p in mods.items()}
    every = {m: _imports(m, p, mods, lazy=True) for m, p in mods.items()}
    cycles = _sccs(eager)
    pk: dict[str, set[str]] = defaultdict(set)
    for m, deps in every.items():
        a = _package(m, mods)
        for d in deps:
            b = _package(d, mods)
            if a and b and a != b:
                pk[a].add(b)
    mutual = sorted({tuple(sorted((a, b))) for a, bs in pk.items() for b in bs if a in pk.get(b, ())})
    private = [h for m, p in mods.items() for h in _private_reach(m, p, mods)]
    flat = sorted(p.stem for p in (root / "watcher").glob("*.py") if p.name != "__init__.py")
    by_module: dict[str, int] = defaultdict(int)
    for h in private:
        by_module[h.split(":")[0]] += 1
    return {
        "modules_directly_under_watcher": len(flat),
        "import_cycles": len(cycles), "cycles": cycles,
        "mutual_package_imports": len(mutual), "mutual": [list(p) for p in mutual],
        "private_cross_module_accesses": len(private),
        "private_by_module": dict(sorted(by_module.items(), key=lambda kv: -kv[1])),
        "test_modules_in_tests_root": len(list((root / "tests").glob("test_*.py"))),
    }


if __name__ == "__main__":
    print(json.dumps(counts(Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()), indent=1))
