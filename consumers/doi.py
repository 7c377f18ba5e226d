"""Kafka glue of the DOI monitor: runs the scheduler (watcher/doi) and
produces its capture events and alerts.

Events go to ``doi.events_topic`` (driftline format, keyed by DOI so one
DOI's captures stay in order; add the topic to ``kafka.input_topics``),
alerts to ``kafka.alerts_topic``.  The monitor has already scored each check
with the watcher's one step into the store's history ``doi:<doi>``; the
event names that history (``watch.id``), so a streaming watcher on the same
store finds the verdict stored and publishes it (and any alert owed) without
scoring it again, and one on another store scores it with the same step.  Both are
acknowledged by the broker (``acks=all``) before the check counts as done.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
from typing import Any

from watcher.broker import EmbeddedBroker, broker_reachable, ensure_topics
from watcher.config import Config
from watcher.doi.monitor import DoiMonitor
from watcher.doi.schedule import DoiScheduler, check_all, check_resolver, open_monitor
from watcher.doi.status import serve_status
from watcher.errors import ConfigError
from watcher.net.netguard import AddressPolicy
from watcher.ports import port_free

from .app import EXIT_INTERRUPTED
from .publish.publisher import Publisher

log = logging.getLogger(__name__)


class DoiProducer:
    """Produces the monitor's messages (the ``emit`` of :class:`DoiMonitor`)."""

    def __init__(self, cfg: Config, bootstrap: str) -> None:
        self.cfg = cfg
        self.publisher = Publisher(cfg.kafka, bootstrap)
        self.sent: dict[str, int] = {"event": 0, "alert": 0}

    async def start(self) -> None:
        await self.publisher.start()

    async def stop(self) -> None:
        await self.publisher.stop()

    async def emit(self, kind: str, message: dict[str, Any]) -> None:
        topic = self.cfg.doi.events_topic if kind == "event" else self.cfg.kafka.alerts_topic
        value = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
        await self.publisher.send_all([(topic, str(message.get("doi", "")).encode(), value, None)])
        self.sent[kind] = self.sent.get(kind, 0) + 1


async def serve_monitor(cfg: Config, *, once: bool = False, stop: asyncio.Event | None = None) -> int:
    """Run the monitor until ``stop`` is set (or, with ``once``, for one round of checks).

    Returns 0, or 130 when SIGINT (Ctrl-C) stopped it, as ``driftline run`` does."""
    check_resolver(cfg, AddressPolicy(cfg.acquire.allow_addresses))  # before a broker starts for nothing
    k = cfg.kafka
    broker = None
    received: list[signal.Signals] = []
    if k.bootstrap_servers is None:
        if not k.embedded_broker:
            raise ConfigError("kafka.bootstrap_servers is unset and kafka.embedded_broker is false")
        broker = await _embedded_broker(k.embedded_port)
    bootstrap = k.bootstrap_servers or f"127.0.0.1:{k.embedded_port}"
    producer = DoiProducer(cfg, bootstrap)
    try:
        if k.create_topics:
            await ensure_topics(bootstrap, [cfg.doi.events_topic, k.alerts_topic], k.partitions)
        await producer.start()
        async with open_monitor(cfg, producer.emit) as monitor:
            if once:
                results = await check_all(monitor)
                log.info("checked %d DOIs", len(results))
                return 0
            await _scheduled(cfg, monitor, stop or _stop_on_signals(received))
    finally:
        await producer.stop()
        if broker is not None:
            await broker.stop()
    return EXIT_INTERRUPTED if signal.SIGINT in received else 0  # as driftline run: Ctrl-C is 130, SIGTERM 0


async def _embedded_broker(port: int) -> EmbeddedBroker | None:
    """The embedded broker ``doi run`` starts, or ``None`` when a Kafka broker already serves the port.

    Why: beside ``driftline run`` on one machine, the port is held by that watcher's embedded broker,
    and producing there is what the user wants (the watcher consumes the DOI events).  Before, a
    second broker was started, died on the held port, and was still logged as started.  Now the
    line says which broker is used; a port held by something that is not a broker is refused."""
    if port_free("127.0.0.1", port, reuse_address=True):
        broker = EmbeddedBroker(port)
        await broker.start()
        return broker
    if await broker_reachable(f"127.0.0.1:{port}", 5.0):
        log.info("127.0.0.1:%d already serves a Kafka broker (the embedded broker of a running `driftline run`?): "
                 "producing to it; it keeps the DOI events only while it runs", port)
        return None
    raise ConfigError(f"cannot start the embedded broker on 127.0.0.1:{port}: the port is in use by something that "
                      "is not a Kafka broker; choose another with kafka.embedded_port "
                      "(DRIFTLINE__KAFKA__EMBEDDED_PORT) or set kafka.bootstrap_servers", reason="broker_port")


async def _scheduled(cfg: Config, monitor: DoiMonitor, stop: asyncio.Event) -> None:
    sched = DoiScheduler(cfg, monitor)
    sched.start()
    try:
        async with serve_status(monitor, cfg.doi.status_host, cfg.doi.status_port,
                                lambda: bool(sched.scheduler.running)) as url:
            if url:
                log.info("DOI status at %s/doi/status", url)
            while not stop.is_set():
                try:
                    await asyncio.wait_for(stop.wait(), timeout=60.0)
                except TimeoutError:
                    await asyncio.to_thread(sched.sync)  # DOIs added or removed by the CLI meanwhile
    finally:
        cut = await sched.stop()
        if cut:
            log.warning("%d DOI checks were cut short by the shutdown; they run at their next run time", cut)


def _stop_on_signals(received: list[signal.Signals]) -> asyncio.Event:
    """An event set by SIGTERM or SIGINT; ``received`` collects which came."""
    ev = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal(sig: signal.Signals) -> None:
        received.append(sig)
        ev.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # not on the main thread
            loop.add_signal_handler(sig, on_signal, sig)
    return ev


def run_monitor(cfg: Config, *, once: bool = False) -> int:
    """``driftline doi run``."""
    return asyncio.run(serve_monitor(cfg, once=once))
