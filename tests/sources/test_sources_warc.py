"""WARC/ARC batch input: WARCs written here with warcio, plus the shared samples.

The helpers at the top (make_warc and friends) are reused by the other
test_sources_* modules.
"""

from __future__ import annotations

import gzip
import logging
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from warcio.warcwriter import WARCWriter

from tests.fixtures.warcfiles import (
    CFG,
    HTML1,
    HTML2,
    PDF,
    histories,
    make_warc,
    sample_warc,
    write_response,
    write_revisit,
)
from watcher.config import Config, EventsConfig
from watcher.errors import InputError
from watcher.model import payload_digest
from watcher.sources import detect_input, iter_histories

# Every type in the shared samples counted as a document, so the stylesheets, scripts and fonts (and their
# revisits) are read too: the reader itself is tested on them (a default scan skips them, events.document_mimetypes).
EVERY_TYPE = Config(events=EventsConfig(document_mimetypes=(
    "text/html", "text/plain", "text/xml", "text/css", "application/x-javascript", "application/octet-stream",
    "application/x-shockwave-flash", "image/gif", "image/jpeg", "image/png", "image/svg+xml")))


@pytest.mark.parametrize("gz", [True, False])
def test_sample_warc_histories(tmp_path: Path, gz: bool) -> None:
    path = sample_warc(tmp_path / ("sample.warc.gz" if gz else "sample.bin"), gz=gz)
    assert detect_input(str(path)) == "warc"
    hs = histories([path])
    assert sorted(hs) == ["org,example)/enc", "org,example)/page", "org,example)/paper.pdf"]
    page = hs["org,example)/page"]
    assert [c.timestamp for c in page] == sorted(c.timestamp for c in page)
    assert [c.content for c in page] == [HTML1, HTML2, HTML1]
    assert [c.is_revisit for c in page] == [False, False, True]
    assert page[1].url == "http://www.example.org/page/"  # grouped by canonical key, url kept as captured
    assert page[0].digest == payload_digest(HTML1)
    assert page[2].digest == payload_digest(HTML1)  # the revisit's declared digest
    assert page[0].status == 200 and page[0].content_type == "text/html"
    pdf = hs["org,example)/paper.pdf"][0]
    assert pdf.content == PDF and pdf.content_type == "application/pdf"
    enc = hs["org,example)/enc"][0]
    assert enc.content == HTML1  # chunked transfer and gzip content-encoding both undone


def test_revisit_resolved_across_files_by_digest(tmp_path: Path) -> None:
    orig = make_warc(tmp_path / "a.warc.gz",
                     lambda w: write_response(w, "http://example.org/x", "20200101000000", HTML1))
    rev = make_warc(tmp_path / "b.warc.gz", lambda w: write_revisit(
        w, "http://example.org/x", "20200601000000", payload_digest(HTML1), "http://example.org/x", "20200101000000"))
    hs = histories([rev, orig])  # revisit file first: resolution needs the whole index
    caps = hs["org,example)/x"]
    assert [c.is_revisit for c in caps] == [False, True]
    assert caps[1].content == HTML1
    # Without the original, the revisit is still a capture, with its digest and no content.
    alone = histories([rev])["org,example)/x"]
    assert alone[0].content is None and alone[0].digest == payload_digest(HTML1) and alone[0].is_revisit


def test_truncated_warc_keeps_what_was_read_and_goes_on(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def build(w: WARCWriter) -> None:
        for i in range(3):
            write_response(w, f"http://example.org/{i}", f"2020010{i + 1}000000", HTML1 * 50)

    full = make_warc(tmp_path / "full.warc.gz", build)
    data = full.read_bytes()
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: len(data) - 200])  # the last record loses its end
    plain = make_warc(tmp_path / "plain.warc", build, gz=False)
    plain_cut = tmp_path / "plain_cut.warc"
    plain_cut.write_bytes(plain.read_bytes()[: len(plain.read_bytes()) - 300])
    good = make_warc(tmp_path / "good.warc.gz",
                     lambda w: write_response(w, "http://example.net/", "20200101000000", HTML2))
    with caplog.at_level(logging.WARNING):
        hs = histories([cut, good])
        hs2 = histories([plain_cut])
    assert "org,example)/0" in hs and "org,example)/1" in hs
    assert hs["org,example)/0"][0].content == HTML1 * 50
    assert hs["net,example)/"][0].content == HTML2  # the next input was read
    assert "org,example)/0" in hs2 and hs2["org,example)/0"][0].content == HTML1 * 50
    assert any("cut.warc.gz" in r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)
    assert any("plain_cut.warc" in r.getMessage() and "truncated" in r.getMessage()
               for r in caplog.records if r.levelno >= logging.WARNING)


