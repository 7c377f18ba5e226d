"""``driftline run --crawl-log PATH...``: the durable single-machine path, without a broker.

Why: the embedded broker keeps its logs in memory, so on one machine without
a Kafka cluster a restart loses the events not yet consumed and the offsets.
Heritrix writes every capture to ``crawl.log`` anyway; following that file
needs no broker at all, and the store that already holds the verdicts can
hold the read position too.

One scoring path: every line goes through the Kafka consumers' own
:class:`~consumers.scorer.Scorer` (parse, skip rule, the event's Job, acquire
the bytes from the WARC the line names under ``acquire.warc_dirs``,
``Watcher.score``, publish, dead-letter), wired by the same
:func:`consumers.pipeline.scoring_pipeline` as the Kafka app and handed a
record that says where the line was read.
What differs is where things go:

* every message (verdicts, alerts, recommendations and advice, seed
  reports, dead letters) is recorded in the store's ledger under a key that
  names it (:mod:`consumers.publish.outbox`, :mod:`watcher.store.ledger`): the
  verdict messages of a line in the verdict's own transaction (carried into
  ``put_verdict``), the others before anything is marked done.  A message
  made again (a line read again after a kill) finds its key and is dropped.
* the line's position (:class:`watcher.crawlfollow.follow.Position`) moves
  after that, in a transaction of its own that also marks the messages
  written out since; a SIGKILL before it re-reads the line, which finds its
  verdict stored and its messages recorded.  A dead letter (bad line,
  unreadable WARC, a gap in the log) is stored with the position after its
  line, in one transaction: never lost, never a crash.
* the ledger's unwritten messages are written as JSON lines to
  ``crawl_log.output`` (stdout, a file, or nowhere), in order, each with its
  ``seq``; ``--replay-since`` prints them again from the store.

Lines of all followed files are scored one at a time (the store carries one
ledger builder at a time), taking ``crawl_log.batch_lines`` from a file before the
next one gets a turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO

from watcher.acquire import Acquirer, RenderPool
from watcher.config import Config
from watcher.crawlfollow.follow import Line, Position, Tail
from watcher.errors import ConfigError, DriftlineError, StoreError
from watcher.metrics import Metrics, MetricsServer
from watcher.recommend import GUIDANCE_ACTIONS, Recommender
from watcher.seeds.stream import SeedReporter
from watcher.store import BaselineStore, open_store
from watcher.store.ledger import Message
from watcher.store.positions import DeadLetterRow, PositionStore, positions_of, reason_of

from .lifecycle import close_parts
from .pipeline import scoring_pipeline
from .publish.messages import H_SRC_FORMAT, alert_message
from .publish.outbox import GAP_REASON, Outbox, gap_letter, message_key, replay, verdict_messages
from .publish.publisher import Outgoing, Publisher
from .scorer import Scorer

log = logging.getLogger(__name__)


@dataclass
class LineRecord:
    """A crawl.log line dressed as the consumer record the scorer reads: topic = the followed path,
    offset = the line's byte offset in the file it was read from."""

    topic: str
    offset: int
    value: bytes
    partition: int = 0
    key: bytes | None = None
    headers: list[tuple[str, bytes]] = field(default_factory=lambda: [(H_SRC_FORMAT, b"crawl-log")])
    timestamp: int = field(default_factory=lambda: int(time.time() * 1000))


