"""Rate limit on the Kafka client's own log lines.

Why: while the broker is away, aiokafka logs every failed connection,
metadata refresh and heartbeat; one consumer wrote 2,400-3,200 error lines
per 20 s during an outage, which buries the lines that matter and costs real
disk in a log pipeline.  :class:`RateLimitFilter` lets the first line of each
kind (logger, level, message template) through per ``interval_s``, drops the
repeats, and appends the count of dropped ones to the next line of that kind
that passes, so nothing is hidden: the operator still sees every kind of
error, and how often it happened.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

# Loggers of the Kafka client library (its modules create children of these at import).
CLIENT_LOGGERS = ("aiokafka", "kafka")


class RateLimitFilter(logging.Filter):
    """One record per (logger, level, template) per ``interval_s``; the rest counted."""

    def __init__(self, interval_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.interval_s = interval_s
        self.clock = clock
        self.suppressed_total = 0
        self._last: dict[tuple[str, int, str], float] = {}
        self._dropped: dict[tuple[str, int, str], int] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.interval_s <= 0:
            return True
        key = (record.name, record.levelno, str(record.msg))
        now = self.clock()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.interval_s:
                self._dropped[key] = self._dropped.get(key, 0) + 1
                self.suppressed_total += 1
                return False
            self._last[key] = now
            dropped = self._dropped.pop(key, 0)
            if len(self._last) > 4096:  # bounded: forget the oldest kinds
                for old in sorted(self._last, key=self._last.__getitem__)[:1024]:
                    self._last.pop(old, None)
                    self._dropped.pop(old, None)
        if dropped:
            record.msg = f"{record.msg} [{dropped} similar lines suppressed in the last {self.interval_s:g}s]"
            record.suppressed = dropped
        return True


_installed: RateLimitFilter | None = None


def install_client_log_limit(interval_s: float) -> RateLimitFilter:
    """Attach one :class:`RateLimitFilter` to every Kafka client logger (idempotent).

    Logger filters are not inherited by child loggers, so the filter goes on
    each existing ``aiokafka.*`` logger; the client's modules are imported
    first so that all of them exist.
    """
    global _installed
    # Importing these creates the loggers the filter goes on.
    import aiokafka.consumer.fetcher
    import aiokafka.consumer.group_coordinator
    import aiokafka.producer.sender  # noqa: F401

    if _installed is None:
        _installed = RateLimitFilter(interval_s)
    _installed.interval_s = interval_s
    names = [name for name in logging.root.manager.loggerDict
             if any(name == root or name.startswith(root + ".") for root in CLIENT_LOGGERS)]
    for name in sorted({*names, *CLIENT_LOGGERS}):
        logger = logging.getLogger(name)
        if _installed not in logger.filters:
            logger.addFilter(_installed)
    log.debug("Kafka client log lines limited to one per kind per %gs on %d loggers", interval_s, len(names))
    return _installed
