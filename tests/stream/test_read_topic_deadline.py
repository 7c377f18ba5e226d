"""``consumers.client.read_topic`` keeps to its deadline when the broker leaves a request unanswered.

The tests', the demo's and the review checks' reader once waited without limit for the answer to
its reset to the first offset (a ListOffsets request): one CI run held a test 300 s after the app's
work was done.  A real Tansu broker is put behind a relay that speaks enough of the Kafka protocol
to read each request's API key; the broker advertises the relay's port, so every connection of a
client goes through it.  The relay then holds back every ListOffsets request (never forwarded,
never answered), as a broker that stalls on one would.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import pytest

from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, _free_port
from watcher.broker import EmbeddedBroker, ensure_topics, tansu_binary

pytestmark = pytest.mark.kafka

LIST_OFFSETS = 2  # the Kafka protocol's API key of ListOffsets


class _Relay:
    """Forwards Kafka requests to ``upstream`` and its answers back, except requests whose API key
    is in ``held`` (read whole, counted, dropped)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.held: set[int] = set()
        self.dropped = 0
        self.port = _free_port()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.close()
            self._tasks.discard(task)
            return

        async def requests() -> None:
            while True:
                head = await reader.readexactly(4)
                body = await reader.readexactly(int.from_bytes(head, "big", signed=True))
                if int.from_bytes(body[:2], "big", signed=True) in self.held:
                    self.dropped += 1
                    continue
                up_writer.write(head + body)
                await up_writer.drain()

        async def answers() -> None:
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()

        try:
            legs = [asyncio.ensure_future(requests()), asyncio.ensure_future(answers())]
            with contextlib.suppress(Exception):
                await asyncio.wait(legs, return_when=asyncio.FIRST_COMPLETED)
            for leg in legs:
                leg.cancel()
            await asyncio.gather(*legs, return_exceptions=True)
        finally:
            for w in (writer, up_writer):
                w.close()
            self._tasks.discard(task)


class _BehindRelay(EmbeddedBroker):
    """A Tansu broker that listens on its own port and advertises the relay's."""

    def __init__(self, port: int, relay_port: int, log_path: Path) -> None:
        super().__init__(port, log_path=log_path)
        self.relay_port = relay_port

    def _command(self) -> list[str]:
        return [str(tansu_binary()), "broker", "--listener-url", f"tcp://{self.host}:{self.port}",
                "--advertised-listener-url", f"tcp://{self.host}:{self.relay_port}"]


async def test_read_topic_returns_by_its_deadline_when_list_offsets_goes_unanswered(
        kafka_names: KafkaNames, tmp_path: Path) -> None:
    broker_port = _free_port()
    relay = _Relay(broker_port)
    await relay.start()
    broker = _BehindRelay(broker_port, relay.port, tmp_path / "tansu.log")
    await broker.start()
    boot = f"127.0.0.1:{relay.port}"
    try:
        topic = kafka_names.topic("held")
        await ensure_topics(boot, [topic], 1)
        await produce(boot, topic, [b'{"n": 1}', b'{"n": 2}'])
        # Through the relay, with every request answered, the reader reads the topic.
        assert [m["value"] for m in await read_topic(boot, topic, expect=2, timeout_s=30)] == [{"n": 1}, {"n": 2}]

        relay.held = {LIST_OFFSETS}
        timeout_s = 3.0
        started = time.monotonic()
        out = await asyncio.wait_for(read_topic(boot, topic, expect=2, timeout_s=timeout_s), 90)
        elapsed = time.monotonic() - started
    finally:
        await broker.stop()
        await relay.stop()
    assert relay.dropped >= 1, "the reader never asked for offsets: the test held nothing back"
    # its deadline, and the client's close (bounded at 10 s, also waiting on a broker that stalls)
    assert elapsed < timeout_s + 10 + 5, f"read_topic took {elapsed:.1f} s with a {timeout_s} s timeout"
    assert out == []  # no offset to start from, nothing read: the reader gave up at its deadline
