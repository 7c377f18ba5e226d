"""``GET /doi/status`` and ``driftline doi status -f json`` against their documented JSON Schema
(watcher/schemas/doi-status.schema.json), on the real output of a monitor that checked DOIs of
every kind against a local resolver and publisher."""

from __future__ import annotations

import asyncio
import json
import socket
from importlib import resources
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from jsonschema import Draft202012Validator

from tests.fixtures import doi_pages as dp
from tests.fixtures import doi_platforms as pl
from tests.fixtures.doi_server import Page, doi_config, landscape
from watcher.config import load_config
from watcher.doi.lists import DoiEntry
from watcher.doi.schedule import check_all, open_monitor
from watcher.doi.status import serve_status


def schema() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(resources.files("watcher").joinpath("schemas/doi-status.schema.json").read_text())
    Draft202012Validator.check_schema(doc)
    return doc


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_schema_refuses_what_it_does_not_promise() -> None:
    v = Draft202012Validator(schema())
    good = {"doi": "10.5555/a", "last_check": "", "outcome": "pending", "http_status": "", "final_url": "",
            "change": "", "first_drift": "", "reason": "", "failures": 0}
    assert not list(v.iter_errors([good]))
    assert not list(v.iter_errors([{**good, "something_new": 1}]))  # new optional fields are allowed
    for bad in ({**good, "outcome": "fine"}, {**good, "http_status": None}, {**good, "last_check": "yesterday"},
                {k: x for k, x in good.items() if k != "change"}, {**good, "failures": -1}, {**good, "doi": "abc"}):
        assert list(v.iter_errors([bad])), bad


async def test_real_status_output_validates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from watcher.cli import main

    validator = Draft202012Validator(schema())
    a, b = pl.article("springer", 3), pl.article("ojs", 3)
    async with landscape() as land:
        land.pages[a.doi] = Page(pl.page("springer", a, 0))
        land.pages[b.doi] = Page(pl.page("ojs", b, 0))
        land.pages["10.5555/wall"] = Page(dp.challenge(0), status=403)
        cfg = load_config(overrides=doi_config(land, tmp_path, head_check=False, retries=1, timeout_s=30.0))
        async with open_monitor(cfg) as mon:
            mon.registry.add([DoiEntry(a.doi), DoiEntry(b.doi), DoiEntry("10.5555/wall"),
                              DoiEntry("10.5555/unknown")])
            await check_all(mon)
            land.pages[b.doi] = Page(pl.page("ojs", dp.edit_abstract(b), 1))
            await asyncio.sleep(1.1)  # a capture is named to the second: the same page twice in one second is one
            await check_all(mon)
            mon.registry.add([DoiEntry("10.5555/later")])  # never checked: pending
            port = _free_port()
            async with (serve_status(mon, "127.0.0.1", port) as base, aiohttp.ClientSession() as http,
                        http.get(f"{base}/doi/status") as resp):
                assert resp.status == 200
                served = await resp.json()
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(served)]
    assert not errors, errors
    rows = {r["doi"]: r for r in served}
    assert {r["outcome"] for r in served} >= {"resolved", "blocked", "not_found", "pending"}
    assert rows[b.doi]["change"] == "drifted" and rows[b.doi]["first_drift"]
    assert rows[a.doi]["change"] == "unchanged" and isinstance(rows[a.doi]["http_status"], int), rows[a.doi]["reason"]
    monkeypatch.setenv("DRIFTLINE__STORE__PATH", str(tmp_path / "doi.db"))
    assert main(["doi", "status", "-f", "json", "-o", str(tmp_path / "status.json")]) == 0
    written = json.loads((tmp_path / "status.json").read_text())
    assert not list(validator.iter_errors(written))
    assert written == served


def test_the_schema_names_every_outcome_a_check_records() -> None:
    """A new outcome in the code is a new value of the documented schema (and of docs/doi.md)."""
    from watcher.doi.resolve import OUTCOMES

    enum = set(schema()["$defs"]["row"]["properties"]["outcome"]["enum"])
    assert enum == {*OUTCOMES, "pending"}
    doc = (Path(__file__).resolve().parents[2] / "docs" / "doi.md").read_text()
    assert all(f"`{o}`" in doc for o in enum)
