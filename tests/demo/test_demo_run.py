"""``driftline demo`` end to end: the real embedded Tansu broker, the real
consumer app, SQLite store and WARC acquirer; no network, no browser."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import aiohttp
import pytest

from watcher.config import Config
from watcher.demo.run import demo, run_demo

from ..conftest import free_port

pytestmark = pytest.mark.kafka


def _cfg() -> Config:
    return Config.model_validate({"metrics": {"enabled": True, "host": "127.0.0.1", "port": free_port()}})


def test_run_demo_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = run_demo(_cfg(), once=True, workdir=tmp_path / "work")
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Every seed behaved as designed." in out
    assert "30 verdicts, 10 alerts, 3 crawl-stop recommendations, 0 dead letters." in out
    recommended = re.findall(r"RECOMMEND stop-seed (\S+)", out)
    assert sorted(recommended) == sorted([
        "http://www.harbourtown-library.org/visit-us/",
        "https://www.cityjazzfestival.net/programme/",
        "https://www.millbrook-history.org.uk/history/mill-and-canal/",
    ])
    assert "engine/job/driftline-demo/script" in out and "http://(org,harbourtown-library," in out
    rows = {line.split("  ")[0]: line for line in out.splitlines() if line.startswith(("Red Agua", "Riverwatch"))}
    assert "Oscillating" in rows["Red Agua Andina"] and rows["Red Agua Andina"].rstrip().endswith("no")
    assert "Always On" in rows["Riverwatch Alliance"]
    # One line per verdict: time, url, then change / status / reason.
    assert len(re.findall(r"^2025-\d\d-\d\d \d\d:\d\d  https?://", out, re.M)) >= 30
    assert re.search(r"^\s+unchanged\s+on-topic\s+", out, re.M)  # the French revisit
    # The DOI monitor's part: a redesign, an edited abstract, a replaced article, a lapsed domain, a bot wall.
    assert "Every DOI behaved as designed." in out and "15 DOI checks, 1 DOI alerts." in out
    def checks(story: str) -> list[str]:
        m = re.search(rf"^10\.55555/\S+\s+{story}\s+(\S+) (\S+) (\S+)\s", out, re.M)
        assert m is not None, story
        return list(m.groups())

    assert checks("redesign") == ["baseline", "layout", "layout"]
    assert "highlights box beside the abstract removed" in out
    for story, last in (("edited abstract", "drifted"), ("replaced article", "replaced"), ("lapsed domain", "gone"),
                        ("bot wall", "blocked")):
        assert checks(story)[2] == last, (story, checks(story))


async def test_demo_serves_metrics_until_stopped(tmp_path: Path) -> None:
    cfg = _cfg()
    out = io.StringIO()
    stop = asyncio.Event()
    task = asyncio.create_task(demo(cfg, once=False, out=out, workdir=tmp_path / "demo", stop=stop, pace_s=0.0))
    try:
        for _ in range(1200):
            if "Press Ctrl-C" in out.getvalue() or task.done():
                break
            await asyncio.sleep(0.1)
        assert "Press Ctrl-C" in out.getvalue(), out.getvalue()
        url = f"http://127.0.0.1:{cfg.metrics.port}/metrics"
        async with aiohttp.ClientSession() as session, session.get(url) as resp:
            assert resp.status == 200
            body = await resp.text()
        assert "driftline" in body
        status = re.search(r"DOI status and metrics: (http://\S+)/doi/status", out.getvalue())
        assert status is not None, out.getvalue()
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{status.group(1)}/doi/status") as resp:
                rows = await resp.json()
            async with session.get(f"{status.group(1)}/metrics") as resp:
                doi_metrics = await resp.text()
        assert {r["change"] for r in rows} == {"layout", "drifted", "replaced", "gone", "blocked"}
        assert "driftline_doi_checks_total" in doi_metrics and "driftline_doi_drifted 3.0" in doi_metrics
        assert not task.done()  # still serving
    finally:
        stop.set()
        result = await asyncio.wait_for(task, 60)
    assert result.as_expected and len(result.recommendations) == 3
    assert result.doi is not None and result.doi.as_expected
    assert (tmp_path / "demo" / "demo.db").exists() and result.crawl.path.parent == tmp_path / "demo"
