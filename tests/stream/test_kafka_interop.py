"""A second Kafka client family against the embedded broker and driftline's consumers: librdkafka.

``confluent-kafka`` (librdkafka, as bundled in its PyPI wheel) produces the
crawler's events, driftline's own consumers (aiokafka) score them, and its
consumer reads the verdicts back, without a group (``assign``) and in a group
(``subscribe``, whose first join Tansu completes after half the session
timeout).  Debian's ``kcat`` links an older librdkafka (2.0.2) that misreads
the tagged fields of Tansu's ApiVersions v3 answer ("Read underflow"); the
same kcat works once it loads the wheel's librdkafka (docs/streaming/kafka-clients.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from consumers.app import ConsumerApp
from tests.fixtures.kafka import KafkaNames, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker, ensure_topics
from watcher.feed import FeedBuilder

confluent_kafka = pytest.importorskip("confluent_kafka")

pytestmark = pytest.mark.kafka

URL = "http://www.rights.example.org/report"


def _read(consumer: Any, want: int, timeout_s: float, idle_s: float = 2.0) -> list[dict[str, Any]]:
    """At least ``want`` messages, then whatever follows until ``idle_s`` passes without one."""
    out: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    last = time.monotonic()
    while time.monotonic() < deadline and (len(out) < want or time.monotonic() - last < idle_s):
        msg = consumer.poll(0.2)
        if msg is None or msg.error():
            continue
        out.append(json.loads(msg.value()))
        last = time.monotonic()
    return out


def _newest(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest version of each verdict (a capture that arrived late re-scores the later ones)."""
    newest: dict[str, dict[str, Any]] = {}
    for v in messages:
        if v["verdict_id"] not in newest or v["version"] >= newest[v["verdict_id"]]["version"]:
            newest[v["verdict_id"]] = v
    return sorted(newest.values(), key=lambda v: v["capture_time"])


@pytest.mark.timeout(180)
async def test_confluent_producer_feeds_and_consumer_reads_verdicts(
        kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    write_warc(warcs / "CRAWL-00000.warc.gz", [(URL, "20240101000000", page_html(1)),
                                                (URL, "20240201000000", page_html(1, variant=1)),
                                                (URL, "20240301000000", page_html(0, off_topic=True))])
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(warcs),))
    k, boot = cfg.kafka, kafka_broker.bootstrap_servers
    crawl = next(iter(k.input_topics))
    await ensure_topics(boot, [crawl, k.results_topic], k.partitions)
    events = [m.value for m in FeedBuilder(cfg, warn=pytest.fail).messages([str(warcs / "CRAWL-00000.warc.gz")])]

    producer = confluent_kafka.Producer({"bootstrap.servers": boot, "acks": "all"})
    for value in events:
        producer.produce(crawl, value=value)  # unkeyed, as Heritrix sends them
    assert await asyncio.to_thread(producer.flush, 30) == 0

    async with ConsumerApp(cfg) as app:
        assert await app.wait_caught_up(timeout_s=120)

    # No group: assign every partition; the first message comes at once.
    reader = confluent_kafka.Consumer({"bootstrap.servers": boot, "group.id": "unused", "enable.auto.commit": False})
    reader.assign([confluent_kafka.TopicPartition(k.results_topic, p, confluent_kafka.OFFSET_BEGINNING)
                   for p in range(k.partitions)])
    verdicts = _newest(await asyncio.to_thread(_read, reader, 3, 30))
    reader.close()
    assert [(v["capture_time"], v["status"]) for v in verdicts] == [
        ("2024-01-01T00:00:00Z", "on-topic"), ("2024-02-01T00:00:00Z", "on-topic"),
        ("2024-03-01T00:00:00Z", "off-topic")]
    assert verdicts[0]["change"] == "baseline"

    # In a group: the first join takes half the session timeout on Tansu (librdkafka's default is 45 s).
    group = confluent_kafka.Consumer({"bootstrap.servers": boot, "group.id": f"{kafka_names.group}-{uuid.uuid4().hex}",
                                      "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
                                      "heartbeat.interval.ms": 1000})
    started = time.monotonic()
    group.subscribe([k.results_topic])
    first = await asyncio.to_thread(_read, group, 1, 30, 0.0)
    joined_s = time.monotonic() - started
    again = first + await asyncio.to_thread(_read, group, 0, 30)
    group.close()
    assert _newest(again) == verdicts
    assert 2.0 < joined_s < 10.0, joined_s


def _wheel_librdkafka() -> Path | None:
    libs = Path(confluent_kafka.__file__).resolve().parent.parent / "confluent_kafka.libs"
    found = sorted(libs.glob("librdkafka*.so*")) if libs.is_dir() else []
    return found[0] if found else None


@pytest.mark.skipif(shutil.which("kcat") is None, reason="needs Debian's kcat (./dev test installs it)")
def test_debian_kcat_fails_and_works_with_a_current_librdkafka(kafka_broker: EmbeddedBroker, tmp_path: Path) -> None:
    listing = ["kcat", "-b", kafka_broker.bootstrap_servers, "-L", "-m", "5"]
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    version = subprocess.run(["kcat", "-V"], capture_output=True, text=True, env=env, timeout=10).stdout
    old = subprocess.run(listing, capture_output=True, text=True, env=env, timeout=30)
    if "librdkafka 2.0" in version or "librdkafka 2.1" in version:
        # librdkafka < 2.2 reads a tagged field's size as a compact length (size - 1): Tansu's ApiVersions v3
        # answer carries four tagged fields, and the parse runs off its end.
        assert old.returncode != 0 and "Read underflow" in old.stderr
    lib = _wheel_librdkafka()
    if lib is None:
        pytest.skip("confluent-kafka's wheel has no bundled librdkafka here")
    libdir = tmp_path / "rdkafka"
    libdir.mkdir()
    (libdir / "librdkafka.so.1").symlink_to(lib)
    new = subprocess.run(listing, capture_output=True, text=True, env={**env, "LD_LIBRARY_PATH": str(libdir)},
                         timeout=30)
    assert new.returncode == 0 and "1 brokers" in new.stdout, new.stderr
