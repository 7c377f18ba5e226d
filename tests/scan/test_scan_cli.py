"""`driftline scan / eval / compare` end to end, on real and made-up archives."""

from __future__ import annotations

import csv
import gzip
import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.scancli import BASE, PARKED, run, t
from tests.fixtures.scanwarcs import write_warc
from watcher.evaluation.evaluate import evaluate


def test_scan_warc_json_in_otmt_schema(tmp_path: Path) -> None:
    warc = tmp_path / "crawl.warc.gz"
    write_warc(warc, [("http://www.example.org/", t(0), BASE, {}),
                      ("http://example.org", t(1), BASE, {}),
                      ("http://example.org/", t(2), PARKED, {})])
    out = tmp_path / "out.json"
    assert run("scan", str(warc), "-o", str(out), "--no-progress") == 0
    data: dict[str, Any] = json.loads(out.read_text())
    (mementos,) = data.values()
    entries = {k: v for k, v in mementos.items() if not k.startswith("__")}
    assert len(entries) == 3
    for entry in entries.values():
        assert set(entry) >= {"timemap measures", "overall topic status", "driftline"}
        for m in entry["timemap measures"].values():
            assert set(m) >= {"comparison score", "topic status", "stemmed", "tokenized", "removed boilerplate"}
    statuses = sorted(e["overall topic status"] for e in entries.values())
    assert statuses == ["off-topic", "on-topic", "on-topic"]
    changes = sorted(e["driftline"]["change"] for e in entries.values())
    assert changes == ["baseline", "off-topic", "unchanged"]


def test_scan_formats_csv_jsonl_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    warc = tmp_path / "c.warc.gz"
    write_warc(warc, [("http://example.org/", t(0), BASE, {}), ("http://example.org/", t(1), PARKED, {})])
    assert run("scan", str(warc), "-f", "csv", "-o", str(tmp_path / "o.csv"), "--no-progress") == 0
    rows = list(csv.DictReader((tmp_path / "o.csv").open()))
    assert {r["measure"] for r in rows} >= {"wordcount", "tfintersection", "cosine"}
    assert run("scan", str(warc), "-f", "jsonl", "-o", str(tmp_path / "o.jsonl"), "--no-progress") == 0
    lines = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert len(lines) == 2
    assert run("scan", str(warc), "-f", "summary", "--no-progress") == 0
    assert "Step Function On" in capsys.readouterr().out


def test_bad_inputs_do_not_stop_the_scan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bomb = gzip.compress(b"\0" * 60_000_000)  # 60 MB of zeros in ~60 KB
    big = b"<html><body>" + b"<p>river water flood bank</p>" * 1_800_000 + b"</body></html>"  # ~50 MB
    nul = b"<ht\x00ml><body>\x00\x01\x02<p>Court \x00judge trial\x07 appeal</p>" + bytes(range(32)) * 50
    warc = tmp_path / "bad.warc.gz"
    write_warc(warc, [
        ("http://good.example/", t(0), BASE, {}),
        ("http://bomb.example/", t(0), bomb, {"Content-Encoding": "gzip"}),
        ("http://big.example/", t(0), big, {}),
        ("http://nul.example/", t(0), nul, {}),
        ("http://binary.example/", t(0), bytes(range(256)) * 400, {"Content-Type": "application/octet-stream"}),
        ("http://good.example/", t(1), BASE + b"<p>More</p>", {}),
    ])
    data = warc.read_bytes()
    truncated = tmp_path / "truncated.warc.gz"
    truncated.write_bytes(data[: len(data) - 3000])
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(256)) * 64)
    out = tmp_path / "out.jsonl"
    # The truncated file is an unreadable input (exit 3 without --allow-missing: test_unreadable_inputs).
    assert run("scan", str(warc), str(truncated), "-f", "jsonl", "-o", str(out), "--no-progress",
               "--allow-missing") == 0
    records = [json.loads(x) for x in out.read_text().splitlines()]
    by_url: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_url.setdefault(r["url"], []).append(r)
    assert {"http://good.example/", "http://nul.example/", "http://big.example/"} <= set(by_url)
    nul_rec = by_url["http://nul.example/"][0]
    assert nul_rec["overall topic status"] in ("on-topic", "empty")
    # the unknown input is a clear error, not a traceback
    assert run("scan", str(garbage), "--no-progress") == 2
    assert "not a recognised input" in capsys.readouterr().err


