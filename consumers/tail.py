"""``driftline tail``: a readable stream of what driftline publishes.

It reads one result topic (verdicts, alerts, recommendations or dead
letters) without a consumer group: it assigns itself every partition, so it
never joins, rebalances or commits in the app's group, and starts at once
(no group-join wait).  Without ``--follow`` it reads what the topic holds
and stops once it has reached the end offsets it saw at start; with
``--follow`` it prints new messages until Ctrl-C.

Text lines: time, change class, topic status, URL, reason (one a message);
``-f jsonl`` prints each message's JSON as published, one a line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import sys
import time
import uuid
from typing import Any

from watcher.config import Config

from .streamcli import broker_for

log = logging.getLogger(__name__)

KINDS = ("verdicts", "alerts", "recommendations", "dead-letters")

EXAMPLES = """examples:
  driftline tail                                 the verdicts published so far, then exit
  driftline tail verdicts --follow               new verdicts as they are published (Ctrl-C ends)
  driftline tail alerts --from-beginning --follow
  driftline tail dead-letters -f jsonl | jq .reason
"""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``driftline tail`` on the main parser's subparsers."""
    p: argparse.ArgumentParser = sub.add_parser(
        "tail", help="print what driftline publishes: verdicts, alerts, recommendations or dead letters",
        description="Print the messages driftline publishes, one a line (broker and topic names from -c CONFIG, "
                    "as for 'run').  Without --follow: everything the topic holds, then exit.  With --follow: "
                    "new messages until Ctrl-C (--from-beginning: everything first).",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="?", choices=KINDS, default="verdicts", help="which topic (default: verdicts)")
    p.add_argument("--from-beginning", action="store_true",
                   help="with --follow, print the messages already published first")
    p.add_argument("--follow", action="store_true", help="keep printing new messages until Ctrl-C")
    p.add_argument("-f", "--format", dest="tail_format", choices=["text", "jsonl"], default="text",
                   help="text (time, change, status, URL, reason) or jsonl (each message's JSON); default text")
    p.set_defaults(func=run)
    return p


def topic_of(cfg: Config, what: str) -> str:
    k = cfg.kafka
    return {"verdicts": k.results_topic, "alerts": k.alerts_topic, "recommendations": k.recommendations_topic,
            "dead-letters": k.dead_letter_topic}[what]


def _one_line(text: Any) -> str:
    return " ".join(str(text).split())


def text_line(obj: Any) -> str:
    """One readable line for one published message (any of the four kinds)."""
    if not isinstance(obj, dict):
        return _one_line(json.dumps(obj))
    kind = obj.get("type")
    if kind in ("verdict", "alert"):
        version = obj.get("version") or 1
        again = f" (re-scored, v{version})" if version > 1 else ""
        reason = obj.get("alert") if kind == "alert" else obj.get("reason")
        return (f"{_one_line(obj.get('capture_time') or '-')} {_one_line(obj.get('change') or '-'):<10} "
                f"{_one_line(obj.get('status') or '-'):<9} {_one_line(obj.get('url') or '-')} "
                f"{_one_line(reason or '')}{again}")
    if kind == "dead-letter":
        where = f"{obj.get('topic')}[{obj.get('partition')}]@{obj.get('offset')}"
        return (f"{_one_line(obj.get('time') or '-')} dead-letter {_one_line(obj.get('reason') or '-'):<9} "
                f"{_one_line(where)} {_one_line(obj.get('message') or '')}")
    if obj.get("action") == "stop-seed":
        return (f"{_one_line(obj.get('since') or '-')} stop-seed  {_one_line(obj.get('job') or '-'):<9} "
                f"{_one_line(obj.get('seed') or '-')} {_one_line(obj.get('reason') or '')} "
                f"{_one_line(obj.get('what_to_do') or '')}")
    return _one_line(json.dumps(obj, ensure_ascii=False, sort_keys=True))


def _render(value: bytes | None, fmt: str) -> str:
    text = (value or b"").decode("utf-8", "replace")
    try:
        obj = json.loads(text)
    except ValueError:
        return _one_line(text)
    if fmt == "jsonl":
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return text_line(obj)


async def _caught_up(consumer: Any, ends: dict[Any, int], timeout_s: float = 30.0) -> bool:
    """Every partition read up to the end offset seen at start (a position the broker does not give
    within ``timeout_s`` counts as not yet: aiokafka's ``position()`` alone would wait without a limit)."""
    for tp, end in ends.items():
        try:
            if await asyncio.wait_for(consumer.position(tp), timeout_s) < end:
                return False
        except TimeoutError:
            return False
    return True


async def tail(cfg: Config, what: str, *, from_beginning: bool, follow: bool, fmt: str,
               out: Any = None, stop: asyncio.Event | None = None, wait_topic_s: float = 5.0) -> int:
    """Print the messages of ``what``'s topic to ``out``; returns how many were printed."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    out = out or sys.stdout
    stop = stop or asyncio.Event()
    topic = topic_of(cfg, what)
    bootstrap, security = await broker_for(cfg, "tail")
    start_at_beginning = from_beginning or not follow
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                auto_offset_reset="earliest" if start_at_beginning else "latest",
                                client_id=f"{cfg.kafka.client_id}-tail-{uuid.uuid4().hex[:6]}", **security)
    await consumer.start()
    printed = 0
    try:
        partitions: set[int] | None = None
        deadline = time.monotonic() + wait_topic_s
        while not partitions and not stop.is_set():
            await consumer.topics()  # refresh the metadata
            partitions = consumer.partitions_for_topic(topic)
            if partitions or (not follow and time.monotonic() > deadline):
                break
            await asyncio.sleep(0.5)
        if not partitions:
            print(f"driftline tail: topic {topic} does not exist yet: nothing was published to it", file=sys.stderr)
            return 0
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        if start_at_beginning:
            await consumer.seek_to_beginning(*tps)
        else:
            await consumer.seek_to_end(*tps)
        ends = None if follow else await consumer.end_offsets(tps)
        while not stop.is_set():
            if ends is not None and await _caught_up(consumer, ends):
                break
            batch = await consumer.getmany(timeout_ms=500)
            for tp in sorted(batch, key=lambda t: t.partition):
                for record in batch[tp]:
                    print(_render(record.value, fmt), file=out, flush=True)
                    printed += 1
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(consumer.stop(), 10.0)
    return printed


async def _main(args: argparse.Namespace, cfg: Config) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    try:
        return await tail(cfg, args.what, from_beginning=args.from_beginning, follow=args.follow,
                          fmt=args.tail_format, stop=stop)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


def run(args: argparse.Namespace, cfg: Config) -> int:
    """``driftline tail``: exit 0 when caught up (or, with --follow, on Ctrl-C / SIGTERM)."""
    asyncio.run(_main(args, cfg))
    return 0
