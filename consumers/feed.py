"""``driftline feed``: capture events from files onto the input topic, as the crawler sends them.

The events are built by :mod:`watcher.feed` (no Kafka there); this module
finds the broker (the configured one, or the embedded broker a running
``driftline run`` started on ``kafka.embedded_port``), produces them unkeyed
with aiokafka, paces them (``--rate``) and, with ``--follow``, keeps reading
a growing ``crawl.log`` across rotation until Ctrl-C.  It ends with one
summary line on stderr: events sent, skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
import time
from collections.abc import Iterable
from typing import Any

from watcher.broker import BrokerError
from watcher.config import Config
from watcher.errors import ConfigError, InputError
from watcher.feed import FEED_AS, FeedBuilder, FeedMessage, LogFollower

from .streamcli import broker_for

log = logging.getLogger(__name__)

EXAMPLES = """examples:
  driftline feed crawl.warc.gz                      every capture of a WARC, as Heritrix's Kafka feed sends it
  driftline feed index.cdxj --rate 50               from a CDX(J) index, 50 events a second
  driftline feed crawl.log --as crawl-log           crawl.log lines, one a message
  driftline feed crawl.log --follow                 a running crawl: new lines as Heritrix writes them
"""


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected events per second > 0, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected events per second > 0, got {text!r}")
    return value


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``driftline feed`` on the main parser's subparsers."""
    p: argparse.ArgumentParser = sub.add_parser(
        "feed", help="send WARC/ARC files, CDX(J) indexes or crawl.log files as capture events to the input topic",
        description="Send WARC/ARC files, CDX(J) indexes or Heritrix crawl.log files to the input topic as capture "
                    "events, exactly as Heritrix's Kafka crawl-log feed sends them (broker, topics and "
                    "acquire.warc_dirs from -c CONFIG, as for 'run').",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="WARC/ARC file, CDX/CDXJ index or crawl.log")
    p.add_argument("--as", dest="feed_as", choices=FEED_AS, default="heritrix-kafka",
                   help="message format: heritrix-kafka (KafkaCrawlLogFeed JSON, the default), crawl-log (one "
                        "crawl.log line a message) or driftline (driftline's event JSON)")
    p.add_argument("--topic", metavar="T", help="topic to send to (default: the configured crawler input topic)")
    p.add_argument("--rate", type=_rate, metavar="N", help="events per second (default: as fast as the broker takes)")
    p.add_argument("--follow", action="store_true",
                   help="after the files, keep sending the lines appended to a crawl.log (rotation followed) "
                        "until Ctrl-C")
    p.set_defaults(func=run)
    return p


def default_topic(cfg: Config, fmt: str) -> str:
    """The configured input topic a crawler feeds: the first whose format takes ``fmt``, not the DOI monitor's."""
    topics = [t for t, f in cfg.kafka.input_topics.items() if t != cfg.doi.events_topic]
    for topic in topics:
        if cfg.kafka.input_topics[topic] in ("auto", fmt):
            return topic
    if topics:
        return topics[0]
    raise ConfigError("kafka.input_topics names no crawler input topic: pass --topic", reason="usage")


class _Pacer:
    """Spaces sends ``1/rate`` seconds apart (no drift: the schedule is absolute)."""

    def __init__(self, rate: float | None) -> None:
        self.interval = 1.0 / rate if rate else 0.0
        self.next = time.monotonic()

    async def wait(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        if self.next > now:
            await asyncio.sleep(self.next - now)
        self.next = max(self.next, now) + self.interval


async def _send_all(producer: Any, topic: str, messages: Iterable[FeedMessage], pacer: _Pacer) -> None:
    """Send ``messages`` and wait for the broker's acknowledgements (every 500, and at the end)."""
    futures = []
    for msg in messages:
        await pacer.wait()
        futures.append(await producer.send(topic, value=msg.value, key=msg.key))
        if len(futures) >= 500:
            await asyncio.gather(*futures)
            futures.clear()
    await asyncio.gather(*futures)


async def feed(cfg: Config, inputs: list[str], *, fmt: str, topic: str | None, rate: float | None,
               follow: bool, stop: asyncio.Event | None = None, poll_s: float = 0.5) -> FeedBuilder:
    """Send ``inputs`` (then, with ``follow``, what is appended to the crawl.logs among them) to the topic."""
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaError

    builder = FeedBuilder(cfg, fmt, warn=lambda line: print(f"driftline feed: warning: {line}", file=sys.stderr))
    kinds = {path: builder.kind(path) for path in inputs}  # an unusable input fails before anything is sent
    logs = [p for p, k in kinds.items() if k == "crawl-log"]
    if follow and not logs:
        raise InputError("--follow needs a crawl.log among the inputs", reason="usage")
    bootstrap, security = await broker_for(cfg, "feed")
    target = topic or default_topic(cfg, fmt)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5,
                                client_id=f"{cfg.kafka.client_id}-feed", **security)
    await producer.start()
    pacer = _Pacer(rate)
    try:
        await _feed_into(producer, builder, inputs, logs if follow else [], target, pacer, stop, poll_s)
    except KafkaError as exc:
        raise BrokerError(f"sending to {target} on {bootstrap} failed: {exc}", reason="broker") from None
    finally:
        await producer.stop()
    return builder


async def _feed_into(producer: Any, builder: FeedBuilder, inputs: list[str], logs: list[str], target: str,
                     pacer: _Pacer, stop: asyncio.Event | None, poll_s: float) -> None:
    """The files, then (``logs``: the crawl.logs to follow) their new lines until ``stop`` is set.

    A followed log is read by its follower from its first line, so a line appended while the other
    inputs are sent is sent once, and a partly written last line waits for its newline."""
    await _send_all(producer, target, builder.messages([p for p in inputs if p not in logs]), pacer)
    if not logs:
        return
    stop = stop or asyncio.Event()
    followers = [LogFollower(p, from_start=True) for p in logs]
    try:
        while True:
            for path, follower in zip(logs, followers, strict=True):
                lines = follower.read()
                if lines:
                    await _send_all(producer, target, builder.lines(lines, path), pacer)
            if stop.is_set():
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), poll_s)
    finally:
        for follower in followers:
            follower.close()


async def _main(args: argparse.Namespace, cfg: Config) -> FeedBuilder:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    installed = []
    if args.follow:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
                installed.append(sig)
    try:
        return await feed(cfg, list(args.inputs), fmt=args.feed_as, topic=args.topic, rate=args.rate,
                          follow=args.follow, stop=stop)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


def run(args: argparse.Namespace, cfg: Config) -> int:
    """``driftline feed``: 0 once every event is acknowledged by the broker."""
    builder = asyncio.run(_main(args, cfg))
    stats = builder.stats
    why = ", ".join(f"{n} {reason}" for reason, n in sorted(stats.skipped.items()))
    print(f"driftline feed: {stats.sent} events sent to {args.topic or default_topic(cfg, args.feed_as)}, "
          f"{stats.skipped_total} skipped{f' ({why})' if why else ''}", file=sys.stderr)
    return 0
