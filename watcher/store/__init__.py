"""Baseline stores: where per-history state lives between captures.

``open_store`` picks the backend named by ``store.backend``: ``sqlite`` (the
embedded default, durable), ``memory`` (batch runs, quick use) or
``postgres`` (one store shared by consumers on several machines, at
``store.dsn``).  All implement :class:`~watcher.store.base.BaselineStore`.

The PostgreSQL backend is imported only when chosen: its driver (psycopg) is
the optional ``postgres`` extra, so the embedded backends work without it.
"""

from __future__ import annotations

from ..compact import reduce_fingerprint
from ..config import StoreConfig
from ..errors import ConfigError
from .base import BaselineStore
from .codec import (
    decode_fingerprint,
    decode_verdict,
    encode_fingerprint,
    encode_verdict,
    verdict_from_dict,
    verdict_to_dict,
)
from .memory import MemoryStore
from .sqlite import SQLiteStore

__all__ = [
    "BaselineStore",
    "MemoryStore",
    "SQLiteStore",
    "decode_fingerprint",
    "decode_verdict",
    "encode_fingerprint",
    "encode_verdict",
    "open_store",
    "reduce_fingerprint",
    "verdict_from_dict",
    "verdict_to_dict",
]


def open_store(cfg: StoreConfig) -> BaselineStore:
    """Open the store ``cfg`` describes (the SQLite file, or the PostgreSQL
    tables, are created on first use)."""
    if cfg.backend == "sqlite":
        return SQLiteStore(
            cfg.path,
            history_limit=cfg.history_limit,
            rescore_window_s=cfg.rescore_window_s,
        )
    if cfg.backend == "memory":
        return MemoryStore(
            history_limit=cfg.history_limit,
            rescore_window_s=cfg.rescore_window_s,
        )
    if cfg.backend == "postgres":
        if not cfg.dsn:
            raise ConfigError(
                "store.backend is postgres but store.dsn is not set (e.g. DRIFTLINE__STORE__DSN)", reason="store_dsn"
            )
        try:
            from .postgres import PostgresStore
        except ImportError as exc:
            raise ConfigError(
                f"store.backend postgres needs psycopg: pip install 'driftline[postgres]' ({exc})",
                reason="store_backend",
            ) from exc
        return PostgresStore(
            cfg.dsn.get_secret_value(),
            history_limit=cfg.history_limit,
            rescore_window_s=cfg.rescore_window_s,
        )
    raise ConfigError(f"unknown store backend {cfg.backend!r}", reason="store_backend")
