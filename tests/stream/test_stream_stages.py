"""Router and scorer as processes of their own (``kafka.stage``), on one real broker.

The two stages meet on the keyed topic: a lone router keeps no store and scores nothing, a lone
scorer reads only the keyed topic; together they publish what one ``all`` process publishes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker
from watcher.errors import ConfigError

pytestmark = pytest.mark.kafka

A = "http://www.rights.example.org/report"
B = "http://news.example.net/page"


async def test_a_lone_router_and_a_lone_scorer_publish_the_verdicts(kafka_broker: EmbeddedBroker,
                                                                     kafka_names: KafkaNames, tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    refs = write_warc(warcs / "CRAWL-20240101-00001.warc.gz", [
        (A, "20240101000000", page_html(1)),
        (B, "20240101000500", page_html(2)),
        (A, "20240301000000", page_html(0, off_topic=True)),
    ])
    boot = kafka_broker.bootstrap_servers
    base = stream_config(boot, kafka_names, tmp_path, warc_dirs=(str(warcs),))
    k = base.kafka
    router_cfg = base.model_copy(update={"kafka": k.model_copy(update={"stage": "router"}),
                                         "metrics": base.metrics.model_copy(update={"enabled": False})})
    scorer_cfg = base.model_copy(update={"kafka": k.model_copy(update={"stage": "scorer"})})
    crawl = next(iter(k.input_topics))

    async with ConsumerApp(router_cfg) as router, ConsumerApp(scorer_cfg) as scorer:
        assert router.store is None and router.scoring is None and router.scorer is None
        assert scorer.router is None and scorer.store is not None
        await produce(boot, crawl, [heritrix_message(refs[0]), heritrix_message(refs[1]),
                                    heritrix_message(url="dns:www.rights.example.org", mimetype="text/dns",
                                                     status_code=1, timestamp="2024-01-01T00:00:00Z"),
                                    b"{not json"])
        first = await read_topic(boot, k.results_topic, expect=2, timeout_s=60)
        await produce(boot, crawl, [heritrix_message(refs[2])])
        verdicts = await read_topic(boot, k.results_topic, expect=3, timeout_s=60)
        assert await router.wait_caught_up(timeout_s=30) and await scorer.wait_caught_up(timeout_s=30)
        assert await router.ready() and await scorer.ready()
        dead = await read_topic(boot, k.dead_letter_topic, expect=1, timeout_s=30)
        skipped = router.metrics.events_skipped.labels(reason="dns")._value.get()
        routed = router.metrics.events_consumed.labels(topic=crawl)._value.get()
        scored_by_router = router.verdicts

    assert len(first) == 2
    by_time = {(v["value"]["url"], v["value"]["capture_time"]): v["value"] for v in verdicts}
    assert len(verdicts) == 3 == len(by_time)
    assert by_time[(A, "2024-01-01T00:00:00Z")]["change"] == "baseline"
    assert by_time[(B, "2024-01-01T00:05:00Z")]["change"] == "baseline"
    assert by_time[(A, "2024-03-01T00:00:00Z")]["status"] == "off-topic"
    # the router skipped and dead-lettered what it could not route; it scored nothing itself
    assert skipped == 1 and routed == 5 and scored_by_router == 0
    assert [d["value"]["reason"] for d in dead] == ["bad_json"]


@pytest.mark.parametrize(("stage", "kafka", "key"), [
    ("router", {"rekey": False}, "kafka.rekey"),
    ("scorer", {"bootstrap_servers": None, "embedded_broker": True}, "kafka.bootstrap_servers"),
])
def test_a_stage_without_a_keyed_topic_or_a_shared_broker_is_refused(kafka_names: KafkaNames, tmp_path: Path,
                                                                      stage: str, kafka: dict[str, object],
                                                                      key: str) -> None:
    base = stream_config("127.0.0.1:9", kafka_names, tmp_path)
    cfg = base.model_copy(update={"kafka": base.kafka.model_copy(update={"stage": stage, **kafka})})
    with pytest.raises(ConfigError, match=f"kafka.stage is '{stage}' but {key}"):
        ConsumerApp(cfg)
