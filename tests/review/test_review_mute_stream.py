"""A seed the curator muted in ``driftline review`` gets no alerts from the stream (real Tansu broker,
real SQLite store, real engine): its verdicts are still published; unmuted, it alerts again."""

from __future__ import annotations

from pathlib import Path

import pytest

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker
from watcher.store.labels import review_data

pytestmark = pytest.mark.kafka

A = "http://www.rights.example.org/report"


async def test_a_muted_seed_sends_no_alert(kafka_broker: EmbeddedBroker, kafka_names: KafkaNames,
                                           tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    base, off, off2 = write_warc(warcs / "MUTE-00001.warc.gz", [
        (A, "20240101000000", page_html(3)),
        (A, "20240301000000", page_html(0, off_topic=True)),
        (A, "20240401000000", page_html(0, off_topic=True, variant=1)),
    ])
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(warcs),))
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    async with ConsumerApp(cfg) as app:
        await produce(boot, crawl, [heritrix_message(base)])
        first = await read_topic(boot, k.results_topic, expect=1, timeout_s=60)
        seed = first[0]["value"]["seed"] or first[0]["value"]["url"]
        assert app.store is not None
        review = review_data(app.store)  # what `driftline review` does on "mute this seed"
        review.mute(seed, True)
        await produce(boot, crawl, [heritrix_message(off)])
        verdicts = await read_topic(boot, k.results_topic, expect=2, timeout_s=60)
        assert await app.wait_caught_up(timeout_s=30)
        muted_alerts = await read_topic(boot, k.alerts_topic, timeout_s=5, idle_s=1.0)
        review.mute(seed, False)
        await produce(boot, crawl, [heritrix_message(off2)])
        verdicts = await read_topic(boot, k.results_topic, expect=3, timeout_s=60)
        assert await app.wait_caught_up(timeout_s=30)
        alerts = await read_topic(boot, k.alerts_topic, timeout_s=10, idle_s=1.0)
    off_ids = [v["value"]["verdict_id"] for v in verdicts if v["value"]["status"] == "off-topic"]
    assert len(off_ids) == 2  # both off-topic verdicts were published
    assert muted_alerts == []  # muted: no alert for the first
    assert [a["value"]["verdict_id"] for a in alerts] == [off_ids[1]]  # unmuted: the second alerts
