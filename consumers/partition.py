"""One assigned partition's state in a consumer-group runner, and what tells its records apart.

Kept apart from :mod:`consumers.runner` (which works the partitions) and :mod:`consumers.lag`
(which reports how far behind they are): both read it.
"""

from __future__ import annotations

import asyncio
import zlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiokafka import TopicPartition

Record = Any  # aiokafka.structs.ConsumerRecord (untyped library)


@dataclass(eq=False)
class Partition:
    tp: TopicPartition
    queue: deque[Record] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    done: int | None = None  # next offset to commit (last finished + 1)
    committed: int | None = None
    revoked: bool = False
    generation: int = 0  # bumped when the partition's log was reset (a memory broker restarted)
    current_ts: float | None = None  # broker timestamp (s) of the record being handled
    last_ts: float | None = None  # broker timestamp (s) of the last record handled
    last_sig: tuple[int, int, int, int] | None = None  # signature() of the record that set ``done``


def signature(record: Record) -> tuple[int, int, int, int]:
    """What tells one record from another at the same offset: offset, timestamp, key and value
    checksums (a log re-created by a broker restart holds other records under the old offsets)."""
    ts = getattr(record, "timestamp", None)
    key, value = getattr(record, "key", None), getattr(record, "value", None)
    return (int(record.offset), int(ts) if isinstance(ts, int) else -1,
            zlib.crc32(key) if isinstance(key, bytes) else -1, zlib.crc32(value) if isinstance(value, bytes) else -1)


def record_time(record: Record) -> float | None:
    """The record's broker timestamp in seconds, if it has one."""
    ts = getattr(record, "timestamp", None)
    return ts / 1000.0 if isinstance(ts, int) and ts > 0 else None
