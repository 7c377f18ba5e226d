"""Process-wide logging: human text or one JSON object per line.

Why JSON lines: a consumer in a container logs to stdout, and log shippers
(Loki, Elasticsearch) index fields such as ``topic``, ``partition``,
``offset`` and ``reason`` only when they arrive as fields.  Library code
passes those as ``extra={...}``; this formatter copies every non-standard
record attribute into the JSON object.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

_STANDARD = set(vars(logging.LogRecord("x", logging.INFO, "x", 0, "x", None, None))) | {"message", "asctime"}


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time, level, logger, message, extras, exc."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in _extras(record).items():
            out[key] = value if isinstance(value, str | int | float | bool | type(None)) else repr(value)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """Classic text lines, with ``key=value`` extras appended."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = _extras(record)
        if extras:
            tail = " ".join(f"{k}={v}" for k, v in extras.items())
            first, sep, rest = line.partition("\n")
            line = f"{first} [{tail}]{sep}{rest}"
        return line


class StderrHandler(logging.StreamHandler[TextIO]):
    """A handler writing to whatever ``sys.stderr`` is when a record comes, not when it was made.

    Why: a handler holding the ``sys.stderr`` of the moment kept writing to it after it was closed:
    every command run in-process by a test (pytest swaps and closes ``sys.stderr`` around each
    test) left one that printed a "--- Logging error ---" block with a traceback for each later
    record (``ValueError: I/O operation on closed file``), which a user running the suite read as
    trouble.  The same goes for any embedding program that redirects ``sys.stderr``."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        """``StreamHandler.__init__`` and ``setStream`` assign it: the current stderr is always used."""


_PY4J_PATH = f"{os.sep}py4j{os.sep}"


def _not_py4j_chatter(record: logging.LogRecord) -> bool:
    """False for py4j's records below WARNING: it logs some to the root logger (``logging.info`` in
    ``java_gateway``), so its logger's level alone does not hold them back."""
    return record.levelno >= logging.WARNING or not (
        record.name.startswith("py4j") or _PY4J_PATH in (record.pathname or ""))


def setup_logging(level: str = "INFO", fmt: str = "text", stream: TextIO | None = None) -> None:
    """Configure the root logger once (replacing handlers a previous call set).

    Kafka client chatter (aiokafka logs every rebalance at INFO) and Spark's gateway chatter (py4j logs
    every connection it opens and closes at INFO, a closed one with a traceback) are kept at WARNING
    unless ``level`` is DEBUG.
    """
    handler: logging.StreamHandler[TextIO] = logging.StreamHandler(stream) if stream is not None else StderrHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.set_name("driftline")
    root = logging.getLogger()
    for old in list(root.handlers):
        if old.get_name() == "driftline":
            root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    if level.upper() != "DEBUG":
        logging.getLogger("aiokafka").setLevel(logging.WARNING)
        logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
        logging.getLogger("py4j").setLevel(logging.WARNING)
        handler.addFilter(_not_py4j_chatter)
