"""Rolling WARC files: every check preserved as request/response records.

Why WARC: each observation of a landing page stays replayable and citable
(the record's file and offset go into the capture event, so the watcher reads
exactly what the monitor saw), and it is what web archives already store.
A file rolls over at ``max_bytes`` (a new name with a sequence number);
records are gzipped one per member, so a reader can seek to an offset.
A rendered page is written after the raw answer as a second ``response``
record with ``WARC-Concurrent-To`` and a ``WARC-Profile`` note, and is the
record the event points at.
"""

from __future__ import annotations

import io
import os
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from ..model import utc

_REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 303: "See Other", 307: "Temporary Redirect",
            308: "Permanent Redirect", 403: "Forbidden", 404: "Not Found", 410: "Gone", 429: "Too Many Requests",
            500: "Internal Server Error", 503: "Service Unavailable"}
RENDERED_PROFILE = "urn:driftline:rendered-dom"


@dataclass(frozen=True, slots=True)
class WarcRef:
    filename: str
    offset: int
    length: int


class RollingWarcWriter:
    """Appends records to ``<dir>/<prefix>-<start>-<n>.warc.gz``, rolling at ``max_bytes``."""

    def __init__(self, directory: str | Path, prefix: str = "driftline-doi", max_bytes: int = 1_000_000_000) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._seq = 0
        self._stamp = datetime.now().strftime("%Y%m%d%H%M%S")
        self._path = self._next_path()

    def _next_path(self) -> Path:
        while True:
            self._seq += 1
            p = self.dir / f"{self.prefix}-{self._stamp}-{os.getpid()}-{self._seq:05d}.warc.gz"
            if not p.exists():
                return p

    @property
    def current(self) -> Path:
        return self._path

    def write_exchange(self, url: str, when: datetime, *, status: int, headers: dict[str, str], body: bytes,
                       request_headers: dict[str, str], method: str = "GET",
                       rendered: bytes | None = None) -> WarcRef:
        """Write request + response (+ rendered response); returns where the scored response is."""
        with self._lock:
            if self._path.exists() and self._path.stat().st_size >= self.max_bytes:
                self._path = self._next_path()
            date = utc(when).strftime("%Y-%m-%dT%H:%M:%SZ")
            with open(self._path, "ab") as fh:
                writer = WARCWriter(fh, gzip=True)
                resp_http = StatusAndHeaders(f"{status} {_REASONS.get(status, 'Status')}",
                                             [(k, v) for k, v in headers.items()
                                              if k.lower() not in ("content-encoding", "transfer-encoding")],
                                             protocol="HTTP/1.1")
                resp = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=resp_http,
                                                 warc_headers_dict={"WARC-Date": date})
                path = url.split("/", 3)[3] if url.count("/") >= 3 else ""
                req_http = StatusAndHeaders(f"{method} /{path} HTTP/1.1", list(request_headers.items()),
                                            is_http_request=True)
                req = writer.create_warc_record(url, "request", payload=io.BytesIO(b""), http_headers=req_http,
                                                warc_headers_dict={"WARC-Date": date})
                req.rec_headers.add_header("WARC-Concurrent-To", resp.rec_headers.get_header("WARC-Record-ID"))
                target = resp
                extra = None
                if rendered is not None:
                    r_http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")],
                                              protocol="HTTP/1.1")
                    extra = writer.create_warc_record(url, "response", payload=io.BytesIO(rendered),
                                                      http_headers=r_http,
                                                      warc_headers_dict={"WARC-Date": date,
                                                                         "WARC-Profile": RENDERED_PROFILE})
                    extra.rec_headers.add_header("WARC-Concurrent-To", resp.rec_headers.get_header("WARC-Record-ID"))
                    target = extra
                ref = None
                for rec in (resp, req, *([extra] if extra is not None else [])):
                    fh.seek(0, os.SEEK_END)
                    start = fh.tell()
                    writer.write_record(rec)
                    fh.flush()
                    if rec is target:
                        ref = WarcRef(self._path.name, start, fh.tell() - start)
                assert ref is not None
                return ref
