"""``driftline demo``: stream the demo crawl through the real pipeline.

What it does, in order: write the demo WARC and its Heritrix feed events into
a work directory; start the streaming app in-process
(:class:`consumers.app.ConsumerApp`) on an embedded Tansu broker, a SQLite
store in the work directory and a WARC-only acquirer (no network, no
browser); produce the events to the input topic, crawl by crawl; print every
verdict, alert and recommendation as it comes back from the broker; print a
summary per seed; then run the DOI monitor against a local resolver and
publisher (:mod:`watcher.demo.doi`: a redesign, an edited abstract, a
replaced article, a lapsed domain, a bot wall) and print its checks and a
summary per DOI; then keep the metrics and DOI status endpoints up until
Ctrl-C (or stop at once with ``once=True``).

Why in-process and on the real broker: the demo is the first command a new
user runs, and it should exercise exactly the path production events take
(feed JSON -> router -> keyed topic -> scorer -> result topics), not a
shortcut that could hide a broken deployment.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..canonical import url_key
from ..config import CanonicalConfig, Config
from ..errors import DriftlineError
from ..model import Behaviour
from ..ports import free_port, port_free
from .crawl import CAPTURES_PER_SEED, DemoCrawl, build_demo_warc
from .doi import DoiDemo, DoiDemoResult, print_doi_summary

log = logging.getLogger(__name__)

DEMO_TOPIC = "heritrix-crawl-log"




def demo_config(cfg: Config, workdir: Path) -> Config:
    """``cfg`` adjusted for the demo: embedded broker on a free port, a fresh
    consumer group, the store in ``workdir``, WARC-only acquisition (the demo
    never touches the network) and no browser."""
    kafka = cfg.kafka.model_copy(update={
        "bootstrap_servers": None,
        "embedded_broker": True,
        "embedded_port": free_port(),
        "group_id": f"driftline-demo-{uuid.uuid4().hex[:8]}",
        "input_topics": {DEMO_TOPIC: "heritrix-kafka"},
        # One process, one member per group: short timeouts make the first group
        # join take about a second instead of a production-sized wait.
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 300,
        "rebalance_timeout_ms": 3000,
        "metadata_max_age_ms": 1000,
        "commit_interval_ms": 200,
    })
    store = cfg.store.model_copy(update={"backend": "sqlite", "path": str(workdir / "demo.db")})
    acquire = cfg.acquire.model_copy(update={
        "warc_dirs": (str(workdir),), "order": ("warc",), "warc_http_base": None, "replay_base": None,
    })
    render = cfg.render.model_copy(update={"enabled": False})
    metrics = cfg.metrics
    if metrics.enabled and not port_free(metrics.host, metrics.port):
        port = free_port()
        log.warning("metrics port %d is in use; the demo serves metrics on port %d", metrics.port, port)
        metrics = metrics.model_copy(update={"port": port})
    return cfg.model_copy(update={
        "kafka": kafka, "store": store, "acquire": acquire, "render": render, "metrics": metrics,
    })


@dataclass
class SeedTally:
    name: str
    url: str
    expected: str
    statuses: list[tuple[str, str]] = field(default_factory=list)  # (capture_time, status)
    alerts: int = 0
    recommendations: list[str] = field(default_factory=list)

    @property
    def behaviour(self) -> Behaviour:
        from ..engine import behaviour_of

        return behaviour_of([s for _, s in sorted(self.statuses)])

    @property
    def off_topic(self) -> int:
        return sum(1 for _, s in self.statuses if s == "off-topic")


@dataclass
class DemoResult:
    """What the demo saw (returned for tests; printed for users)."""

    crawl: DemoCrawl
    workdir: Path
    seeds: dict[str, SeedTally]
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    alerts: list[dict[str, Any]] = field(default_factory=list)
    recommendations: list[dict[str, Any]] = field(default_factory=list)
    dead_letters: list[dict[str, Any]] = field(default_factory=list)
    complete: bool = False
    doi: DoiDemoResult | None = None  # the DOI monitor's part (watcher/demo/doi.py)

    @property
    def as_expected(self) -> bool:
        """Every seed behaved as designed and exactly the designed seeds got a recommendation."""
        by_url = {s.url: s for s in self.crawl.seeds}
        for tally in self.seeds.values():
            seed = by_url[tally.url]
            if len(tally.statuses) != CAPTURES_PER_SEED or tally.behaviour != seed.behaviour:
                return False
            if bool(tally.recommendations) != seed.recommend:
                return False
        return self.complete and not self.dead_letters and (self.doi is None or self.doi.as_expected)


def _short_time(value: Any) -> str:
    text = str(value or "")
    return text[:16].replace("T", " ") if text else "-"


class _Printer:
    """One line per message, as it arrives; an alert after its verdict.

    Why the wait: alerts and verdicts come from two topics, read together, and an alert often
    arrived first, so the demo printed ALERT lines before the verdicts of that date.  An alert is
    held until the verdict it repeats (same ``verdict_id``) is printed, then printed under it;
    :meth:`flush` prints any still held (a verdict that never came) before the summary."""

    def __init__(self, out: TextIO, result: DemoResult, canonical: CanonicalConfig | None = None) -> None:
        self.out = out
        self.result = result
        self._by_history = {url_key(s.url, canonical): s.url for s in result.crawl.seeds}
        self._printed: set[str] = set()
        self._held: dict[str, list[dict[str, Any]]] = {}

    def flush(self) -> None:
        for alerts in self._held.values():
            for msg in alerts:
                self._alert_line(msg)
        self._held.clear()
        self.out.flush()

    def _alert_line(self, msg: dict[str, Any]) -> None:
        self.out.write(f"{_short_time(msg.get('capture_time'))}  ALERT {msg.get('change')}: {msg.get('url')}"
                       f" [{msg.get('page_kind') or 'content'}]\n")

    def tally(self, history: str | None, url: str | None) -> SeedTally | None:
        key = self._by_history.get(history or "") or (url if url in self.result.seeds else None)
        return self.result.seeds.get(key) if key else None

    def __call__(self, topic_kind: str, msg: dict[str, Any]) -> None:
        w = self.out.write
        if topic_kind == "verdict":
            self.result.verdicts.append(msg)
            t = self.tally(msg.get("history"), msg.get("url"))
            if t is not None:
                t.statuses.append((str(msg.get("capture_time")), str(msg.get("status"))))
            w(f"{_short_time(msg.get('capture_time'))}  {msg.get('url')}\n"
              f"    {msg.get('change', '-'):<10} {msg.get('status', '-'):<10} {msg.get('reason', '')}\n")
            vid = str(msg.get("verdict_id"))
            self._printed.add(vid)
            for held in self._held.pop(vid, []):
                self._alert_line(held)
        elif topic_kind == "alert":
            self.result.alerts.append(msg)
            t = self.tally(msg.get("history"), msg.get("url"))
            if t is not None:
                t.alerts += 1
            vid = str(msg.get("verdict_id"))
            if vid in self._printed:
                self._alert_line(msg)
            else:
                self._held.setdefault(vid, []).append(msg)
        elif topic_kind == "recommendation":
            self.result.recommendations.append(msg)
            t = self.tally(msg.get("history"), msg.get("seed"))
            if t is not None:
                t.recommendations.append(str(msg.get("id")))
            w(f"{_short_time(msg.get('since'))}  RECOMMEND stop-seed {msg.get('seed')} (off topic since then)\n"
              f"    {msg.get('reason')}\n    what to do: {msg.get('what_to_do')}\n")
        else:
            self.result.dead_letters.append(msg)
            w(f"DEAD LETTER ({msg.get('reason')}): {str(msg.get('message'))[:200]}\n")
        self.out.flush()


async def _follow(bootstrap: str, topics: dict[str, str], on_message: Callable[[str, dict[str, Any]], None],
                  ready: asyncio.Event) -> None:
    """Read ``topics`` from the beginning (no group) until cancelled."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                auto_offset_reset="earliest", client_id=f"driftline-demo-reader-{uuid.uuid4().hex[:6]}")
    await consumer.start()
    try:
        tps: list[Any] = []
        for topic in topics:
            parts = None
            for _ in range(100):
                parts = consumer.partitions_for_topic(topic)
                if parts:
                    break
                await consumer.topics()
                await asyncio.sleep(0.1)
            tps.extend(TopicPartition(topic, p) for p in sorted(parts or ()))
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ready.set()
        while True:
            batch = await consumer.getmany(timeout_ms=200)
            for tp, records in batch.items():
                for r in records:
                    try:
                        value = json.loads(r.value)
                    except (ValueError, TypeError):
                        log.warning("demo: unreadable message on %s", tp.topic)
                        continue
                    on_message(topics[tp.topic], value)
    finally:
        await consumer.stop()


