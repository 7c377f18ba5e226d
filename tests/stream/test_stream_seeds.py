"""Seed reports through the broker: each verdict refreshes its seed's report on the seed-report
topic, equal to what ``driftline seeds`` says of the same store, and /metrics spreads the seeds
over yield and change-rate buckets with no per-seed label."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker
from watcher.config import Config
from watcher.seeds.cli import verdicts_of
from watcher.seeds.report import reports

pytestmark = pytest.mark.kafka


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return str(resp.read().decode())
SEED = "http://www.rights.example.org/"
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "watcher/schemas/seed-report.schema.json")
                    .read_text(encoding="utf-8"))


async def _crawl(broker: EmbeddedBroker, names: KafkaNames, tmp_path: Path, captures: list[tuple[str, str, bytes]],
                 topic: str, expect: int | None = None) -> tuple[Config, list[dict[str, Any]], str]:
    """Score ``captures`` one crawl at a time through a consumer app, then read ``topic`` (a
    ``seeds``/``kafka`` config attribute name) and the app's /metrics."""
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    refs = write_warc(warcs / "JOB-20240101-00001.warc.gz", captures)
    cfg = stream_config(broker.bootstrap_servers, names, tmp_path, warc_dirs=(str(warcs),),
                        extra={"seeds": {"publish_interval_s": 0}})
    boot, k = broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    async with ConsumerApp(cfg) as app:
        for i, ref in enumerate(refs):
            await produce(boot, crawl, [heritrix_message(ref, job_name="weekly-ngo")])
            await read_topic(boot, k.results_topic, expect=i + 1, timeout_s=60)
        assert await app.wait_caught_up(timeout_s=30)
        name = cfg.seeds.topic if topic == "seeds" else k.recommendations_topic
        got = await read_topic(boot, name, expect=expect, timeout_s=20, idle_s=1.0)
        exposition = await asyncio.to_thread(_get, f"http://127.0.0.1:{cfg.metrics.port}/metrics")
    return cfg, [m["value"] if isinstance(m["value"], dict) else json.loads(m["value"]) for m in got], exposition


async def test_every_verdict_refreshes_its_seed_report(
        kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    captures = [
        (SEED, "20240101000000", page_html(1)),
        (SEED, "20240115000000", page_html(1, words=260)),
        (SEED, "20240201000000", page_html(1, off_topic=True)),
        (SEED, "20240301000000", page_html(1, off_topic=True, words=150)),
    ]
    cfg, values, exposition = await _crawl(kafka_broker, kafka_names, tmp_path, captures, "seeds", len(captures))
    assert len(values) == len(captures)
    for v in values:
        jsonschema.validate(v, SCHEMA)
    assert [v["captures"] for v in values] == [1, 2, 3, 4]
    last = values[-1]
    assert last["seed"] == SEED and last["yield"] == 0.5
    assert last["change_rate_per_day"] is not None
    # the topic says what `driftline seeds` says of the same store
    (from_store,) = reports(verdicts_of(None, cfg), cfg.seeds)
    assert from_store.to_dict() == last
    assert 'driftline_seed_yield_bucket{le="0.5"} 1.0' in exposition
    assert "driftline_seeds_tracked 1.0" in exposition
    assert "driftline_seeds_low_yield 0.0" in exposition
    assert "rights.example" not in exposition  # no per-seed label


async def test_a_low_yield_seed_gets_one_guidance_recommendation_with_its_evidence(
        kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    captures = [(SEED, "20240101000000", page_html(1))]
    captures += [(SEED, f"2024{m:02d}01000000", page_html(1, off_topic=True, words=150 + 5 * m)) for m in range(2, 8)]
    cfg, values, _ = await _crawl(kafka_broker, kafka_names, tmp_path, captures, "recommendations")
    actions = [v["action"] for v in values]
    assert actions.count("stop-seed") == 1
    guidance = [v for v in values if v["action"] == "deprioritise-seed"]
    assert len(guidance) == 1, actions  # the same advice is not published again with every report
    evidence = guidance[0]["evidence"]
    assert evidence["yield"] < cfg.actuator.deprioritise_below_yield
    assert len(evidence["verdicts"]) >= cfg.actuator.guidance_min_captures  # the verdicts behind the advice
    assert guidance[0]["seed"] == SEED and guidance[0]["job"] == "weekly-ngo"


async def test_a_restart_does_not_publish_the_standing_advice_again(
        kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    """The last advice per seed is kept in the store's advice ledger: a consumer started again on the same
    store publishes a seed's advice only when it changes (without the ledger, once per restart)."""
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    captures = [(SEED, "20240101000000", page_html(1))]
    captures += [(SEED, f"2024{m:02d}01000000", page_html(1, off_topic=True, words=150 + 5 * m)) for m in range(2, 10)]
    refs = write_warc(warcs / "JOB-20240101-00001.warc.gz", captures)
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(warcs),),
                        extra={"seeds": {"publish_interval_s": 0}})
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))

    def deprioritised(msgs: list[dict[str, Any]]) -> int:
        values = [m["value"] if isinstance(m["value"], dict) else json.loads(m["value"]) for m in msgs]
        return sum(v["action"] == "deprioritise-seed" for v in values)

    done = 0
    for part in (refs[:7], refs[7:]):  # two processes, one after the other, on one store
        async with ConsumerApp(cfg) as app:
            for ref in part:
                await produce(boot, crawl, [heritrix_message(ref, job_name="weekly-ngo")])
                done += 1
                await read_topic(boot, k.results_topic, expect=done, timeout_s=60)
            assert await app.wait_caught_up(timeout_s=30)
        if part is refs[:7]:  # the advice stands from the first process on
            got = await read_topic(boot, k.recommendations_topic, timeout_s=20, idle_s=1.0)
            assert deprioritised(got) == 1, got
    got = await read_topic(boot, k.recommendations_topic, timeout_s=20, idle_s=1.0)
    assert deprioritised(got) == 1, [m["value"] for m in got]