def test_garbage_after_records_and_garbage_files(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    warc = make_warc(tmp_path / "x.warc", lambda w: write_response(w, "http://example.org/", "20200101000000", HTML1),
                     gz=False)
    with warc.open("ab") as fh:
        fh.write(os.urandom(4096))
    with caplog.at_level(logging.WARNING):
        hs = histories([warc])
    assert hs["org,example)/"][0].content == HTML1
    assert any("x.warc" in r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)

    junk = tmp_path / "junk.warc.gz"
    junk.write_bytes(b"\x00\x01\x02" + os.urandom(2000))
    assert detect_input(str(junk)) == "unknown"
    with pytest.raises(InputError, match="not a recognised input"):
        iter_histories([str(junk)], CFG)
    with pytest.raises(InputError, match="no such file"):
        iter_histories([str(tmp_path / "missing.warc")], CFG)


def test_arc_file(tmp_path: Path) -> None:
    body = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n" + HTML1
    header = b"1 0 Driftline\nURL IP-address Archive-date Content-type Archive-length\n"
    filedesc = f"filedesc://t.arc 0.0.0.0 20080101000000 text/plain {len(header)}\n".encode() + header + b"\n"
    rec = f"http://example.org/arc 1.2.3.4 20080102030405 text/html {len(body)}\n".encode() + body + b"\n"
    arc = tmp_path / "t.arc.gz"
    with arc.open("wb") as fh:  # one gzip member per record, as ARC writers do
        fh.write(gzip.compress(filedesc))
        fh.write(gzip.compress(rec))
    assert detect_input(str(arc)) == "arc"
    caps = histories([arc])["org,example)/arc"]
    assert caps[0].content == HTML1
    assert caps[0].timestamp == datetime(2008, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert caps[0].source == "arc"


def test_memory_is_one_history_at_a_time(tmp_path: Path) -> None:
    """Histories are loaded lazily: after the first is handed out, the
    later ones' payloads are not in memory (their files can even vanish)."""

    def build(w: WARCWriter) -> None:
        write_response(w, "http://a.example/", "20200101000000", HTML1)

    def build_b(w: WARCWriter) -> None:
        write_response(w, "http://b.example/", "20200101000000", HTML2)

    a = make_warc(tmp_path / "a.warc.gz", build)
    b = make_warc(tmp_path / "b.warc.gz", build_b)
    it = iter_histories([str(a), str(b)], CFG)
    first = next(it)
    assert first[0] == "example,a)/" and first[1][0].content == HTML1
    b.unlink()  # pass two has not read b's payload yet
    key, caps = next(it)
    assert key == "example,b)/" and caps[0].content is None and caps[0].error == "warc_missing"


# -- the shared samples --------------------------------------------------------

def test_shared_iana_revisits(shared_data: Path) -> None:
    warc = shared_data / "warc" / "iana.warc.gz"
    assert sum(len(v) for v in histories([warc]).values()) == 20  # by default: the documents only
    hs = histories([warc], EVERY_TYPE)
    caps = [c for cs in hs.values() for c in cs]
    assert len(caps) == 171
    revisits = [c for c in caps if c.is_revisit]
    assert len(revisits) > 50
    assert all(c.content is not None for c in revisits)  # every revisit found its original
    home = hs["org,iana)/"]
    assert home[0].content is not None and b"Internet Assigned Numbers Authority" in home[0].content
    fonts = hs["org,iana)/_css/2013.1/fonts/OpenSans-Bold.ttf"]
    assert fonts[0].content_type == "application/octet-stream"  # non-HTML captures are yielded


def test_shared_iana_cdxj_matches_warc(shared_data: Path) -> None:
    d = shared_data / "warc"
    assert detect_input(str(d / "iana.cdxj")) == "cdxj"
    via_cdxj = histories([d / "iana.cdxj"], EVERY_TYPE)
    via_warc = histories([d / "iana.warc.gz"], EVERY_TYPE)
    assert sorted(via_cdxj) == sorted(via_warc)
    for key in via_warc:
        assert [(c.timestamp, c.digest, c.is_revisit) for c in via_cdxj[key]] == \
               [(c.timestamp, c.digest, c.is_revisit) for c in via_warc[key]]
    # given together, the index and its WARC are one set of captures
    both = histories([d / "iana.cdxj", d / "iana.warc.gz"], EVERY_TYPE)
    assert sum(len(v) for v in both.values()) == 171


def test_shared_small_samples(shared_data: Path, caplog: pytest.LogCaptureFixture) -> None:
    d = shared_data / "warc"
    five = histories([d / "5mementos.warc"])
    assert len(five["us,memento)/"]) == 5
    assert len({c.digest for c in five["us,memento)/"]}) == 5  # digests describe the bytes, not the fabricated header
    assert histories([d / "HTTP404.warc"])["us,memento)/"][0].status == 404
    redirect = histories([d / "redirect.warc"])["com,example)/"][0]
    # The fabricated record's Content-Length counts CRLF line ends, the file has LF: it claims 9 bytes
    # more than the file holds, which is a cut record (an error), never a page.
    assert redirect.status == 302 and redirect.content is None and redirect.error == "truncated"
    agn = histories([d / "example-url-agnostic-revisit.warc.gz", d / "example-url-agnostic-orig.warc.gz"])
    rev = agn["com,example)/"][0]
    assert rev.is_revisit and rev.content is not None and b"Example Domain" in rev.content
    dupes = histories([d / "dupes.warc.gz"])
    example = dupes["com,example)/"]
    assert [c.is_revisit for c in example] == [False, True] and example[1].content == example[0].content
    with caplog.at_level(logging.WARNING):
        mixed = histories([d / "broken.warc", d / "5mementos.warc"])
    assert "com,matkelly)/frogsleft" in {k.lower() for k in mixed}
    assert len(mixed["us,memento)/"]) == 5  # the broken file did not stop the scan
    assert any("broken.warc" in r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)


def test_shared_blackbook_heritrix_warc(shared_data: Path) -> None:
    hs = histories([shared_data / "warc" / "IAH-20080430204825-00000-blackbook.warc.gz"], EVERY_TYPE)
    caps = [c for cs in hs.values() for c in cs]
    assert len(caps) == 223  # 261 records less robots.txt (events.skip_paths)
    assert not any(c.url.startswith("dns:") or c.url.endswith("/robots.txt") for c in caps)
    assert sum(1 for c in caps if c.content_type and "html" in c.content_type) > 10


def test_bad_content_encoding_does_not_lose_the_capture(tmp_path: Path) -> None:
    """A body that claims gzip but is plain, and a cut gzip body, both still yield their bytes."""

    def build(w: WARCWriter) -> None:
        write_response(w, "http://example.org/plain", "20200101000000", HTML1, extra=[("Content-Encoding", "gzip")])
        write_response(w, "http://example.org/cut", "20200101000000", gzip.compress(HTML1 * 100)[:300],
                       extra=[("Content-Encoding", "gzip")])

    hs = histories([make_warc(tmp_path / "enc.warc.gz", build)])
    assert hs["org,example)/plain"][0].content == HTML1
    cut = hs["org,example)/cut"][0].content
    assert cut is not None and cut.startswith(HTML1[:40])


def test_archives_indexed_in_several_processes_give_the_same_histories(tmp_path: Path) -> None:
    """A directory's archives are indexed at once, one process each (every file is read before the
    first history is scored): the same histories, captures and unreadable parts as one process
    reading them in turn, revisits whose originals lie in another file and a damaged file
    included, in the same order."""
    from tests.fixtures.wacz import collection_warc, write_wacz
    from watcher.config import load_config
    from watcher.sources import iter_histories

    crawl = tmp_path / "crawl"
    crawl.mkdir()
    collection_warc(crawl)
    broken = crawl / "crawl-3.warc.gz"  # a record, then garbage where the next record should be
    collection_warc(tmp_path, sites=1, captures=2, revisits=False, host="other")
    broken.write_bytes((tmp_path / "crawl-1.warc.gz").read_bytes() + b"not a WARC record\r\n" * 20)
    pkg = write_wacz(tmp_path / "more.wacz", [tmp_path / "crawl-2.warc.gz"])
    cfg = load_config()

    def read(workers: int) -> tuple[list[tuple[str, list[tuple[str, str, bytes | None, bool]]]], list[str]]:
        it = iter_histories([str(crawl), str(pkg)], cfg, workers)
        histories = [(h, [(c.url, c.timestamp.isoformat(), c.content, c.is_revisit) for c in caps]) for h, caps in it]
        return histories, it.unreadable

    one, several = read(1), read(4)
    assert several == one
    histories, unreadable = several
    assert len(histories) >= 8 and any(rev for _, caps in histories for *_, rev in caps)
    assert len(unreadable) == 1 and "crawl-3" in unreadable[0]
