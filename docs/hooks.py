"""mkdocs hooks: the pages that are generated from the code at build time, so they are never stale.

- ``reference/cli.md`` from the argument parsers (``watcher.cli.build_parser()``, every subcommand):
  a subcommand added to the CLI appears here at the next build, with its options and examples.
- ``reference/configuration.md`` from ``config.yaml``: every key, its default and its comment, as the
  file a user edits says them (a test keeps that file equal to the model's defaults).
- ``reference/event-schema.md`` from ``watcher/schemas/event.schema.json``: the schema the parser applies.
- ``operations/runbooks/*.md`` from ``deploy/runbooks/``: the runbooks stay beside the alert rules
  (each alert's ``runbook_url`` points there) and are published with the site.

A nav target whose page does not exist fails the strict build.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any

import yaml

log = logging.getLogger("mkdocs.hooks.driftline")

ROOT = Path(__file__).resolve().parent.parent

# --------------------------------------------------------------------------- set-up


def on_config(config: Any) -> Any:
    # The CLI reference must describe this checkout's code, not an installed copy of it.
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return config


# --------------------------------------------------------------------------- CLI reference


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, pipes escaped, and '<' outside code spans never read as HTML."""
    parts = " ".join(text.split()).replace("|", "\\|").split("`")
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def _option_rows(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            name = ", ".join(f"`{s}`" for s in action.option_strings)
            if action.nargs != 0:
                metavar = formatter._format_args(action, action.dest.upper())
                name += f" `{metavar}`"
        else:
            name = f"`{formatter._format_args(action, action.dest)}`"
        help_text = formatter._expand_help(action) if action.help else ""
        rows.append(f"| {name} | {_cell(help_text)} |")
    return rows


def _subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                out.append((name, helps.get(name, ""), sub))
    return out


def _command_section(path: list[str], parser: argparse.ArgumentParser, level: int) -> list[str]:
    lines = [f"{'#' * level} `{' '.join(path)}`", ""]
    if parser.description and level > 1:
        lines += [_sentence(parser.description), ""]
    lines += ["```text", parser.format_usage().strip(), "```", ""]
    rows = _option_rows(parser)
    if rows:
        lines += ["| argument | meaning |", "|---|---|", *rows, ""]
    subs = _subparsers(parser)
    if subs:
        lines += ["| command | what it does |", "|---|---|"]
        lines += [f"| [`{' '.join([*path, n])}`](#{_anchor([*path, n])}) | {_cell(h)} |" for n, h, _ in subs]
        lines.append("")
    if parser.epilog:
        lines += ["```text", parser.epilog.strip(), "```", ""]
    for name, _help, sub in subs:
        lines += _command_section([*path, name], sub, min(level + 1, 4))
    return lines


def _anchor(path: list[str]) -> str:
    return "-".join(path)


def cli_reference() -> str:
    from watcher.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps usage lines at the terminal's width: one width for every build
    try:
        parser = build_parser()
        body = _command_section(["driftline"], parser, 2)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    # Give every command heading a stable anchor ("driftline-doi-add") the command table links to.
    out = []
    for line in body:
        m = re.match(r"^(#+) `(driftline(?: [\w-]+)*)`$", line)
        out.append(f"{line} {{#{m.group(2).replace(' ', '-')}}}" if m else line)
    head = [
        "# Command-line reference",
        "",
        "Generated from the command's own argument parsers at every build of this site, so it lists every",
        "subcommand and option the code has. `driftline COMMAND --help` prints the same text.",
        "",
        "Options that every command takes (`-c FILE`, `--log-level`) go before the command:",
        "`driftline -c my.yaml run`. Exit codes: 0 done; 1 the command's own \"no\" (the demo's seeds",
        "misbehaved); 2 usage, configuration or input error; 3 `scan` could not read some input; 70 a bug;",
        "130 Ctrl-C; 141 output pipe closed.",
        "",
    ]
    return "\n".join(head + out) + "\n"


# --------------------------------------------------------------------------- configuration reference

_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_.-]+):(?P<rest>.*)$")
_COMMENT = re.compile(r"^(?P<indent> *)#\s?(?P<text>.*)$")


def _split_comment(rest: str) -> tuple[str, str]:
    """The value text and the trailing comment of a key line (a '#' inside quotes is no comment)."""
    quote = None
    for i, ch in enumerate(rest):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or rest[i - 1] in " \t"):
            return rest[:i].strip(), rest[i + 1:].strip()
    return rest.strip(), ""


def _config_entries(text: str) -> tuple[list[str], list[dict[str, Any]]]:
    """The file's header comment, then one entry per key: path, indent, comment, whether it holds keys."""
    header: list[str] = []
    entries: list[dict[str, Any]] = []
    stack: list[tuple[int, str]] = []
    pending: list[str] = []
    last: dict[str, Any] | None = None  # the key whose trailing comment a deeper comment line continues
    seen_key = False
    for line in text.splitlines():
        if not line.strip():
            pending = []
            last = None
            continue
        c = _COMMENT.match(line)
        if c:
            indent = len(c.group("indent"))
            if not seen_key:
                header.append(c.group("text"))
            elif last is not None and indent > last["indent"]:
                last["comment"].append(c.group("text"))
            else:
                pending.append(c.group("text"))
            continue
        k = _KEY.match(line)
        if not k:
            continue  # the continuation of a flow list or mapping
        seen_key = True
        indent = len(k.group("indent"))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        value, comment = _split_comment(k.group("rest"))
        path = [*(s for _, s in stack), k.group("key")]
        entry = {"path": path, "indent": indent, "value": value,
                 "comment": [*pending, *([comment] if comment else [])]}
        entries.append(entry)
        pending = []
        last = entry if comment else None
        stack.append((indent, k.group("key")))
    return header, entries


