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

* the line's position (:class:`watcher.crawlfollow.follow.Position`) is
  carried into the store's ``put_verdict`` transaction, so it commits with
  the verdicts (and corrections) of that line or not at all.  A line with no
  new verdict (skipped, already scored) moves the position in a transaction
  of its own; a SIGKILL between the two re-reads the line, which finds its
  verdict stored and stores nothing.
* dead letters (bad lines, unreadable WARCs...) are stored in the store's
  dead-letter table with the position, in one transaction: never lost,
  never a crash (and then written to the output too).
* verdicts, alerts and recommendations are written as JSON lines to
  ``crawl_log.output`` (stdout, a file, or nowhere) after the commit.  The
  store is the record; the output is a view, so a kill can lose from it the
  messages of the line being finished (at most one line's).  Alerts are
  marked sent only once written: one owed when the process died is written
  again at the next start.

Lines of all followed files are scored one at a time (the store holds one
carried position), taking ``crawl_log.batch_lines`` from a file before the
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
from watcher.store import BaselineStore, open_store
from watcher.store.positions import DeadLetterRow, PositionStore, positions_of, reason_of

from .lifecycle import close_parts
from .messages import H_SRC_FORMAT, alert_message
from .pipeline import scoring_pipeline
from .publisher import Outgoing, Publisher
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
    """The scorer's publisher without a broker: messages to ``crawl_log.output``, dead letters to the store."""

    def __init__(self, cfg: Config, store: PositionStore, out: IO[str] | None) -> None:
        super().__init__(cfg.kafka, "")
        k = cfg.kafka
        self.kinds = {k.results_topic: "verdict", k.alerts_topic: "alert", k.recommendations_topic: "recommendation",
                      cfg.seeds.topic: "seed-report"}
        self.dead_topic = k.dead_letter_topic
        self.positions = store
        self.out = out
        self.line: Line | None = None  # the line being scored (its dead letter is stored with its position)
        self.dead_lettered = False
        self.written = 0

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        if self.out is not None and self.out is not sys.stdout:
            self.out.close()
        self.out = None

    async def send_all(self, messages: Iterable[Outgoing]) -> None:
        lines: list[str] = []
        for topic, _key, value, _headers in messages:
            if topic == self.dead_topic:
                await self._park(value)  # stored first: the output is a view of the store
            kind = "dead-letter" if topic == self.dead_topic else self.kinds.get(topic)
            if kind is not None and self.out is not None:
                lines.append(json.dumps({"kind": kind, "value": json.loads(value)}, ensure_ascii=False))
        if lines and self.out is not None:
            try:
                self.out.write("".join(f"{text}\n" for text in lines))
                self.out.flush()
            except OSError as exc:  # a closed pipe, a full disk: the store is the record, scoring goes on
                log.error("crawl_log.output cannot be written (%s): from now on verdicts go to the store only",
                          exc.strerror or exc)
                self.out = None
                return
            self.written += len(lines)

    async def _park(self, body: bytes) -> None:
        line = self.line
        if line is None:
            raise StoreError("a dead letter without a line to store it with", reason="internal")
        row = DeadLetterRow(line.source, line.start, reason_of(body), body.decode("utf-8", "replace"))
        await asyncio.to_thread(self.positions.set_position, line.stream, line.position.to_json(), row)
        self.dead_lettered = True


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
        self.lines = 0  # lines handled by this process (position moves included)

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
            self.publisher = LocalPublisher(cfg, self.positions, out)
            pipeline = scoring_pipeline(cfg, self.store, self.publisher, self.metrics, self.executor)
            self.scorer, self.acquirer, self.renderer = pipeline.scorer, pipeline.acquirer, pipeline.renderer
            for path in self.paths:
                if not os.path.exists(path):
                    log.warning("%s does not exist (yet): followed once it appears", path)
                saved = await asyncio.to_thread(self.positions.get_position, path)
                self.tails.append(Tail(path, cfg.crawl_log, Position.from_json(saved)))
            await self._resend_alerts()
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
        """Write the alerts owed by verdicts stored before the last stop but never written out."""
        assert self.store is not None and self.positions is not None and self.publisher is not None
        store, publisher = self.store, self.publisher
        for vid in await asyncio.to_thread(self.positions.pending_alert_ids):
            verdict = await asyncio.to_thread(store.get_verdict, vid)
            if verdict is not None:
                await publisher.send_all([(self.cfg.kafka.alerts_topic, None, alert_message(verdict), None)])
            await asyncio.to_thread(store.mark_alert_sent, vid)

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
        self.lines += n
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
        assert self.scorer is not None and self.publisher is not None and self.positions is not None
        positions, publisher = self.positions, self.publisher
        pos = line.position.to_json()
        if line.data is None or (not line.length and not line.data.strip()):  # a file switch, or a blank line
            await asyncio.to_thread(positions.set_position, line.stream, pos)
            return
        record = LineRecord(topic=line.stream, offset=line.start, value=line.data)
        self.metrics.events_consumed.labels(topic=line.stream).inc()  # the scorer counts Kafka input topics only
        publisher.line, publisher.dead_lettered = line, False
        positions.carry_position(line.stream, pos)
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
        if publisher.dead_lettered:
            return
        if self.scorer.dead_letters.lost:  # its dead letter could not be stored: the line is done again
            self.scorer.dead_letters.lost = 0
            raise StoreError("the dead letter was not stored", reason="store_write")
        if await asyncio.to_thread(positions.get_position, line.stream) != pos:
            await asyncio.to_thread(positions.set_position, line.stream, pos)


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
