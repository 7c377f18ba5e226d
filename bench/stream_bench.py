#!/usr/bin/env python3
"""Streaming throughput and memory: the Kafka pipeline against the batch engine.

Replays every response record of the shared WARCs (``../shared/data/warc``)
as Heritrix ``KafkaCrawlLogFeed`` messages (unkeyed, pointing at
``warc_filename``/``warc_offset``) through a real Tansu broker and the full
``driftline run`` app (router, scorer, SQLite store, result topics), and
prints end-to-end captures/s (first event produced -> last verdict
published) next to the batch engine's captures/s (``Engine.scan_history``
over the same captures, payloads read from the same WARCs) in the same run,
and the ratio (target >= 90 %, issue 37: one scorer at 90 % of one batch worker).

``--events N`` replays the records repeatedly (each round shifted by one day,
so every event is a new capture) while sampling this process's RSS, to show
memory stays flat (< 1 GB); it prints the peak.  Records the skip rule drops
(images, robots.txt...) travel through the router but are not scored, on
both sides.

The events are produced by a process of their own (a crawler's side), so that the consumer app's
process holds the app alone; ``--same-process`` produces them beside it, as this script did up to
2026-11-29 (the producer's Python work then shares the app's interpreter lock).

``--keyed-feed`` keys each event by its URL (Heritrix's feed is unkeyed): with the rounds produced
at once, the router's partitions otherwise pass one another and a capture that arrives after a later
one of its history re-scores it (a correction), work the batch engine never does.

``--split`` runs the router in a process of its own (``kafka.stage: router``) and this process as
the scorer alone (``kafka.stage: scorer``): what issue 37 asks of "one scorer process".

usage: stream_bench.py [--warc-dir DIR] [--rounds 1] [--repeat 3] [--events 100000] [--partitions 6]
                       [--same-process] [--split] [--keyed-feed]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from procstat import rss_mb  # bench/procstat.py: bench/ is the script's own folder on sys.path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SHARED_WARC = REPO.parent / "shared" / "data" / "warc"


@dataclass(frozen=True)
class Rec:
    url: str
    when: datetime
    filename: str
    offset: int
    length: int
    mime: str | None
    status: int | None
    digest: str | None


def collect_records(warc_dir: Path) -> list[Rec]:
    """Every response record of every WARC in ``warc_dir`` (unreadable tails are skipped)."""
    from warcio.archiveiterator import ArchiveIterator

    out: list[Rec] = []
    for path in sorted(p for p in warc_dir.iterdir() if ".warc" in p.name):
        with path.open("rb") as fh:
            it = ArchiveIterator(fh)
            try:
                for record in it:
                    if record.rec_type != "response":
                        continue
                    h = record.rec_headers
                    status = record.http_headers.get_statuscode() if record.http_headers else None
                    mime = record.http_headers.get_header("Content-Type") if record.http_headers else None
                    date = h.get_header("WARC-Date") or "1970-01-01T00:00:00Z"
                    record.content_stream().read()
                    out.append(Rec(
                        url=h.get_header("WARC-Target-URI") or "",
                        when=datetime.fromisoformat(date.replace("Z", "+00:00")),
                        filename=path.name, offset=it.get_record_offset(), length=it.get_record_length(),
                        mime=(mime or "").split(";")[0].strip() or None,
                        status=int(status) if status and str(status).isdigit() else None,
                        digest=h.get_header("WARC-Payload-Digest"),
                    ))
            except Exception as exc:  # a deliberately broken sample WARC: keep what was read
                print(f"  {path.name}: stopped at an unreadable record ({type(exc).__name__})", file=sys.stderr)
    return out


def message(rec: Rec, round_no: int) -> bytes:
    when = rec.when + timedelta(days=round_no)
    ts = when.strftime("%Y%m%d%H%M%S")
    return json.dumps({
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S.000Z"), "url": rec.url, "status_code": rec.status,
        "mimetype": rec.mime, "content_digest": rec.digest, "seed": rec.url, "hop_path": "",
        "start_time_plus_duration": f"{ts}000+100", "warc_filename": rec.filename, "warc_offset": rec.offset,
        "warc_length": rec.length, "annotations": "", "extra_info": {},
    }).encode()


class RssSampler:
    def __init__(self, every_s: float = 0.5) -> None:
        self.every_s = every_s
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._t0 = time.monotonic()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.monotonic() - self._t0, rss_mb()))
            self._stop.wait(self.every_s)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak(self) -> float:
        return max((m for _, m in self.samples), default=rss_mb())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_config(bootstrap: str, warc_dir: Path, workdir: Path, partitions: int) -> Any:
    from watcher.config import load_config

    return load_config(overrides={
        "kafka": {"bootstrap_servers": bootstrap, "embedded_broker": False, "partitions": partitions,
                  "group_id": "stream-bench", "commit_interval_ms": 500, "heartbeat_interval_ms": 500,
                  "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000},
        "store": {"backend": "sqlite", "path": str(workdir / "bench.db")},
        "acquire": {"warc_dirs": [str(warc_dir)], "order": ["warc"]},
        "render": {"enabled": False},
        "metrics": {"enabled": False},
        "log_level": "WARNING",
    })


def scorable_captures(cfg: Any, recs: list[Rec], rounds: int, warc_dir: Path) -> Iterator[tuple[Any, Any]]:
    """(event, capture) for every record the stream would score, read the way
    the acquirer reads a WARC record; records it would dead-letter are left out."""
    from watcher.acquire.warc import parse_record, read_record_bytes
    from watcher.events import parse_event, should_skip

    for r in range(rounds):
        for rec in recs:
            event = parse_event(message(rec, r), "heritrix-kafka")
            if should_skip(event, cfg.events) is not None:
                continue
            try:
                data = read_record_bytes(warc_dir / rec.filename, rec.offset, rec.length, 50_000_000)
                payload = parse_record(data, cfg.acquire.live.max_bytes)
            except Exception:  # the stream dead-letters these; the batch skips them
                continue
            yield event, event.to_capture(payload.payload, payload.content_type, payload.status, payload.headers)


def batch_rate(cfg: Any, recs: list[Rec], rounds: int, warc_dir: Path) -> tuple[int, float]:
    from watcher.engine import Engine

    engine = Engine(cfg.engine)
    t0 = time.perf_counter()
    histories: dict[str, list[Any]] = defaultdict(list)
    n = 0
    for event, capture in scorable_captures(cfg, recs, rounds, warc_dir):
        histories[event.history_key(cfg)].append(capture)
        n += 1
    for history, captures in histories.items():
        engine.scan_history(history, captures)
    return n, time.perf_counter() - t0


async def _ask(child: Any, question: bytes) -> bytes:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(question + b"\n")
    await child.stdin.drain()
    return bytes(await child.stdout.readline()).strip()


async def stream_rate(cfg: Any, recs: list[Rec], rounds: int, sampler_every_s: float,
                      separate_producer: bool = False, split: Path | None = None,
                      keyed_feed: bool = False) -> dict[str, Any]:
    """``split`` (the workdir of the run): the router runs in a process of its own
    (``kafka.stage: router``) and this process is the scorer alone (``kafka.stage: scorer``)."""
    from consumers.app import ConsumerApp
    from consumers.client import produce
    from watcher.broker import EmbeddedBroker

    assert cfg.kafka.bootstrap_servers is not None
    port = int(cfg.kafka.bootstrap_servers.rsplit(":", 1)[1])
    broker = EmbeddedBroker(port)
    await broker.start()
    router = None
    if split is not None:
        cfg = cfg.model_copy(update={"kafka": cfg.kafka.model_copy(update={"stage": "scorer"})})
        router = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--router-child", cfg.kafka.bootstrap_servers, str(cfg.acquire.warc_dirs[0]),
            str(split), str(cfg.kafka.partitions), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        assert router.stdout is not None
        if (await router.stdout.readline()).strip() != b"ready":
            raise RuntimeError("the router process did not start")
    app = ConsumerApp(cfg)
    await app.start()
    try:
        while not (app.scorer and app.scorer.assignment()
                   and (await _ask(router, b"assigned") == b"yes" if router is not None
                        else app.router and app.router.assignment())):
            await asyncio.sleep(0.1)
        crawl = next(iter(cfg.kafka.input_topics))
        child = None
        if separate_producer:
            # The crawler's side in a process of its own, as in a deployment: this process holds the
            # consumer app alone (its interpreter lock was shared with the producer's Python work).
            fd, name = tempfile.mkstemp(prefix="stream-bench-", suffix=".jsonl")
            os.close(fd)
            feed = Path(name)
            feed.write_bytes(b"".join(message(rec, r) + b"\n" for r in range(rounds) for rec in recs))
            child = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--produce-child", cfg.kafka.bootstrap_servers, crawl, str(feed),
                *(["--keyed-feed"] if keyed_feed else []),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
            assert child.stdin is not None and child.stdout is not None
            if (await child.stdout.readline()).strip() != b"ready":
                raise RuntimeError("the producer process did not start")
        with RssSampler(sampler_every_s) as sampler:
            t0, cpu0 = time.perf_counter(), time.process_time()
            last_change, seen = t0, 0
            if child is not None:
                assert child.stdin is not None
                child.stdin.write(b"go\n")
                await child.stdin.drain()
            else:
                for r in range(rounds):
                    await produce(cfg.kafka.bootstrap_servers, crawl, [message(rec, r) for rec in recs])
                    # Keep at most two rounds in the broker ahead of the scorer: flat memory on our side.
                    while app.router is not None and app.router.processed < (r - 1) * len(recs):
                        await asyncio.sleep(0.05)
            while True:
                if app.verdicts != seen:
                    seen, last_change = app.verdicts, time.perf_counter()
                if (child is None or child.returncode is not None) and await app.caught_up() \
                        and (router is None or await _ask(router, b"caught") == b"yes"):
                    break
                if child is not None and child.returncode is None:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(child.wait(), 0.05)
                    continue
                await asyncio.sleep(0.05)
            seconds = last_change - t0
            cpu_s = time.process_time() - cpu0  # this process, all its threads, to the caught-up check
            busy_s = time.perf_counter() - t0
            if child is not None and child.returncode != 0:
                raise RuntimeError(f"the producer process failed ({child.returncode})")
        dead = sum(s.value for m in app.metrics.dead_letter.collect() for s in m.samples
                   if s.name.endswith("_total"))
        # Captures scored: the scorer's records less its dead letters.  Verdicts can be more: a capture
        # that reaches the scorer after a later one of its history (the feed is unkeyed, so the
        # router's partitions can pass one another) re-scores the later one, a correction.
        scored = (app.scorer.processed if app.scorer is not None else 0) - int(dead)
        return {"verdicts": app.verdicts, "captures": scored, "seconds": seconds, "dead_letters": dead,
                "cpu_s": cpu_s, "wall_s": busy_s,
                "peak_rss_mb": sampler.peak, "rss_samples": sampler.samples}
    finally:
        await app.stop()
        if router is not None:
            with contextlib.suppress(Exception):
                await _ask(router, b"stop")
            await router.wait()
        await broker.stop()


def router_child(bootstrap: str, warc_dir: Path, workdir: Path, partitions: int) -> int:
    """``--router-child``: the router alone (``kafka.stage: router``) until told to stop; answers the
    parent's questions on stdin (``assigned``, ``caught``) with ``yes`` or ``no``."""
    from consumers.app import ConsumerApp

    cfg = make_config(bootstrap, warc_dir, workdir, partitions)
    cfg = cfg.model_copy(update={"kafka": cfg.kafka.model_copy(update={"stage": "router"})})

    async def run() -> None:
        async with ConsumerApp(cfg) as app:
            print("ready", flush=True)
            while (line := (await asyncio.to_thread(sys.stdin.readline)).strip()) not in ("", "stop"):
                if line == "assigned":
                    yes = bool(app.router and app.router.assignment())
                else:
                    yes = await app.caught_up()
                print("yes" if yes else "no", flush=True)
        print("stopped", flush=True)

    asyncio.run(run())
    return 0


