"""A pin made on the review page reaches the stream's readers: the versions it re-scored go from
the store's outbox to the results topic of the `driftline run` that shares the store, once.

Real Tansu broker, real SQLite store shared by the consumer app and the review's re-scoring."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker
from watcher.review.rescore import pin_baseline
from watcher.store.labels import review_data

pytestmark = pytest.mark.kafka
URL = "http://www.rights.example.org/report"


async def test_versions_a_pin_re_scored_are_published_once(
        kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    refs = write_warc(warcs / "JOB-20240101-00001.warc.gz", [
        (URL, "20240101000000", page_html(1)),
        (URL, "20240201000000", page_html(1, variant=1)),
        (URL, "20240301000000", page_html(0, off_topic=True)),
        (URL, "20240401000000", page_html(1, variant=2)),
    ])
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(warcs),),
                        extra={"review": {"republish_interval_s": 0.2}})
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    async with ConsumerApp(cfg) as app:
        for i, ref in enumerate(refs):
            await produce(boot, crawl, [heritrix_message(ref)])
            await read_topic(boot, k.results_topic, expect=i + 1, timeout_s=60)
        assert await app.wait_caught_up(timeout_s=30)
        assert app.store is not None
        store = app.store
        review = review_data(store)
        await asyncio.to_thread(review.sync)
        history = (await asyncio.to_thread(lambda: list(store.all_verdicts())))[0].history
        timeline = review.timeline(history)
        changed = await asyncio.to_thread(pin_baseline, app.store, review, timeline[1].verdict_id, cfg)
        assert changed and all(v.version == 2 for v in changed)
        want = {v.verdict_id for v in changed}
        got = await read_topic(boot, k.results_topic, expect=len(refs) + len(changed), timeout_s=30, idle_s=2.0)
        assert await asyncio.to_thread(review.owed) == []  # cleared once acknowledged
    values = [m["value"] if isinstance(m["value"], dict) else json.loads(m["value"]) for m in got]
    second = [v for v in values if v["version"] == 2]
    assert {v["verdict_id"] for v in second} == want
    assert len(second) == len(want)  # once each
    pinned = next(v for v in second if v["verdict_id"] == timeline[1].verdict_id)
    assert pinned["change"] == "baseline"
