"""Batch scan: histories in, results out, on every core, in bounded memory.

Histories are independent, so they are scored in worker processes.  Only a
small window of histories is in flight at once (``2 x workers``): the input
iterator loads a history's payloads lazily, and an unbounded pool would pull
the whole archive into memory.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Protocol, TextIO

from . import lang
from .config import Config, EngineConfig
from .engine import Engine
from .fingerprint import UNREADABLE
from .model import Capture, HistoryResult, ts14

log = logging.getLogger(__name__)

_ENGINE: Engine | None = None


def _init_worker(cfg: EngineConfig) -> None:
    """Ctrl-C reaches every process of the terminal's group: workers ignore it, and the main
    process stops the pool and keeps what is written (no traceback per worker)."""
    global _ENGINE
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _ENGINE = Engine(cfg)


def _score(history: str, captures: list[Capture]) -> HistoryResult:
    assert _ENGINE is not None, "worker not initialised"
    return _ENGINE.scan_history(history, captures)


def worker_count(cfg: Config) -> int:
    return cfg.scan.workers if cfg.scan.workers > 0 else max(1, os.cpu_count() or 1)


def score_histories(histories: Iterable[tuple[str, list[Capture]]], cfg: Config,
                    workers: int | None = None) -> Iterator[HistoryResult]:
    """Score every history; yields results in input order."""
    n = workers or worker_count(cfg)
    engine = Engine(cfg.engine)  # validates measure names before any work starts
    if n <= 1:
        for history, caps in histories:
            yield engine.scan_history(history, caps)
        return
    window: deque[Future[HistoryResult]] = deque()
    # The language model is loaded here, once, before the workers fork (it unpacks a compressed
    # model: a second of CPU that each worker paid again on its first page).
    lang.identifier()
    with ProcessPoolExecutor(max_workers=n, initializer=_init_worker, initargs=(engine.config,)) as pool:
        try:
            for history, caps in histories:
                window.append(pool.submit(_score, history, caps))
                while len(window) >= 2 * n:
                    yield window.popleft().result()
            while window:
                yield window.popleft().result()
        except BaseException:
            # Ctrl-C, or the reader stopped: histories not started are dropped, not scored for nothing.
            pool.shutdown(wait=False, cancel_futures=True)
            raise


class _Total(Protocol):
    total_captures: int
    total_known: bool


def _progress(it: Iterable[HistoryResult], enabled: bool, source: _Total | None = None,
              stream: TextIO | None = None) -> Iterable[HistoryResult]:
    """A tqdm bar over captures on a terminal, with the indexed total (hence an ETA) once it is known.

    The total comes from ``source`` (the history iterator): inputs are
    indexed before the first history is scored, so it is known from the first
    result on; it is refreshed as it grows (TimeMaps, then archives).
    """
    stream = stream or sys.stderr
    if not enabled or not stream.isatty():
        return it
    from tqdm import tqdm

    def counted() -> Iterator[HistoryResult]:
        with tqdm(unit=" captures", file=stream, desc="scan", dynamic_ncols=True) as bar:
            for r in it:
                if source is not None and source.total_known and bar.total != source.total_captures:
                    bar.total = max(source.total_captures, bar.n + len(r.verdicts))
                    bar.refresh()
                bar.update(len(r.verdicts))
                yield r

    return counted()


def scan(inputs: Sequence[str], cfg: Config, out: str | None, fmt: str | None = None,
         workers: int | None = None) -> dict[str, Any]:
    """``driftline scan``: read inputs, score, write results; return counts."""
    from .output import write_results
    from .sources import iter_histories

    it = iter_histories(inputs, cfg)
    counts = {"histories": 0, "captures": 0, "off-topic": 0, "empty": 0, "error": 0, "unreadable captures": 0,
              "unreadable inputs": 0, "skipped non-documents": 0}

    def counted(results: Iterable[HistoryResult]) -> Iterator[HistoryResult]:
        for r in results:
            counts["histories"] += 1
            counts["captures"] += len(r.verdicts)
            counts["off-topic"] += sum(v.status == "off-topic" for v in r.verdicts)
            counts["empty"] += sum(v.status == "empty" for v in r.verdicts)
            counts["error"] += sum(v.status == "error" for v in r.verdicts)
            # Captures the input named but that could not be read (see fingerprint.UNREADABLE).
            counts["unreadable captures"] += sum(v.status == "error" and v.reason.startswith(UNREADABLE)
                                                 for v in r.verdicts)
            yield r

    sources: dict[tuple[str, str, str], str] = {}

    def located(histories: Iterable[tuple[str, list[Capture]]]) -> Iterator[tuple[str, list[Capture]]]:
        """Each capture's locator, kept in this process for the writer (``driftline review`` reads it)."""
        for history, caps in histories:
            for c in caps:
                if c.locator:
                    sources[(c.history or history, ts14(c.timestamp), c.url)] = c.locator
            yield history, caps

    results = _progress(counted(score_histories(located(it), cfg, workers)), cfg.scan.progress, it)
    write_results(results, out, fmt or cfg.scan.format, cfg, it.uri_t, sources)
    counts["unreadable inputs"] = len(it.unreadable)
    # stylesheets, scripts, images in the archives: not scored (events.document_mimetypes), as in the stream
    counts["skipped non-documents"] = sum(it.skipped.values())
    return counts
