"""A seed that stays off topic: recommendation on its topic, then the actuator acts.

Real Tansu broker, real SQLite store, real engine; the Heritrix actuator in
dry-run mode logs the exact request it would send (its HTTP path is tested
against a digest-auth endpoint in test_actuators.py).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker

pytestmark = pytest.mark.kafka
SEED = "http://www.rights.example.org/"


async def test_off_topic_seed_gets_one_recommendation_and_the_actuator_acts(
        kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    refs = write_warc(warcs / "JOB-20240101-00001.warc.gz", [
        (SEED, "20240101000000", page_html(1)),
        (SEED, "20240201000000", page_html(1, off_topic=True)),
        (SEED, "20240301000000", page_html(1, off_topic=True, words=150)),
        (SEED, "20240401000000", page_html(1, off_topic=True, words=140)),
        (SEED, "20240501000000", page_html(1, off_topic=True, words=130)),
    ])
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(warcs),),
                        extra={"actuator": {"kind": "heritrix", "dry_run": True,
                                            "heritrix_url": "https://crawler.example:8443"}})
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    caplog.set_level(logging.INFO, logger="watcher.actuators")
    async with ConsumerApp(cfg) as app:
        for i, ref in enumerate(refs):  # one crawl at a time, weeks apart in a real crawl
            await produce(boot, crawl, [heritrix_message(ref, job_name="weekly-ngo")])
            await read_topic(boot, k.results_topic, expect=i + 1, timeout_s=60)
        assert await app.wait_caught_up(timeout_s=30)
        recs = await read_topic(boot, k.recommendations_topic, timeout_s=10, idle_s=1.0)
    assert len(recs) == 1
    rec = recs[0]["value"] if isinstance(recs[0]["value"], dict) else json.loads(recs[0]["value"])
    assert rec["seed"] == SEED and rec["job"] == "weekly-ngo" and rec["action"] == "stop-seed"
    assert "http://(org,example,rights," in rec["what_to_do"]
    dry = [r.getMessage() for r in caplog.records if "dry run" in r.getMessage().lower()]
    assert len(dry) == 1
    assert "https://crawler.example:8443/engine/job/weekly-ngo/script" in dry[0]