class LocalPublisher(Publisher):
    """The scorer's publisher without a broker: every message recorded in the store's ledger (a dead
    letter with its line's position), then written to ``crawl_log.output`` by the :class:`Outbox`."""

    def __init__(self, cfg: Config, store: PositionStore, out: IO[str] | None, streams: Sequence[str]) -> None:
        super().__init__(cfg.kafka, "")
        k = cfg.kafka
        self.kinds = {k.results_topic: "verdict", k.alerts_topic: "alert", k.recommendations_topic: "recommendation",
                      cfg.seeds.topic: "seed-report", k.dead_letter_topic: "dead-letter"}
        self.dead_topic = k.dead_letter_topic
        self.positions = store
        self.outbox = Outbox(store, out, streams)
        self.line: Line | None = None  # the line being scored (its dead letter is stored with its position)
        self.dead_lettered = False
        self.forget: list[Callable[[], None]] = []  # memories of what was published, dropped when a record fails

    @property
    def out(self) -> IO[str] | None:
        return self.outbox.out

    @property
    def written(self) -> int:
        return self.outbox.written

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        out = self.outbox.out
        if out is not None and out is not sys.stdout:
            out.close()
        self.outbox.out = None

    async def send_all(self, messages: Iterable[Outgoing]) -> None:
        line = self.line
        stream = line.stream if line is not None else self.outbox.streams[0]
        line_key = f"{line.source}@{line.start}" if line is not None else ""
        values = [(kind, json.loads(value)) for topic, _key, value, _headers in messages
                  for kind in [self.kinds.get(topic)] if kind is not None]
        verdict = next((v for kind, v in values if kind == "verdict"), None)
        recorded: list[Message] = []
        advice: list[tuple[str, str]] = []
        dead: DeadLetterRow | None = None
        for kind, value in values:
            body = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            if kind == "dead-letter":
                if line is None:
                    raise StoreError("a dead letter without a line to store it with", reason="internal")
                dead = DeadLetterRow(line.source, line.start, reason_of(body), body)
            elif kind == "recommendation" and value.get("action") in GUIDANCE_ACTIONS:
                # under the history the scorer asks about (SeedReporter.advice_changed: the verdict's)
                advice.append((str((verdict or value).get("history")), str(value.get("id"))))
            recorded.append(Message(message_key(kind, value, line_key, verdict), kind, body))
        # A dead letter is stored with the position after its line (the line is done); the other messages
        # before the position moves (and before an alert is marked sent), so that a kill re-reads the line
        # and the ledger drops what it makes again.
        position = line.position.to_json() if dead is not None and line is not None else None
        try:
            await asyncio.to_thread(self.positions.record_line, stream, position, recorded, dead_letter=dead,
                                    advice=advice)
        except StoreError:
            for forget in self.forget:
                forget()
            raise
        if dead is not None:
            self.dead_lettered = True
        await self.outbox.flush()


def _ledger_advice(seeds: SeedReporter, positions: PositionStore, publisher: LocalPublisher,
                   recommender: Recommender) -> None:
    """Seed reports whose advice is compared with the last advice the store's ledger holds (not only
    this process's memory: a restart repeats none); what was decided but not recorded is forgotten."""
    seeds.advice_of = positions.last_advice
    publisher.forget += [seeds.forget_advice, recommender.forget]


def _drop_partial_line(path: str) -> None:
    """Cut a last line a killed process left half written (the store holds its verdict), so that the
    file stays one JSON document a line."""
    try:
        fh = open(path, "r+b")  # noqa: SIM115 - closed below; "with" would hide the size logic
    except FileNotFoundError:
        return
    with fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return
        back = min(size, 1 << 20)
        fh.seek(size - back)
        tail = fh.read(back)
        if tail.endswith(b"\n"):
            return
        cut = tail.rfind(b"\n")
        keep = size - back + cut + 1 if cut >= 0 else (0 if back == size else size)
        if keep != size:
            log.warning("%s: dropping a last line written only in part (%d bytes) by a process that was killed",
                        path, size - keep)
            fh.truncate(keep)


def _open_output(spec: str) -> IO[str] | None:
    if spec == "":
        return None
    if spec == "-":
        return sys.stdout
    try:
        _drop_partial_line(spec)
        return open(spec, "a", encoding="utf-8")  # held for the run, closed by LocalPublisher.stop
    except OSError as exc:
        raise ConfigError(f"crawl_log.output: cannot open {spec!r} for appending: {exc.strerror or exc}",
                          reason="crawl_log_output") from None


