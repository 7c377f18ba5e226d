"""The engine scores the demo histories as designed, and the recommender (over
the real SQLite store) stops exactly the Step-Function-On seeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watcher.canonical import url_key
from watcher.config import EngineConfig, RecommendConfig, StoreConfig
from watcher.demo import DemoCrawl, build_demo_warc
from watcher.engine import Engine
from watcher.events import parse_event
from watcher.model import Capture, HistoryResult
from watcher.recommend import Recommender
from watcher.store import open_store


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> DemoCrawl:
    return build_demo_warc(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def results(crawl: DemoCrawl) -> dict[str, HistoryResult]:
    engine = Engine(EngineConfig())
    out = {}
    for seed in crawl.seeds:
        caps = [
            Capture(url=r.url, timestamp=r.time, content=None if r.record_type == "revisit" else r.payload,
                    content_type="text/html; charset=UTF-8", status=200, digest=r.digest, seed=seed.url,
                    job="driftline-demo", is_revisit=r.record_type == "revisit")
            for r in crawl.records if r.url == seed.url
        ]
        out[seed.url] = engine.scan_history(url_key(seed.url), caps)
    return out


def test_flags_per_capture_match_the_design(crawl: DemoCrawl, results: dict[str, HistoryResult]) -> None:
    for seed in crawl.seeds:
        res = results[seed.url]
        flags = tuple(v.flagged for v in res.verdicts)
        assert flags == seed.off_topic, (seed.name, [(v.status, v.reason) for v in res.verdicts])
        assert res.behaviour == seed.behaviour, seed.name


def test_changing_boilerplate_is_minor_not_drift(crawl: DemoCrawl, results: dict[str, HistoryResult]) -> None:
    for seed in crawl.seeds:
        if seed.behaviour != "Always On":
            continue
        changes = [v.change for v in results[seed.url].verdicts]
        assert changes[0] == "baseline"
        assert set(changes[1:]) <= {"minor", "unchanged"}, (seed.name, changes)
    french = results[crawl.seeds[1].url].verdicts
    assert french[1].change == "unchanged"  # the revisit: same digest as the baseline
    assert {v.language for v in french if v.language} == {"fr"}


def test_page_kinds_are_recognised(crawl: DemoCrawl, results: dict[str, HistoryResult]) -> None:
    kinds = {seed.name: {v.page_kind for v in results[seed.url].verdicts if v.flagged} for seed in crawl.seeds}
    assert kinds["Harbourtown Public Library"] == {"parked"}
    assert kinds["City Jazz Festival"] == {"suspended"}
    assert kinds["Red Agua Andina"] == {"database-error"}


def test_recommendations_only_for_step_function_on(
    crawl: DemoCrawl, results: dict[str, HistoryResult], tmp_path: Path
) -> None:
    store = open_store(StoreConfig(backend="sqlite", path=str(tmp_path / "demo.db")))
    try:
        rec = Recommender(RecommendConfig(), store)
        issued: dict[str, list[int]] = {}
        raw_events = {(e["url"], e["start_time_plus_duration"][:14]): e for e in crawl.events}
        for seed in crawl.seeds:
            for i, v in enumerate(results[seed.url].verdicts):
                store.put_verdict(v)
                event = parse_event(json.dumps(raw_events[(v.url, v.capture_time.strftime("%Y%m%d%H%M%S"))]))
                r = rec.observe(v, event)
                if r is not None:
                    issued.setdefault(seed.name, []).append(i)
                    assert r.seed == seed.url and r.job == "driftline-demo" and r.crawler == event.crawler
        expected = {s.name: [4] for s in crawl.seeds if s.recommend}
        assert issued == expected
    finally:
        store.close()
