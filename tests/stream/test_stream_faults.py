"""Faults: SIGKILL mid-batch, SIGTERM, and a broker outage.

The consumer runs as a real subprocess (``python -m consumers``) for the
signal tests; the store is the real SQLite file both runs share.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, WarcRef, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker, broker_reachable
from watcher.canonical import url_key
from watcher.config import Config
from watcher.store import open_store

pytestmark = pytest.mark.kafka


def _events(warcs: Path, n: int, tag: str) -> list[WarcRef]:
    warcs.mkdir(exist_ok=True)
    caps = [(f"http://site{i}.{tag}.example.org/page", "20240101000000", page_html(i)) for i in range(n)]
    return write_warc(warcs / f"{tag.upper()}-00001.warc.gz", caps)


def _write_config(cfg: Config, path: Path) -> Path:
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json")), encoding="utf-8")
    return path


def _spawn(repo_root: Path, config: Path, *extra: str) -> subprocess.Popen[bytes]:
    path = os.pathsep.join(p for p in (str(repo_root), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, PYTHONPATH=path)
    log = open(config.with_suffix(".log"), "ab")  # noqa: SIM115 - closed with the process
    return subprocess.Popen([sys.executable, "-m", "consumers", "--config", str(config), *extra],
                            cwd=repo_root, env=env, stdout=log, stderr=subprocess.STDOUT)


def _stored_counts(cfg: Config, refs: list[WarcRef]) -> list[int]:
    store = open_store(cfg.store)
    try:
        return [len(store.recent_verdicts(url_key(r.url, cfg.engine.canonical), 100)) for r in refs]
    finally:
        store.close()


async def _wait_stored(cfg: Config, refs: list[WarcRef], at_least: int, timeout_s: float) -> int:
    deadline = time.monotonic() + timeout_s
    done = 0
    while time.monotonic() < deadline:
        if Path(cfg.store.path).exists():
            try:
                done = sum(1 for c in await asyncio.to_thread(_stored_counts, cfg, refs) if c)
            except Exception:  # the writer may hold a lock or be creating the schema
                done = 0
            if done >= at_least:
                return done
        await asyncio.sleep(0.05)
    return done


async def test_sigkill_mid_batch_then_restart_scores_every_event_once(
    kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path, repo_root: Path
) -> None:
    n = 300
    refs = _events(tmp_path / "warcs", n, "kill")
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, partitions=3,
                        warc_dirs=(str(tmp_path / "warcs"),), kafka={"max_in_flight": 32})
    config = _write_config(cfg, tmp_path / "run.yaml")
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    first = _spawn(repo_root, config)
    try:
        await produce(boot, next(iter(k.input_topics)), [heritrix_message(r) for r in refs])
        done = await _wait_stored(cfg, refs, 40, timeout_s=90)
        assert done >= 40, f"the consumer scored only {done} events before the kill"
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    before = sum(1 for c in _stored_counts(cfg, refs) if c)
    assert before < n, "the kill came after the last event: nothing was left mid-batch"

    second = _spawn(repo_root, config, "--once")
    try:
        code = await asyncio.to_thread(second.wait, 180)
    finally:
        if second.poll() is None:
            second.kill()
    assert code == 0
    counts = _stored_counts(cfg, refs)
    assert counts == [1] * n, f"missing: {counts.count(0)}, duplicated: {sum(1 for c in counts if c > 1)}"
    verdicts = await read_topic(boot, k.results_topic, expect=n, timeout_s=30)
    assert len({v["value"]["verdict_id"] for v in verdicts}) == n


async def test_sigterm_finishes_in_flight_work_and_commits(
    kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path, repo_root: Path
) -> None:
    n = 150
    refs = _events(tmp_path / "warcs", n, "term")
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, partitions=3,
                        warc_dirs=(str(tmp_path / "warcs"),))
    config = _write_config(cfg, tmp_path / "run.yaml")
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    proc = _spawn(repo_root, config)
    try:
        await produce(boot, next(iter(k.input_topics)), [heritrix_message(r) for r in refs])
        await _wait_stored(cfg, refs, 20, timeout_s=90)
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0
    again = _spawn(repo_root, config, "--once")
    try:
        assert await asyncio.to_thread(again.wait, 180) == 0
    finally:
        if again.poll() is None:
            again.kill()
    assert _stored_counts(cfg, refs) == [1] * n
    # Everything finished before SIGTERM was committed: no event was scored twice.
    verdicts = await read_topic(boot, k.results_topic, timeout_s=20, idle_s=1.5)
    assert len(verdicts) == n


async def test_consumer_survives_broker_restart(private_broker: EmbeddedBroker, kafka_names: KafkaNames,
                                                tmp_path: Path) -> None:
    before = _events(tmp_path / "warcs", 5, "before")
    after = _events(tmp_path / "warcs", 5, "after")
    cfg = stream_config(private_broker.bootstrap_servers, kafka_names, tmp_path, partitions=2,
                        warc_dirs=(str(tmp_path / "warcs"),))
    boot, k = private_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    async with ConsumerApp(cfg) as app:
        await produce(boot, crawl, [heritrix_message(r) for r in before])
        assert len(await read_topic(boot, k.results_topic, expect=5, timeout_s=60)) == 5
        private_broker.kill()
        await asyncio.sleep(2.0)
        assert not await broker_reachable(boot, 1.0)
        await private_broker.start()  # same port, memory storage: no topics, no offsets
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the app re-creates its topics
            from aiokafka.admin import AIOKafkaAdminClient

            admin = AIOKafkaAdminClient(bootstrap_servers=boot)
            await admin.start()
            try:
                topics = set(await admin.list_topics())
            finally:
                await admin.close()
            if crawl in topics and k.keyed_topic in topics:
                break
            await asyncio.sleep(0.3)
        await produce(boot, crawl, [heritrix_message(r) for r in after])
        verdicts = await read_topic(boot, k.results_topic, expect=5, timeout_s=120)
        assert app.scorer is not None
    assert {v["value"]["url"] for v in verdicts} == {r.url for r in after}
    assert _stored_counts(cfg, before + after) == [1] * 10


async def test_store_connection_loss_is_retried_not_dead_lettered(
    kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path, postgres_dsn: str
) -> None:
    """The PostgreSQL server drops the consumer's connections between two events:
    the next event is retried after the reconnect, scored, and never dead-lettered."""
    import psycopg

    refs = _events(tmp_path / "warcs", 2, "pg")
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, partitions=1,
                        warc_dirs=(str(tmp_path / "warcs"),),
                        extra={"store": {"backend": "postgres", "dsn": postgres_dsn}})
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    async with ConsumerApp(cfg) as app:
        await produce(boot, crawl, [heritrix_message(refs[0])])
        assert len(await read_topic(boot, k.results_topic, expect=1, timeout_s=60)) == 1
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            killed = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                   "WHERE pid <> pg_backend_pid() AND datname = current_database() "
                                   "AND application_name LIKE 'driftline%'").fetchone()
        assert killed is not None and killed[0] >= 1
        await produce(boot, crawl, [heritrix_message(refs[1])])
        verdicts = await read_topic(boot, k.results_topic, expect=2, timeout_s=60)
        assert await app.wait_caught_up(timeout_s=30)
        dead = await read_topic(boot, k.dead_letter_topic, timeout_s=5, idle_s=0.5)
    assert {v["value"]["url"] for v in verdicts} == {r.url for r in refs}
    assert dead == []
