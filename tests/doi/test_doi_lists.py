"""DOI lists: normalisation, text/CSV lists, the registry (SQLite and
PostgreSQL), and imports from local servers that play Crossref and DataCite
(paging, bad records, --since, a 429 with Retry-After)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from pydantic import SecretStr

from tests.fixtures.webserver import serve
from watcher.cli import main
from watcher.config import DoiConfig, StoreConfig
from watcher.doi.ident import doi_url, normalise_doi
from watcher.doi.importers import ImportPage, crossref_pages, datacite_pages, next_cursor
from watcher.doi.lists import DoiEntry, parse_interval, parse_list
from watcher.doi.registry import DoiRegistry, open_registry
from watcher.errors import DoiError


@pytest.mark.parametrize("raw", [
    "10.1000/ABC.def", "doi:10.1000/abc.def", "DOI: 10.1000/abc.def", "https://doi.org/10.1000/abc.def",
    "http://dx.doi.org/10.1000/ABC.DEF", "https://www.doi.org/10.1000/abc.def", "  10.1000/abc.def.  ",
    "info:doi/10.1000/abc.def", "https://doi.org/10.1000%2Fabc.def", "<10.1000/abc.def>", "(10.1000/abc.def)",
])
def test_normalise_doi_forms(raw: str) -> None:
    assert normalise_doi(raw) == "10.1000/abc.def"


def test_normalise_keeps_balanced_brackets_and_refuses_non_dois() -> None:
    assert normalise_doi("10.1002/(SICI)1097-4571(199806)49:8<693::AID-ASI4>3.0.CO;2-0") == \
        "10.1002/(sici)1097-4571(199806)49:8<693::aid-asi4>3.0.co;2-0"
    assert normalise_doi("10.5555/abc(1)") == "10.5555/abc(1)"
    for bad in ("", "11.1000/x", "10.12/x", "10.1000/", "10.1000/a b", "hello", "doi:", "10.abcd/x"):
        with pytest.raises(DoiError) as ei:
            normalise_doi(bad)
        assert ei.value.reason == "invalid_doi"
    assert doi_url("10.1000/a#b?c", "http://127.0.0.1:1/") == "http://127.0.0.1:1/10.1000/a%23b%3Fc"


def test_parse_plain_text_list_reports_bad_lines_by_number() -> None:
    text = "# my DOIs\n10.1000/one\n\nnot-a-doi\nhttps://doi.org/10.1000/TWO\n10.1000/one\n"
    parsed = parse_list(text)
    assert [e.doi for e in parsed.entries] == ["10.1000/one", "10.1000/two"]
    assert [(p.line, p.text) for p in parsed.problems] == [(4, "not-a-doi")]


def test_parse_csv_with_header_and_positional_tsv() -> None:
    csv_text = ("DOI,expected_title,url,interval,tags\n"
                '10.1000/a,"A title, with comma",https://pub.example/a,1d,physics;open\n'
                "10.1000/b,,,12h,\n"
                "bad,,,,\n"
                "10.1000/c,,ftp://x,,\n"
                "10.1000/d,,,every so often,\n")
    parsed = parse_list(csv_text)
    assert [e.doi for e in parsed.entries] == ["10.1000/a", "10.1000/b"]
    a = parsed.entries[0]
    assert (a.title, a.landing_url, a.interval_s, a.tags) == ("A title, with comma", "https://pub.example/a",
                                                              86400, ("physics", "open"))
    assert parsed.entries[1].interval_s == 43200
    assert [p.line for p in parsed.problems] == [4, 5, 6]
    tsv = parse_list("10.1000/x\tTitle X\thttps://p.example/x\t3600\tg1 g2\n")
    assert tsv.entries == [DoiEntry("10.1000/x", "Title X", "https://p.example/x", 3600, ("g1", "g2"))]
    assert parse_interval("weekly") == 604800
    with pytest.raises(DoiError):
        parse_interval("5s")


def _registry_roundtrip(reg: DoiRegistry) -> None:
    added, updated = reg.add([DoiEntry("10.1000/a", "Title A", "https://p.example/a", 3600, ("x",)),
                              DoiEntry("10.1000/b")])
    assert (added, updated) == (2, 0)
    # An update keeps what the new entry leaves empty.
    assert reg.add([DoiEntry("10.1000/a", None, None, None, (), source="crossref:10.1000")]) == (0, 1)
    a = reg.get("10.1000/a")
    assert a is not None and (a.title, a.landing_url, a.interval_s, a.tags, a.source) == (
        "Title A", "https://p.example/a", 3600, ("x",), "crossref:10.1000")
    assert [e.doi for e in reg.entries(tag="x")] == ["10.1000/a"]
    from datetime import UTC, datetime, timedelta

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    s = reg.record_check("10.1000/a", t0, "timeout", {"reason": "timed out"})
    assert (s.failures, s.failure_kind) == (1, "timeout")
    s = reg.record_check("10.1000/a", t0 + timedelta(hours=1), "timeout", {"reason": "timed out"})
    assert (s.failures, s.failure_kind) == (2, "timeout")
    s = reg.record_check("10.1000/a", t0 + timedelta(hours=2), "resolved",
                         {"change": "drifted", "http_status": 200, "final_url": "https://p.example/a"})
    assert (s.failures, s.first_drift, s.http_status) == (0, t0 + timedelta(hours=2), 200)
    s = reg.record_check("10.1000/a", t0 + timedelta(hours=3), "resolved", {"change": "drifted"})
    assert s.first_drift == t0 + timedelta(hours=2)  # the first drift is kept
    assert len(reg.checks("10.1000/a")) == 4
    reg.set_last_import("crossref:10.1000", t0, 5)
    assert reg.last_import("crossref:10.1000") == t0
    assert reg.remove(["10.1000/a", "10.1000/zzz"]) == 1
    assert reg.count() == 1 and reg.state("10.1000/a") is None


def test_registry_sqlite_persists(tmp_path: Path) -> None:
    cfg = StoreConfig(path=str(tmp_path / "d.db"))
    with open_registry(cfg) as reg:
        _registry_roundtrip(reg)
    with open_registry(cfg) as reg:  # reopened: the data is on disk
        assert [e.doi for e in reg.entries()] == ["10.1000/b"]


@pytest.mark.postgres
def test_registry_postgres(postgres_dsn: str) -> None:
    pytest.importorskip("psycopg")
    with open_registry(StoreConfig(backend="postgres", dsn=SecretStr(postgres_dsn))) as reg:
        _registry_roundtrip(reg)


# -- registry API fixtures ----------------------------------------------------

def _crossref_app(n: int, page_rows: int, seen: list[dict[str, str]]) -> web.Application:
    """n works under prefix 10.5555, a few bad records, cursor paging, one 429 first."""
    works = []
    for i in range(n):
        works.append({"DOI": f"10.5555/W{i}", "title": [f"Work {i}"],
                      "resource": {"primary": {"URL": f"https://pub.example/w{i}"}}})
    works[3] = {"title": ["no DOI here"]}
    works[7] = {"DOI": "not a doi"}
    state = {"throttled": False}

    async def handler(request: web.Request) -> web.Response:
        q = dict(request.query)
        seen.append({**q, "ua": request.headers.get("User-Agent", ""), "path": request.path})
        if not state["throttled"]:
            state["throttled"] = True
            return web.Response(status=429, headers={"Retry-After": "0"})
        cursor = q.get("cursor", "")
        start = 0 if cursor == "*" else int(cursor.removeprefix("c"))
        rows = int(q["rows"])
        items = works[start:start + rows]
        msg = {"total-results": n, "items": items, "next-cursor": f"c{start + rows}"}
        return web.json_response({"status": "ok", "message-type": "work-list", "message": msg})

    app = web.Application()
    app.router.add_get("/works", handler)
    app.router.add_get("/members/{m}/works", handler)
    return app


def _datacite_app(n: int, seen: list[dict[str, str]], base: list[str]) -> web.Application:
    recs: list[Any] = [{"id": f"10.7777/ds{i}", "type": "dois",
                        "attributes": {"doi": f"10.7777/DS{i}", "titles": [{"title": f"Dataset {i}"}],
                                       "url": f"https://repo.example/ds{i}"}} for i in range(n)]
    recs[2] = {"id": "x", "attributes": {"doi": "junk"}}

    async def handler(request: web.Request) -> web.Response:
        q = dict(request.query)
        seen.append(q)
        size, cursor = int(q["page[size]"]), q["page[cursor]"]
        start = 0 if cursor == "1" else int(cursor.removeprefix("k"))
        data = recs[start:start + size]
        links: dict[str, str] = {"self": "x"}
        if start + size < n:  # like api.datacite.org: links.next is an absolute URL of the real service
            links["next"] = f"https://api.datacite.org/dois?page%5Bcursor%5D=k{start + size}&page%5Bsize%5D={size}"
        return web.json_response({"data": data, "meta": {"total": n}, "links": links})

    app = web.Application()
    app.router.add_get("/dois", handler)
    return app


async def _collect(pages: Any) -> list[ImportPage]:
    return [p async for p in pages]


async def test_crossref_cursor_paging_polite_pool_and_bad_records() -> None:
    seen: list[dict[str, str]] = []
    async with serve(_crossref_app(23, 10, seen)) as base:
        cfg = DoiConfig(crossref_url=base, mailto="ops@example.org", import_rows=10)
        from datetime import UTC, datetime

        pages = await _collect(crossref_pages(cfg, prefix="10.5555", since=datetime(2025, 3, 1, tzinfo=UTC),
                                              backoff_s=0.01))
    assert [len(p.entries) for p in pages] == [8, 10, 3]
    assert {e.doi for p in pages for e in p.entries} == {f"10.5555/w{i}" for i in range(23) if i not in (3, 7)}
    assert pages[0].entries[0].landing_url == "https://pub.example/w0" and pages[0].entries[0].title == "Work 0"
    assert [(p.line, "page 1" in p.message) for p in pages[0].problems] == [(4, True), (8, True)]
    ok = [q for q in seen[1:]]
    assert [q["cursor"] for q in ok] == ["*", "c10", "c20", "c30"]  # until an empty page
    assert all(q["mailto"] == "ops@example.org" and "mailto:ops@example.org" in q["ua"] for q in ok)
    assert ok[0]["filter"] == "prefix:10.5555,from-update-date:2025-03-01"


async def test_crossref_member_route_and_cap() -> None:
    seen: list[dict[str, str]] = []
    async with serve(_crossref_app(30, 10, seen)) as base:
        cfg = DoiConfig(crossref_url=base, import_rows=10, import_max_records=12)
        pages = await _collect(crossref_pages(cfg, member="311", backoff_s=0.01))
    assert sum(len(p.entries) for p in pages) == 12
    assert seen[-1]["path"] == "/members/311/works" and "filter" not in seen[-1]


async def test_datacite_cursor_paging_against_the_configured_base() -> None:
    seen: list[dict[str, str]] = []
    async with serve(_datacite_app(25, seen, [])) as base:
        cfg = DoiConfig(datacite_url=base, import_rows=10)
        from datetime import UTC, datetime

        pages = await _collect(datacite_pages(cfg, client_id="cern.zenodo", since=datetime(2025, 1, 2, tzinfo=UTC)))
    assert [len(p.entries) for p in pages] == [9, 10, 5]
    assert pages[0].problems and pages[0].problems[0].line == 3
    assert [q["page[cursor]"] for q in seen] == ["1", "k10", "k20"]
    assert seen[0]["client-id"] == "cern.zenodo" and seen[0]["query"] == "updated:[2025-01-02T00:00:00Z TO *]"
    assert next_cursor("https://x/dois?page%5Bcursor%5D=abc") == "abc" and next_cursor(None) is None


# -- the command line ---------------------------------------------------------

@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    db = tmp_path / "reg.db"
    monkeypatch.setenv("DRIFTLINE__STORE__PATH", str(db))
    yield tmp_path


def test_cli_add_list_remove(cli_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lst = cli_env / "dois.csv"
    lst.write_text("doi,title,interval,tags\n10.1000/A,Alpha,1d,g1\nbroken,,,\n10.1000/b,Beta,,g2\n")
    assert main(["doi", "add", str(lst), "--tags", "batch1"]) == 0
    out, err = capsys.readouterr()
    assert "2 added, 0 updated, 1 skipped" in out and "line 3" in err
    assert main(["doi", "add", "doi:10.1000/C"]) == 0
    capsys.readouterr()
    assert main(["doi", "list", "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["doi"] for r in rows] == ["10.1000/a", "10.1000/b", "10.1000/c"]
    assert rows[0]["tags"] == "g1;batch1" and rows[2]["interval_s"] == 86400
    assert main(["doi", "remove", "https://doi.org/10.1000/B"]) == 0
    assert "1 removed" in capsys.readouterr().out
    assert main(["doi", "list", "--tag", "batch1", "-f", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["10.1000/a,Alpha,,86400,g1;batch1,file:dois.csv"]
    assert main(["doi", "status", "-f", "json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert [(r["doi"], r["outcome"]) for r in st] == [("10.1000/a", "pending"), ("10.1000/c", "pending")]


def test_cli_import_since_last(cli_env: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, str]] = []

    async def go(argv: list[str]) -> int:
        async with serve(_crossref_app(15, 10, seen)) as base:
            monkeypatch.setenv("DRIFTLINE__DOI__CROSSREF_URL", base)
            monkeypatch.setenv("DRIFTLINE__DOI__IMPORT_ROWS", "10")
            monkeypatch.setattr("watcher.doi.importers.BACKOFF_S", 0.01)
            return await asyncio.to_thread(main, argv)

    assert asyncio.run(go(["doi", "import", "crossref", "--prefix", "10.5555"])) == 0
    assert "13 added, 0 updated, 2 skipped" in capsys.readouterr().out
    assert asyncio.run(go(["doi", "import", "crossref", "--prefix", "10.5555", "--since", "last"])) == 0
    assert "0 added, 13 updated" in capsys.readouterr().out
    assert "from-update-date:" in seen[-1]["filter"]
    assert main(["doi", "import", "crossref", "--member", "9", "--since", "last"]) == 2  # never imported
