"""What one event's Kafka work costs in the scorer's process: aiokafka (the client the consumers
use) against librdkafka (PyPI ``confluent-kafka``), on the embedded broker, in one run.

Why: ``bench/stream_bench.py`` found the scorer process's event loop spending about 1.2 ms of
Python per event beside the scoring thread, serialised with it by the interpreter lock, and about a
third of that loop's samples inside aiokafka (fetching, decoding record batches, the sender, the
Python murmur2 partitioner).  This measures that share alone: consume N feed-sized records from
a topic and publish one keyed verdict-sized message per record, acknowledged, with each client.
It prints the CPU of the whole process (librdkafka's own threads included) and of the calling
thread alone (what competes with the scoring thread for the interpreter lock), per message.

    .venv/bin/python bench/kafka_client_bench.py [--messages 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

EVENT = json.dumps({"timestamp": "2026-11-29T12:00:00.000Z", "content_digest": "sha1:" + "A" * 32,
                    "status_code": 200, "size": 23_456, "mimetype": "text/html", "thread": 3,
                    "url": "https://www.example.org/section/article-0000", "hop_path": "LL",
                    "via": "https://www.example.org/", "seed": "https://www.example.org/",
                    "warc_filename": "crawl-20261129120000-00001.warc.gz", "warc_offset": 123456,
                    "annotations": "duration:1234ms"}).encode()
VERDICT = b"x" * 1_400  # a verdict message with its measures is 1.2-1.6 kB


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def timed(fn: Any) -> tuple[float, float, float]:
    """(wall, process CPU, this thread's CPU) of ``fn()``."""
    t, c, th = time.perf_counter(), time.process_time(), time.thread_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c, time.thread_time() - th


async def fill(bootstrap: str, topic: str, n: int) -> None:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    await producer.start()
    try:
        futures = [await producer.send(topic, value=EVENT) for _ in range(n)]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


def run_aiokafka(bootstrap: str, src: str, dst: str, n: int, each_ack: bool = False) -> None:
    """``each_ack``: each message's acknowledgement awaited before the next record is handled, as the
    router and the scorer do per partition, so every message is a produce request of its own."""
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    async def run() -> None:
        consumer = AIOKafkaConsumer(src, bootstrap_servers=bootstrap, group_id=f"b-{uuid.uuid4().hex}",
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        await consumer.start()
        await producer.start()
        try:
            seen = 0
            while seen < n:
                batch = await consumer.getmany(timeout_ms=200, max_records=500)
                futures = []
                for records in batch.values():
                    for rec in records:
                        json.loads(rec.value)
                        future = await producer.send(dst, value=VERDICT, key=b"https://www.example.org/a/%d"
                                                     % (seen % 5000))
                        if each_ack:
                            await future
                        else:
                            futures.append(future)
                        seen += 1
                await asyncio.gather(*futures)
            await consumer.commit()
        finally:
            await producer.stop()
            await consumer.stop()

    asyncio.run(run())


def run_aiokafka_each(bootstrap: str, src: str, dst: str, n: int) -> None:
    run_aiokafka(bootstrap, src, dst, n, each_ack=True)


def run_confluent(bootstrap: str, src: str, dst: str, n: int) -> None:
    from confluent_kafka import Consumer, Producer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"b-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    consumer.subscribe([src])
    acked = 0

    def on_ack(err: Any, _msg: Any) -> None:
        nonlocal acked
        if err is None:
            acked += 1

    try:
        seen = 0
        while seen < n:
            for rec in consumer.consume(num_messages=500, timeout=0.2):
                if rec.error() is not None:
                    continue
                json.loads(rec.value() or b"null")
                producer.produce(dst, value=VERDICT, key=b"https://www.example.org/a/%d" % (seen % 5000),
                                 on_delivery=on_ack)
                seen += 1
            producer.poll(0)
        producer.flush(30)
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    if acked != n:
        raise RuntimeError(f"librdkafka acknowledged {acked} of {n}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    from watcher.broker import EmbeddedBroker

    async def start() -> EmbeddedBroker:
        broker = EmbeddedBroker(free_port())
        await broker.start()
        return broker

    broker = asyncio.run(start())
    try:
        bootstrap = broker.bootstrap_servers
        best: dict[str, tuple[float, float, float]] = {}
        for i in range(args.repeat):
            for name, fn in (("aiokafka", run_aiokafka), ("aiokafka, each ack", run_aiokafka_each),
                             ("confluent-kafka", run_confluent)):
                slug = "".join(ch if ch.isalnum() else "-" for ch in name)
                src, dst = f"in-{slug}-{i}", f"out-{slug}-{i}"
                asyncio.run(fill(bootstrap, src, args.messages))
                got = timed(lambda fn=fn, src=src, dst=dst: fn(bootstrap, src, dst, args.messages))
                if name not in best or got[1] < best[name][1]:
                    best[name] = got
        n = args.messages
        print(f"{n} feed records consumed and {n} keyed verdict-sized messages published (acks=all), "
              f"embedded broker, best of {args.repeat} by process CPU:")
        for name, (wall, cpu, thread) in best.items():
            print(f"  {name:18s} wall {wall:6.2f} s  process CPU {cpu * 1e6 / n:6.1f} us/message  "
                  f"calling thread {thread * 1e6 / n:6.1f} us/message")
        c = best["confluent-kafka"]
        for name in ("aiokafka", "aiokafka, each ack"):
            a = best[name]
            print(f"ratio {name} / confluent-kafka: process CPU {a[1] / c[1]:.1f}x, calling thread "
                  f"{a[2] / c[2]:.1f}x")
    finally:
        asyncio.run(broker.stop())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
