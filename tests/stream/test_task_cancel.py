"""Background tasks stop even when one loses its cancellation (watcher.tasks).

Python 3.11's ``asyncio.wait_for`` can drop a cancellation that arrives as the awaited call
finishes (CPython gh-86296), and aiokafka's admin and metadata calls are built on it: a consumer
app's topic watcher cancelled there went on looping and ``stop()`` waited on it forever (seen in
the gold stream test).  The tasks here swallow a cancellation the way that race does.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from watcher.tasks import cancel_and_wait


async def _loses_cancellations(times: int, rounds: list[int], losing: list[bool] | None = None) -> None:
    """A watcher loop whose first ``times`` cancellations are lost, as in the race (all of them while
    ``losing[0]``)."""
    lost = 0
    while True:
        rounds.append(1)
        try:
            await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            if lost >= times and not (losing and losing[0]):
                raise
            lost += 1  # the awaited call "finished": the loop goes on to its next round


async def test_a_task_that_lost_its_cancellation_is_cancelled_again() -> None:
    rounds: list[int] = []
    task = asyncio.create_task(_loses_cancellations(2, rounds), name="driftline-topics")
    await asyncio.sleep(0.05)
    left = await asyncio.wait_for(cancel_and_wait([task], timeout_s=10.0), 20.0)
    assert left == [] and task.cancelled()
    # cancel once and wait, as stop() did: the task is still running
    again = asyncio.create_task(_loses_cancellations(1, rounds))
    await asyncio.sleep(0.05)
    again.cancel()
    done, _ = await asyncio.wait({again}, timeout=0.5)
    assert not done, "the loop was expected to go on after its lost cancellation"
    assert await cancel_and_wait([again]) == [] and again.cancelled()


async def test_a_task_that_never_stops_is_named_not_waited_for(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="watcher.tasks")
    rounds: list[int] = []
    losing = [True]
    task = asyncio.create_task(_loses_cancellations(0, rounds, losing), name="stubborn")
    ok = asyncio.create_task(asyncio.sleep(60), name="polite")
    try:
        left = await asyncio.wait_for(cancel_and_wait([task, ok], timeout_s=1.0), 10.0)
        assert left == [task] and ok.cancelled()
        assert any("stubborn" in r.getMessage() for r in caplog.records)
    finally:
        losing[0] = False
        assert await cancel_and_wait([task]) == []


async def test_an_error_a_task_ended_with_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    async def fails() -> None:
        raise RuntimeError("broke while stopping")

    task = asyncio.create_task(fails(), name="failing")
    await asyncio.wait({task})
    caplog.set_level(logging.ERROR, logger="watcher.tasks")
    assert await cancel_and_wait([task]) == []
    assert any("failing" in r.getMessage() and r.exc_info for r in caplog.records)
