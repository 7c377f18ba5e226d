"""``driftline run``: the streaming app (broker, store, metrics, router, scorer).

Public entry points:

* :func:`run` ``(cfg, *, once=False) -> int``: what the CLI calls; runs until
  SIGTERM/SIGINT (or, with ``once``, until every input is processed) and
  returns the exit code: 0 after SIGTERM or a drained ``--once`` (the
  orchestrator's normal stop), 130 after SIGINT (Ctrl-C, as shells expect
  of an interrupted command), 2 when it cannot start.  Both signals take
  the same graceful path (in-flight work finished and committed).
* :class:`ConsumerApp`: the same app for in-process use (the demo, tests):
  ``async with ConsumerApp(cfg) as app: ...``; ``app.bootstrap_servers`` is
  where to produce events and read results (see :mod:`consumers.client`).

Start order: metrics server (so ``/healthz`` answers, and a taken port fails
at once), embedded broker (only when ``kafka.bootstrap_servers`` is unset and
``kafka.embedded_broker`` is true), a wait for the broker (retried with
capped exponential backoff: a pod whose Kafka is not up yet stays alive and
not ready instead of crash-looping), topics, store, engine, acquirer,
producer, then the consumers.  Stop order is the reverse:
stop fetching, finish in-flight work, commit, close producer, acquirer
(browser) and store.

``kafka.stage`` runs one of the two stages alone (``router`` or ``scorer``), so that routers and
scorers can be processes or pods of their own, scaled apart, on a shared broker: a router is
stateless and light (no store, no engine), and a scorer process then holds the scoring alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType

from watcher.acquire import Acquirer, RenderPool
from watcher.broker import EmbeddedBroker, broker_reachable, ensure_topics
from watcher.config import Config
from watcher.errors import ConfigError, DriftlineError
from watcher.events import check_formats
from watcher.kafkasec import kafka_security_options
from watcher.metrics import Metrics, MetricsServer
from watcher.model import Verdict
from watcher.ports import port_free
from watcher.store import BaselineStore, open_store
from watcher.store.labels import SQLReview, owed_versions
from watcher.tasks import cancel_and_wait

from .lifecycle import close_parts
from .logfilter import install_client_log_limit
from .pipeline import keep_advice, scoring_pipeline
from .publish.deadletter import DeadLetters
from .publish.messages import verdict_message
from .publish.publisher import Publisher
from .router import Router
from .runner import PartitionRunner
from .scorer import Scorer

log = logging.getLogger(__name__)


def all_topics(cfg: Config) -> list[str]:
    k = cfg.kafka
    topics = [*k.input_topics, k.results_topic, k.alerts_topic, k.recommendations_topic, k.dead_letter_topic,
              cfg.seeds.topic]
    if k.rekey:
        topics.append(k.keyed_topic)
    return sorted(set(topics))


async def tcp_open(bootstrap: str, timeout_s: float) -> bool:
    """Whether any bootstrap address accepts a TCP connection.

    Asked before a Kafka client is made: aiokafka logs an ERROR line for
    every refused connection, which would double the one line per attempt.
    """
    for address in filter(None, (a.strip() for a in bootstrap.split(","))):
        host, _, port = address.rpartition(":")
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host.strip("[]") or "localhost", int(port)),
                                               timeout_s)
        except (OSError, ValueError, TimeoutError):
            continue
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return True
    return False


def _owed(store: BaselineStore) -> tuple[SQLReview | None, list[tuple[str, int]], list[Verdict]]:
    """The review outbox of ``store`` (None when nobody reviewed there) and the verdicts it owes."""
    review = owed_versions(store)
    owed = review.owed() if review is not None else []
    verdicts = [v for v in (store.get_verdict(i) for i, _ in owed) if v is not None]
    return review, owed, verdicts


class ConsumerApp:
    """The whole streaming pipeline of one process."""

    def __init__(self, cfg: Config, *, metrics: Metrics | None = None) -> None:
        if cfg.kafka.bootstrap_servers is None and not cfg.kafka.embedded_broker:
            raise ConfigError("kafka.bootstrap_servers is unset and kafka.embedded_broker is false")
        check_formats(cfg.kafka.input_topics)  # an unknown feed format fails here, in one line
        if cfg.kafka.stage != "all" and not cfg.kafka.rekey:
            raise ConfigError(f"kafka.stage is {cfg.kafka.stage!r} but kafka.rekey is false: without the router's "
                              f"keyed topic there are no stages to split (set kafka.stage: all)")
        if cfg.kafka.stage != "all" and cfg.kafka.bootstrap_servers is None:
            raise ConfigError(f"kafka.stage is {cfg.kafka.stage!r} but kafka.bootstrap_servers is unset: the stages "
                              f"of separate processes meet on a shared broker, and the embedded one lives in one "
                              f"process (set kafka.bootstrap_servers, or kafka.stage: all)")
        self.cfg = cfg
        alert_changes = {c for changes in [*cfg.alerts.changes.values(), *cfg.alerts.topics.values()] for c in changes}
        self.metrics = metrics or Metrics(max_collections=cfg.metrics.max_collections,
                                          collections=cfg.metrics.collections, input_topics=cfg.kafka.input_topics,
                                          alert_changes=alert_changes)
        self.metrics.add_input_topics(cfg.kafka.input_topics)
        self.broker: EmbeddedBroker | None = None
        self.bootstrap_servers = cfg.kafka.bootstrap_servers or f"127.0.0.1:{cfg.kafka.embedded_port}"
        self.kafka_security = kafka_security_options(cfg.kafka)  # fails early on an incomplete TLS/SASL setting
        self.publisher: Publisher | None = None
        self.metrics_server: MetricsServer | None = None
        self.router: PartitionRunner | None = None
        self.scorer: PartitionRunner | None = None
        self.scoring: Scorer | None = None
        self.store: BaselineStore | None = None
        self.acquirer: Acquirer | None = None
        self.renderer: RenderPool | None = None
        self.executor: ThreadPoolExecutor | None = None
        self.dead_letters: DeadLetters | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._ready_cache: tuple[float, bool] = (0.0, False)

    # -- lifecycle -------------------------------------------------------------

    async def _start_metrics(self) -> None:
        m = self.cfg.metrics
        self.metrics_server = MetricsServer(self.metrics, m.host, m.port, self.ready, self.assigned)
        try:
            await self.metrics_server.start()
        except OSError as exc:
            self.metrics_server = None
            raise ConfigError(f"cannot serve metrics on {m.host}:{m.port} ({exc.strerror or exc}): choose another "
                              f"port with metrics.port in the config file or DRIFTLINE__METRICS__PORT",
                              reason="metrics_port") from None

    async def _wait_for_broker(self) -> None:
        """Return once the broker answers; until then retry with capped exponential backoff, one log line a try."""
        delay, attempt, cap = 0.5, 1, self.cfg.kafka.connect_retry_max_s
        while not (await tcp_open(self.bootstrap_servers, min(5.0, cap))
                   and await broker_reachable(self.bootstrap_servers, timeout_s=min(5.0, cap))):
            log.warning("Kafka at %s does not answer (attempt %d); retrying in %.1f s (not ready meanwhile)",
                        self.bootstrap_servers, attempt, delay)
            await asyncio.sleep(delay)
            delay, attempt = min(delay * 2, cap), attempt + 1
        if attempt > 1:
            log.info("Kafka at %s answers after %d attempts", self.bootstrap_servers, attempt)

    async def start(self) -> None:
        cfg, k = self.cfg, self.cfg.kafka
        install_client_log_limit(k.client_log_interval_s)
        try:
            if cfg.metrics.enabled:
                await self._start_metrics()
            if k.bootstrap_servers is None:
                if not port_free("127.0.0.1", k.embedded_port, reuse_address=True):
                    raise ConfigError(f"cannot start the embedded broker on 127.0.0.1:{k.embedded_port} (port in use): "
                                      f"choose another with kafka.embedded_port in the config file or "
                                      f"DRIFTLINE__KAFKA__EMBEDDED_PORT, or set kafka.bootstrap_servers",
                                      reason="broker_port")
                self.broker = EmbeddedBroker(k.embedded_port)
                await self.broker.start()
            await self._wait_for_broker()
            if k.create_topics:
                await ensure_topics(self.bootstrap_servers, all_topics(cfg), k.partitions, security=self.kafka_security)
            scoring = k.stage in ("all", "scorer")
            if scoring:
                self.executor = ThreadPoolExecutor(max_workers=max(1, k.score_threads), thread_name_prefix="driftline")
                await self._build_pipeline()
                assert self.scoring is not None
                self.dead_letters = self.scoring.dead_letters
            else:  # a router alone: no store, no engine, only the publisher its keyed copies and dead letters need
                self.publisher = Publisher(cfg.kafka, self.bootstrap_servers)
                await self.publisher.start()
                self.dead_letters = DeadLetters(cfg.kafka, self.publisher, self.metrics)
            assert self.publisher is not None
            if k.rekey and k.stage in ("all", "router"):
                router = Router(cfg, self.publisher, self.dead_letters, self.metrics)
                self.router = PartitionRunner("router", k, self.bootstrap_servers, f"{k.group_id}-router",
                                              k.input_topics, router.handle, self.metrics,
                                              lag_interval_s=cfg.metrics.lag_interval_s)
            if self.scoring is not None:
                score_topics = [k.keyed_topic] if k.rekey else list(k.input_topics)
                self.scorer = PartitionRunner("scorer", k, self.bootstrap_servers, k.group_id, score_topics,
                                              self.scoring.handle, self.metrics,
                                              lag_interval_s=cfg.metrics.lag_interval_s)
                await self.scorer.start()
            if self.router is not None:
                await self.router.start()
            if k.create_topics:
                self._tasks.append(asyncio.create_task(self._watch_topics(), name="driftline-topics"))
            if scoring:
                self._tasks.append(asyncio.create_task(self._watch_gauges(), name="driftline-gauges"))
                self._tasks.append(asyncio.create_task(self._republish(), name="driftline-republish"))
            self.metrics.up.set(1)
        except BaseException:
            await self.stop()
            raise
        log.info("driftline consumer app running against %s", self.bootstrap_servers)

    async def _build_pipeline(self) -> None:
        cfg = self.cfg
        self.store = await asyncio.to_thread(open_store, cfg.store)
        self.publisher = Publisher(cfg.kafka, self.bootstrap_servers)
        await self.publisher.start()
        pipeline = scoring_pipeline(cfg, self.store, self.publisher, self.metrics, self.executor)
        keep_advice(pipeline, self.store)
        self.scoring, self.acquirer, self.renderer = pipeline.scorer, pipeline.acquirer, pipeline.renderer

    async def stop(self) -> None:
        """Stop fetching, finish in-flight work, commit, and close everything."""
        self.metrics.up.set(0)
        await cancel_and_wait(self._tasks)  # cancelled again if one loses its cancellation (watcher.tasks)
        self._tasks.clear()
        # The router first: nothing new reaches the keyed topic while the scorer drains.
        for runner in (self.router, self.scorer):
            if runner is not None:
                try:
                    await runner.stop()
                except Exception:
                    log.exception("error stopping the %s consumer", runner.name)
        self.router = self.scorer = None
        await close_parts(self)
        if self.broker is not None:
            await self.broker.stop()
            self.broker = None

    async def __aenter__(self) -> ConsumerApp:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # -- state ---------------------------------------------------------------------

    @property
    def verdicts(self) -> int:
        """Verdicts published by this process so far."""
        return self.scoring.verdicts if self.scoring is not None else 0

    async def ready(self) -> bool:
        """Ready: alive and connected -- the consumers are started and the broker
        answers (cached 2 s).  Owning partitions is *not* required: a replica
        beyond the partition count is a healthy standby, and requiring an
        assignment kept such replicas un-Ready forever and stalled rollouts.
        Ownership is :meth:`assigned` (``/assigned``, ``driftline_assigned_partitions``)."""
        now = time.monotonic()
        if now - self._ready_cache[0] < 2.0:
            return self._ready_cache[1]
        runner = self.scorer or self.router  # the scorer, or the router of a process that runs it alone
        started = runner is not None and runner.consumer is not None
        ok = started and await broker_reachable(self.bootstrap_servers, security=self.kafka_security)
        self._ready_cache = (now, ok)
        return ok

    async def assigned(self) -> bool:
        """True while this replica's scorer (a lone router's, where it runs alone) owns partitions."""
        runner = self.scorer or self.router
        return bool(runner and runner.assignment())

    async def caught_up(self) -> bool:
        """True when router and scorer have processed everything produced so far."""
        for runner in (self.router, self.scorer):
            if runner is not None and not await runner.caught_up():
                return False
        return True

    async def wait_caught_up(self, timeout_s: float | None = None, settle_s: float = 0.5) -> bool:
        """Wait until :meth:`caught_up` holds twice, ``settle_s`` apart; ``False`` once
        ``timeout_s`` has passed.  Each check is bounded by the time left: a broker request
        that never answers (aiokafka's ``position()`` waits for a position without a limit)
        must not hold the caller past its deadline."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        streak = 0
        while deadline is None or time.monotonic() < deadline:
            left = None if deadline is None else max(0.1, deadline - time.monotonic())
            try:
                streak = streak + 1 if await asyncio.wait_for(self.caught_up(), left) else 0
            except DriftlineError:
                raise
            except Exception as exc:  # broker hiccup or a check past the deadline: ask again
                log.debug("caught-up check failed: %r", exc)
                streak = 0
            if streak >= 2:
                return True
            await asyncio.sleep(settle_s)
        return False

    # -- background tasks ------------------------------------------------------------

    async def _watch_topics(self) -> None:
        """Re-create missing topics: a memory-storage broker forgets them on restart."""
        topics = all_topics(self.cfg)
        while True:
            await asyncio.sleep(self.cfg.kafka.topic_check_interval_s)
            try:
                created = await ensure_topics(self.bootstrap_servers, topics, self.cfg.kafka.partitions, timeout_s=5.0,
                                              security=self.kafka_security)
            except Exception as exc:  # broker away: try again next round
                log.debug("topic check failed: %r", exc)
                continue
            if created:
                # One missing topic means the broker lost all its data (memory
                # storage restarted).  Topics that already exist again were
                # auto-created by a client in the meantime: their logs are new
                # too, so every position held for the old logs is reset.  (Left
                # open: if clients re-create *every* topic before this check
                # runs, the runners notice only when a log is shorter than
                # their position; see PartitionRunner._check_log_resets.)
                log.warning("topics %s were missing (broker restarted without its data?): re-created; reading "
                            "all input topics from the start", created)
                for runner in (self.router, self.scorer):
                    if runner is not None:
                        runner.topics_recreated(topics)

    async def _republish(self) -> None:
        """Publish the verdict versions a curator's pin re-scored on the review page (the store's
        outbox), then clear them: the stream's readers see the correction as a new version under
        the same id, as they see a late capture's.  At least once: a crash between the send and the
        clear sends a version again, which its id and version make recognisable."""
        while True:
            await asyncio.sleep(self.cfg.review.republish_interval_s)
            if self.store is None or self.publisher is None:
                continue
            try:
                review, owed, verdicts = await asyncio.to_thread(_owed, self.store)
                if review is None or not owed:
                    continue
                k = self.cfg.kafka
                await self.publisher.send_all(
                    [(k.results_topic, v.history.encode("utf-8"), verdict_message(v), None) for v in verdicts])
                await asyncio.to_thread(review.published, owed)
                log.info("published %d verdict versions re-scored on the review page", len(verdicts))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the next round tries again; scoring goes on
                log.warning("re-scored versions not published yet: %r", exc)

    async def _watch_gauges(self) -> None:
        while True:
            if self.store is not None:
                try:
                    # Read from the store: with a shared store every replica
                    # exports the same number (rules and panels take max()).
                    count = await asyncio.to_thread(self.store.histories_off_topic)
                    self.metrics.urls_off_topic.set(count)
                except Exception as exc:  # a gauge must not kill the app
                    log.debug("off-topic gauge update failed: %r", exc)
            seeds = self.scoring.seeds if self.scoring is not None else None
            if seeds is not None:
                try:
                    # the seed distributions follow every verdict, not only those whose report was due
                    await asyncio.to_thread(seeds.refresh)
                except Exception as exc:  # a gauge must not kill the app
                    log.debug("seed report refresh failed: %r", exc)
            await asyncio.sleep(15.0)


EXIT_INTERRUPTED = 130  # 128 + SIGINT: what a shell expects of a command stopped by Ctrl-C


async def serve(cfg: Config, *, once: bool = False, stop: asyncio.Event | None = None) -> int:
    """Run the app until ``stop`` is set, SIGTERM/SIGINT arrives, or (``once``) all input is done.

    Returns 0, or :data:`EXIT_INTERRUPTED` when SIGINT stopped it (after the same graceful stop).
    """
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    received: list[signal.Signals] = []

    def on_signal(sig: signal.Signals) -> None:
        received.append(sig)
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, on_signal, sig)
            installed.append(sig)
        except (NotImplementedError, RuntimeError):  # not the main thread
            pass
    app = ConsumerApp(cfg)
    try:
        # Starting may wait for the broker for a long time: a signal must still stop it.
        starting = asyncio.create_task(app.start())
        stopper = asyncio.create_task(stop.wait())
        await asyncio.wait({starting, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if not starting.done():
            await cancel_and_wait([starting])  # its broker probes may lose a cancellation (watcher.tasks)
            log.info("stopped while waiting for Kafka")
            return EXIT_INTERRUPTED if signal.SIGINT in received else 0
        starting.result()
        if once:
            waiter = asyncio.create_task(app.wait_caught_up())
            stopper = asyncio.create_task(stop.wait())
            await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            for t in (waiter, stopper):
                t.cancel()
        else:
            await stop.wait()
        log.info("shutting down: finishing in-flight work and committing")
    finally:
        await app.stop()
        for sig in installed:
            loop.remove_signal_handler(sig)
    return EXIT_INTERRUPTED if signal.SIGINT in received else 0


def run(cfg: Config, *, once: bool = False) -> int:
    """``driftline run``: the streaming app in the foreground; returns the exit code."""
    try:
        return asyncio.run(serve(cfg, once=once))
    except DriftlineError as exc:
        log.error("driftline run failed (%s): %s", exc.reason, exc)
        return 2
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
