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


def test_index_entries_share_their_repeated_strings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan holds every index entry until it has grouped them: a file's path, a record's kind and
    a media type are one object for every entry that names them, and a CDX row's file is looked for
    on disk once per name, not once per row (the same entries as before, field by field)."""
    from watcher.archive import index as ix
    from watcher.config import load_config

    cfg = load_config(None)
    sub = tmp_path / "coll"
    sub.mkdir()
    warc = sample_warc(sub / "sample.warc.gz")

    def write(path: Path, copies: int) -> Path:
        with path.open("w") as fh:
            for r in _rows(warc) * copies:
                body = {k: r[k] for k in ("url", "mime", "status", "digest", "length", "offset", "filename")}
                fh.write(f"key {r['timestamp']} {json.dumps(body)}\n")
        return path

    once = list(ix.index_cdx(str(write(sub / "once.cdxj", 1)), cfg, "cdxj"))
    cdxj = write(sub / "index.cdxj", 50)  # many rows naming one file
    looks: list[str] = []
    resolve = ix._resolve

    def counted(index_path: Path, filename: str, warc_dirs: tuple[str, ...] = ()) -> str:
        looks.append(filename)
        return resolve(index_path, filename, warc_dirs)

    monkeypatch.setattr(ix, "_resolve", counted)
    entries = list(ix.index_cdx(str(cdxj), cfg, "cdxj"))
    assert entries == once * 50 and looks == ["sample.warc.gz"]
    assert len({id(e.path) for e in entries}) == 1 and entries[0].path == str(warc)
    html = [e for e in entries if e.mime and e.mime.startswith("text/html")]
    assert len(html) >= 50 and len({id(e.mime) for e in html}) == len({e.mime for e in html})
    from_warc = list(ix.index_archive(str(warc), cfg))
    assert len({id(e.kind) for e in from_warc}) == len({e.kind for e in from_warc}) >= 2
    by_mime = [e.mime for e in from_warc if e.mime]
    assert len({id(m) for m in by_mime}) == len(set(by_mime))


def test_index_stamps_read_by_position_as_strptime_read_them() -> None:
    # A CDX row's 4- to 14-digit stamp is read field by field (strptime was a fifth of reading a
    # row): the same time, or the same refusal, as strptime gave, on near-valid and random stamps.
    import random
    from datetime import UTC, datetime

    from watcher.archive.index import parse_warc_date

    def by_strptime(value: str) -> datetime | None:
        padded = value.ljust(14, "0") if len(value) > 4 else value + "0101000000"
        if padded[4:6] == "00":
            padded = padded[:4] + "01" + padded[6:]
        if padded[6:8] == "00":
            padded = padded[:6] + "01" + padded[8:]
        try:
            return datetime.strptime(padded, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        except ValueError:
            return None

    rng = random.Random(3)
    stamps = ["20200229235959", "20210229000000", "2020", "202001", "20200100", "19991231235960", "20201301000000"]
    for _ in range(20_000):
        stamps.append("".join(rng.choice("0123456789") for _ in range(rng.randint(4, 14))))
        near = (rng.randint(1990, 2030), *(rng.randint(0, top) for top in (13, 32, 25, 61, 61)))
        stamps.append("".join(f"{v:02d}" for v in near)[:rng.randint(4, 14)])
    differ = [s for s in stamps if parse_warc_date(s) != by_strptime(s)]
    assert not differ, differ[:5]
    assert sum(by_strptime(s) is not None for s in stamps) > 10_000  # both sides of the line are tried
