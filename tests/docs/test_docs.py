"""The README stays a short entry point and the documentation site builds, strictly, from this checkout.

The site's CLI and configuration references are generated from the code at build time
(``docs/hooks.py``); these tests check that the build passes ``--strict`` (no broken link, no missing
page) and that the generated pages hold every subcommand of the parser and every key of the
configuration model, so neither can go stale as commands and settings are added.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from watcher.cli import build_parser
from watcher.config import Config

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_MAX_LINES = 250


def test_readme_is_short() -> None:
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines; the limit is {README_MAX_LINES} (details go to docs/)"


def test_readme_first_code_block_is_the_two_setup_commands() -> None:
    text = README.read_text(encoding="utf-8")
    m = re.search(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)
    assert m, "README.md has no code block"
    commands = [line.split("#", 1)[0].strip() for line in m.group(1).splitlines() if line.strip()]
    assert commands == ["./dev demo", "./dev test"]


def test_readme_relative_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    missing = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if path and not (ROOT / path).exists():
            missing.append(target)
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_changelog_has_an_unreleased_section() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog")
    assert "\n## [Unreleased]\n" in text


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    out = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _commands(sub, (*path, name))
    return out


def test_cli_reference_lists_every_subcommand_and_option(site: Path) -> None:
    html = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    commands = _commands(build_parser(), ("driftline",))
    assert len(commands) > 10
    for path in commands:
        assert f'id="{"-".join(path)}"' in html, f"the CLI reference has no section for {' '.join(path)}"
    scan = dict(_named_subparsers(build_parser()))["scan"]
    for action in scan._actions:
        for flag in action.option_strings:
            assert f"<code>{flag}</code>" in html, f"the CLI reference lacks scan's {flag}"


def _named_subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices.items())
    return []


def _keys(model: Any, prefix: tuple[str, ...] = ()) -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out += _keys(ann, (*prefix, name))
        else:
            out.append(".".join((*prefix, name)))
    return out


def test_configuration_reference_has_every_key(site: Path) -> None:
    html = (site / "reference" / "configuration" / "index.html").read_text(encoding="utf-8")
    keys = _keys(Config)
    assert len(keys) > 100
    missing = [k for k in keys if f"<code>{k}</code>" not in html]
    assert not missing, f"the configuration reference lacks {missing}"


def test_runbooks_and_event_schema_are_published(site: Path) -> None:
    for runbook in (ROOT / "deploy" / "runbooks").glob("Driftline*.md"):
        assert (site / "operations" / "runbooks" / runbook.stem / "index.html").is_file(), runbook.name
    schema = (site / "reference" / "event-schema" / "index.html").read_text(encoding="utf-8")
    assert "warc_filename" in schema


def test_readme_headline_figures_are_the_results_files() -> None:
    """The README's accuracy figures are the ones `driftline eval --results` wrote, not typed twice."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    gold = json.loads((ROOT / "docs/results/gold-1068.json").read_text(encoding="utf-8"))["collections"]["gold-1068"]
    deep = json.loads((ROOT / "docs/results/deep-pages.json").read_text(encoding="utf-8"))["collections"]["deep-pages"]
    o, cv = gold["overall"], gold["cv"]["default"]["f1"]
    assert f"**{o['f1']:.3f}** (P {o['precision']:.3f}, R {o['recall']:.3f})" in readme
    assert f"{cv['mean']:.3f} ± {cv['sd']:.3f}" in readme
    d = deep["cv"]["default"]["f1"]
    assert f"**{d['mean']:.3f} ± {d['sd']:.3f}**" in readme
