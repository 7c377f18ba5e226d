"""Batch inputs: WARC/ARC files, WACZ packages, CDX/CDXJ indexes, Memento TimeMaps and
gold-standard directories, turned into histories of captures.

``iter_histories(inputs, cfg)`` yields ``(history key, captures sorted by
time)``.  Each input is recognised by its content (:func:`detect_input`).
Order of output: gold and TimeMap histories in input order, then the
histories of all archive inputs (WARC, ARC, CDX, CDXJ), by canonical key.
Archive inputs are indexed together first, so a revisit in one file finds its
original in another.

The TimeMap URI of each history (the URI-T output writers report) is kept in
:attr:`HistoryIterator.uri_t`, filled as histories are yielded.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

from ..archive.detect import InputKind, archive_dir_files, detect_input, gold_labels_file
from ..archive.index import IndexEntry, index_archive, index_cdx
from ..archive.wacz import archive_members
from ..archive.warc import ArchiveHistory, archive_histories
from ..canonical import url_key
from ..config import Config
from ..errors import InputError
from ..model import Capture
from .gold import GoldRow, iter_gold, read_labels
from .timemap import TimeMap, load_timemap, timemap_captures

__all__ = ["HistoryIterator", "detect_input", "iter_histories", "merge_captures", "read_labels"]

log = logging.getLogger(__name__)


class HistoryIterator:
    """Iterator of ``(history, captures)`` that also records each history's
    URI-T (``uri_t[history]``) for the output writers."""

    def __init__(self, inputs: Sequence[str], cfg: Config, workers: int = 1) -> None:
        self._cfg = cfg
        self._workers = workers
        self.uri_t: dict[str, str] = {}
        self.kinds: dict[str, InputKind] = {}
        # Inputs or parts of inputs that could not be read (a TimeMap page, an
        # archive's damaged tail); captures that could not be read are errors
        # of their own, counted from the verdicts.
        self.unreadable: list[str] = []
        # Captures left out as non-documents (stylesheets, scripts, images), by MIME type.
        self.skipped: Counter[str] = Counter()
        inputs = expand_inputs(inputs)
        for source in inputs:
            kind = detect_input(source)
            if kind == "unknown":
                raise InputError(
                    f"{source}: not a recognised input (expected a WARC/ARC file, a WACZ, a CDX/CDXJ index, "
                    "a Memento TimeMap file or URL, a directory of WARC/ARC files, or a gold-standard directory "
                    "with labels.tsv)",
                    reason="unknown_input",
                )
            self.kinds[source] = kind
        # Read the small documents now, so a bad TimeMap or labels file fails
        # before any output is written; mementos and payloads are read lazily.
        self._timemaps: dict[str, TimeMap] = {}
        self._gold: dict[str, list[GoldRow]] = {}
        for source, kind in self.kinds.items():
            if kind == "timemap":
                self._timemaps[source] = load_timemap(source, cfg, self.unreadable)
            elif kind == "gold":
                self._gold[source] = read_labels(Path(source))
        # Captures expected in all (for a progress bar's total and ETA): labels and mementos are known now,
        # archive records once they are indexed (before their first history is yielded).
        self.total_captures = sum(len(r) for r in self._gold.values()) + sum(
            len(tm.mementos) for tm in self._timemaps.values())
        self.total_known = all(k in ("gold", "timemap") for k in self.kinds.values())
        self._gen = self._run(list(inputs))

    def __iter__(self) -> Iterator[tuple[str, list[Capture]]]:
        return self

    def __next__(self) -> tuple[str, list[Capture]]:
        history, item = next(self._gen)
        return history, item.load() if isinstance(item, ArchiveHistory) else item

    def items(self) -> Iterator[tuple[str, list[Capture] | ArchiveHistory]]:
        """The same histories, an archive's not yet read (:class:`ArchiveHistory`: its records are read
        where it is scored, a scan's worker, so only index entries travel); the same iterator as this
        one, not a copy."""
        return self._gen

    def _run(self, inputs: list[str]) -> Iterator[tuple[str, list[Capture] | ArchiveHistory]]:
        cfg = self._cfg
        archives = [s for s in inputs if self.kinds[s] not in ("gold", "timemap")]
        # With archive inputs too, TimeMap histories wait for them: a seed's
        # mementos and its captures in a WARC are one history, not two.
        held: dict[str, list[Capture]] = {}
        for source in inputs:
            kind = self.kinds[source]
            if kind == "gold":
                for history, captures in iter_gold(source, self._gold[source]):
                    self.uri_t[history] = history
                    yield history, captures
            elif kind == "timemap":
                tm = self._timemaps[source]
                captures = timemap_captures(tm, cfg)
                history = url_key(captures[0].url, cfg.engine.canonical)
                self.uri_t.setdefault(history, tm.uri_t)
                log.info("%s: %d mementos of %s", tm.uri_t, len(captures), history)
                if archives or history in held:
                    held[history] = merge_captures(held.get(history, []), captures)
                else:
                    yield history, captures
        if not archives:
            yield from held.items()
            return
        entries: list[IndexEntry] = []
        tasks = [(source, self.kinds[source]) for source in archives]
        for (source, kind), (found, problems) in zip(tasks, _index_all(tasks, cfg, self._workers), strict=True):
            entries.extend(found)
            self.unreadable.extend(problems)
            log.info("%s: %d records indexed (%s)", source, len(found), kind)
        self.total_captures += len(entries)
        self.total_known = True
        for records in archive_histories(entries, cfg, self.skipped):
            history = records.key
            self.uri_t.setdefault(history, f"history:{history}")
            if history in held:
                yield history, merge_captures(held.pop(history), records.load())
            else:
                yield history, records  # read where it is scored (items())
        if self.skipped:
            log.info("skipped %d non-document captures (%s; events.document_mimetypes)", sum(self.skipped.values()),
                     ", ".join(f"{m} {c}" for m, c in self.skipped.most_common(5)))
        yield from held.items()


def index_input(source: str, kind: InputKind, cfg: Config) -> tuple[list[IndexEntry], list[str]]:
    """The index entries of one archive input, and a line per part of it that could not be read."""
    problems: list[str] = []
    if kind in ("warc", "arc"):
        return list(index_archive(source, cfg, source=kind, problems=problems)), problems
    if kind == "wacz":  # its WARCs, read in place (watcher.archive.wacz)
        found = [e for member in archive_members(source)
                 for e in index_archive(member, cfg, source="warc", problems=problems)]
        return found, problems
    return list(index_cdx(source, cfg, kind)), problems


def _index_all(tasks: list[tuple[str, InputKind]], cfg: Config, workers: int
               ) -> Iterator[tuple[list[IndexEntry], list[str]]]:
    """:func:`index_input` of every task, in order.  Why in several processes: every archive is read
    whole before the first history can be scored (a URL's captures may lie in any file), so with one
    process the other cores wait for a directory's files to be read one after another."""
    n = min(workers, len(tasks))
    if n <= 1:
        for source, kind in tasks:
            yield index_input(source, kind, cfg)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=n) as pool:
        yield from pool.map(index_input, *zip(*tasks, strict=True), [cfg] * len(tasks))


