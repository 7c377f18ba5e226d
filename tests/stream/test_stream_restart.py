"""A real Tansu broker stopped and restarted under a running consumer app.

The embedded broker keeps its log in memory, so a restart loses every topic
and committed offset.  What must hold anyway: events produced the moment the
restarted broker answers are all scored (none lost without a verdict, dead
letter or log line); a verdict sent twice (records read again from the new
log's start) carries the same id; the outage costs bounded time; and the
client's error lines during the outage are rate-limited.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer

from consumers.app import ConsumerApp
from consumers.client import read_topic
from tests.fixtures.kafka import KafkaNames, WarcRef, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker, broker_reachable

pytestmark = pytest.mark.kafka


def _events(warcs: Path, n: int, tag: str) -> list[WarcRef]:
    warcs.mkdir(exist_ok=True)
    caps = [(f"http://site{i}.{tag}.example.org/page", "20240101000000", page_html(i)) for i in range(n)]
    return write_warc(warcs / f"{tag.upper()}-00001.warc.gz", caps)


async def _produce_as_crawler(boot: str, topic: str, values: list[bytes], deadline_s: float) -> int:
    """Produce like a crawler that just saw its broker come back: start at once,
    retrying each send until acknowledged (acks=all).  Returns the attempts."""
    attempts = 0
    end = time.monotonic() + deadline_s
    producer: AIOKafkaProducer | None = None
    try:
        while producer is None:
            candidate = AIOKafkaProducer(bootstrap_servers=boot, acks="all", request_timeout_ms=3000, linger_ms=2)
            try:
                await candidate.start()
                producer = candidate
            except Exception:
                await candidate.stop()
                if time.monotonic() > end:
                    raise
                await asyncio.sleep(0.05)
        for value in values:
            while True:
                attempts += 1
                try:
                    await (await producer.send(topic, value=value))
                    break
                except Exception:
                    if time.monotonic() > end:
                        raise
                    await asyncio.sleep(0.05)
    finally:
        if producer is not None:
            await producer.stop()
    return attempts


@pytest.mark.parametrize("n_after", [400])
async def test_events_produced_as_the_restarted_broker_answers_are_all_scored(
    private_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path, n_after: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    before = _events(tmp_path / "warcs", 20, "before")
    after = _events(tmp_path / "warcs", n_after, "after")
    cfg = stream_config(private_broker.bootstrap_servers, kafka_names, tmp_path, partitions=2,
                        warc_dirs=(str(tmp_path / "warcs"),), kafka={"client_log_interval_s": 10.0})
    boot, k = private_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    caplog.set_level(logging.INFO)
    routed: set[str] = set()  # URLs of crawl events the app's router finished
    async with ConsumerApp(cfg) as app:
        assert k.rekey and app.router is not None
        route = app.router.handler

        async def watched(record: Any) -> None:
            await route(record)
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                routed.add(json.loads(record.value)["url"])

        app.router.handler = watched
        await _produce_as_crawler(boot, crawl, [heritrix_message(r) for r in before], 30)
        assert len(await read_topic(boot, k.results_topic, expect=len(before), timeout_s=60)) == len(before)
        assert await app.wait_caught_up(timeout_s=30)
        private_broker.kill()
        outage_started = time.monotonic()
        caplog.clear()
        await asyncio.sleep(20.0)  # an outage of 20 s, as in the issue
        outage_lines = [r for r in caplog.records if r.name.startswith("aiokafka")]
        assert not await broker_reachable(boot, 1.0)
        await private_broker.start()  # same port, memory storage: no topics, no offsets, no groups
        started = time.monotonic()
        await _produce_as_crawler(boot, crawl, [heritrix_message(r) for r in after], 60)
        verdicts = await read_topic(boot, k.results_topic, expect=n_after, timeout_s=240)
        took = time.monotonic() - started
        caught_up = await app.wait_caught_up(timeout_s=60)
        dead = await read_topic(boot, k.dead_letter_topic, timeout_s=5, idle_s=1.0)
        verdicts = await read_topic(boot, k.results_topic, timeout_s=10, idle_s=1.5)
        keyed = {m["value"].get("url") for m in await read_topic(boot, k.keyed_topic, timeout_s=10, idle_s=1.5)}
    urls = Counter(v["value"]["url"] for v in verdicts)
    ids_per_url: dict[str, set[str]] = {}
    for v in verdicts:
        ids_per_url.setdefault(v["value"]["url"], set()).add(v["value"]["verdict_id"])
    lost = [r.url for r in after if r.url not in urls]
    resent = sum(c - 1 for c in urls.values() if c > 1)
    app_lost = [u for u in lost if u not in routed or u in keyed]
    broker_lost = [u for u in lost if u in routed and u not in keyed]
    print(f"\nrestart: {n_after} events after the restart, {len(lost)} lost, {resent} verdicts sent twice, "
          f"{took:.1f}s to score them ({len(broker_lost)} acknowledged by the broker, then gone from its log); "
          f"{len(outage_lines)} aiokafka log lines in the "
          f"{started - outage_started:.0f}s outage")
    assert caught_up
    assert dead == []
    # Who lost an event: the app (its router never finished it, or the scorer skipped a routed
    # message still in the internal topic) must lose none.  The broker: in about 1 run of 10, the
    # restarted Tansu (0.6.0, memory storage) refuses produce requests with UnknownError for ~20 s,
    # then acknowledges them, and its log of the internal topic later goes backwards (its high
    # watermark falls below an offset already read): acknowledged messages are gone (README,
    # "Limits").  That is bounded at 1 % so the test still fails on anything worse.
    assert app_lost == [], f"{len(app_lost)} of {n_after} events lost by the app: {app_lost[:3]}"
    assert len(broker_lost) <= n_after // 100, f"{len(broker_lost)} routed events gone from the broker's log"
    # Records fetched at stale positions before the loss was noticed are read
    # again from the new log's start (at least once): a verdict may then be
    # sent twice, always with the same id, never two different verdicts.
    assert all(len(ids) == 1 for ids in ids_per_url.values())
    assert took < 60, f"{took:.0f}s to score {n_after} events after the restart"
    assert len(outage_lines) < 200, f"{len(outage_lines)} client log lines during a 20 s outage"
