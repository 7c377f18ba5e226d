"""Input detection by content (magic bytes, first lines), never by extension."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from tests.fixtures.warcfiles import sample_warc
from watcher.errors import InputError
from watcher.sources import detect_input


def test_detect_by_content_not_extension(tmp_path: Path) -> None:
    warc = sample_warc(tmp_path / "looks-like.cdx", gz=True)
    assert detect_input(str(warc)) == "warc"
    plain = sample_warc(tmp_path / "plain.txt", gz=False)
    assert detect_input(str(plain)) == "warc"
    arc = tmp_path / "a.warc"
    arc.write_bytes(gzip.compress(b"filedesc://a.arc 0.0.0.0 20080101000000 text/plain 10\n1 0 X\n"))
    assert detect_input(str(arc)) == "arc"
    link = tmp_path / "tm.warc.gz"
    link.write_text('<http://a.example/>; rel="original",\n'
                    '<http://arch.example/20200101000000/http://a.example/>; rel="memento"; '
                    'datetime="Wed, 01 Jan 2020 00:00:00 GMT"\n')
    assert detect_input(str(link)) == "timemap"
    split = tmp_path / "split"
    split.write_text('<http://a.example/>\n ; rel="original",\n<http://arch.example/20200101000000/http://a.example/>'
                     '\n ; rel="memento"; datetime="Wed, 01 Jan 2020 00:00:00 GMT"\n')
    assert detect_input(str(split)) == "timemap"
    cdxj = tmp_path / "c.link"
    cdxj.write_text('org,example)/ 20200101000000 {"url": "http://example.org/", "filename": "x.warc.gz", '
                    '"offset": "0"}\n')
    assert detect_input(str(cdxj)) == "cdxj"
    cdx = tmp_path / "c.cdxj"
    cdx.write_text(" CDX N b a m s k r M S V g\nkey 20200101000000 http://example.org/ text/html 200 AAAA - - 1 0 x\n")
    assert detect_input(str(cdx)) == "cdx"
    headerless = tmp_path / "h"
    headerless.write_text("key 20200101000000 http://example.org/ text/html 200 AAAA - - 1 0 x.warc.gz\n")
    assert detect_input(str(headerless)) == "cdx"
    gz_cdxj = tmp_path / "gz"
    gz_cdxj.write_bytes(gzip.compress(cdxj.read_bytes()))
    assert detect_input(str(gz_cdxj)) == "cdxj"
    gold = tmp_path / "golddir"
    gold.mkdir()
    assert detect_input(str(gold)) == "unknown"
    (gold / "labels.tsv").write_text("id\tdate\tURI\tlabel\n")
    assert detect_input(str(gold)) == "gold"
    assert detect_input("https://web.archive.org/web/timemap/link/http://example.org/") == "timemap"


def test_unknown_and_missing(tmp_path: Path) -> None:
    junk = tmp_path / "junk.warc"
    junk.write_bytes(os.urandom(1024).replace(b"W", b"\x00"))
    assert detect_input(str(junk)) == "unknown"
    empty = tmp_path / "empty.warc"
    empty.write_bytes(b"")
    assert detect_input(str(empty)) == "unknown"
    text = tmp_path / "notes.txt"
    text.write_text("just some words\nand more\n")
    assert detect_input(str(text)) == "unknown"
    with pytest.raises(InputError) as err:
        detect_input(str(tmp_path / "nope"))
    assert err.value.reason == "missing"


def test_shared_samples_detected(shared_data: Path) -> None:
    d = shared_data / "warc"
    expected = {
        "iana.warc.gz": "warc", "iana.cdxj": "cdxj", "5mementos.warc": "warc", "5mementos.link": "timemap",
        "5mementos.cdxj": "timemap", "dupes.cdxj": "cdxj", "broken.warc": "warc", "HTTP404.warc": "warc",
        "IAH-20080430204825-00000-blackbook.warc.gz": "warc",
    }
    for name, kind in expected.items():
        assert detect_input(str(d / name)) == kind, name
