"""The DOI monitor end to end against a local resolver and publishers
(tests/fixtures/doi_server.py): resolution chains, outcomes, WARC records, capture
events, decisions, alerts, the status report; then the real scheduler with
short intervals producing to the real broker, across a restart."""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.fixtures import doi_pages as dp
from tests.fixtures.doi_server import Page, doi_config, landscape
from watcher.config import load_config
from watcher.doi.lists import DoiEntry
from watcher.doi.schedule import check_all, open_monitor
from watcher.doi.status import serve_status, status_rows
from watcher.events.driftline import parse_driftline


class _Events(list[dict[str, Any]]):
    """The capture events a monitor emits (its ``emit`` callback), in order."""

    async def emit(self, kind: str, msg: dict[str, Any]) -> None:
        if kind == "event":
            self.append(msg)


def _read_warc(path: Path, offset: int) -> tuple[str, bytes, str | None]:
    with open(path, "rb") as fh:
        fh.seek(offset)
        rec = next(iter(ArchiveIterator(fh)))
        return rec.rec_headers.get_header("WARC-Target-URI"), rec.content_stream().read(), rec.rec_type


async def test_checks_end_in_outcomes_warcs_events_and_decisions(tmp_path: Path) -> None:
    arts = {name: dp.article(i + 40, full_text=True) for i, name in enumerate(
        ["hops", "refresh", "js", "para", "comments", "redesign", "challenge", "owner", "moved", "pdf", "slow",
         "timeout", "wall"])}
    doi = {name: f"10.5555/{name}" for name in arts}
    arts = {name: replace(a, doi=doi[name]) for name, a in arts.items()}
    async with landscape() as land:
        land.pages.update({
            doi["hops"]: Page(dp.highwire(arts["hops"], 0)),
            doi["refresh"]: Page(dp.ojs(arts["refresh"], 0)),
            doi["js"]: Page(dp.zenodo(arts["js"], 0)),
            doi["para"]: Page(dp.atypon(arts["para"], 0)),
            doi["comments"]: Page(dp.highwire(dp.with_comments(arts["comments"], 1), 0)),
            doi["redesign"]: Page(dp.elsevier(arts["redesign"], 0)),
            doi["challenge"]: Page(dp.highwire(arts["challenge"], 1)),
            doi["owner"]: Page(dp.ojs(arts["owner"], 0)),
            doi["moved"]: Page(dp.atypon(arts["moved"], 0)),
            doi["pdf"]: Page(dp.article_pdf(arts["pdf"]), content_type="application/pdf"),
            doi["slow"]: Page(dp.ojs(arts["slow"], 1)),
            doi["timeout"]: Page(dp.ojs(arts["timeout"], 1), delay_s=120.0),  # never answers within the test
            doi["wall"]: Page(dp.zenodo(arts["wall"], 1)),
        })
        land.routes.update({doi["hops"]: "hops", doi["refresh"]: "refresh", doi["js"]: "js"})
        # A timeout of 5 s, against a page that never answers: the other pages answer well within it on a
        # loaded machine (with 1 s against a 3 s page, a normal page could time out too).
        cfg = load_config(overrides=doi_config(land, tmp_path, timeout_s=5.0, retries=1))
        sent: list[tuple[str, dict[str, Any]]] = []

        async def emit(kind: str, msg: dict[str, Any]) -> None:
            sent.append((kind, msg))

        async with open_monitor(cfg, emit) as mon:
            entries = [DoiEntry(d, arts[n].title, land.landing(d) if n == "moved" else None) for n, d in doi.items()]
            mon.registry.add([*entries, DoiEntry("10.5555/unknown", "Nothing")])
            first = {r.doi: r for r in await check_all(mon)}

            # -- round 1: resolution chains and outcomes ----------------------------------
            assert first["10.5555/unknown"].outcome == "not_found"
            assert "responseCode 100" in first["10.5555/unknown"].reason
            assert first[doi["timeout"]].outcome == "timeout"
            for n in arts:
                if n != "timeout":
                    assert first[doi[n]].outcome == "resolved", (n, first[doi[n]].reason)
                    assert first[doi[n]].record["change"] == "baseline", (n, first[doi[n]].record)
            chain = first[doi["hops"]].record["resolution"]
            assert [h["status"] for h in chain["hops"]] == [302, 302, 301, 200]
            assert chain["handle"]["responseCode"] == 1 and chain["handle"]["urls"] == [land.landing(doi["hops"])]
            assert chain["final_url"] == land.landing(doi["hops"]) and chain["redirects"] == 3
            assert [h["method"] for h in first[doi["refresh"]].record["resolution"]["hops"]] == \
                ["GET", "GET", "meta-refresh"]
            assert first[doi["js"]].record["resolution"]["hops"][-1]["method"] == "javascript"
            rec = first[doi["hops"]].record
            assert rec["citation_doi_present"] and rec["body_has_identifier"] and rec["content_type"].startswith(
                "text/html")
            assert first[doi["js"]].record["has_schema_org"]
            # HEAD beside GET (doi.head_check): the landing URL answered both alike here
            assert land.heads[doi["hops"]] == 1 and rec["head_status"] == 200 and rec["head_disagrees"] is None
            assert chain["head"]["final_url"] == land.landing(doi["hops"])
            assert "10.5555/unknown" not in land.heads and first["10.5555/unknown"].record["head_status"] is None

            # -- WARC records and events --------------------------------------------------
            events = [m for k, m in sent if k == "event"]
            assert len(events) == len(arts) - 1 + 1  # every answer (the unknown DOI's 404 too), not the timeout
            for ev in events:
                parsed = parse_driftline(ev)
                assert parsed.url == ev["url"]
                uri, payload, typ = _read_warc(Path(cfg.doi.warc_dir) / ev["warc_filename"], ev["warc_offset"])
                assert typ == "response" and uri == ev["url"] and len(payload) == ev["content_length"]
            ev = next(e for e in events if e.get("doi") == doi["hops"])
            assert ev["extra"]["expected_title"] == arts["hops"].title
            assert ev["watch"] == {"id": f"doi:{doi['hops']}", "name": arts["hops"].title, "interval_s": 86400}
            assert ev["extra"]["resolution"]["redirects"] == 3

            # -- the pages change ---------------------------------------------------------
            land.pages[doi["para"]] = Page(dp.atypon(dp.replace_paragraph(arts["para"], 2), 0))
            land.pages[doi["comments"]] = Page(dp.highwire(dp.with_comments(arts["comments"], 9), 0))
            land.pages[doi["redesign"]] = Page(dp.elsevier(arts["redesign"], 2))
            land.pages[doi["challenge"]] = Page(dp.challenge(0), status=503)
            land.pages[doi["owner"]] = Page(dp.parked(0))
            land.pages[doi["moved"]] = Page(dp.atypon(arts["moved"], 2), host="b")
            land.pages[doi["pdf"]] = Page(dp.article_pdf(dp.replace_paragraph(arts["pdf"], 0)),
                                          content_type="application/pdf")
            land.pages[doi["wall"]] = Page(dp.consent_wall(0))
            land.throttle[doi["slow"]] = [429]
            land.hit_times.clear()
            sent.clear()
            second = {r.doi: r for r in await check_all(mon)}
            change = {n: second[d].record["change"] for n, d in doi.items()}
            assert change["para"] == "drifted" and "paragraph" in second[doi["para"]].reason
            assert change["comments"] == "unchanged"
            assert change["redesign"] in ("unchanged", "layout")
            assert change["hops"] == change["refresh"] == "unchanged"
            assert second[doi["challenge"]].outcome == "blocked" and change["challenge"] == "blocked"
            assert change["owner"] == "gone" and "parked" in second[doi["owner"]].reason
            assert second[doi["moved"]].outcome == "redirected_elsewhere" and change["moved"] == "moved"
            assert change["pdf"] == "drifted"
            assert second[doi["wall"]].outcome == "blocked" and "cookie wall" in second[doi["wall"]].reason
            # 429 + Retry-After: 1 -> the publisher was asked again only after a second, then it answered
            assert second[doi["slow"]].outcome == "resolved"
            t = land.hit_times[doi["slow"]]
            assert len(t) == 2 and t[1] - t[0] >= 0.95
            # a second timeout in a row -> one alert
            alerts = [m for k, m in sent if k == "alert"]
            assert sorted((a["doi"], a["kind"], a["failures"]) for a in alerts) == [
                ("10.5555/timeout", "timeout", 2), ("10.5555/unknown", "not_found", 2)]
            st = mon.registry.state(doi["para"])
            assert st is not None and st.first_drift is not None

            # -- round 3: the blocked DOI is retried through the browser next time (none here: recorded) -
            rows = {r["doi"]: r for r in status_rows(mon.registry)}
            assert rows[doi["para"]]["change"] == "drifted" and rows[doi["para"]]["first_drift"]
            assert rows[doi["timeout"]]["outcome"] == "timeout" and rows[doi["timeout"]]["failures"] == 2
            assert rows["10.5555/unknown"]["outcome"] == "not_found"

            # -- served over HTTP as JSON, with the metrics ----------------------------------
            from tests.conftest import free_port

            async with serve_status(mon, "127.0.0.1", free_port()) as url:
                assert url is not None
                async with aiohttp.ClientSession() as s:
                    async with s.get(f"{url}/doi/status") as resp:
                        served = await resp.json()
                    async with s.get(f"{url}/doi/check/{doi['para']}") as resp:
                        checks = (await resp.json())["checks"]
                    async with s.get(f"{url}/metrics") as resp:
                        metrics = await resp.text()
            assert {r["doi"] for r in served} == set(rows)
            assert [c["change"] for c in checks] == ["drifted", "baseline"]
            assert checks[0]["redirect_count"] == 1 and checks[0]["latency_s"] > 0
            assert 'driftline_doi_checks_total{outcome="timeout"} 2.0' in metrics
            assert "driftline_doi_drifted" in metrics and "driftline_doi_resolution_seconds_bucket" in metrics


