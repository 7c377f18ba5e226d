"""Capture events from files, as the crawler would have sent them (``driftline feed``).

Why: ``driftline run`` reads what a crawler publishes.  To try it on a crawl
that already happened, or to replay one, the events must look exactly like the
crawler's, or what is tested is not what runs.  This module turns WARC/ARC
files, CDX(J) indexes and Heritrix ``crawl.log`` files into the messages of
Heritrix's ``KafkaCrawlLogFeed`` (the JSON its ``CrawlLogJsonBuilder``
writes, field for field, with ``null`` where Heritrix has nothing), into
``crawl.log`` lines, or into driftline's own event JSON.  It yields
``(key, value)`` pairs and never talks to Kafka: the producing is the CLI's.

Heritrix names a WARC by its file name alone (``warc_filename``), and
``driftline run`` finds that name under ``acquire.warc_dirs``: a WARC whose
folder is not among them is reported once, in one line, since ``run`` would
not find it.

A revisit record is announced as Heritrix does: the response's status and
MIME type (read from the revisit record's HTTP headers, else from the
original capture it repeats) and the annotation ``duplicate:digest``.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .config import Config
from .errors import EventError, InputError
from .events import parse_crawl_log_line, parse_heritrix_kafka
from .events.fields import opt_int
from .model import utc

if TYPE_CHECKING:  # the readers are imported when used: `driftline --help` does not load them
    from .archive.index import IndexEntry
    from .archive.warc import RecordLoader, RevisitResolver

log = logging.getLogger(__name__)

FEED_AS = ("heritrix-kafka", "crawl-log", "driftline")
DUPLICATE = "duplicate:digest"  # Heritrix's annotation of a revisit


@dataclass(frozen=True, slots=True)
class FeedMessage:
    """One message for the input topic; ``key`` is None, as Heritrix's feed is unkeyed."""

    key: bytes | None
    value: bytes


@dataclass
class FeedStats:
    """What a feed did: messages built, and inputs (or lines) left out, by reason."""

    sent: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())


def log17(dt: datetime) -> str:
    """Heritrix's log time: ``2015-09-03T17:57:10.707Z``."""
    d = utc(dt)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def digits17(dt: datetime) -> str:
    """Heritrix's 17-digit fetch time: ``20150903175709637``."""
    d = utc(dt)
    return d.strftime("%Y%m%d%H%M%S") + f"{d.microsecond // 1000:03d}"


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None


def truncate_mimetype(mimetype: str | None) -> str | None:
    """The MIME type as Heritrix logs it: no parameters, no spaces (``text/html; charset=x`` -> ``text/html``)."""
    if mimetype is None:
        return None
    base = "".join(mimetype.split(";", 1)[0].split())
    return base or None


