"""Stopping background tasks for good, even when one swallows its cancellation.

Why: Python 3.11's ``asyncio.wait_for`` can lose a cancellation that arrives just as the awaited
call finishes (CPython gh-86296, fixed in 3.12), and client libraries built on it (aiokafka's
admin client, the metadata fetches) pass that on.  A loop task that was cancelled there goes on
to its next round as if nothing happened, and ``task.cancel(); await task`` then waits forever: a
consumer app under test hung in ``stop()`` on its topic watcher this way.  Here a task still
running after a cancel is cancelled again, within a time limit, and one that outlives that limit
is named in a warning instead of holding its owner.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

log = logging.getLogger(__name__)

# How long a cancelled task gets to unwind before it is cancelled again.
RECANCEL_S = 0.5


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]], timeout_s: float = 10.0) -> list[asyncio.Future[Any]]:
    """Cancel ``tasks`` and wait until they are done, cancelling again any that goes on; returns the
    tasks still running after ``timeout_s`` (logged).  An exception a task ended with is logged,
    not raised: stopping must go on."""
    tasks = list(tasks)
    pending = {t for t in tasks if not t.done()}
    deadline = time.monotonic() + timeout_s
    rounds = 0
    while pending:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        if rounds:
            log.info("%d task(s) went on after a cancel (a lost cancellation): cancelling again: %s",
                     len(pending), _names(pending))
        for t in pending:
            t.cancel()
        rounds += 1
        _, pending = await asyncio.wait(pending, timeout=min(RECANCEL_S, left))
    if pending:
        log.warning("%d task(s) still running %.0f s after being cancelled: %s", len(pending), timeout_s,
                    _names(pending))
    for t in tasks:
        if t.done() and not t.cancelled() and t.exception() is not None:
            log.error("task %s ended with an error", _names([t]), exc_info=t.exception())
    return [t for t in tasks if not t.done()]


def _names(tasks: Iterable[asyncio.Future[Any]]) -> str:
    return ", ".join(sorted(t.get_name() if isinstance(t, asyncio.Task) else repr(t) for t in tasks))