def expand_inputs(inputs: Sequence[str]) -> list[str]:
    """``inputs`` with each directory that is not a gold directory replaced by its archives
    (:func:`archive_dir_files`); a file given twice (by name and in its directory) is read once."""
    out: list[str] = []
    for source in inputs:
        p = Path(source)
        if not source.startswith(("http://", "https://")) and p.is_dir() and gold_labels_file(p) is None:
            files = archive_dir_files(p)
            log.info("%s: %d archive files", source, len(files))
            out.extend(files)
        else:
            out.append(source)
    return list(dict.fromkeys(out))


def merge_captures(first: list[Capture], second: list[Capture]) -> list[Capture]:
    """One history from two inputs' captures, in time order.

    A capture present in both (an archive's memento of the very WARC record
    also given as input: same second, same payload digest) is kept once, the
    one from ``first``, so a replayed copy is not scored as a second capture.
    """
    def key(c: Capture) -> tuple[datetime, str] | None:
        digest = c.effective_digest
        return (c.timestamp.replace(microsecond=0), digest) if digest else None

    seen = {k for k in map(key, first) if k is not None}
    merged = list(first) + [c for c in second if (k := key(c)) is None or k not in seen]
    merged.sort(key=lambda c: c.timestamp)
    return merged


def iter_histories(inputs: Sequence[str], cfg: Config, workers: int = 1) -> HistoryIterator:
    """Histories of captures from batch ``inputs`` (paths or TimeMap URLs).

    Raises :class:`InputError` up front for a missing, unreadable or
    unrecognised input; damaged archives are read as far as possible.
    ``workers``: archive files indexed at once, each in a process of its own.
    """
    return HistoryIterator(inputs, cfg, workers)


def labels_path(path: str) -> Path:
    """``labels.tsv`` of a gold directory, or ``path`` itself."""
    p = Path(path)
    return p / "labels.tsv" if p.is_dir() else p