class CrawlLogRunner:
    """The pipeline of ``driftline run --crawl-log`` (usable in-process: ``async with``)."""

    def __init__(self, cfg: Config, paths: Sequence[str], *, metrics: Metrics | None = None) -> None:
        if not paths:
            raise ConfigError("--crawl-log needs at least one path", reason="crawl_log")
        self.cfg = cfg
        self.paths = list(dict.fromkeys(os.path.abspath(p) for p in paths))  # one follower per file name
        self.metrics = metrics or Metrics(max_collections=cfg.metrics.max_collections,
                                          collections=cfg.metrics.collections)
        self.store: BaselineStore | None = None
        self.positions: PositionStore | None = None
        self.tails: list[Tail] = []
        self.scorer: Scorer | None = None
        self.publisher: LocalPublisher | None = None
        self.acquirer: Acquirer | None = None
        self.renderer: RenderPool | None = None
        self.metrics_server: MetricsServer | None = None
        self.executor: ThreadPoolExecutor | None = None
        self.lines = 0  # crawl.log lines handled by this process (position moves not counted)

    async def start(self) -> None:
        cfg = self.cfg
        try:
            out = _open_output(cfg.crawl_log.output)
            self.store = await asyncio.to_thread(open_store, cfg.store)
            self.positions = positions_of(self.store)
            if cfg.metrics.enabled:
                m = cfg.metrics
                self.metrics_server = MetricsServer(self.metrics, m.host, m.port, self._ready, self._ready)
                try:
                    await self.metrics_server.start()
                except OSError as exc:
                    self.metrics_server = None
                    raise ConfigError(f"cannot serve metrics on {m.host}:{m.port} ({exc.strerror or exc}): choose "
                                      f"another port with DRIFTLINE__METRICS__PORT, or DRIFTLINE__METRICS__ENABLED="
                                      f"false", reason="metrics_port") from None
            self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="driftline-crawl-log")
            self.publisher = LocalPublisher(cfg, self.positions, out, self.paths)
            pipeline = scoring_pipeline(cfg, self.store, self.publisher, self.metrics, self.executor)
            _ledger_advice(pipeline.seeds, self.positions, self.publisher, pipeline.recommender)
            self.scorer, self.acquirer, self.renderer = pipeline.scorer, pipeline.acquirer, pipeline.renderer
            for path in self.paths:
                if not os.path.exists(path):
                    log.warning("%s does not exist (yet): followed once it appears", path)
                saved = await asyncio.to_thread(self.positions.get_position, path)
                self.tails.append(Tail(path, cfg.crawl_log, Position.from_json(saved)))
            if cfg.crawl_log.output not in ("", "-"):
                await asyncio.to_thread(self.publisher.outbox.reconcile, cfg.crawl_log.output)
            await self.publisher.outbox.flush()  # recorded by a process killed before it wrote them
            await self._resend_alerts()
            await self._mark_written()
        except BaseException:
            await self.stop()
            raise
        if not cfg.acquire.warc_dirs and not cfg.acquire.warc_http_base:
            log.warning("acquire.warc_dirs is empty: the WARC files crawl.log lines name cannot be read (set it, "
                        "e.g. DRIFTLINE__ACQUIRE__WARC_DIRS='[/path/to/warcs]')")
        log.info("following %s (store: %s)", ", ".join(t.stream for t in self.tails), cfg.store.backend)

    async def _ready(self) -> bool:
        return self.scorer is not None

    async def _resend_alerts(self) -> None:
        """Record (and write) the alerts owed by verdicts stored before the last stop but never sent."""
        assert self.store is not None and self.positions is not None and self.publisher is not None
        store, publisher = self.store, self.publisher
        for vid in await asyncio.to_thread(self.positions.pending_alert_ids):
            verdict = await asyncio.to_thread(store.get_verdict, vid)
            if verdict is not None:
                await publisher.send_all([(self.cfg.kafka.alerts_topic, None, alert_message(verdict), None)])
            await asyncio.to_thread(store.mark_alert_sent, vid)

    async def _mark_written(self, line: Line | None = None) -> None:
        """Mark the messages written since the last mark, with ``line``'s position (one transaction)."""
        assert self.positions is not None and self.publisher is not None
        marks = self.publisher.outbox.take_marks()
        if line is None and not marks:
            return
        stream = line.stream if line is not None else self.paths[0]
        try:
            await asyncio.to_thread(self.positions.record_line, stream,
                                    line.position.to_json() if line is not None else None, written=marks,
                                    keep=self.cfg.crawl_log.ledger_keep)
        except StoreError:
            self.publisher.outbox.marks[:0] = marks  # marked with the next try
            raise

    async def stop(self) -> None:
        for tail in self.tails:
            tail.close()
        await close_parts(self)

    async def __aenter__(self) -> CrawlLogRunner:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- the loop -------------------------------------------------------------------

    async def poll(self, stop: asyncio.Event | None = None) -> int:
        """One turn over every followed file; returns the lines handled.  Once ``stop`` is set no
        further line is started (the lines read and not handled are read again by the next process:
        only the stored position counts), so the runner must not poll again."""
        n = 0
        for tail in self.tails:
            lines = await asyncio.to_thread(tail.read, self.cfg.crawl_log.batch_lines)
            for line in lines:
                if stop is not None and stop.is_set():
                    break
                await self._handle_retrying(line)
                n += 1
                if line.data is not None:  # a line of the file, not a position move (a file opened or switched)
                    self.lines += 1
        return n

    @property
    def at_end(self) -> bool:
        """Every followed file read to its end (nothing rotated left to finish)."""
        return all(t.at_end for t in self.tails)

    async def run(self, stop: asyncio.Event, *, once: bool = False) -> None:
        """Follow until ``stop`` is set (``once``: until every file is read to its end)."""
        while not stop.is_set():
            n = await self.poll(stop)
            if n:
                continue
            if once and self.at_end:
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.cfg.crawl_log.poll_interval_s)

    async def _handle_retrying(self, line: Line) -> None:
        """:meth:`_handle`, again after a pause while the store cannot take the position.

        The line is not left behind: a position that cannot be written means
        the next line's position would skip it.  Every step is idempotent, so
        doing the line again after a partial failure is safe."""
        delay = 0.5
        while True:
            try:
                await self._handle(line)
                return
            except StoreError as exc:
                log.warning("%s@%d: the store cannot take the position (%s: %s); retrying in %.1f s", line.source,
                            line.start, exc.reason, exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)

    async def _handle(self, line: Line) -> None:
        """Score one line; its messages are recorded in the ledger (its verdicts' in the verdict's own
        transaction) before its position moves, in a transaction of its own (so a kill before that
        re-reads the line, and the ledger drops the messages it makes again)."""
        assert self.scorer is not None and self.publisher is not None and self.positions is not None
        positions, publisher = self.positions, self.publisher
        if line.gap is not None:
            await self._gap(line)
            return
        if line.data is None or (not line.length and not line.data.strip()):  # a file switch, or a blank line
            await self._mark_written(line)
            return
        record = LineRecord(topic=line.stream, offset=line.start, value=line.data)
        self.metrics.events_consumed.labels(topic=line.stream).inc()  # the scorer counts Kafka input topics only
        publisher.line, publisher.dead_lettered = line, False
        positions.carry_ledger(line.stream, verdict_messages)
        try:
            if line.length:
                self.metrics.events_failed.labels(reason="too_large").inc()
                await self.scorer.dead_letters.send(
                    record, "too_large", f"crawl.log line of {line.length} bytes is over crawl_log.max_line_bytes "
                    f"({self.cfg.crawl_log.max_line_bytes}); its first {len(line.data)} bytes are kept")
            else:
                await self.scorer.handle(record)
        finally:
            positions.drop_carried()
            publisher.line = None
        if not publisher.dead_lettered and self.scorer.dead_letters.lost:
            # its dead letter could not be stored: the line is done again
            self.scorer.dead_letters.lost = 0
            raise StoreError("the dead letter was not stored", reason="store_write")
        await self._mark_written(line)

    async def _gap(self, line: Line) -> None:
        """Lines that can no longer be read: an ERROR (the follower logged the file and bytes), the gap
        counters, and a ``crawl_log_gap`` dead letter stored with the position that moves past it."""
        assert line.gap is not None and self.publisher is not None
        gap = line.gap
        log.error("%s: a gap in the crawl.log: %s; recorded as a %s dead letter", line.stream, gap.describe(),
                  GAP_REASON)
        self.publisher.line = line
        try:
            await self.publisher.send_all([(self.cfg.kafka.dead_letter_topic, None, gap_letter(line.stream, gap),
                                            None)])
        finally:
            self.publisher.line = None
        self.metrics.crawl_log_gaps.inc()
        self.metrics.crawl_log_gap_bytes.inc(max(0, (gap.end or gap.start) - gap.start))
        self.metrics.dead_letter.labels(reason=GAP_REASON).inc()
        await self._mark_written(line)