def test_compare_json_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.html", tmp_path / "b.txt"
    a.write_bytes(BASE)
    b.write_text("This domain is for sale. Buy this domain now.")
    assert run("compare", str(a), str(b), "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["overall"] == "off-topic" and out["change"] == "off-topic"
    assert out["reason"]
    assert set(out["measures"]) >= {"cosine", "containment", "jaccard", "wordcount", "levenshtein"}
    for m in out["measures"].values():
        assert m["status"] in ("on-topic", "off-topic", "n/a")
    assert run("compare", str(a), str(a), "--json") == 0
    same = json.loads(capsys.readouterr().out)
    assert (same["overall"], same["change"]) == ("on-topic", "unchanged")


def test_console_script_runs() -> None:
    proc = subprocess.run([sys.executable, "-m", "watcher.cli", "--version"], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0 and "driftline" in proc.stdout


@pytest.mark.shared
def test_scan_shared_warcs(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "iana.json"
    assert run("scan", str(shared_data / "warc" / "iana.warc.gz"), str(shared_data / "warc" / "5mementos.warc"),
               "-o", str(out), "--no-progress") == 0
    data = json.loads(out.read_text())
    entries = [e for m in data.values() for k, e in m.items() if not k.startswith("__")]
    # the 27 documents; the ~150 stylesheets, scripts, fonts and images (and their revisits) are skipped
    assert len(entries) == 27
    changes = {e["driftline"]["change"] for e in entries}
    assert {"baseline", "minor"} <= changes


@pytest.mark.shared
def test_gold_standard_end_to_end_f1(gold_dir: Path, gold_scan: Path) -> None:
    """The acceptance bar: `driftline scan` at the default configuration, F1 >= 0.75 (off-topic positive)."""
    report = evaluate(gold_dir, gold_scan)
    overall = report.overall
    assert report.matched == 2302
    assert overall.f1 >= 0.75, overall
    assert overall.precision >= 0.75 and overall.recall >= 0.65


async def test_scan_timemap_url_end_to_end(tmp_path: Path) -> None:
    """A TimeMap served over HTTP: mementos fetched raw (id_), one redirected
    by a JavaScript page, scored, written in OTMT's schema."""
    import asyncio

    from aiohttp import web

    from tests.fixtures.webserver import serve

    stamps = ["20200101000000", "20200301000000", "20200501000000"]
    bodies = {stamps[0]: BASE, stamps[1]: BASE.replace(b"River", b"Riverbank"), stamps[2]: PARKED}
    seen: list[str] = []

    async def memento(request: web.Request) -> web.Response:
        stamp = request.match_info["stamp"]
        seen.append(stamp)
        if stamp == "20200301000000id_":  # a JavaScript redirect page, as Wayback serves them
            return web.Response(text="<html><script>window.location.replace("
                                     "'/web/20200302000000id_/http://river.example/');</script></html>",
                                content_type="text/html")
        key = stamp.removesuffix("id_")
        body = bodies.get(key) or bodies[stamps[1]]
        return web.Response(body=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/web/{stamp}/{url:.*}", memento)

    async def timemap(request: web.Request) -> web.Response:
        base = f"http://{request.host}"
        lines = ['<http://river.example/>; rel="original"']
        for s in stamps:
            dt = datetime.strptime(s, "%Y%m%d%H%M%S").strftime("%a, %d %b %Y %H:%M:%S GMT")
            lines.append(f'<{base}/web/{s}/http://river.example/>; rel="memento"; datetime="{dt}"')
        return web.Response(text=",\n".join(lines), content_type="application/link-format")

    app.router.add_get("/timemap/link/{url:.*}", timemap)
    conf = tmp_path / "local.yaml"  # the archive is on loopback: admitted explicitly, as an operator would
    conf.write_text("acquire:\n  allow_addresses: [127.0.0.1/32]\n")
    async with serve(app) as base:
        out = tmp_path / "tm.json"
        rc = await asyncio.to_thread(run, "-c", str(conf), "scan", f"{base}/timemap/link/http://river.example/",
                                     "-o", str(out), "--no-progress")
    assert rc == 0
    assert all(s.endswith("id_") for s in seen), seen  # raw captures only
    data = json.loads(out.read_text())
    (uri_t,) = data
    assert uri_t.endswith("/timemap/link/http://river.example/")
    entries = {k: v for k, v in data[uri_t].items() if not k.startswith("__")}
    assert len(entries) == 3
    statuses = [entries[k]["overall topic status"] for k in sorted(entries)]
    assert statuses == ["on-topic", "on-topic", "off-topic"]
    assert data[uri_t]["__driftline__"]["behaviour"] == "Step Function On"