def print_summary(result: DemoResult, out: TextIO) -> None:
    """The per-seed table: captures, behaviour, off-topic count, recommendation."""
    w = out.write
    rows = [("seed", "captures", "behaviour", "expected", "off-topic", "alerts", "stop recommended")]
    for seed in result.crawl.seeds:
        t = result.seeds[seed.url]
        rows.append((seed.name, str(len(t.statuses)), t.behaviour, seed.behaviour, str(t.off_topic), str(t.alerts),
                     "yes" if t.recommendations else "no"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    w("\n")
    for n, row in enumerate(rows):
        w("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() + "\n")
        if n == 0:
            w("  ".join("-" * wd for wd in widths) + "\n")
    w(f"\n{len(result.verdicts)} verdicts, {len(result.alerts)} alerts, "
      f"{len(result.recommendations)} crawl-stop recommendations, {len(result.dead_letters)} dead letters.\n")
    w("Every seed behaved as designed.\n" if result.as_expected else "Some seeds did NOT behave as designed.\n")
    out.flush()


async def demo(cfg: Config, *, once: bool, out: TextIO | None = None, workdir: Path | None = None,
               stop: asyncio.Event | None = None, timeout_s: float = 180.0, pace_s: float | None = None) -> DemoResult:
    """The demo as a coroutine (what :func:`run_demo` runs); returns what it saw."""
    from consumers.app import ConsumerApp

    out = out or sys.stdout
    workdir = workdir or Path(tempfile.mkdtemp(prefix="driftline-demo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    crawl = build_demo_warc(workdir)
    dcfg = demo_config(cfg, workdir)
    result = DemoResult(crawl=crawl, workdir=workdir, seeds={
        s.url: SeedTally(s.name, s.url, s.behaviour) for s in crawl.seeds
    })
    out.write(f"driftline demo: {len(crawl.seeds)} seeds x {CAPTURES_PER_SEED} captures, "
              f"WARC {crawl.path}\n")
    out.flush()
    k = dcfg.kafka
    topics = {k.results_topic: "verdict", k.alerts_topic: "alert", k.recommendations_topic: "recommendation",
              k.dead_letter_topic: "dead-letter"}
    printer = _Printer(out, result, dcfg.engine.canonical)
    async with ConsumerApp(dcfg) as app, DoiDemo(dcfg, workdir, out) as doi_demo:
        from consumers.client import produce

        ready = asyncio.Event()
        follower = asyncio.create_task(_follow(app.bootstrap_servers, topics, printer, ready))
        try:
            await asyncio.wait_for(ready.wait(), 30.0)
            pace = (0.0 if once else 1.0) if pace_s is None else pace_s
            deadline = time.monotonic() + timeout_s
            expected = 0
            for batch in _crawl_batches(list(crawl.events)):
                # One crawl at a time, as real crawls are weeks apart: Heritrix's feed
                # is unkeyed, so events produced together land on different input
                # partitions and a later capture could be scored before an earlier one.
                await produce(app.bootstrap_servers, DEMO_TOPIC, [json.dumps(e).encode("utf-8") for e in batch])
                expected += sum(1 for e in batch if e["hop_path"] == "")
                while len(result.verdicts) + len(result.dead_letters) < expected:
                    if time.monotonic() > deadline:
                        break
                    await asyncio.sleep(0.05)
                if pace:
                    await asyncio.sleep(pace)
            await app.wait_caught_up(timeout_s=max(1.0, deadline - time.monotonic()))
            await asyncio.sleep(0.5)  # the last recommendation and alerts of the final capture
            result.complete = len(result.verdicts) >= crawl.scored_events
            printer.flush()
            print_summary(result, out)
            result.doi = await doi_demo.run()
            print_doi_summary(result.doi, out)
            if not once:
                m = dcfg.metrics
                where = f"http://{m.host}:{m.port}/metrics" if m.enabled else "(metrics disabled)"
                out.write(f"\nMetrics: {where}   DOI status and metrics: {doi_demo.status_url}/doi/status, "
                          f"{doi_demo.status_url}/metrics (DOIs checked again every few seconds)\n"
                          f"Work directory: {workdir}\nPress Ctrl-C to stop.\n")
                out.flush()
                rechecks = asyncio.create_task(doi_demo.keep_checking())
                try:
                    await (stop or asyncio.Event()).wait()
                finally:
                    rechecks.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await rechecks
        finally:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower
    return result


def _crawl_batches(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Events grouped by crawl (their 14-day crawl round), in order."""
    batches: list[list[dict[str, Any]]] = []
    current: str | None = None
    for e in events:
        day = str(e["start_time_plus_duration"])[:8]
        if day != current:
            batches.append([])
            current = day
        batches[-1].append(e)
    return batches


def run_demo(cfg: Config, *, once: bool, workdir: Path | None = None, keep: Path | None = None) -> int:
    """``driftline demo``: 0 when every seed behaved as designed, 1 otherwise, 2 on a setup error.

    ``workdir`` holds the WARC and the SQLite store (alerts owed and sent
    included).  When none is given a temporary directory is made and removed
    on the way out (also on Ctrl-C, SIGTERM or an error): a demo leaves
    nothing behind, unless ``keep`` (``--keep DIR``) names a new or empty
    directory: the work is done there and kept, with a CDXJ index of the
    WARC and its crawl.log (:mod:`watcher.demo.sample`).
    """
    if keep is not None:
        if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
            raise DriftlineError(f"--keep {keep}: give a new or empty directory (a store left there by another run "
                                 "would change the verdicts)", reason="usage")
        keep.mkdir(parents=True, exist_ok=True)
        code = run_demo(cfg, once=once, workdir=keep)
        from .crawl import DEFAULT_WARC_NAME, build_demo_warc
        from .sample import write_sample

        files = write_sample(build_demo_warc(keep / DEFAULT_WARC_NAME), keep)
        sys.stdout.write(f"\nKept in {keep}: " + ", ".join(p.name for p in files) + f", and the store demo.db. "
                         f"Try: driftline scan {files[0]} -o result.json\n")
        sys.stdout.flush()
        return code
    if workdir is None:
        tmp = Path(tempfile.mkdtemp(prefix="driftline-demo-"))
        try:
            return run_demo(cfg, once=once, workdir=tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    async def _main() -> DemoResult:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        return await demo(cfg, once=once, stop=stop, workdir=workdir)

    try:
        result = asyncio.run(_main())
    except DriftlineError as exc:
        log.error("driftline demo failed (%s): %s", exc.reason, exc)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0 if result.as_expected else 1


def main(argv: list[str] | None = None) -> int:
    """``python -m watcher.demo [--once] [--config FILE]``."""
    import argparse

    from ..config import load_config

    parser = argparse.ArgumentParser(prog="driftline demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--once", action="store_true", help="exit after the summary instead of serving metrics")
    parser.add_argument("--config", help="configuration file (default: the shipped config.yaml)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    return run_demo(load_config(args.config), once=args.once)
