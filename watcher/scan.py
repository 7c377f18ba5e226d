"""Batch scan: histories in, results out, on every core, in bounded memory.

Histories are independent, so they are scored in worker processes.  Only a
small window of histories is in flight at once (``2 x workers`` not yet
scored): the input iterator loads a history's payloads lazily, and an
unbounded pool would pull the whole archive into memory.  Results are written
in input order; a finished one waits for its turn (up to 32 per worker) while
the workers go on, so one long history does not idle the others.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Protocol, TextIO, TypeVar

from . import lang
from .archive.warc import ArchiveHistory
from .config import Config, EngineConfig
from .engine import Engine
from .fingerprint import UNREADABLE
from .model import Capture, HistoryResult, ts14

log = logging.getLogger(__name__)

_ENGINE: Engine | None = None
# Finished results held for their turn, per worker, while an older history is still scored.
_MAX_WAITING = 32
T = TypeVar("T")
R = TypeVar("R")


def _init_worker(cfg: EngineConfig) -> None:
    """Ctrl-C reaches every process of the terminal's group: workers ignore it, and the main
    process stops the pool and keeps what is written (no traceback per worker)."""
    global _ENGINE
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _ENGINE = Engine(cfg)


Located = dict[tuple[str, str, str], str]
"""Where each capture of a history was read: (history, capture time, URL) -> its locator."""


def _score(history: str, item: list[Capture] | ArchiveHistory) -> tuple[HistoryResult, Located]:
    assert _ENGINE is not None, "worker not initialised"
    return _scored(_ENGINE, history, item)


def _scored(engine: Engine, history: str, item: list[Capture] | ArchiveHistory) -> tuple[HistoryResult, Located]:
    """A history's result and where its captures were read (``driftline review`` reads it), an archive's
    records read here, in the process that scores them."""
    captures = item.load() if isinstance(item, ArchiveHistory) else item
    located = {(c.history or history, ts14(c.timestamp), c.url): c.locator for c in captures if c.locator}
    return engine.scan_history(history, captures), located


def worker_count(cfg: Config) -> int:
    return cfg.scan.workers if cfg.scan.workers > 0 else max(1, os.cpu_count() or 1)


def score_histories(histories: Iterable[tuple[str, list[Capture]]], cfg: Config,
                    workers: int | None = None) -> Iterator[HistoryResult]:
    """Score every history; yields results in input order."""
    for result, _ in score_located(histories, cfg, workers):
        yield result


def score_located(histories: Iterable[tuple[str, list[Capture] | ArchiveHistory]], cfg: Config,
                  workers: int | None = None) -> Iterator[tuple[HistoryResult, Located]]:
    """Score every history (an archive's read by the worker that scores it); yields each result with
    where its captures were read, in input order."""
    n = workers or worker_count(cfg)
    engine = Engine(cfg.engine)  # validates measure names before any work starts
    if n <= 1:
        for history, item in histories:
            yield _scored(engine, history, item)
        return
    # The language model is loaded here, once, before the workers fork (unpacked, or read from the
    # cache folder: watcher.langmodel), not again by each worker on its first page.
    lang.identifier()
    with ProcessPoolExecutor(max_workers=n, initializer=_init_worker, initargs=(engine.config,)) as pool:
        try:
            yield from in_order(lambda item: pool.submit(_score, *item), histories, n)
        except BaseException:
            # Ctrl-C, or the reader stopped: histories not started are dropped, not scored for nothing.
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def in_order(submit: Callable[[T], Future[R]], items: Iterable[T], workers: int) -> Iterator[R]:
    """The results of ``submit(item)`` for every item, in input order, with at most ``2 x workers``
    items submitted and unfinished (their inputs are in memory) and at most ``_MAX_WAITING x
    workers`` results held for their turn.  Why not wait on the oldest item: one long history held
    the others back, and the idle workers with them (a scan of the gold took 9.4 s of wall time
    that way, 7.7-8.2 s this way, the same output byte for byte)."""
    window: deque[Future[R]] = deque()  # in input order, finished or not
    running: set[Future[R]] = set()
    for item in items:
        future = submit(item)
        window.append(future)
        running.add(future)
        while True:
            while window and window[0].done():
                yield window.popleft().result()
            running = {f for f in running if not f.done()}
            if len(running) < 2 * workers and len(window) < _MAX_WAITING * workers:
                break
            # too much unfinished, or too many results held behind the oldest item
            wait(running if len(window) < _MAX_WAITING * workers else [window[0]], return_when=FIRST_COMPLETED)
    while window:
        yield window.popleft().result()


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

    it = iter_histories(inputs, cfg, workers or worker_count(cfg))
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

    sources: Located = {}

    def located(scored: Iterable[tuple[HistoryResult, Located]]) -> Iterator[HistoryResult]:
        """Each capture's locator, kept in this process for the writer (``driftline review`` reads it)."""
        for result, where in scored:
            sources.update(where)
            yield result

    results = _progress(counted(located(score_located(it.items(), cfg, workers))), cfg.scan.progress, it)
    write_results(results, out, fmt or cfg.scan.format, cfg, it.uri_t, sources)
    counts["unreadable inputs"] = len(it.unreadable)
    # stylesheets, scripts, images in the archives: not scored (events.document_mimetypes), as in the stream
    counts["skipped non-documents"] = sum(it.skipped.values())
    return counts