def _stopper(sig: signal.Signals, got: list[signal.Signals], stop: asyncio.Event) -> Callable[[], None]:
    def handler() -> None:
        got.append(sig)
        stop.set()

    return handler


async def serve(cfg: Config, paths: Sequence[str], *, once: bool = False, stop: asyncio.Event | None = None) -> int:
    """Follow ``paths`` until SIGTERM (exit 0), SIGINT (exit 130) or, with ``once``, their ends (exit 0)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    got: list[signal.Signals] = []
    installed: list[signal.Signals] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, _stopper(sig, got, stop))
            installed.append(sig)
        except (NotImplementedError, RuntimeError):  # not the main thread
            pass
    try:
        async with CrawlLogRunner(cfg, paths) as runner:
            await runner.run(stop, once=once)
            log.info("stopped after %d lines", runner.lines)
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
    return 130 if signal.SIGINT in got else 0


def run_replay(cfg: Config, since: str) -> int:
    """``driftline run --replay-since SEQ|VERDICT_ID``: the recorded messages again, on stdout."""
    store = open_store(cfg.store)
    try:
        n = replay(positions_of(store), since, sys.stdout)
    finally:
        store.close()
    sys.stdout.flush()
    log.info("replayed %d messages", n)
    return 0


def run_durable(cfg: Config, paths: Sequence[str], *, once: bool = False) -> int:
    """The CLI's entry point; returns the exit code."""
    try:
        return asyncio.run(serve(cfg, paths, once=once))
    except ConfigError:
        raise
    except DriftlineError as exc:
        log.error("driftline run --crawl-log failed (%s): %s", exc.reason, exc)
        return 2
    except KeyboardInterrupt:
        return 130
