"""Crawl-stop recommendations, against the real SQLite store."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from watcher.canonical import url_key
from watcher.config import RecommendConfig, StoreConfig
from watcher.events.model import CaptureEvent
from watcher.model import ChangeClass, TopicStatus, Verdict, verdict_id
from watcher.recommend import Recommendation, Recommender, recommendation_id
from watcher.store import BaselineStore, open_store

SEED = "https://www.example-ngo.org/"
T0 = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[BaselineStore]:
    s = open_store(StoreConfig(backend="sqlite", path=str(tmp_path / "rec.db")))
    yield s
    s.close()


def make_verdict(
    i: int, status: TopicStatus, *, url: str = SEED, seed: str | None = SEED, page_kind: str | None = None
) -> Verdict:
    history = url_key(url)
    t = T0 + timedelta(days=7 * i)
    digest = f"sha1:{i:032d}"
    changes: dict[str, ChangeClass] = {"on-topic": "minor", "off-topic": "off-topic", "baseline": "baseline"}
    change = changes.get(status, "error")
    return Verdict(
        verdict_id=verdict_id(history, t, digest),
        history=history,
        url=url,
        capture_time=t,
        uri_m=None,
        digest=digest,
        baseline_time=T0,
        baseline_uri_m=None,
        measures={},
        status=status,
        change=change,
        reason=f"capture {i} {status}",
        page_kind=page_kind,
        seed=seed,
        job="weekly-ngo",
    )


def event_for(
    v: Verdict, *, seed: str | None = SEED, hop_path: str | None = "", crawler: str = "heritrix"
) -> CaptureEvent:
    return CaptureEvent(url=v.url, timestamp=v.capture_time, seed=seed, hop_path=hop_path, job="weekly-ngo",
                        crawler=crawler)


def feed(rec: Recommender, store: BaselineStore, statuses: Sequence[TopicStatus]) -> list[Recommendation | None]:
    """Store and observe one verdict per status, in order (as the Watcher does)."""
    out: list[Recommendation | None] = []
    for i, status in enumerate(statuses):
        v = make_verdict(i, status)
        store.put_verdict(v)
        out.append(rec.observe(v, event_for(v)))
    return out


def test_step_function_on_fires_once_at_the_nth_consecutive(store: BaselineStore) -> None:
    rec = Recommender(RecommendConfig(consecutive_off_topic=3), store)
    got = feed(rec, store, ["baseline", "on-topic", "off-topic", "off-topic", "off-topic", "off-topic", "off-topic"])
    fired = [(i, r) for i, r in enumerate(got) if r is not None]
    assert [i for i, _ in fired] == [4]
    r = fired[0][1]
    assert r.action == "stop-seed"
    assert r.seed == SEED and r.job == "weekly-ngo" and r.crawler == "heritrix"
    assert r.since == T0 + timedelta(days=14)  # the first off-topic capture of the run
    assert len(r.captures) == 3
    assert r.captures[-1] == make_verdict(4, "off-topic").verdict_id
    assert r.id == recommendation_id(url_key(SEED), r.captures[-1])
    assert r.surt_prefix == "http://(org,example-ngo,"
    assert "engine/job/weekly-ngo/script" in r.what_to_do and "http://(org,example-ngo," in r.what_to_do
    data = json.loads(r.to_json())
    assert data["since"] == "2024-01-15T00:00:00Z" and data["action"] == "stop-seed"
    assert Recommendation.from_dict(data) == r


def test_oscillating_history_is_not_stopped(store: BaselineStore) -> None:
    rec = Recommender(RecommendConfig(consecutive_off_topic=3), store)
    got = feed(rec, store, ["baseline", "off-topic", "on-topic", "off-topic", "off-topic", "on-topic", "off-topic"])
    assert got == [None] * 7


def test_new_run_after_recovery_fires_again_with_a_new_id(store: BaselineStore) -> None:
    rec = Recommender(RecommendConfig(consecutive_off_topic=2), store)
    got = feed(rec, store, ["baseline", "off-topic", "off-topic", "off-topic", "on-topic", "off-topic", "off-topic"])
    fired = [r for r in got if r is not None]
    assert [got.index(r) for r in fired] == [2, 6]
    assert fired[0].id != fired[1].id


def test_restart_and_redelivery_give_the_same_id(store: BaselineStore) -> None:
    statuses: list[TopicStatus] = ["baseline", "off-topic", "off-topic", "off-topic"]
    first = Recommender(RecommendConfig(consecutive_off_topic=3), store)
    got = feed(first, store, statuses)
    assert got[3] is not None
    # A new process (no memory) re-delivered the same capture: same id, so downstream deduplicates.
    again = Recommender(RecommendConfig(consecutive_off_topic=3), store)
    v3 = make_verdict(3, "off-topic")
    redo = again.observe(v3, event_for(v3))
    assert redo is not None and redo.id == got[3].id
    # ... and the same process does not publish it twice.
    assert again.observe(v3, event_for(v3)) is None


def test_late_capture_inside_the_run_keeps_the_id(store: BaselineStore) -> None:
    rec = Recommender(RecommendConfig(consecutive_off_topic=3), store)
    order = [0, 1, 3, 2]  # capture 2 arrives after capture 3
    statuses: dict[int, TopicStatus] = {0: "baseline", 1: "off-topic", 2: "off-topic", 3: "off-topic"}
    results = {}
    for i in order:
        v = make_verdict(i, statuses[i])
        store.put_verdict(v)
        results[i] = rec.observe(v, event_for(v))
    assert results[3] is None  # only 2 consecutive when it arrived
    assert results[2] is not None
    assert results[2].captures[-1] == make_verdict(3, "off-topic").verdict_id


def test_non_seed_pages_are_not_recommended(store: BaselineStore) -> None:
    rec = Recommender(RecommendConfig(consecutive_off_topic=2), store)
    page = "https://www.example-ngo.org/news/2023/report.html"
    run: list[TopicStatus] = ["baseline", "off-topic", "off-topic"]
    for i, status in enumerate(run):
        v = make_verdict(i, status, url=page)
        store.put_verdict(v)
        assert rec.observe(v, event_for(v, hop_path="L")) is None
    # With seeds_only off the same history does fire.
    anyway = Recommender(RecommendConfig(consecutive_off_topic=2, seeds_only=False), store)
    v = make_verdict(2, "off-topic", url=page)
    r = anyway.observe(v, event_for(v, hop_path="L"))
    assert r is not None and r.history == url_key(page)


def test_seed_recognised_without_event_from_verdict_seed(store: BaselineStore) -> None:
    rec = Recommender(RecommendConfig(consecutive_off_topic=2), store)
    run: list[TopicStatus] = ["baseline", "off-topic"]
    for i, status in enumerate(run):
        store.put_verdict(make_verdict(i, status, url="http://example-ngo.org", seed=SEED))
    v = make_verdict(2, "off-topic", url="http://example-ngo.org", seed=SEED)
    store.put_verdict(v)
    r = rec.observe(v)
    assert r is not None and r.crawler is None
    assert "Heritrix" in r.what_to_do and "brozzler-stop-crawl" in r.what_to_do


def test_an_error_capture_breaks_a_run(store: BaselineStore) -> None:
    rec = Recommender(RecommendConfig(consecutive_off_topic=3), store)
    got = feed(rec, store, ["baseline", "off-topic", "off-topic", "error", "off-topic", "off-topic"])
    assert got == [None] * 6


def test_a_capture_with_no_content_inside_a_run_neither_counts_nor_breaks_it(store: BaselineStore) -> None:
    """An empty capture says nothing about topic (status ``empty``): the run goes on through it, and a
    stop needs three captures judged off topic."""
    rec = Recommender(RecommendConfig(consecutive_off_topic=3), store)
    got = feed(rec, store, ["baseline", "off-topic", "empty", "off-topic", "off-topic"])
    assert [i for i, r in enumerate(got) if r is not None] == [4]  # not at 3: the empty one is no observation
    r = got[4]
    assert r is not None and r.captures == tuple(make_verdict(i, "off-topic").verdict_id for i in (1, 3, 4))


def test_long_run_then_recovery_scans_beyond_the_first_window(store: BaselineStore) -> None:
    rec = Recommender(RecommendConfig(consecutive_off_topic=2), store)
    run: list[TopicStatus] = ["off-topic"] * 12
    got = feed(rec, store, ["baseline", *run])
    assert [i for i, r in enumerate(got) if r is not None] == [2]
    # A late re-delivery of capture 1 (deep in the 12-long run) maps to the same id.
    fresh = Recommender(RecommendConfig(consecutive_off_topic=2), store)
    v1 = make_verdict(1, "off-topic")
    again = fresh.observe(v1, event_for(v1))
    first = next(r for r in got if r is not None)
    assert again is not None and again.id == first.id
    # ... while capture 9 of that run gives nothing.
    v9 = make_verdict(9, "off-topic")
    assert fresh.observe(v9, event_for(v9)) is None


def test_brozzler_instructions(store: BaselineStore) -> None:
    rec = Recommender(RecommendConfig(consecutive_off_topic=1), store)
    store.put_verdict(make_verdict(0, "baseline"))
    v = make_verdict(1, "off-topic", page_kind="parked")
    store.put_verdict(v)
    ev = CaptureEvent(url=v.url, timestamp=v.capture_time, seed=SEED, crawler="warcprox",
                      extra={"site_id": "5f2c9a", "crawl_id": "manual-20240101-abc"})
    r = rec.observe(v, ev)
    assert r is not None
    assert r.page_kind == "parked" and "parked" in r.reason
    assert r.site_id == "5f2c9a" and r.crawl_id == "manual-20240101-abc"
    assert "brozzler-stop-crawl --site=" in r.what_to_do
    assert '{"domain": "example-ngo.org"}' in r.what_to_do and "Heritrix" not in r.what_to_do
