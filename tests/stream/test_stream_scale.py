"""Scale-out: three consumers in one group share a six-partition topic."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from consumers.app import ConsumerApp
from consumers.client import produce
from tests.fixtures.kafka import KafkaNames, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker
from watcher.canonical import url_key
from watcher.store import open_store

pytestmark = pytest.mark.kafka


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_three_consumers_score_every_event_exactly_once(kafka_broker: EmbeddedBroker, kafka_names: KafkaNames,
                                                              tmp_path: Path, backend: str,
                                                              request: pytest.FixtureRequest) -> None:
    """With SQLite the three share one file (one machine); with PostgreSQL they
    share a database server, as consumers on several machines do."""
    n = 240
    store_cfg: dict[str, object] = {}
    if backend == "postgres":
        store_cfg = {"store": {"backend": "postgres", "dsn": request.getfixturevalue("postgres_dsn")}}
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    refs = write_warc(warcs / "SCALE-00001.warc.gz",
                      [(f"http://s{i}.scale.example.org/", "20240101000000", page_html(i)) for i in range(n)])
    cfgs = [stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, partitions=6,
                          warc_dirs=(str(warcs),), extra=store_cfg) for _ in range(3)]
    apps = [ConsumerApp(c) for c in cfgs]
    for app in apps:
        await app.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait for the group to settle over all three
            owned = [app.scorer.assignment() if app.scorer else set() for app in apps]
            if all(owned) and sum(len(o) for o in owned) == 6:
                break
            await asyncio.sleep(0.2)
        assert all(owned), f"not every consumer got partitions: {[len(o) for o in owned]}"
        await produce(kafka_broker.bootstrap_servers, next(iter(cfgs[0].kafka.input_topics)),
                      [heritrix_message(r) for r in refs])
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and sum(a.verdicts for a in apps) < n:
            await asyncio.sleep(0.2)
        for app in apps:
            assert await app.wait_caught_up(timeout_s=30)
        per_app = [a.verdicts for a in apps]
    finally:
        for app in apps:
            await app.stop()
    store = open_store(cfgs[0].store)
    try:
        counts = [len(store.recent_verdicts(url_key(r.url), 10)) for r in refs]
    finally:
        store.close()
    assert counts == [1] * n
    assert sum(per_app) == n, f"some events were scored twice: {per_app}"
    assert sum(1 for c in per_app if c) == 3, f"work was not shared: {per_app}"