def heritrix_message(
    *, url: str, time: datetime, status: int | None, mimetype: str | None, digest: str | None,
    warc_filename: str | None, warc_offset: int | None, warc_length: int | None = None,
    annotations: Iterable[str] = (), content_length: int | None = None, size: int | None = None,
    hop_path: str | None = None, via: str | None = None, seed: str | None = None, thread: int | None = None,
    duration_ms: int = 0, log_time: str | None = None, extra_info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One ``KafkaCrawlLogFeed`` message, with the keys ``CrawlLogJsonBuilder`` writes (and no others).

    Heritrix writes ``null`` for what it does not know, an empty string for
    no annotations, and keeps ``warcFileRecordLength`` inside ``extra_info``.
    """
    info = dict(extra_info or {})
    if warc_length is not None:
        info.setdefault("warcFileRecordLength", warc_length)
    return {
        "timestamp": log_time or log17(time),
        "content_length": content_length,
        "size": size,
        "status_code": status,
        "url": url,
        "hop_path": hop_path,
        "via": via,
        "mimetype": truncate_mimetype(mimetype),
        "thread": thread,
        "start_time_plus_duration": f"{digits17(time)}+{duration_ms}",
        "content_digest": digest,
        "seed": seed,
        "host": _host(url),
        "annotations": ",".join(annotations),
        "warc_filename": warc_filename,
        "warc_offset": warc_offset,
        "extra_info": info,
    }


def crawl_log_line(msg: dict[str, Any]) -> str:
    """A Heritrix ``crawl.log`` line for one :func:`heritrix_message` (the inverse of the JSON builder)."""

    def dash(value: Any) -> str:
        return "-" if value is None or value == "" else str(value)

    info = dict(msg.get("extra_info") or {})
    if msg.get("size") is not None:
        info["contentSize"] = msg["size"]
    if msg.get("warc_filename"):
        info["warcFilename"] = msg["warc_filename"]
    if msg.get("warc_offset") is not None:
        info["warcFileOffset"] = msg["warc_offset"]
    thread = msg.get("thread")
    fields = [
        msg["timestamp"],
        f"{dash(msg.get('status_code')):>5}",
        f"{dash(msg.get('content_length')):>10}",
        msg["url"],
        dash(msg.get("hop_path")),
        dash(msg.get("via")),
        dash(truncate_mimetype(msg.get("mimetype"))),  # one field: a message may carry "text/html; charset=..."
        f"#{int(thread):03d}" if isinstance(thread, int) else "-",
        dash(msg.get("start_time_plus_duration")),
        dash(msg.get("content_digest")),
        dash(msg.get("seed")),
        dash(msg.get("annotations")),
    ]
    return " ".join(fields) + (" " + json.dumps(info, separators=(",", ":")) if info else "")


def message_from_crawl_log(line: str) -> dict[str, Any]:
    """The ``KafkaCrawlLogFeed`` message Heritrix sends for the fetch a ``crawl.log`` line logs.

    Raises :class:`EventError` for a line that is not a crawl.log line.
    """
    event = parse_crawl_log_line(line)  # validates the line (fields, URL, times)
    parts = line.strip().split(None, 11)
    info = dict(event.extra.get("extra_info") or {})
    size = opt_int(info.pop("contentSize", None), "contentSize")
    info.pop("warcFilename", None)
    info.pop("warcFileOffset", None)
    thread = parts[7][1:] if parts[7].startswith("#") else ""
    duration = parts[8].partition("+")[2] if "+" in parts[8] else "0"
    msg = heritrix_message(
        url=event.url, time=event.timestamp, status=event.status_code, mimetype=event.mimetype,
        digest=parts[9] if parts[9] != "-" else None, warc_filename=event.warc_filename,
        warc_offset=event.warc_offset, annotations=event.annotations, content_length=event.content_length,
        size=size, hop_path=event.hop_path, via=event.via, seed=event.seed,
        thread=int(thread) if thread.isdigit() else None, duration_ms=int(duration) if duration.isdigit() else 0,
        log_time=parts[0], extra_info=info,
    )
    if parts[8] in ("", "-"):
        msg["start_time_plus_duration"] = None
    return msg


def render(msg: dict[str, Any], fmt: str, line: str | None = None) -> bytes:
    """``msg`` as the bytes of one message in format ``fmt`` (``line``: the original crawl.log line)."""
    if fmt == "heritrix-kafka":
        return json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if fmt == "crawl-log":
        return (line.strip() if line is not None else crawl_log_line(msg)).encode("utf-8")
    if fmt == "driftline":
        event = parse_heritrix_kafka(msg)
        return json.dumps(event.to_driftline(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    raise InputError(f"unknown event format {fmt!r}; expected one of {', '.join(FEED_AS)}", reason="usage")


def is_crawl_log(path: str) -> bool:
    """Whether the first non-blank line of ``path`` is a crawl.log line."""
    from .archive.detect import peek

    text = peek(Path(path)).decode("utf-8", errors="replace")
    for line in text.splitlines():
        if line.strip():
            try:
                parse_crawl_log_line(line)
            except EventError:
                return False
            return True
    return False


class FeedBuilder:
    """Turns inputs into messages of one format, counting what it leaves out.

    ``warn`` receives the one-line warnings (a WARC folder that ``run`` will
    not search); each folder is named once.
    """

    def __init__(self, cfg: Config, fmt: str = "heritrix-kafka", *,
                 warn: Callable[[str], None] | None = None) -> None:
        if fmt not in FEED_AS:
            raise InputError(f"--as {fmt!r}: expected one of {', '.join(FEED_AS)}", reason="usage")
        self.cfg = cfg
        self.fmt = fmt
        self.stats = FeedStats()
        self.warn = warn or log.warning
        self._dirs = [_real(d) for d in cfg.acquire.warc_dirs]
        self._warned: set[str] = set()

    def kind(self, path: str) -> str:
        """``warc``, ``arc``, ``cdx``, ``cdxj`` or ``crawl-log``; :class:`InputError` for anything else."""
        from .archive.detect import detect_input

        if Path(path).is_dir():
            raise InputError(f"{path}: a directory; pass its files (e.g. {path.rstrip('/')}/*.warc.gz)",
                             reason="usage")
        kind = detect_input(path)
        if kind in ("warc", "arc", "cdx", "cdxj"):
            return kind
        if kind == "unknown" and is_crawl_log(path):
            return "crawl-log"
        raise InputError(f"{path}: not a WARC/ARC file, a CDX(J) index or a crawl.log ({kind})", reason="usage")

    def messages(self, paths: Iterable[str]) -> Iterator[FeedMessage]:
        """Every message of ``paths``, file by file, in file order."""
        from .archive.detect import open_text

        for path in paths:
            kind = self.kind(path)
            if kind == "crawl-log":
                with open_text(Path(path)) as fh:
                    yield from self.lines(fh, path)
            else:
                yield from self._archive(path, kind)

    def lines(self, lines: Iterable[str], source: str) -> Iterator[FeedMessage]:
        """Messages of crawl.log lines; a line that is not one is counted and logged, not sent."""
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                msg = message_from_crawl_log(line)
            except EventError as exc:
                self.stats.skipped[exc.reason] += 1
                log.info("%s:%d: not a crawl.log line (%s): skipped", source, number, exc)
                continue
            self.check_folder(msg.get("warc_filename"), None)
            yield self._emit(msg, line)

    def _archive(self, path: str, kind: str) -> Iterator[FeedMessage]:
        from .archive.index import index_archive, index_cdx
        from .archive.warc import RecordLoader, RevisitResolver

        if kind in ("warc", "arc"):
            entries = list(index_archive(path, self.cfg, source=kind))
        else:
            entries = list(index_cdx(path, self.cfg, kind))
        if not entries:
            self.stats.skipped["no_captures"] += 1
            log.warning("%s: no capture records found", path)
            return
        resolver = RevisitResolver(entries, self.cfg)
        loader = RecordLoader(self.cfg)
        crawl_info = heritrix_metadata(path) if kind == "warc" else {}
        try:
            for entry in sorted(entries, key=lambda e: (e.path, e.offset)):
                if entry.truncated:
                    self.stats.skipped["truncated"] += 1
                    continue
                msg = self._entry_message(entry, resolver, loader)
                msg.update(crawl_info.get(entry.record_id or "", {}))
                yield self._emit(msg, None)
        finally:
            loader.close()

    def _entry_message(self, e: IndexEntry, resolver: RevisitResolver, loader: RecordLoader) -> dict[str, Any]:
        status, mime = e.status, e.mime
        annotations: tuple[str, ...] = ()
        if status is None or mime is None:
            # A CDX row may say neither (never for a revisit): the record's HTTP headers do, as Heritrix logs them.
            loaded = loader.load(e)
            status = status if status is not None else loaded.status
            mime = mime or loaded.content_type
        if e.kind == "revisit":
            annotations = (DUPLICATE,)
            if status is None or mime is None:
                original = resolver.resolve(e)
                if original is not None:
                    status = status if status is not None else original.status
                    mime = mime or original.mime
        name = Path(e.path).name
        self.check_folder(name, Path(e.path).parent)
        return heritrix_message(url=e.url, time=e.time, status=status, mimetype=mime, digest=e.digest,
                                warc_filename=name, warc_offset=e.offset, warc_length=e.length,
                                annotations=annotations)

    def check_folder(self, name: str | None, folder: Path | None) -> None:
        """Warn once per folder when ``run`` would not find the WARC ``name`` under ``acquire.warc_dirs``."""
        if not name:
            return
        where = str(folder) if folder is not None else "(named by a crawl.log)"  # one warning for a log
        if where in self._warned:
            return
        if folder is not None:
            found = _real(str(folder)) in self._dirs
        else:
            found = any((Path(d) / name).is_file() or (Path(d) / (name + ".open")).is_file() for d in self._dirs)
        if not found:
            self._warned.add(where)
            dirs = ", ".join(self.cfg.acquire.warc_dirs) or "none configured"
            what = f"{folder} is not among acquire.warc_dirs" if folder is not None else \
                f"WARC {name} is not under acquire.warc_dirs"
            self.warn(f"{what} ({dirs}): 'driftline run' will not find its WARC files; add the folder to "
                      f"acquire.warc_dirs (or DRIFTLINE__ACQUIRE__WARC_DIRS), in the watcher's configuration "
                      f"too (each command reads its own)")

    def _emit(self, msg: dict[str, Any], line: str | None) -> FeedMessage:
        self.stats.sent += 1
        return FeedMessage(None, render(msg, self.fmt, line))


def heritrix_metadata(path: str) -> dict[str, dict[str, Any]]:
    """The seed, hop path and via of each capture of a Heritrix WARC, by the response record's id.

    Why: a WARC fed through ``feed`` gave events without a seed or hop path, so no capture counted
    as a seed and ``recommend.seeds_only`` kept every crawl-stop recommendation back, while the same
    captures through their crawl.log gave them.  Heritrix writes what its crawl.log says into a
    ``metadata`` record beside each response (``WARC-Concurrent-To`` its id): the label ``seed``
    for a seed, else ``via``, ``hopsFromSeed`` and, with ``sourceTagSeeds``, ``sourceTag`` (the
    seed).  A WARC without them (warcprox, Browsertrix) says nothing about seeds: its events carry
    none, as before."""
    from warcio.archiveiterator import ArchiveIterator

    out: dict[str, dict[str, Any]] = {}
    try:
        with open(path, "rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type != "metadata":
                    continue
                target = record.rec_headers.get_header("WARC-Concurrent-To")
                url = record.rec_headers.get_header("WARC-Target-URI")
                if not target or not url:
                    continue
                labels: dict[str, str] = {}
                for raw in record.content_stream().read(65536).decode("utf-8", "replace").splitlines():
                    name, _, value = raw.partition(":")
                    labels[name.strip()] = value.strip()
                if "seed" in labels:
                    out[target] = {"seed": url, "hop_path": ""}
                elif "hopsFromSeed" in labels:
                    info: dict[str, Any] = {"hop_path": labels["hopsFromSeed"], "via": labels.get("via") or None}
                    if labels.get("sourceTag"):
                        info["seed"] = labels["sourceTag"]
                    out[target] = info
    except Exception as exc:  # warcio's errors are of many kinds; the captures are fed without it
        log.warning("%s: Heritrix metadata records not read (%s): events carry no seed", path, exc)
    return out


def _real(path: str) -> str:
    return os.path.realpath(path)


class LogFollower:
    """New complete lines of a growing ``crawl.log``, across rotation and truncation: the durable
    path's follower (:class:`watcher.crawlfollow.follow.Tail`, unbuffered reads that a truncation
    cannot fool, rotated files drained first, copytruncate copies found) without a stored position.

    :meth:`read` returns the lines appended since the last call (a line still being written waits
    for its newline).  ``from_start``: also the lines already in the file.
    """

    _POLLS = 64  # reads of the follower per call: a rotation takes a few (notice, drain, switch)

    def __init__(self, path: str, *, from_start: bool = True) -> None:
        from .crawlfollow.follow import Tail
        from .crawlfollow.settings import CrawlLogConfig

        self._tail = Tail(path, CrawlLogConfig(from_start=from_start), None)

    def close(self) -> None:
        self._tail.close()

    def read(self) -> list[str]:
        out: list[str] = []
        for _ in range(self._POLLS):
            lines = self._tail.read(1000)
            out += [ln.data.decode("utf-8", "replace") for ln in lines if ln.data is not None and ln.data.strip()]
            if not lines and self._tail.at_end:
                break
        return out