def watcher_rate(cfg: Any, recs: list[Rec], rounds: int, warc_dir: Path, workdir: Path) -> tuple[int, float]:
    """The streaming engine without Kafka: ``Watcher.score`` per capture on a SQLite store."""
    from watcher.engine import Engine
    from watcher.store import open_store
    from watcher.watch import Watcher

    store = open_store(cfg.store.model_copy(update={"path": str(workdir / f"watcher-{time.time_ns()}.db")}))
    watcher = Watcher(Engine(cfg.engine), store)
    n = 0
    t0 = time.perf_counter()
    try:
        for _event, capture in scorable_captures(cfg, recs, rounds, warc_dir):
            watcher.score(capture)
            n += 1
    finally:
        store.close()
    return n, time.perf_counter() - t0


def produce_child(bootstrap: str, topic: str, feed: Path, keyed: bool = False) -> int:
    """``--produce-child``: send the feed's lines to ``topic`` once the parent says go (the crawler's
    side of the benchmark, in its own process)."""
    from aiokafka import AIOKafkaProducer

    values = feed.read_bytes().splitlines()
    feed.unlink()

    async def run() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
        await producer.start()
        try:
            print("ready", flush=True)
            await asyncio.to_thread(sys.stdin.readline)
            # keyed: each event under its URL, so one URL's captures stay in order through the router
            futures = [await producer.send(topic, value=v, key=json.loads(v)["url"].encode() if keyed else None)
                       for v in values]
            await asyncio.gather(*futures)
        finally:
            await producer.stop()

    asyncio.run(run())
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warc-dir", type=Path, default=SHARED_WARC)
    ap.add_argument("--rounds", type=int, default=1,
                    help="replays of the record set; rounds after the first repeat payload digests (default 1)")
    ap.add_argument("--repeat", type=int, default=3, help="measure each side this often, keep the best (default 3)")
    ap.add_argument("--events", type=int, help="replay until this many events were produced (memory run)")
    ap.add_argument("--partitions", type=int, default=6)
    ap.add_argument("--same-process", action="store_true",
                    help="produce the events from this process, beside the consumer app (the default runs the "
                         "producer in a process of its own, as a crawler is)")
    ap.add_argument("--split", action="store_true",
                    help="run the router in a process of its own (kafka.stage: router) and measure this process "
                         "as the scorer alone (kafka.stage: scorer), as a deployment with separate stages does")
    ap.add_argument("--keyed-feed", action="store_true",
                    help="the producer keys each event by its URL (Heritrix does not): one URL's captures stay in "
                         "order through the router, so no capture arrives late and nothing is re-scored")
    ap.add_argument("--produce-child", nargs=3, metavar=("BOOTSTRAP", "TOPIC", "FEED"), help=argparse.SUPPRESS)
    ap.add_argument("--router-child", nargs=4, metavar=("BOOTSTRAP", "WARC_DIR", "WORKDIR", "PARTITIONS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.produce_child:
        bootstrap, topic, feed = args.produce_child
        return produce_child(bootstrap, topic, Path(feed), args.keyed_feed)
    if args.router_child:
        bootstrap, warc_dir, workdir, partitions = args.router_child
        return router_child(bootstrap, Path(warc_dir), Path(workdir), int(partitions))
    if args.keyed_feed and (args.same_process or args.events):
        # only the producer process keys its events; beside the app (and in the memory run) they go unkeyed
        ap.error("--keyed-feed needs the producer in a process of its own (not with --same-process or --events)")
    if not args.warc_dir.is_dir():
        print(f"no WARC directory at {args.warc_dir} (the shared data is absent)", file=sys.stderr)
        return 2
    recs = collect_records(args.warc_dir)
    rounds = max(1, -(-args.events // len(recs))) if args.events else args.rounds
    repeat = 1 if args.events else max(1, args.repeat)
    workdir = Path(tempfile.mkdtemp(prefix="stream-bench-"))
    print(f"{len(recs)} response records from {args.warc_dir}; {rounds} round(s) = {len(recs) * rounds} events;"
          f" best of {repeat}")

    best_b = best_w = best_s = 0.0
    n_batch = n_watch = 0
    stream: dict[str, Any] = {}
    peak = 0.0
    for i in range(repeat):
        cfg = make_config(f"127.0.0.1:{free_port()}", args.warc_dir, workdir / f"s{i}", args.partitions)
        (workdir / f"s{i}").mkdir(parents=True, exist_ok=True)
        if not args.events:
            n_batch, seconds = batch_rate(cfg, recs, rounds, args.warc_dir)
            best_b = max(best_b, n_batch / seconds if seconds else 0.0)
            n_watch, seconds = watcher_rate(cfg, recs, rounds, args.warc_dir, workdir / f"s{i}")
            best_w = max(best_w, n_watch / seconds if seconds else 0.0)
        # The memory run (--events) keeps the producer here: it paces itself by the router's progress.
        run = asyncio.run(stream_rate(cfg, recs, rounds, 1.0 if args.events else 0.25,
                                      separate_producer=not (args.events or args.same_process),
                                      split=workdir / f"s{i}" if args.split else None, keyed_feed=args.keyed_feed))
        rate = run["captures"] / run["seconds"] if run["seconds"] else 0.0
        peak = max(peak, run["peak_rss_mb"])
        if rate >= best_s:
            best_s, stream = rate, run

    if not args.events:
        print(f"batch engine (Engine.scan_history, WARC reads included): {n_batch} captures, {best_b:.1f} captures/s")
        print(f"streaming engine alone (Watcher.score, SQLite, no Kafka): {n_watch} captures,"
              f" {best_w:.1f} captures/s")
    shape = "router in a process of its own, this one the scorer alone" if args.split else "router and scorer in one"
    print(f"stream end to end ({shape}; produced -> verdict published): {stream['captures']} captures in "
          f"{stream['seconds']:.2f} s = {best_s:.1f} captures/s ({stream['verdicts']} verdicts with corrections,"
          f" {stream['dead_letters']:.0f} dead letters)")
    print(f"CPU of the consumer process over the run: {stream['cpu_s']:.2f} s in {stream['wall_s']:.2f} s of wall"
          f" time (to the last caught-up check)")
    if best_b:
        print(f"ratio stream/batch: {100 * best_s / best_b:.0f} % (target >= 90 %);"
              f" stream/streaming engine: {100 * best_s / best_w:.0f} %")
    samples = stream["rss_samples"]
    if samples:
        marks = [samples[int(i * (len(samples) - 1) / 4)] for i in range(5)]
        print("RSS over the run (s: MB): " + ", ".join(f"{t:.0f}: {m:.0f}" for t, m in marks))
    print(f"peak RSS of the consumer process: {peak:.0f} MB (limit 1024 MB)")
    print(f"(finished {datetime.now(UTC):%H:%M:%S} UTC; workdir {workdir})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