async def test_invalid_doi_is_an_outcome(tmp_path: Path) -> None:
    async with landscape() as land:
        cfg = load_config(overrides=doi_config(land, tmp_path))
        async with open_monitor(cfg) as mon:
            r = await mon.check(DoiEntry("not-a-doi"))
            assert r.outcome == "invalid_doi" and r.state is not None and r.state.failures == 1


async def test_stop_lets_checks_under_way_finish_and_cuts_short_without_a_traceback(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A shutdown must not lose the check under way (the job store already holds the next run):
    stop() waits for it; past its drain time it cuts it short with a warning, not an ERROR."""
    import logging

    from watcher.doi.schedule import DoiScheduler

    a = dp.article(91)
    async with landscape() as land:
        land.pages["10.5555/slow"] = Page(dp.highwire(replace(a, doi="10.5555/slow"), 0), delay_s=1.5)
        cfg = load_config(overrides=doi_config(land, tmp_path))
        async with open_monitor(cfg) as mon:
            mon.registry.add([DoiEntry("10.5555/slow", a.title, interval_s=3600)])
            for drain_s, cut_expected in ((10.0, 0), (0.2, 1)):
                sched = DoiScheduler(cfg, mon)
                sched.start()
                for job in sched.scheduler.get_jobs():
                    job.modify(next_run_time=datetime.now(UTC))  # due now
                before = land.hits.get("10.5555/slow", 0)
                while land.hits.get("10.5555/slow", 0) == before:  # the GET is under way
                    await asyncio.sleep(0.05)
                caplog.clear()
                with caplog.at_level(logging.INFO):
                    cut = await sched.stop(drain_s)
                assert cut == cut_expected
                assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
                checks = mon.registry.checks("10.5555/slow")
                if cut_expected == 0:
                    assert checks and checks[-1]["outcome"] == "resolved"  # it finished and was recorded
                    recorded = len(checks)
                else:
                    assert "cut short by shutdown" in caplog.text
                    assert len(checks) == recorded  # the cut check left no half record


@pytest.mark.kafka
async def test_scheduler_produces_to_the_broker_and_survives_a_restart(tmp_path: Path, kafka_broker: Any,
                                                                      kafka_names: Any) -> None:
    from consumers.client import read_topic
    from consumers.doi import serve_monitor
    from watcher.doi.registry import open_registry
    from watcher.doi.schedule import DoiScheduler

    bootstrap = kafka_broker.bootstrap_servers
    arts = [dp.article(i + 80) for i in range(3)]
    async with landscape() as land:
        for i, a in enumerate(arts):
            land.pages[f"10.5555/s{i}"] = Page(dp.highwire(replace(a, doi=f"10.5555/s{i}"), 0))
        overlay = doi_config(land, tmp_path, events_topic=kafka_names.topic("doi"))
        overlay["kafka"] = {"bootstrap_servers": bootstrap, "embedded_broker": False,
                            "alerts_topic": kafka_names.topic("alerts"), "partitions": 2}
        from tests.conftest import free_port

        status_port = free_port()
        overlay["doi"]["status_port"] = status_port  # the probes of the shipped deployments
        cfg = load_config(overrides=overlay)
        with open_registry(cfg.store) as reg:
            reg.add([DoiEntry(f"10.5555/s{i}", a.title, interval_s=2) for i, a in enumerate(arts)])
        stop = asyncio.Event()
        task = asyncio.create_task(serve_monitor(cfg, stop=stop))

        async def wait_for(cond: Any, timeout_s: float = 90.0) -> None:
            deadline = asyncio.get_running_loop().time() + timeout_s
            while not await asyncio.to_thread(cond):
                assert asyncio.get_running_loop().time() < deadline, "timed out"
                assert not task.done(), task
                await asyncio.sleep(0.5)

        def checks_of(doi: str) -> int:
            with open_registry(cfg.store) as reg:
                return len(reg.checks(doi))

        def state_change(doi: str) -> str | None:
            with open_registry(cfg.store) as reg:
                st = reg.state(doi)
            return st.change if st else None

        await wait_for(lambda: all(checks_of(f"10.5555/s{i}") >= 2 for i in range(3)))
        # /healthz and /readyz (the scheduler runs) answer 200 for the containers' probes
        async with aiohttp.ClientSession() as http:
            for probe in ("healthz", "readyz"):
                async with http.get(f"http://127.0.0.1:{status_port}/{probe}") as resp:
                    assert resp.status == 200, probe
        land.pages["10.5555/s1"] = Page(dp.highwire(replace(dp.replace_paragraph(arts[1], 1), doi="10.5555/s1"), 0))
        await wait_for(lambda: state_change("10.5555/s1") == "drifted")
        stop.set()
        assert await asyncio.wait_for(task, 30) == 0
        msgs = await read_topic(bootstrap, kafka_names.topic("doi"), timeout_s=30, idle_s=5.0)
        times: dict[str, list[float]] = {}
        for m in msgs:
            ev = parse_driftline(m["value"])
            assert m["key"] == m["value"]["doi"]
            times.setdefault(m["value"]["doi"], []).append(ev.timestamp.timestamp())
        # several checks of each DOI at a 2 s interval, none doubled (consecutive ones an interval apart)
        assert sorted(times) == ["10.5555/s0", "10.5555/s1", "10.5555/s2"]
        for t in times.values():
            t.sort()
            assert len(t) >= 2, times
            assert all(b - a >= 0.5 for a, b in itertools.pairwise(t)), times  # times are after resolution
        last = [m["value"] for m in msgs if m["value"]["doi"] == "10.5555/s1"][-1]
        assert last["extra"]["change"] == "drifted"

        # A restart keeps the schedule: the same jobs, their next run times as stored.
        async with open_monitor(cfg) as mon:
            sched = DoiScheduler(cfg, mon)
            before = {j.id: j.next_run_time for j in sched.scheduler._lookup_jobstore("default").get_all_jobs()}
            sched.scheduler.start(paused=True)
            counts = sched.sync()
            after = sched.next_runs()
            sched.shutdown()
        assert counts["added"] == 0 and counts["removed"] == 0 and len(after) == 3
        assert {f"doi:{d}": t for d, t in after.items()} == before
        with open_registry(cfg.store) as reg:
            rows = status_rows(reg)
        assert {r["doi"]: r["change"] for r in rows}["10.5555/s1"] == "drifted"


def test_cli_status_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from datetime import UTC, datetime

    from watcher.cli import main
    from watcher.config import StoreConfig
    from watcher.doi.registry import open_registry

    db = tmp_path / "s.db"
    monkeypatch.setenv("DRIFTLINE__STORE__PATH", str(db))
    with open_registry(StoreConfig(path=str(db))) as reg:
        reg.add([DoiEntry("10.5555/a"), DoiEntry("10.5555/b")])
        reg.record_check("10.5555/a", datetime(2026, 1, 2, tzinfo=UTC), "resolved",
                         {"http_status": 200, "final_url": "https://p.example/a", "change": "drifted",
                          "reason": "1 of 5 paragraphs changed"})
    assert main(["doi", "status", "-f", "csv", "-o", str(tmp_path / "s.csv")]) == 0
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert lines[0] == "doi,last_check,outcome,http_status,final_url,change,first_drift,reason,failures"
    assert lines[1] == ("10.5555/a,2026-01-02T00:00:00Z,resolved,200,https://p.example/a,drifted,"
                        "2026-01-02T00:00:00Z,1 of 5 paragraphs changed,0")
    assert main(["doi", "status"]) == 0
    out = capsys.readouterr().out
    assert "10.5555/b" in out and "pending" in out


def js_only(a: dp.Article) -> str:
    """A script-built landing page: an empty shell whose script writes the article (Elsevier-like DOM)."""
    inner = dp.elsevier(a, 0)
    body = inner[inner.index("<body>") + 6: inner.index("</body>")]
    head = inner[inner.index("<head>") + 6: inner.index("</head>")]
    script = json.dumps(body).replace("</", "<\\/")  # no "</script>" inside the script
    return ("<!DOCTYPE html><html><head>" + head + "</head><body><div id='root'></div>"
            "<script src='/a.js'></script><script src='/b.js'></script>"
            f"<script>document.getElementById('root').innerHTML = {script};</script></body></html>")


@pytest.mark.browser
async def test_js_only_landing_page_is_rendered_by_chromium(tmp_path: Path, chromium_path: Path) -> None:
    a = replace(dp.article(90), doi="10.5555/js-only")
    async with landscape() as land:
        land.pages[a.doi] = Page(js_only(a))
        overlay = doi_config(land, tmp_path)
        overlay["render"] = {"enabled": True, "executable_path": str(chromium_path), "pages": 1, "timeout_s": 15.0,
                             "settle_s": 0.5}
        cfg = load_config(overrides=overlay)
        land.pages["10.5555/wall"] = Page(dp.challenge(0), status=503)
        async with open_monitor(cfg) as mon:
            mon.registry.add([DoiEntry(a.doi, a.title)])
            (r,) = await check_all(mon)
            # A bot challenge: blocked, then retried through the browser on the next check.
            mon.registry.add([DoiEntry("10.5555/wall", "Walled")])
            first = await mon.check_doi("10.5555/wall")
            second = await mon.check_doi("10.5555/wall")
        assert first is not None and first.outcome == "blocked" and first.record["browser"] is False
        assert second is not None and second.record["browser"] is True and second.outcome == "blocked"
    assert r.outcome == "resolved" and r.record["browser"] is True
    assert r.record["resolution"]["hops"][-1]["method"] == "browser"
    assert r.record["change"] == "baseline"  # the rendered page carries the record
    assert r.warc is not None
    _, payload, _ = _read_warc(Path(cfg.doi.warc_dir) / r.warc.filename, r.warc.offset)
    assert a.title.encode() in payload and b"id=\"body\"" in payload  # the event points at the rendered DOM


async def test_status_change_is_the_watchers_verdict_with_one_baseline_per_doi(tmp_path: Path) -> None:
    """One state, one step: the change class a check records is the verdict the watcher stored for the
    check's capture; the capture event (what the streaming watcher consumes) has the same verdict id, so
    a watcher on the same store finds it scored and scores nothing again, and a watcher on another store
    replaying the events reaches the same change classes.  One baseline per DOI history, none under the
    landing URL's key; a bot wall first is blocked, not a baseline."""
    from watcher.canonical import url_key
    from watcher.doi.monitor import history_of
    from watcher.engine import Engine
    from watcher.store import open_store
    from watcher.watch import Watcher

    names = ["para", "redesign", "walled", "owner"]
    arts = {n: replace(dp.article(60 + i, full_text=True), doi=f"10.5555/one-{n}") for i, n in enumerate(names)}
    doi = {n: a.doi for n, a in arts.items()}
    async with landscape() as land:
        land.pages.update({
            doi["para"]: Page(dp.atypon(arts["para"], 0)),
            doi["redesign"]: Page(dp.elsevier(arts["redesign"], 0)),
            doi["walled"]: Page(dp.challenge(0)),
            doi["owner"]: Page(dp.ojs(arts["owner"], 0)),
        })
        cfg = load_config(overrides=doi_config(land, tmp_path))
        events = _Events()
        async with open_monitor(cfg, events.emit) as mon:
            mon.registry.add([DoiEntry(d, arts[n].title) for n, d in doi.items()])
            results = list(await check_all(mon))
            first = {r.doi: r for r in results}
            assert first[doi["walled"]].record["change"] == "blocked"
            assert mon.watcher.store.get_state(history_of(doi["walled"])).baseline is None
            land.pages[doi["para"]] = Page(dp.atypon(dp.replace_paragraph(arts["para"], 1), 0))
            land.pages[doi["redesign"]] = Page(dp.elsevier(arts["redesign"], 2))
            land.pages[doi["walled"]] = Page(dp.highwire(arts["walled"], 0))
            land.pages[doi["owner"]] = Page(dp.parked(0))
            second = list(await check_all(mon))
            results += second
            changes = {r.doi: r.record["change"] for r in second}
            assert changes == {doi["para"]: "drifted", doi["redesign"]: changes[doi["redesign"]],
                               doi["walled"]: "baseline", doi["owner"]: "gone"}
            assert changes[doi["redesign"]] in ("unchanged", "layout")
            rows = {r["doi"]: r for r in status_rows(mon.registry)}
            store = mon.watcher.store
            for r in results:
                stored = store.get_verdict(r.record["verdict_id"])
                assert stored is not None and stored.change == r.record["change"] and stored.profile == "doi"
                assert stored.history == history_of(r.doi)
            for r in second:
                assert rows[r.doi]["change"] == r.record["change"]

            # -- the streaming watcher's path: the same events, the same store ----------------------
            assert len(events) == len(results)
            same_store = Watcher(Engine(cfg.engine), store)
            with open_store(cfg.store.model_copy(update={"backend": "memory"})) as other_store:
                other = Watcher(Engine(cfg.engine), other_store)
                by_check = {(r.doi, r.record["checked_at"]): r for r in results}
                for ev in events:  # in the order produced (one DOI's in check order, as on its partition)
                    r = by_check[(ev["doi"], ev["timestamp"])]
                    parsed = parse_driftline(ev)
                    assert parsed.history_key(cfg) == history_of(r.doi)
                    _, payload, _ = _read_warc(Path(cfg.doi.warc_dir) / ev["warc_filename"], ev["warc_offset"])
                    cap = parsed.to_capture(payload, source="warc")
                    out = same_store.score(cap, same_store.job_for(cap, "doi"))
                    assert not out.stored_now and out.verdict.verdict_id == r.record["verdict_id"]
                    assert out.verdict.change == r.record["change"]
                    again = other.score(cap, other.job_for(cap, "doi"))
                    assert again.stored_now and again.verdict.verdict_id == r.record["verdict_id"]
                    assert again.verdict.change == r.record["change"], (r.doi, again.verdict.reason)

            # -- one baseline per DOI history; none under the landing URLs' keys ---------------------
            for n, d in doi.items():
                verdicts = store.recent_verdicts(history_of(d), 100)
                assert len(verdicts) == 2
                assert sum(1 for v in verdicts if v.change == "baseline") == 1, n
                assert store.get_state(history_of(d)).baseline is not None
                landing = rows[d]["final_url"]
                assert store.get_state(url_key(landing, cfg.engine.canonical)).baseline is None
                assert store.get_state(f"doi:{d}").baseline is not None


@pytest.mark.kafka
async def test_streaming_watcher_publishes_the_monitors_verdicts_without_rescoring(
        tmp_path: Path, kafka_broker: Any, kafka_names: Any) -> None:
    """The capture events on the DOI topic, consumed by the real streaming watcher (profile doi): on the
    monitor's store it publishes exactly the verdicts the monitor stored (same ids and change classes,
    nothing stored twice); on a store of its own it reaches the same change classes with the same step."""
    from consumers.app import ConsumerApp
    from consumers.client import produce, read_topic
    from tests.fixtures.kafka import stream_config
    from watcher.doi.monitor import history_of
    from watcher.store import open_store

    names = ["para", "walled", "owner"]
    arts = {n: replace(dp.article(100 + i, full_text=True), doi=f"10.5555/k-{n}") for i, n in enumerate(names)}
    doi = {n: a.doi for n, a in arts.items()}
    boot = kafka_broker.bootstrap_servers
    topic = kafka_names.topic("doi")
    async with landscape() as land:
        land.pages.update({doi["para"]: Page(dp.atypon(arts["para"], 0)), doi["walled"]: Page(dp.challenge(0)),
                           doi["owner"]: Page(dp.ojs(arts["owner"], 0))})
        overlay = doi_config(land, tmp_path, events_topic=topic)
        cfg = load_config(overrides=overlay)
        events = _Events()
        async with open_monitor(cfg, events.emit) as mon:
            mon.registry.add([DoiEntry(d, arts[n].title) for n, d in doi.items()])
            results = list(await check_all(mon))
            land.pages[doi["para"]] = Page(dp.atypon(dp.replace_paragraph(arts["para"], 1), 0))
            land.pages[doi["walled"]] = Page(dp.highwire(arts["walled"], 0))
            land.pages[doi["owner"]] = Page(dp.parked(0))
            results += list(await check_all(mon))
    monitor_says = {r.record["verdict_id"]: r.record["change"] for r in results}
    assert sorted(monitor_says.values()) == sorted(["baseline", "blocked", "baseline", "drifted", "baseline", "gone"])
    await produce(boot, topic, [json.dumps(e).encode() for e in events])

    for own_store in (False, True):
        store_path = tmp_path / ("own.db" if own_store else "doi.db")
        sc = stream_config(boot, kafka_names, tmp_path, kafka={
            "input_topics": {topic: "driftline"}, "topic_profiles": {topic: "doi"},
            "group_id": f"{kafka_names.group}-{int(own_store)}",
            "results_topic": kafka_names.topic(f"verdicts{int(own_store)}")},
            extra={"store": {"backend": "sqlite", "path": str(store_path)},
                   "doi": {"events_topic": topic, "warc_dir": cfg.doi.warc_dir}})
        async with ConsumerApp(sc) as app:
            verdicts = await read_topic(boot, sc.kafka.results_topic, expect=len(events), timeout_s=90)
            assert await app.wait_caught_up(timeout_s=30)
            dead = await read_topic(boot, sc.kafka.dead_letter_topic, timeout_s=5, idle_s=0.5)
            scored = app.metrics.registry.get_sample_value("driftline_stage_seconds_count", {"stage": "score"})
        assert dead == []
        # on the monitor's store every check was already scored: the stream scored none again
        assert (scored or 0) == (len(events) if own_store else 0), (own_store, scored)
        stream_says = {v["value"]["verdict_id"]: v["value"]["change"] for v in verdicts}
        assert stream_says == monitor_says, own_store
        assert all(v["key"] == v["value"]["history"] and v["value"]["history"].startswith("doi:") for v in verdicts)
        with open_store(sc.store) as store:
            for d in doi.values():
                stored = store.recent_verdicts(history_of(d), 100)
                assert len(stored) == 2 and sum(1 for v in stored if v.change == "baseline") == 1


async def test_readyz_says_whether_the_scheduler_runs(tmp_path: Path) -> None:
    """/readyz is the Kubernetes readiness probe of deploy/k8s/doi: 503 while the scheduler is not
    running, 200 once it runs; /healthz answers either way (liveness)."""
    from tests.conftest import free_port
    from watcher.doi.schedule import DoiScheduler

    async with landscape() as land:
        cfg = load_config(overrides=doi_config(land, tmp_path))
        async with open_monitor(cfg) as mon:
            sched = DoiScheduler(cfg, mon)
            async with serve_status(mon, "127.0.0.1", free_port(), lambda: bool(sched.scheduler.running)) as url, \
                    aiohttp.ClientSession() as http:
                async def codes() -> tuple[int, int]:
                    async with http.get(f"{url}/healthz") as h, http.get(f"{url}/readyz") as r:
                        return h.status, r.status

                assert await codes() == (200, 503)
                sched.start(paused=True)
                try:
                    assert await codes() == (200, 200)
                finally:
                    sched.shutdown()
                assert await codes() == (200, 503)
