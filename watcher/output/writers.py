"""Result writers: json (OTMT schema), csv, jsonl, summary.

All writers consume results one history at a time: the JSON writer holds one
history's entries, the JSONL and CSV writers one capture, the summary one
row per history (buffered only for the aligned terminal table).  A file is
written next to its target and renamed into place when complete, so a
crashed scan never leaves half a result where a previous one was.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from ..config import Config
from ..errors import ConfigError, DriftlineError, Interrupted
from ..model import HistoryResult
from .common import (
    CHANGE_CLASSES,
    SUMMARY_KEY,
    Locators,
    capture_entry,
    change_counts,
    iso,
    locator_of,
    summary_block,
    unique_key,
    uri_m_of,
    uri_t_of,
)
from .jsonindent import dumps_indented

log = logging.getLogger(__name__)

CSV_FIELDS = ("history", "url", "uri_m", "capture_time", "baseline_time", "measure", "score", "threshold",
              "status", "overall_status", "change", "page_kind", "reason")


class OutputError(DriftlineError):
    reason = "output"


def write_json(results: Iterable[HistoryResult], out: TextIO, cfg: Config,
               uri_t: Mapping[str, str] | None = None, *, sources: Locators | None = None) -> int:
    """OTMT-compatible JSON, streamed one URI-T at a time.  Returns the number
    of captures written."""
    n = 0
    used_t: set[str] = set()
    out.write("{")
    first = True
    for result in results:
        block: dict[str, Any] = {}
        used_m: set[str] = set()
        for v in result.verdicts:
            block[unique_key(uri_m_of(v), used_m)] = capture_entry(v, cfg, locator_of(v, sources))
            n += 1
        block[SUMMARY_KEY] = summary_block(result)
        key = unique_key(uri_t_of(result, uri_t), used_t)
        out.write("\n" if first else ",\n")
        first = False
        out.write(f"    {json.dumps(key, ensure_ascii=False)}: " + dumps_indented(block, level=1))
    out.write("\n}\n" if not first else "}\n")
    return n


def iter_jsonl_records(results: Iterable[HistoryResult], cfg: Config,
                       uri_t: Mapping[str, str] | None = None, *,
                       sources: Locators | None = None) -> Iterator[dict[str, Any]]:
    """One flat-ish record per capture: history, uri_t, uri_m, url + the JSON entry."""
    for result in results:
        t = uri_t_of(result, uri_t)
        used_m: set[str] = set()
        for v in result.verdicts:
            rec: dict[str, Any] = {"history": result.history, "uri_t": t, "uri_m": unique_key(uri_m_of(v), used_m),
                                   "url": v.url}
            rec.update(capture_entry(v, cfg, locator_of(v, sources)))
            yield rec


def write_jsonl(results: Iterable[HistoryResult], out: TextIO, cfg: Config,
                uri_t: Mapping[str, str] | None = None, *, sources: Locators | None = None) -> int:
    """One JSON object per line and capture, streamed (constant memory)."""
    n = 0
    for rec in iter_jsonl_records(results, cfg, uri_t, sources=sources):
        out.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
        n += 1
    return n


def write_csv(results: Iterable[HistoryResult], out: TextIO, cfg: Config,
              uri_t: Mapping[str, str] | None = None) -> int:
    """One row per capture and measure (a capture without measures -- a
    baseline with no score, an empty capture -- still gets one row).  Each row
    ends with the verdict's reason: a spreadsheet reader sees why, not only what."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    n = 0
    for result in results:
        used_m: set[str] = set()
        for v in result.verdicts:
            common = [result.history, v.url, unique_key(uri_m_of(v), used_m), iso(v.capture_time),
                      iso(v.baseline_time) or ""]
            tail = [v.status, v.change, v.page_kind or "", v.reason]
            if not v.measures:
                writer.writerow([*common, "", "", "", "", *tail])
            for name, m in v.measures.items():
                writer.writerow([*common, name, "" if m.score is None else m.score,
                                 "" if m.threshold is None else m.threshold, m.status, *tail])
            n += 1
    return n


def _summary_row(result: HistoryResult) -> list[str]:
    s = summary_block(result)
    counts = change_counts(result)
    return [result.history, result.url, str(s["captures"]), result.behaviour, s["first drift"] or "-",
            f"{result.off_topic_share:.2f}", *(str(counts[c]) for c in CHANGE_CLASSES)]


SUMMARY_HEADER = ["history", "url", "captures", "behaviour", "first drift", "off-topic share", *CHANGE_CLASSES]


def write_summary(results: Iterable[HistoryResult], out: TextIO, cfg: Config,
                  uri_t: Mapping[str, str] | None = None, *, table: bool | None = None) -> int:
    """One line per history.  On a terminal (or ``table=True``) an aligned
    table; otherwise tab-separated, streamed."""
    if table is None:
        table = bool(getattr(out, "isatty", lambda: False)())
    n = 0
    if not table:
        out.write("\t".join(SUMMARY_HEADER) + "\n")
        for result in results:
            out.write("\t".join(c.replace("\t", " ") for c in _summary_row(result)) + "\n")
            n += 1
        return n
    rows = [SUMMARY_HEADER]
    for result in results:
        rows.append(_summary_row(result))
        n += 1
    widths = [min(60, max(len(r[i]) for r in rows)) for i in range(len(SUMMARY_HEADER))]
    numeric = {2, 5, *range(6, len(SUMMARY_HEADER))}
    for j, row in enumerate(rows):
        cells = []
        for i, cell in enumerate(row):
            cell = cell if len(cell) <= widths[i] else cell[: widths[i] - 1] + "…"
            cells.append(cell.rjust(widths[i]) if i in numeric and j else cell.ljust(widths[i]))
        out.write("  ".join(cells).rstrip() + "\n")
        if j == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")
    return n


