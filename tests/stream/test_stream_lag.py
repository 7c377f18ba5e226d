"""Operations signals on a real broker: consumer lag survives rebalances and
pauses, lag in seconds, readiness separate from assignment, and the metric
shapes (initialised counters, per-kind score buckets, render fallbacks, the
process tree)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from consumers.app import ConsumerApp
from consumers.client import produce
from consumers.runner import PartitionRunner
from tests.fixtures.kafka import KafkaNames, stream_config
from watcher.broker import EmbeddedBroker, ensure_topics
from watcher.metrics import Metrics, ProcessTreeCollector


def _lag(metrics: Metrics, stage: str, topic: str) -> dict[int, float]:
    out: dict[int, float] = {}
    for fam in metrics.registry.collect():
        if fam.name != "driftline_consumer_lag":
            continue
        for s in fam.samples:
            if s.labels["stage"] == stage and s.labels["topic"] == topic:
                assert int(s.labels["partition"]) not in out, "two series for one partition"
                out[int(s.labels["partition"])] = s.value
    return out


def _owned(metrics: Metrics, topic: str) -> set[int]:
    return {int(s.labels["partition"]) for fam in metrics.registry.collect() if fam.name == "driftline_consumer_lag"
            for s in fam.samples if s.labels["topic"] == topic and s.labels["owned"] == "true"}


async def _until(cond: Any, timeout_s: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await cond():
            return True
        await asyncio.sleep(0.1)
    return False


@pytest.mark.kafka
async def test_lag_covers_every_partition_across_rebalance_and_pause(
        kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    """Before: lag was exported only for owned partitions with a position, so
    after a rebalance the moved partitions' series vanished, and a paused
    partition's lag stood still.  Now every member exports the group's lag for
    every partition, read from committed and end offsets."""
    boot = kafka_broker.bootstrap_servers
    cfg = stream_config(boot, kafka_names, tmp_path, kafka={"max_in_flight": 4, "max_batch": 4})
    topic = kafka_names.topic("lag")
    await ensure_topics(boot, [topic], 3)
    gate = asyncio.Event()

    async def handler(record: Any) -> None:
        await gate.wait()

    m1, m2 = Metrics(process_metrics=False), Metrics(process_metrics=False)
    first = PartitionRunner("scorer", cfg.kafka, boot, kafka_names.group, [topic], handler, m1, lag_interval_s=0.3)
    second = PartitionRunner("scorer", cfg.kafka, boot, kafka_names.group, [topic], handler, m2, lag_interval_s=0.3)
    await first.start()
    try:
        assert await _until(lambda: _ready(first))
        await produce(boot, topic, [str(i).encode() for i in range(60)])

        async def full_lag_first() -> bool:
            lag = _lag(m1, "scorer", topic)
            return len(lag) == 3 and sum(lag.values()) == 60

        # Paused (4 in flight, handler blocked): the lag still grows to the truth.
        assert await _until(full_lag_first), _lag(m1, "scorer", topic)
        await second.start()

        async def shared() -> bool:
            return bool(first.assignment()) and bool(second.assignment()) and \
                len(first.assignment()) + len(second.assignment()) == 3

        assert await _until(shared)

        async def both_see_all() -> bool:
            # Every member exports every partition (no series vanishes), and the
            # owners' figures add up to the truth.  (Non-owners read the end offset
            # from ListOffsets, which Tansu answers per batch; real Kafka exactly.)
            a, b = _lag(m1, "scorer", topic), _lag(m2, "scorer", topic)
            owned = [a[tp.partition] for tp in first.assignment()] + [b[tp.partition] for tp in second.assignment()]
            return len(a) == 3 and len(b) == 3 and sum(owned) == 60

        assert await _until(both_see_all), (_lag(m1, "scorer", topic), _lag(m2, "scorer", topic))

        async def owners_marked() -> bool:  # owned="true" exactly where each member owns the partition
            return _owned(m1, topic) == {tp.partition for tp in first.assignment()} and \
                _owned(m2, topic) == {tp.partition for tp in second.assignment()}

        assert await _until(owners_marked)
        # Lag in seconds: records are waiting, so their age is positive on the owners.
        await asyncio.sleep(1.2)
        ages = [s.value for m in (m1, m2) for fam in m.registry.collect()
                if fam.name == "driftline_consumer_lag_seconds" for s in fam.samples]
        assert ages and max(ages) >= 1.0
        gate.set()

        async def drained() -> bool:
            a, b = _lag(m1, "scorer", topic), _lag(m2, "scorer", topic)
            return len(a) == 3 and len(b) == 3 and max(a.values()) == 0 and max(b.values()) == 0

        assert await _until(drained), (_lag(m1, "scorer", topic), _lag(m2, "scorer", topic))
    finally:
        gate.set()
        await second.stop()
        await first.stop()
    processed = sum(s.value for m in (m1, m2) for fam in m.registry.collect()
                    if fam.name == "driftline_records_processed" for s in fam.samples if s.name.endswith("_total"))
    assert processed >= 60


async def _ready(runner: PartitionRunner) -> bool:
    return bool(runner.assignment())


def _aged(metrics: Metrics, topic: str) -> set[int]:
    return {int(s.labels["partition"]) for fam in metrics.registry.collect()
            if fam.name == "driftline_consumer_lag_seconds" for s in fam.samples if s.labels["topic"] == topic}


@pytest.mark.kafka
async def test_lag_age_of_a_kept_partition_never_vanishes_in_a_rebalance(
        kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    """Before: the owner removed its age series (driftline_consumer_lag_seconds)
    on every revocation, and an eager rebalance revokes all partitions before
    handing most back: the surviving owner's ages vanished for the whole
    rebalance, the recorded driftline:consumer_lag_seconds:max went empty under
    a real Prometheus, and DriftlineConsumerLagOld's ``for:`` restarted.  Now
    only partitions that moved away lose their series, after the assignment."""
    boot = kafka_broker.bootstrap_servers
    cfg = stream_config(boot, kafka_names, tmp_path)
    topic = kafka_names.topic("age")
    await ensure_topics(boot, [topic], 3)

    async def handler(record: Any) -> None:
        return None

    m1, m2 = Metrics(process_metrics=False), Metrics(process_metrics=False)
    first = PartitionRunner("scorer", cfg.kafka, boot, kafka_names.group, [topic], handler, m1, lag_interval_s=0.2)
    second = PartitionRunner("scorer", cfg.kafka, boot, kafka_names.group, [topic], handler, m2, lag_interval_s=0.2)
    await first.start()
    try:
        async def first_ages_all() -> bool:
            return _aged(m1, topic) == {0, 1, 2}

        assert await _until(first_ages_all, 30), _aged(m1, topic)
        samples: list[set[int]] = []
        stop = asyncio.Event()

        async def sample() -> None:  # what a scrape would see, every 10 ms through the rebalance
            while not stop.is_set():
                samples.append(_aged(m1, topic))
                await asyncio.sleep(0.01)

        sampler = asyncio.create_task(sample())
        await second.start()

        async def settled() -> bool:
            mine = {tp.partition for tp in first.assignment()}
            theirs = {tp.partition for tp in second.assignment()}
            return bool(mine) and bool(theirs) and len(mine | theirs) == 3 and \
                _aged(m1, topic) == mine and _aged(m2, topic) == theirs

        assert await _until(settled, 30), (_aged(m1, topic), _aged(m2, topic))
        stop.set()
        await sampler
        kept = {tp.partition for tp in first.assignment()}
        gaps = [s for s in samples if not kept <= s]
        assert len(samples) > 20
        assert not gaps, f"{len(gaps)} of {len(samples)} samples lacked the kept partitions {kept}: {gaps[:3]}"
    finally:
        await second.stop()
        await first.stop()


@pytest.mark.kafka
async def test_standby_replica_is_ready_but_not_assigned(
        kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    """Before: /readyz demanded owned partitions, so a replica beyond the
    partition count was never Ready and a rolling update stalled on it."""
    boot = kafka_broker.bootstrap_servers
    cfg_a = stream_config(boot, kafka_names, tmp_path / "a", partitions=1)
    cfg_b = stream_config(boot, kafka_names, tmp_path / "b", partitions=1)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with ConsumerApp(cfg_a) as a, aiohttp.ClientSession() as http:
        assert await _until(a.assigned)
        async with ConsumerApp(cfg_b):

            async def probe() -> list[tuple[int, int, str]]:
                seen: list[tuple[int, int, str]] = []
                for cfg in (cfg_a, cfg_b):
                    base = f"http://{cfg.metrics.host}:{cfg.metrics.port}"
                    async with http.get(base + "/readyz") as resp:
                        ready = resp.status
                    async with http.get(base + "/assigned") as resp:
                        owns = resp.status
                    async with http.get(base + "/metrics") as resp:
                        text = await resp.text()
                    gauge = re.search(r'driftline_assigned_partitions\{stage="scorer"\} (\S+)', text)
                    seen.append((ready, owns, gauge.group(1) if gauge else "?"))
                return sorted(seen)

            # One partition, two members, after the rebalance settles: both Ready,
            # exactly one owns the partition and says so on /assigned and in the gauge.
            want = [(200, 200, "1.0"), (200, 503, "0.0")]
            last: list[tuple[int, int, str]] = []

            async def settled() -> bool:
                nonlocal last
                last = await probe()
                return last == want

            assert await _until(settled, 40.0), last


def test_counters_exist_at_zero_before_any_event() -> None:
    m = Metrics(input_topics=["crawl"], process_metrics=False)
    text = m.exposition().decode()
    assert 'driftline_events_consumed_total{topic="crawl"} 0.0' in text
    assert 'driftline_verdicts_total{change="off-topic",collection="none",status="off-topic"} 0.0' in text
    assert 'driftline_alerts_total{change="drifted",collection="other"} 0.0' in text
    assert 'driftline_events_skipped_total{reason="dns"} 0.0' in text
    assert 'driftline_dead_letter_total{reason="bad_event"} 0.0' in text
    assert 'driftline_records_processed_total{stage="scorer"} 0.0' in text


def test_collection_label_is_bounded() -> None:
    m = Metrics(max_collections=2, process_metrics=False)
    assert [m.collection(n) for n in ("a", "b", "c", "a", None, "")] == ["a", "b", "other", "a", "none", "none"]
    text = m.exposition().decode()
    assert 'collection="b"' in text and 'collection="c"' not in text


def test_score_histograms_per_measure_kind() -> None:
    """Before: one 0.05..1.0 histogram, so every wordcount (-1..0) fell in the
    first bucket and simhash bit counts (0..64) all in +Inf."""
    m = Metrics(process_metrics=False)
    m.observe_measure("wordcount", -0.55)
    m.observe_measure("raw_simhash", 40.0)
    m.observe_measure("tfintersection", 3.0)
    text = m.exposition().decode()
    assert 'driftline_measure_score_bucket{le="-0.6",measure="wordcount"} 0.0' in text
    assert 'driftline_measure_score_bucket{le="-0.5",measure="wordcount"} 1.0' in text
    assert 'driftline_measure_bits_bucket{le="38.4",measure="raw_simhash"} 0.0' in text
    assert 'driftline_measure_bits_bucket{le="41.6",measure="raw_simhash"} 1.0' in text
    assert 'driftline_measure_items_bucket{le="2.0",measure="tfintersection"} 0.0' in text
    assert 'driftline_measure_items_bucket{le="3.0",measure="tfintersection"} 1.0' in text


def test_render_fallback_is_not_a_failure() -> None:
    m = Metrics(process_metrics=False)
    m.observe_render_error("render_timeout")
    text = m.exposition().decode()
    assert 'driftline_render_fallbacks_total{reason="render_timeout"} 1.0' in text
    assert 'driftline_events_failed_total{reason="render_timeout"}' not in text


def test_process_tree_counts_children() -> None:
    """The stock process collector misses Chromium's processes; the tree counts them."""
    child = subprocess.Popen([sys.executable, "-c", "import time; b = bytearray(30_000_000); time.sleep(30)"])
    try:
        time.sleep(1.0)
        tree = ProcessTreeCollector().tree()
        n, rss, pss = tree["other"]
        assert n >= 1 and rss >= 30_000_000 and pss >= 25_000_000, tree
        assert tree["self"][0] == 1
    finally:
        child.kill()
        child.wait()


async def test_process_tree_sees_chromium(render_config: Any) -> None:
    """RSS of the real Chromium a RenderPool starts (browser, renderer, zygote
    processes) is exported; the stock process collector sees only Python."""
    from aiohttp import web

    from watcher.acquire import RenderPool

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html><body><p>chromium memory</p></body></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    before = ProcessTreeCollector().tree()["chromium"]
    pool = RenderPool(render_config, ("127.0.0.1/32",))
    try:
        html, _ = await pool.render(f"http://127.0.0.1:{port}/")
        assert b"chromium memory" in html
        m = Metrics()
        text = m.exposition().decode()
        n, rss, pss = ProcessTreeCollector().tree()["chromium"]
        assert n >= before[0] + 2 and rss >= before[1] + 50_000_000, (before, n, rss)
        assert 0 < pss <= rss  # shared pages are split, not counted per process
        line = next(x for x in text.splitlines()
                    if x.startswith('driftline_process_tree_resident_memory_bytes{kind="chromium"}'))
        assert float(line.rsplit(" ", 1)[1]) >= 50_000_000
    finally:
        await pool.close()
        await runner.cleanup()
