"""The demo crawl as sample inputs a user can try every command on: the WARC the demo writes, a
CDXJ index of it and the Heritrix ``crawl.log`` its feed events stand for.

Why: no sample WARC, CDX or crawl.log ships with driftline (and none may be downloaded), so the
curator and crawl-engineer quick starts had nothing to run on.  ``driftline demo --keep DIR``
keeps these files, made by the project itself, deterministic, and read by the same code that
reads a real crawl's (``scan`` for the WARC and the CDXJ, ``run --crawl-log`` for the log).
"""

from __future__ import annotations

import json
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from ..canonical import url_key
from ..feed import crawl_log_line
from .crawl import DemoCrawl


def _warc_stem(path: Path) -> str:
    name = path.name
    for suffix in (".warc.gz", ".warc"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def cdxj_rows(warc: Path) -> list[str]:
    """One CDXJ row (SURT key, 14-digit time, JSON fields) per response and revisit record of
    ``warc``, sorted as an index is; offsets and lengths as read back from the file."""
    rows: list[tuple[str, str, str]] = []
    with open(warc, "rb") as fh:
        it = ArchiveIterator(fh)
        for record in it:
            if record.rec_type not in ("response", "revisit"):
                continue
            url = record.rec_headers.get_header("WARC-Target-URI") or ""
            if not url.startswith(("http:", "https:")):
                continue  # dns: lookups are records, not captures of a page
            date = record.rec_headers.get_header("WARC-Date") or ""
            http = record.http_headers
            fields: dict[str, str] = {"url": url}
            if record.rec_type == "revisit":
                fields["mime"] = "warc/revisit"
            elif http is not None:
                fields["mime"] = (http.get_header("Content-Type") or "unk").split(";")[0].strip()
            if http is not None and http.get_statuscode():
                fields["status"] = http.get_statuscode()
            digest = record.rec_headers.get_header("WARC-Payload-Digest")
            if digest:
                fields["digest"] = digest
            record.content_stream().read()  # to its end: the record's length is known after it
            fields.update({"length": str(it.get_record_length()), "offset": str(it.get_record_offset()),
                           "filename": warc.name})
            stamp = "".join(ch for ch in date if ch.isdigit())[:14]
            rows.append((url_key(url), stamp, json.dumps(fields, separators=(", ", ": "))))
    return [f"{key} {stamp} {data}\n" for key, stamp, data in sorted(rows)]


def write_sample(crawl: DemoCrawl, folder: Path) -> list[Path]:
    """Write the CDXJ index of the demo WARC and its crawl.log beside it; returns the three files."""
    cdxj = folder / f"{_warc_stem(crawl.path)}.cdxj"
    cdxj.write_text("".join(cdxj_rows(crawl.path)), encoding="utf-8")
    log = folder / "crawl.log"
    log.write_text("".join(crawl_log_line(event) + "\n" for event in crawl.events), encoding="utf-8")
    return [crawl.path, cdxj, log]
