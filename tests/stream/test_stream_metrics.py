"""The metrics server: /metrics counters move, /healthz and /readyz answer."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker

pytestmark = pytest.mark.kafka


def _value(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


async def test_metrics_endpoint_counts_events(kafka_broker: EmbeddedBroker, kafka_names: KafkaNames,
                                              tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    refs = write_warc(warcs / "M-00001.warc.gz",
                      [(f"http://m{i}.example.org/", "20240101000000", page_html(i)) for i in range(4)])
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(warcs),))
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    base = f"http://{cfg.metrics.host}:{cfg.metrics.port}"
    async with ConsumerApp(cfg) as app, aiohttp.ClientSession() as http:
        async with http.get(base + "/healthz") as resp:
            assert resp.status == 200
        async with http.get(base + "/metrics") as resp:
            before = await resp.text()
        await produce(boot, crawl, [heritrix_message(r) for r in refs]
                      + [b"not json at all {", heritrix_message(url="dns:m0.example.org", status_code=1,
                                                               timestamp="2024-01-01T00:00:00Z")])
        await read_topic(boot, k.results_topic, expect=4, timeout_s=60)
        assert await app.wait_caught_up(timeout_s=30)
        async with http.get(base + "/metrics") as resp:
            assert resp.status == 200
            after = await resp.text()
        async with http.get(base + "/readyz") as resp:
            assert resp.status == 200
    assert _value(before, "driftline_events_consumed_total") == 0
    assert _value(after, "driftline_events_consumed_total", topic=crawl) == 6
    # Counted once (by the router), not again by the scorer reading the re-keyed copy.
    assert _value(after, "driftline_events_consumed_total") == 6
    assert _value(after, "driftline_records_processed_total", stage="router") == 6
    assert _value(after, "driftline_records_processed_total", stage="scorer") == 4
    for stage in ("acquire", "extract", "store", "publish"):
        assert _value(after, "driftline_stage_seconds_count", stage=stage) >= 1, stage
    # Initialised at 0 before the first event, so rate() sees the first increment.
    assert 'driftline_verdicts_total{change="drifted",collection="none",status="on-topic"} 0.0' in before
    assert 'driftline_events_failed_total{reason="internal"} 0.0' in before
    assert f'driftline_events_consumed_total{{topic="{crawl}"}} 0.0' in before
    assert _value(after, "driftline_build_info") == 1
    assert _value(after, "driftline_process_tree_resident_memory_bytes", kind="self") > 10e6
    assert _value(after, "driftline_verdicts_total") == 4
    assert _value(after, "driftline_events_skipped_total", reason="dns") == 1
    assert _value(after, "driftline_dead_letter_total") == 1
    assert _value(after, "driftline_processing_seconds_count") == 4
    assert _value(after, "driftline_fetch_seconds_count", source="warc") == 4
    assert _value(after, "driftline_up") == 1
    assert _value(after, "driftline_in_flight") == 0
    assert "driftline_consumer_lag" in after and "driftline_urls_off_topic" in after
    # No URL ever appears as a label value.
    assert not re.search(r'="[a-z]+://', after)


async def test_readyz_is_503_without_assignment(tmp_path: Path) -> None:
    """Before the consumer has partitions, the app is alive but not ready."""
    from watcher.metrics import Metrics, MetricsServer

    async def never() -> bool:
        return False

    server = MetricsServer(Metrics(), "127.0.0.1", 0, never)
    await server.start()
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{server.port}/readyz") as resp:
                assert resp.status == 503
            async with http.get(f"http://127.0.0.1:{server.port}/healthz") as resp:
                assert resp.status == 200
    finally:
        await server.stop()
