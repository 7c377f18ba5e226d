"""The durable path's output: each message recorded once in the store's ledger, then written out once, in order.

Why: ``driftline run --crawl-log`` writes to stdout or a file, which cannot
take part in a store transaction.  So every message is first recorded in the
ledger (:mod:`watcher.store.ledger`) under a key that names it; a message a
restart makes again finds its key recorded and is dropped.  Then the messages
not yet written are written, in the order they were recorded, each line
carrying its sequence number (``seq``), and marked written with the position
of the line they came from.

A kill between the write and the mark leaves messages written but not marked:
for a file output, the next start reads the file's last lines and marks what
they hold (nothing is written twice); on stdout they are written again, with
the same ``seq`` (a reader drops any ``seq`` not above the last it saw).
Messages recorded but never written (killed before the write) are written at
the next start.  ``driftline run --crawl-log PATH --replay-since SEQ`` prints
them again from the store.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Sequence
from typing import IO, Any

from watcher.crawlfollow.follow import Gap
from watcher.errors import ConfigError
from watcher.model import Verdict
from watcher.recommend import GUIDANCE_ACTIONS
from watcher.store.ledger import Message, Published
from watcher.store.positions import PositionStore

from .messages import dead_letter_message, verdict_message

log = logging.getLogger(__name__)

GAP_REASON = "crawl_log_gap"
_TAIL_BYTES = 1 << 20  # how much of a file output's end is read to find the last message written


def message_key(kind: str, value: dict[str, Any], line_key: str, verdict: dict[str, Any] | None) -> str:
    """The ledger key of a message: what makes it the same message when a restart makes it again.

    ``line_key``: where its line was read (a dead letter's identity); ``verdict``: the verdict message
    published with it (advice and seed reports are due after that verdict, once)."""
    after = str(verdict.get("verdict_id")) if verdict is not None else line_key
    if kind in ("verdict", "alert"):
        vid = value.get("verdict_id")
        return f"verdict:{vid}:{value.get('version', 1)}" if kind == "verdict" else f"alert:{vid}"
    if kind == "recommendation":
        if value.get("action") in GUIDANCE_ACTIONS:
            return f"advice:{value.get('history')}:{value.get('id')}:{after}"
        return f"recommendation:{value.get('id')}"
    if kind == "seed-report":
        history = verdict.get("history") if verdict is not None else value.get("seed")
        return f"seed-report:{history}:{after}"
    return f"{kind}:{line_key}"


def verdict_messages(verdicts: Sequence[Verdict]) -> list[Message]:
    """The ledger messages of verdicts a transaction stores (see ``PositionStore.carry_ledger``)."""
    return [Message(f"verdict:{v.verdict_id}:{v.version}", "verdict", verdict_message(v).decode("utf-8"))
            for v in verdicts]


def gap_letter(stream: str, gap: Gap) -> bytes:
    """The dead letter of a gap: no original bytes (they are lost); the file and the byte range."""
    body = json.loads(dead_letter_message(value=None, key=None, reason=GAP_REASON, message=gap.describe(),
                                          topic=stream, partition=0, offset=gap.start, error_class="CrawlLogGap"))
    body.update({"file": gap.name, "inode": gap.ino, "from_byte": gap.start, "to_byte": gap.end})
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def output_line(p: Published) -> str:
    return f'{{"kind": {json.dumps(p.kind)}, "seq": {p.seq}, "value": {p.body}}}\n'


def last_seq_written(path: str) -> int:
    """The highest ``seq`` among the last lines of a file output (0 if none)."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - _TAIL_BYTES))
            tail = fh.read()
    except OSError:
        return 0
    best = 0
    for raw in tail.splitlines()[1 if size > _TAIL_BYTES else 0:]:
        try:
            got = json.loads(raw)
        except ValueError:
            continue
        if isinstance(got, dict) and isinstance(got.get("seq"), int):
            best = max(best, got["seq"])
    return best


class Outbox:
    """Writes the ledger's unwritten messages of some streams to the output (stdout, a file, or none)."""

    def __init__(self, store: PositionStore, out: IO[str] | None, streams: Sequence[str]) -> None:
        self.store = store
        self.out = out
        self.streams = list(streams)
        self.marks: list[int] = []  # written, to be marked with the next position
        self.written = 0

    def reconcile(self, path: str) -> None:
        """Mark as written what a killed process wrote to the file ``path`` but never marked."""
        last = last_seq_written(path)
        seen = [p.seq for p in self.store.unwritten(self.streams) if p.seq <= last]
        if seen:
            log.info("%s already holds %d messages a stopped process wrote: not written again", path, len(seen))
            self.store.record_line(self.streams[0], None, written=seen)

    async def flush(self) -> None:
        """Write every unwritten message, in order (the marks follow with the line's position)."""
        rows = await asyncio.to_thread(self.store.unwritten, self.streams)
        pending = set(self.marks)
        rows = [p for p in rows if p.seq not in pending]
        if not rows:
            return
        if self.out is not None:
            try:
                self.out.write("".join(output_line(p) for p in rows))
                self.out.flush()
            except OSError as exc:  # a closed pipe, a full disk: the store is the record, scoring goes on
                log.error("crawl_log.output cannot be written (%s): from now on messages go to the store only "
                          "(driftline run --crawl-log PATH --replay-since SEQ prints them)", exc.strerror or exc)
                self.out = None
            else:
                self.written += len(rows)
        self.marks.extend(p.seq for p in rows)

    def take_marks(self) -> list[int]:
        marks, self.marks = self.marks, []
        return marks


def replay(store: PositionStore, since: str, out: IO[str]) -> int:
    """Write the recorded messages after ``since`` to ``out`` as the output has them; returns how many.

    ``since``: a sequence number (the messages after it), or a verdict id (its verdict message and every
    message recorded after it).  What a reader of stdout runs to find messages a kill kept from it."""
    if since.isdigit() and len(since) < 16:
        after = int(since)
    else:
        first = store.seq_of(f"verdict:{since}:")
        if first is None:
            raise ConfigError(f"--replay-since: no recorded message of verdict {since!r} (give a seq, or the id "
                              "of a verdict this store holds)", reason="replay")
        after = first - 1
    n = 0
    while True:
        rows = store.published_since(after, 10_000)
        if not rows:
            return n
        out.write("".join(output_line(p) for p in rows))
        n += len(rows)
        after = rows[-1].seq