Writer = Callable[[Iterable[HistoryResult], TextIO, Config, Mapping[str, str] | None], int]
WRITERS: dict[str, Writer] = {"json": write_json, "csv": write_csv, "jsonl": write_jsonl, "summary": write_summary}


def _new_file_mode() -> int:
    """The mode ``open()`` would give a new file (0666 less the umask, 0644 typically).

    ``mkstemp`` makes its file 0600; a result file is no secret, and a
    colleague or a web server reading it should not need a chmod.
    """
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


class _Committed:
    """The histories completely written so far, for keeping them on Ctrl-C.

    A writer asks for the next history only once it has written the previous
    one, so at each request the output is flushed and its position noted: on
    an interrupt the output is cut back to the last such point (never half a
    line or half a JSON block) and what precedes it is kept.
    """

    def __init__(self, results: Iterable[HistoryResult], out: TextIO) -> None:
        self._results = results
        self.out = out
        self.histories = 0
        self.captures = 0
        self._pending: HistoryResult | None = None
        self.position: int | None = None

    def __iter__(self) -> Iterator[HistoryResult]:
        it = iter(self._results)
        while True:
            self._commit()
            try:
                result = next(it)
            except StopIteration:
                return
            self._pending = result
            yield result

    def _commit(self) -> None:
        if self._pending is not None:
            self.histories += 1
            self.captures += len(self._pending.verdicts)
            self._pending = None
        self.out.flush()
        try:
            self.position = self.out.tell() if self.out.seekable() else None
        except (OSError, ValueError):
            self.position = None

    def cut(self, fmt: str) -> None:
        """Cut the output back to the last finished history (a JSON document closed again)."""
        with contextlib.suppress(OSError, ValueError):
            if self.position is not None:
                self.out.seek(self.position)
                self.out.truncate()
            if fmt == "json":
                self.out.write("\n}\n" if self.histories else "}\n")
            self.out.flush()


@contextlib.contextmanager
def _open_target(path: str | None) -> Iterator[TextIO]:
    if path is None or path == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    target = Path(path)
    if target.exists() and not target.is_file():
        # A device or a pipe (/dev/null, /dev/stdout, a FIFO): write to it; a rename would replace it
        # with a regular file (as root, /dev/null itself).
        with target.open("w", encoding="utf-8", newline="") as fh:
            yield fh
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.fchmod(fd, _new_file_mode())
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            yield fh
        os.replace(tmp, target)
    except Interrupted:  # Ctrl-C after some histories were finished: they are kept (see write_results)
        os.replace(tmp, target)
        raise
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_results(results: Iterable[HistoryResult], path: str | None, fmt: str, cfg: Config,
                  uri_t: Mapping[str, str] | None = None, sources: Locators | None = None) -> None:
    """Write ``results`` to ``path`` (None or "-" = stdout) in format ``fmt``
    (json, csv, jsonl, summary).  ``uri_t`` maps history keys to TimeMap URIs
    (:attr:`watcher.sources.HistoryIterator.uri_t`); it may fill while
    ``results`` is consumed, as may ``sources`` (each capture's locator, json and jsonl only).

    Output is flushed after each history.  On Ctrl-C the histories finished
    so far are kept (the file is put in place, a JSON document closed) and
    :class:`~watcher.errors.Interrupted` says how many."""
    writer = WRITERS.get(fmt)
    if fmt in ("json", "jsonl") and sources is not None:
        writer = functools.partial(write_json if fmt == "json" else write_jsonl, sources=sources)
    if writer is None:
        raise ConfigError(f"unknown output format {fmt!r}; known: {', '.join(WRITERS)}", reason="output_format")
    where = path if path not in (None, "-") else "stdout"
    try:
        with _open_target(path) as out:
            done = _Committed(results, out)
            try:
                n = writer(done, out, cfg, uri_t)
            except KeyboardInterrupt:
                if not done.histories or (fmt == "summary" and out.isatty()):
                    raise  # nothing finished (or a terminal table, shown only at the end): nothing to keep
                done.cut(fmt)
                raise Interrupted(f"interrupted: {done.captures} captures of {done.histories} histories written "
                                  f"to {where}") from None
    except BrokenPipeError:
        raise  # the reader went away (``| head``): the CLI ends quietly
    except OSError as exc:
        raise OutputError(f"cannot write results to {path or 'stdout'}: {exc}", reason="output_write") from exc
    # The summary writes one row per history, the others one entry per capture.
    log.info("wrote %d %s as %s to %s", n, "histories" if fmt == "summary" else "captures", fmt, path or "stdout")
