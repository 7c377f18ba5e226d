"""End to end: Heritrix feed messages -> router -> scorer -> verdict/alert topics.

Real Tansu broker, real SQLite store, real engine, WARC records written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, WarcRef, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker

pytestmark = pytest.mark.kafka

A = "http://www.rights.example.org/report"
B = "http://news.example.net/page"


async def test_feed_to_verdicts_and_alerts(kafka_broker: EmbeddedBroker, kafka_names: KafkaNames,
                                           tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    base_a, base_b, minor_a, off_a = write_warc(warcs / "CRAWL-20240101-00001.warc.gz", [
        (A, "20240101000000", page_html(1)),
        (B, "20240101000500", page_html(2)),
        (A, "20240201000000", page_html(1, variant=1)),
        (A, "20240301000000", page_html(0, off_topic=True)),
    ])
    # Same digest as B's baseline, and its WARC does not exist: scoring it
    # must not fetch anything (a fetch would dead-letter it).
    same_b = WarcRef(B, "20240102000000", "NOT-THERE.warc.gz", 0, 0, base_b.digest)
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(warcs),))
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))

    async with ConsumerApp(cfg) as app:
        await produce(boot, crawl, [heritrix_message(base_a), heritrix_message(base_b),
                                    heritrix_message(url="dns:www.rights.example.org", mimetype="text/dns",
                                                     status_code=1, timestamp="2024-01-01T00:00:00Z")])
        first = await read_topic(boot, k.results_topic, expect=2, timeout_s=60)
        assert len(first) == 2
        # Later captures arrive after the baselines were scored (weeks apart in a real crawl).
        await produce(boot, crawl, [heritrix_message(minor_a), heritrix_message(same_b)])
        await read_topic(boot, k.results_topic, expect=4, timeout_s=60)
        await produce(boot, crawl, [heritrix_message(off_a)])
        verdicts = await read_topic(boot, k.results_topic, expect=5, timeout_s=60)
        assert await app.wait_caught_up(timeout_s=30)
        alerts = await read_topic(boot, k.alerts_topic, timeout_s=10, idle_s=1.0)
        dead = await read_topic(boot, k.dead_letter_topic, timeout_s=5, idle_s=0.5)
        skipped = app.metrics.events_skipped.labels(reason="dns")._value.get()

    assert dead == []
    assert skipped == 1
    assert len(verdicts) == 5
    by_time = {(v["value"]["url"], v["value"]["capture_time"]): v for v in verdicts}
    v_base_a = by_time[(A, "2024-01-01T00:00:00Z")]["value"]
    v_minor = by_time[(A, "2024-02-01T00:00:00Z")]["value"]
    v_off = by_time[(A, "2024-03-01T00:00:00Z")]["value"]
    v_same_b = by_time[(B, "2024-01-02T00:00:00Z")]["value"]
    assert v_base_a["change"] == "baseline"
    assert v_minor["status"] == "on-topic" and v_minor["change"] in ("unchanged", "minor")
    assert v_minor["baseline_time"] == "2024-01-01T00:00:00Z"
    assert v_off["status"] == "off-topic" and v_off["change"] in ("off-topic", "drifted")
    assert v_same_b["change"] == "unchanged"
    for v in verdicts:
        body = v["value"]
        assert v["key"] == body["history"]
        assert set(body) >= {"verdict_id", "history", "url", "capture_time", "baseline_time", "measures", "status",
                             "change", "reason", "page_kind", "seed", "job"}
    assert v_minor["measures"] and all(set(m) == {"name", "score", "status", "threshold"}
                                       for m in v_minor["measures"].values())
    # One history, one partition, in capture order.
    parts_a = {by_time[(A, t)]["partition"] for t in ("2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z",
                                                        "2024-03-01T00:00:00Z")}
    assert len(parts_a) == 1
    assert [a["value"]["verdict_id"] for a in alerts] == [v_off["verdict_id"]]
    assert alerts[0]["value"]["change"] == v_off["change"]


async def test_duplicate_event_sends_no_second_alert(kafka_broker: EmbeddedBroker, kafka_names: KafkaNames,
                                                     tmp_path: Path) -> None:
    """The same off-topic capture announced twice: one stored verdict, one alert."""
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    base, off = write_warc(warcs / "DUP-00001.warc.gz", [
        (A, "20240101000000", page_html(3)),
        (A, "20240301000000", page_html(0, off_topic=True)),
    ])
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(warcs),))
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    async with ConsumerApp(cfg) as app:
        await produce(boot, crawl, [heritrix_message(base)])
        await read_topic(boot, k.results_topic, expect=1, timeout_s=60)
        await produce(boot, crawl, [heritrix_message(off)])
        await read_topic(boot, k.results_topic, expect=2, timeout_s=60)
        await produce(boot, crawl, [heritrix_message(off)])
        verdicts = await read_topic(boot, k.results_topic, expect=3, timeout_s=60)
        assert await app.wait_caught_up(timeout_s=30)
        alerts = await read_topic(boot, k.alerts_topic, timeout_s=10, idle_s=1.0)
        assert app.store is not None
        stored = app.store.recent_verdicts(verdicts[0]["value"]["history"], 100)
    assert len(verdicts) == 3  # the re-sent verdict carries the same id
    assert len({v["value"]["verdict_id"] for v in verdicts}) == 2
    assert len(stored) == 2
    assert len(alerts) == 1
