"""A broker that accepts connections and never answers must not hold a consumer's start for good.

aiokafka's ``start()`` has no deadline of its own; the suite twice saw a start against the embedded
broker wait until the test's 300-second timeout.  Here a TCP server that accepts and reads but
never writes stands for such a broker (with a request timeout of five minutes, aiokafka alone would
wait that long).
"""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from aiokafka import AIOKafkaConsumer

from consumers.client import start_consumer
from watcher.errors import DriftlineError


async def _silent_server() -> tuple[asyncio.Server, int, list[int]]:
    accepted: list[int] = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        while await reader.read(4096):
            pass  # every request read, none answered
        writer.close()

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    port = int(server.sockets[0].getsockname()[1])
    return server, port, accepted


async def test_a_start_against_a_broker_that_never_answers_is_bounded_and_retried(
        caplog: pytest.LogCaptureFixture) -> None:
    server, port, accepted = await _silent_server()
    caplog.set_level(logging.WARNING, logger="consumers.client")
    started = time.monotonic()
    try:
        with pytest.raises(DriftlineError) as err:
            await start_consumer(lambda: AIOKafkaConsumer(bootstrap_servers=f"127.0.0.1:{port}",
                                                          request_timeout_ms=300_000),
                                 "scorer", timeout_s=1.0, attempts=2)
    finally:
        server.close()
        await server.wait_closed()
    assert time.monotonic() - started < 60  # not the request timeout's five minutes
    assert err.value.reason == "broker_unavailable" and "scorer" in str(err.value)
    warnings = [r.getMessage() for r in caplog.records if r.name == "consumers.client"]
    assert len(warnings) == 2 and "(attempt 1 of 2); starting a new one" in warnings[0], warnings
    assert len(accepted) >= 2  # each attempt a new connection
