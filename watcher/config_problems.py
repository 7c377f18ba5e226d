"""Turn a pydantic ``ValidationError`` into one clear line per problem.

Why not pydantic's own message: it spans several lines per problem, names
``config.yaml`` when the bad value came from an environment variable or a
command-line option, and prints ``input_value=...`` -- the password itself
when the bad key is a secret.  Here each line names where the value came from
(the environment variable, the option, or the dotted key of the file), what
was expected, and the value only when the key is not secret.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

# A key whose name contains one of these never has its value echoed.
SECRET_WORDS = ("password", "secret", "token", "dsn", "key", "credential")

Path = tuple[str, ...]


class FieldProblemError(ValueError):
    """Raised by a validator that checks several fields: names the sub-key at fault.

    ``sub_path`` is relative to the model the validator belongs to; ``value``
    is shown (unless secret), ``expected`` says what would be accepted.
    """

    def __init__(self, sub_path: str, value: Any, expected: str) -> None:
        super().__init__(f"{sub_path}: {expected}")
        self.sub_path = tuple(sub_path.split("."))
        self.value = value
        self.expected = expected


def is_secret(path: Sequence[str]) -> bool:
    return any(word in part.lower() for part in path for word in SECRET_WORDS)


def _expected(err: Mapping[str, Any]) -> str:
    kind = str(err.get("type", ""))
    ctx: Mapping[str, Any] = err.get("ctx") or {}
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return "expected an integer"
    if kind in ("float_parsing", "float_type", "finite_number"):
        return "expected a number"
    if kind in ("bool_parsing", "bool_type"):
        return "expected true or false"
    if kind in ("string_type", "string_unicode"):
        return "expected a string"
    if kind in ("dict_type", "model_type", "model_attributes_type", "mapping_type"):
        return "expected a mapping (key: value)"
    if kind in ("tuple_type", "list_type", "iterable_type"):
        return "expected a list"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected', '?')}"
    if kind == "greater_than_equal":
        return f"expected a value >= {ctx.get('ge')}"
    if kind == "greater_than":
        return f"expected a value > {ctx.get('gt')}"
    if kind == "less_than_equal":
        return f"expected a value <= {ctx.get('le')}"
    if kind == "less_than":
        return f"expected a value < {ctx.get('lt')}"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required"
    if kind == "value_error" and "error" in ctx:
        return str(ctx["error"])
    return str(err.get("msg", "invalid")).replace("\n", " ")


def _shown(value: Any) -> str | None:
    """A short repr of a scalar input; None for structures (they would not fit one line)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."
    return None


def _known_keys(model: type[BaseModel] | None, path: Path) -> list[str]:
    """The keys the section at ``path`` accepts (empty when it is no settings section)."""
    for part in path:
        if model is None or part not in model.model_fields:
            return []
        ann = model.model_fields[part].annotation
        model = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
    return list(model.model_fields) if model is not None else []


# Keys that moved to another section: an old config names where they live now.
MOVED: dict[Path, Path] = {("doi", k): ("engine", "doi", k) for k in (
    "title_min_similarity", "abstract_min_containment", "paragraph_min_containment", "main_min_containment")}


def _unknown(model: type[BaseModel] | None, path: Path, env: bool) -> str:
    if path in MOVED:
        now = MOVED[path]
        return f"moved to {'DRIFTLINE__' + '__'.join(now).upper() if env else '.'.join(now)}"
    known = _known_keys(model, path[:-1])
    close = difflib.get_close_matches(path[-1], known, n=1, cutoff=0.6) if path and known else []
    if close:
        near = (*path[:-1], close[0])
        return f"unknown key (did you mean {'DRIFTLINE__' + '__'.join(near).upper() if env else '.'.join(near)}?)"
    return "unknown key" + (f" (known here: {', '.join(known)})" if 0 < len(known) <= 12 else "")


def describe(exc: ValidationError, *, file: str, sources: Mapping[Path, str],
             env_raw: Mapping[str, str], model: type[BaseModel] | None = None) -> list[str]:
    """One line per problem of ``exc``.

    ``sources`` maps a config path to where it was set when not from the file:
    an environment variable name (``DRIFTLINE__...``, whose raw text is in
    ``env_raw``) or a command-line option (``--policy``).  ``model`` (the
    root settings class) lets an unknown key suggest the nearest known one.
    """
    lines: list[str] = []
    for err in exc.errors(include_url=False):
        path: Path = tuple(str(p) for p in err.get("loc", ()))
        ctx = err.get("ctx") or {}
        problem = ctx.get("error")
        value = err.get("input")
        if isinstance(problem, FieldProblemError):
            path = path + problem.sub_path
            value, expected = problem.value, problem.expected
        else:
            expected = _expected(err)
        origin = _origin(path, sources)
        if err.get("type") == "extra_forbidden":
            expected = _unknown(model, path, env=bool(origin and origin.startswith("DRIFTLINE__")))
        lines.append(line(path, value, expected, file=file, sources=sources, env_raw=env_raw,
                          show_value=err.get("type") != "extra_forbidden"))
    return lines


def _origin(path: Path, sources: Mapping[Path, str]) -> str | None:
    """Where ``path`` (or the key that holds it) was set; else where a key under it was set: an unknown
    section is reported at the section (``nosection``), while ``DRIFTLINE__NOSECTION__X`` set
    ``nosection.x`` (it was blamed on the config file)."""
    found = next((sources[path[:i]] for i in range(len(path), 0, -1) if path[:i] in sources), None)
    if found is None and path:
        found = next((origin for key, origin in sorted(sources.items()) if key[: len(path)] == path), None)
    return found


def line(path: Path, value: Any, expected: str, *, file: str, sources: Mapping[Path, str],
         env_raw: Mapping[str, str], show_value: bool = True) -> str:
    """One problem as one line: where the value came from, the value (unless secret), what is expected."""
    origin = _origin(path, sources)
    dotted = ".".join(path) or "(top level)"
    if origin is not None and origin.startswith("DRIFTLINE__"):
        name = origin if origin.lower().endswith("__".join(path).lower()) else f"{origin} ({dotted})"
        value = env_raw.get(origin, value)
        where = ""
    elif origin is not None:
        name, where = dotted, f" (from {origin})"
    else:
        name, where = dotted, f" (in {file})" if file else ""
    shown = _shown(value) if show_value and not is_secret(path) else None
    return f"{name}{'' if shown is None else '=' + shown}{where}: {expected}"