def _is_section(path: list[str]) -> bool:
    """Whether a key of config.yaml is a section of the configuration model (not a mapping value)."""
    from pydantic import BaseModel

    from watcher.config import Config

    model: Any = Config
    for part in path:
        field = model.model_fields.get(part)
        if field is None:
            return False
        model = field.annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return False
    return True


def _lookup(data: Any, path: list[str]) -> Any:
    for part in path:
        data = data[part]
    return data


def _default(value: Any) -> str:
    if value is None:
        return "`null`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f"`{value}`" if value else "`''`"
    return f"`{_cell(json.dumps(value, ensure_ascii=False))}`"


def config_reference(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    header, entries = _config_entries(text)
    lines = [
        "# Configuration reference",
        "",
        "Generated from the shipped `config.yaml` at every build of this site: every key, its default and",
        "what the file says of it. The file itself is the shipped default configuration.",
        "",
        *(f"> {h}" if h else ">" for h in header),
        "",
        "A key `section.key` is set by the environment variable `DRIFTLINE__SECTION__KEY` (nested keys:",
        "`DRIFTLINE__ENGINE__BASELINE__POLICY`); the value is read as YAML. A bad value or an unknown key",
        "is refused at start-up in one line that names the key.",
        "",
    ]
    hidden: dict[tuple[str, ...], int] = {}  # mappings that are values, not sections -> their row in lines
    for entry in entries:
        p = entry["path"]
        owner = next((h for h in hidden if tuple(p[:len(h)]) == h), None)
        comment = _cell(" ".join(entry["comment"]))
        if owner is not None:
            # A key inside a mapping value (a topic, a profile): its comment joins the mapping's row.
            if comment:
                row = hidden[owner]
                lines[row] = lines[row][:-2] + f"; `{'.'.join(p[len(owner):])}`: {comment} |"
            continue
        if len(p) == 1:
            section = _is_section(p)
            lines += ["", f"## `{p[0]}`", ""]
            if comment:
                lines += [_sentence(comment), ""]
            if section:
                lines += ["| key | default | meaning |", "|---|---|---|"]
            else:
                lines += [f"Default: {_default(_lookup(data, p))}", ""]
            continue
        if not entry["value"] and isinstance(_lookup(data, p), dict) and _is_section(p):
            lines.append(f"| **`{'.'.join(p)}`** | | {comment} |")
            continue
        value = _lookup(data, p)
        if isinstance(value, dict):
            hidden[tuple(p)] = len(lines)
        lines.append(f"| `{'.'.join(p)}` | {_default(value)} | {comment} |")
    return "\n".join(lines) + "\n"


def config_leaf_keys(path: Path) -> list[str]:
    """Every key the configuration reference gives a row (tests/docs/test_docs.py checks it against the model)."""
    _header, entries = _config_entries(path.read_text(encoding="utf-8"))
    return [".".join(e["path"]) for e in entries]


# --------------------------------------------------------------------------- event schema


def schema_reference(path: Path) -> str:
    schema = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        kind = prop.get("type") or ("const " + json.dumps(prop["const"]) if "const" in prop else "")
        if not kind and "oneOf" in prop:
            kind = " or ".join(str(o.get("type", "")) for o in prop["oneOf"])
        if isinstance(kind, list):
            kind = " or ".join(kind)
        rows.append(f"| `{name}`{' (required)' if name in required else ''} | {_cell(str(kind))} | "
                    f"{_cell(prop.get('description', ''))} |")
    return "\n".join([
        "# Event schema",
        "",
        "driftline's own capture event (format `driftline`), generated from",
        "`watcher/schemas/event.schema.json` at every build of this site. Events in this format are",
        "validated against this schema; an event that fails it is a dead letter naming the field.",
        "",
        _cell(schema.get("description", "")),
        "",
        "| field | type | meaning |",
        "|---|---|---|",
        *rows,
        "",
        "The schema itself:",
        "",
        "```json",
        json.dumps(schema, indent=2, ensure_ascii=False),
        "```",
        "",
    ])


# --------------------------------------------------------------------------- files


def generated_pages() -> dict[str, str]:
    """Every generated page: its path under docs/ and its Markdown."""
    pages = {
        "reference/cli.md": cli_reference(),
        "reference/configuration.md": config_reference(ROOT / "config.yaml"),
        "reference/event-schema.md": schema_reference(ROOT / "watcher" / "schemas" / "event.schema.json"),
    }
    pages["changelog.md"] = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    for runbook in sorted((ROOT / "deploy" / "runbooks").glob("*.md")):
        name = "index.md" if runbook.name == "README.md" else runbook.name
        pages[f"operations/runbooks/{name}"] = runbook.read_text(encoding="utf-8")
    return pages


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for src_uri, content in generated_pages().items():
        existing = files.get_file_from_path(src_uri)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, src_uri, content=content))
    return files
