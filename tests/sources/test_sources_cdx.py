"""CDX and CDXJ index inputs pointing into WARC files (filenames relative to the index)."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.fixtures.warcfiles import HTML1, HTML2, histories, sample_warc
from watcher.sources import detect_input


def _rows(warc: Path) -> list[dict[str, str]]:
    """What an indexer would write for each response/resource/revisit record."""
    rows = []
    with warc.open("rb") as fh:
        it = ArchiveIterator(fh)
        for rec in it:
            h = rec.rec_headers
            kind = rec.rec_type
            offset = it.get_record_offset()
            length = it.get_record_length()
            if kind not in ("response", "resource", "revisit"):
                continue
            uri = h.get_header("WARC-Target-URI")
            date = h.get_header("WARC-Date").replace("-", "").replace(":", "").replace("T", "").rstrip("Z")
            mime = "warc/revisit" if kind == "revisit" else (
                rec.http_headers.get_header("Content-Type") if rec.http_headers else h.get_header("Content-Type"))
            rows.append({"url": uri, "timestamp": date, "mime": mime or "-",
                         "status": rec.http_headers.get_statuscode() if rec.http_headers else "-",
                         "digest": h.get_header("WARC-Payload-Digest").split(":", 1)[1],
                         "offset": str(offset), "length": str(length), "filename": warc.name})
    return rows


def test_cdxj_with_relative_filenames(tmp_path: Path) -> None:
    sub = tmp_path / "coll"
    sub.mkdir()
    warc = sample_warc(sub / "sample.warc.gz")
    cdxj = sub / "index"  # no extension: detected by content
    with cdxj.open("w") as fh:
        for r in _rows(warc):
            body = {k: r[k] for k in ("url", "mime", "status", "digest", "length", "offset", "filename")}
            fh.write(f"key {r['timestamp']} {json.dumps(body)}\n")
    assert detect_input(str(cdxj)) == "cdxj"
    hs = histories([cdxj])
    page = hs["org,example)/page"]
    assert [c.content for c in page] == [HTML1, HTML2, HTML1]
    assert [c.is_revisit for c in page] == [False, False, True]
    assert all(c.source == "cdxj" for c in page)
    gz = sub / "index.gz"
    gz.write_bytes(gzip.compress(cdxj.read_bytes()))
    assert [c.content for c in histories([gz])["org,example)/page"]] == [HTML1, HTML2, HTML1]
    assert hs["org,example)/paper.pdf"][0].content is not None
    assert not any(k.startswith("dns") for k in hs)


def test_classic_cdx_11_fields(tmp_path: Path) -> None:
    warc = sample_warc(tmp_path / "sample.warc.gz")
    cdx = tmp_path / "sample.cdx"
    with cdx.open("w") as fh:
        fh.write(" CDX N b a m s k r M S V g\n")
        for r in _rows(warc):
            fh.write(" ".join(["key", r["timestamp"], r["url"], r["mime"].split(";")[0].replace(" ", ""),
                               r["status"] or "-", r["digest"], "-", "-", r["length"], r["offset"],
                               r["filename"]]) + "\n")
    assert detect_input(str(cdx)) == "cdx"
    hs = histories([cdx])
    page = hs["org,example)/page"]
    assert [c.content for c in page] == [HTML1, HTML2, HTML1]
    assert page[2].is_revisit


def test_index_rows_without_warc_are_reported(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cdxj = tmp_path / "x.cdxj"
    cdxj.write_text('org,example)/ 20200101000000 {"url": "http://example.org/", "digest": "AAAA", '
                    '"offset": "0", "filename": "gone.warc.gz"}\n'
                    'org,example)/ 20200102000000 {not json}\n')
    with caplog.at_level(logging.WARNING):
        hs = histories([cdxj])
    cap = hs["org,example)/"][0]
    assert cap.content is None and cap.error == "warc_missing"
    assert any("1 index rows skipped" in r.getMessage() for r in caplog.records)


def test_shared_example_and_dupes_cdxj(shared_data: Path) -> None:
    d = shared_data / "warc"
    ex = histories([d / "example.cdxj"])
    caps = ex["com,example)/?example=1"]
    assert [c.is_revisit for c in caps] == [False, True]
    assert caps[1].content == caps[0].content and caps[0].content is not None
    dupes = histories([d / "dupes.cdxj"])
    assert [c.is_revisit for c in dupes["com,example)/"]] == [False, True]
    assert dupes["com,example)/"][1].content is not None
