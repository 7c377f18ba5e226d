"""Content-coded bodies (gzip, deflate, brotli, zstd) in every input path, and bombs.

The bodies are made here; every path ends in the real engine or watcher.
"""

from __future__ import annotations

import base64
import gzip
import json
import resource
import zlib
from datetime import UTC, datetime
from pathlib import Path

import brotli
import pytest
import zstandard
from warcio.warcwriter import WARCWriter

from tests.fixtures.payloads import gzip_bomb, page
from tests.fixtures.warcfiles import histories, make_warc, write_response
from watcher.config import Config, EngineConfig, StoreConfig
from watcher.engine import Engine
from watcher.events.parse import parse_event
from watcher.extract.encoding import decode_body, sniff_coding
from watcher.fingerprint import fingerprint
from watcher.model import Capture, payload_digest
from watcher.sources import iter_histories
from watcher.store import open_store
from watcher.watch import Watcher

HTML = page()


def raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


CODED = {
    "gzip": (gzip.compress(HTML), "gzip"),
    "zlib": (zlib.compress(HTML), "deflate"),
    "raw-deflate": (raw_deflate(HTML), "deflate"),
    "br": (brotli.compress(HTML), "br"),
    "zstd": (zstandard.ZstdCompressor().compress(HTML), "zstd"),
    "gzip+gzip": (gzip.compress(gzip.compress(HTML)), "gzip, gzip"),
    "br-in-gzip": (gzip.compress(brotli.compress(HTML)), "br, gzip"),
}


def brotli_bomb(mib: int = 1024) -> bytes:
    zeros = b"\0" * (1 << 20)
    c = brotli.Compressor(quality=0)
    return b"".join([c.process(zeros) for _ in range(mib)] + [c.finish()])


@pytest.mark.parametrize("name", list(CODED))
@pytest.mark.parametrize("with_header", [True, False])
def test_every_coding_is_undone_with_or_without_the_header(name: str, with_header: bool) -> None:
    body, header = CODED[name]
    # raw deflate and brotli have no magic bytes: without the header they are
    # found by a bounded trial decode that must yield text.
    d = decode_body(body, {"Content-Encoding": header} if with_header else {})
    assert d.content == HTML and d.note is None
    assert len(d.codings) == (2 if "+" in name or "-in-" in name else 1)


def test_sniffing_and_bodies_that_only_look_coded() -> None:
    assert sniff_coding(gzip.compress(b"x")) == "gzip"
    assert sniff_coding(zlib.compress(b"x")) == "deflate"
    assert sniff_coding(zstandard.ZstdCompressor().compress(b"x")) == "zstd"
    assert sniff_coding(HTML) is None
    fake = b"\x1f\x8b\x08 this is not gzip <html><title>x</title></html>"
    assert decode_body(fake).content == fake and decode_body(fake).codings == ()
    fake2 = b"\x1f\x8b" + HTML
    assert decode_body(fake2).content == fake2
    # A reader (warcio) already decoded the body but kept the header.
    for header in ("gzip", "br", "deflate", "zstd"):
        d = decode_body(HTML, {"content-encoding": header})
        assert d.content == HTML and d.codings == ()
    prose = b"Plain words, no markup at all: the river rose and the court met again. " * 50
    for header in ("deflate", "br", "gzip, deflate"):
        assert decode_body(prose, {"Content-Encoding": header}).content == prose
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
    assert decode_body(png, content_type="image/png").content == png


def test_caps_truncate_and_cut_streams_are_noted() -> None:
    big = page(2, 60000)
    d = decode_body(gzip.compress(big), {}, max_bytes=100_000)
    assert d.note == "truncated" and d.content == big[:100_000]
    cut = gzip.compress(big)[: len(gzip.compress(big)) // 2]
    d = decode_body(cut, {})
    assert d.note == "incomplete" and d.content and big.startswith(d.content)


def test_gzip_bomb_is_stopped_early_and_memory_stays_small() -> None:
    bomb = gzip_bomb(1)
    assert len(bomb) < 1_200_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    d = decode_body(bomb, {"Content-Encoding": "gzip"}, max_bytes=20_000_000, max_ratio=200)
    assert d.note == "bomb" and len(d.content) <= 2 * (1 << 20)
    fp = fingerprint(Capture(url="http://example.org/", timestamp=datetime(2020, 1, 1, tzinfo=UTC), content=bomb,
                             content_type="text/html"), EngineConfig())
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert fp.error is not None and "bomb" in fp.error and fp.word_count == 0
    assert fp.digest == payload_digest(bomb)  # the digest stays the payload's
    assert grown_kib < 100_000, grown_kib  # ru_maxrss is in KiB: under 100 MB for a 1 GiB bomb


def test_brotli_bomb_is_stopped_early() -> None:
    bomb = brotli_bomb(1024)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    d = decode_body(bomb, {"Content-Encoding": "br"}, max_bytes=20_000_000, max_ratio=200)
    assert d.note == "bomb" and len(d.content) <= 2 * (1 << 20)
    # Without the header, brotli is only tried when it yields text: zeros are not.
    d2 = decode_body(bomb, {}, max_bytes=20_000_000, max_ratio=200)
    assert d2.codings == () and d2.content == bomb
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000


def test_engine_judges_a_bomb_an_error_and_coded_pages_like_plain_ones() -> None:
    eng = Engine(EngineConfig())
    t = [datetime(2020, m, 1, tzinfo=UTC) for m in range(1, 6)]
    caps = [
        Capture(url="http://example.org/", timestamp=t[0], content=HTML, content_type="text/html"),
        Capture(url="http://example.org/", timestamp=t[1], content=gzip.compress(page(1, 3000)),
                content_type="text/html"),
        Capture(url="http://example.org/", timestamp=t[2], content=brotli.compress(page(1, 2900)),
                content_type="text/html", headers={"Content-Encoding": "br"}),
        Capture(url="http://example.org/", timestamp=t[3], content=gzip_bomb(1), content_type="text/html"),
    ]
    res = eng.scan_history("h", caps)
    changes = [v.change for v in res.verdicts]
    assert changes[0] == "baseline"
    assert changes[1] in ("unchanged", "minor") and res.verdicts[1].status == "on-topic"
    assert changes[2] in ("unchanged", "minor") and res.verdicts[2].status == "on-topic"
    assert res.verdicts[3].status == "error" and "bomb" in res.verdicts[3].reason


# -- per input path -------------------------------------------------------------


def test_gold_directory_file_that_is_gzipped(tmp_path: Path) -> None:
    root = tmp_path / "gold"
    (root / "html" / "1").mkdir(parents=True)
    uri = "http://wayback.archive-it.org/1068/{d}/http://www.example.org/"
    rows = ["id\tdate\tURI\tlabel"]
    for d, body in (("20100101000000", HTML), ("20110101000000", gzip.compress(HTML))):
        rows.append(f"1\t{d}\t{uri.format(d=d)}\t1")
        (root / "html" / "1" / f"{d}.html").write_bytes(body)
    (root / "labels.tsv").write_text("\n".join(rows) + "\n")
    cfg = Config()
    [(hist, caps)] = list(iter_histories([str(root)], cfg))
    res = Engine(cfg.engine).scan_history(hist, caps)
    assert res.verdicts[0].change == "baseline" and res.verdicts[0].word_count > 2000
    # Same page, gzipped: a different payload digest, the same text.
    assert (res.verdicts[1].status, res.verdicts[1].change) == ("on-topic", "minor")
    assert res.verdicts[1].word_count == res.verdicts[0].word_count


def _warc_with_gzip_bodies(path: Path) -> Path:
    def build(w: WARCWriter) -> None:
        write_response(w, "http://example.org/a", "20200101000000", HTML)
        # Gzipped body, no Content-Encoding header (a proxy stored it that way).
        write_response(w, "http://example.org/a", "20200201000000", gzip.compress(HTML))
        # Gzipped body with the header; warcio undoes it, the engine must not care.
        write_response(w, "http://example.org/a", "20200301000000", gzip.compress(HTML),
                       extra=[("Content-Encoding", "gzip")])
        # Double gzip with one header: warcio undoes one layer, the engine the other.
        write_response(w, "http://example.org/a", "20200401000000", gzip.compress(gzip.compress(HTML)),
                       extra=[("Content-Encoding", "gzip")])
        write_response(w, "http://example.org/a", "20200501000000", zstandard.ZstdCompressor().compress(HTML),
                       extra=[("Content-Encoding", "zstd")])

    return make_warc(path, build)


def test_warc_records_with_gzipped_bodies(tmp_path: Path) -> None:
    warc = _warc_with_gzip_bodies(tmp_path / "coded.warc.gz")
    cfg = Config()
    caps = histories([warc], cfg)["org,example)/a"]
    assert len(caps) == 5
    res = Engine(cfg.engine).scan_history("org,example)/a", caps)
    assert [v.status for v in res.verdicts] == ["on-topic"] * 5
    assert all(v.word_count == res.verdicts[0].word_count for v in res.verdicts)
    assert all(v.byte_count == len(HTML) for v in res.verdicts)  # the page's bytes, not the coded ones
    assert all(v.change in ("baseline", "unchanged", "minor") for v in res.verdicts), res.verdicts


def test_stream_event_with_inline_gzipped_content(tmp_path: Path) -> None:
    store = open_store(StoreConfig(backend="sqlite", path=str(tmp_path / "w.db")))
    w = Watcher(Engine(EngineConfig()), store)
    verdicts = []
    for i, body in enumerate((HTML, gzip.compress(HTML), brotli.compress(HTML))):
        msg = {"type": "driftline.capture", "url": "https://example.org/page", "timestamp": f"2024050{i + 1}120000",
               "status_code": 200, "mimetype": "text/html", "content": base64.b64encode(body).decode(),
               "content_encoding": "base64"}
        event = parse_event(json.dumps(msg))
        verdicts.append(w.score(event.to_capture(event.content, source="inline")).verdict)
    assert verdicts[0].change == "baseline"
    assert all(v.status == "on-topic" and v.word_count == verdicts[0].word_count for v in verdicts)
    store.close()


async def test_stream_event_referencing_a_warc_record_with_a_gzipped_body(tmp_path: Path) -> None:
    """The streaming path end to end on real files: Acquirer reads the record
    by offset, the Watcher scores it against the SQLite store."""
    from watcher.acquire import Acquirer
    from watcher.config import AcquireConfig
    from watcher.events import CaptureEvent

    warc = _warc_with_gzip_bodies(tmp_path / "CRAWL-20200101.warc.gz")
    offsets: list[int] = []
    with warc.open("rb") as fh:
        from warcio.archiveiterator import ArchiveIterator

        it = ArchiveIterator(fh)
        for rec in it:
            if rec.rec_type == "response":
                offsets.append(it.get_record_offset())
    assert len(offsets) == 5
    cfg = Config(acquire=AcquireConfig(warc_dirs=(str(tmp_path),), order=("warc",)))
    store = open_store(StoreConfig(backend="sqlite", path=str(tmp_path / "w.db")))
    w = Watcher(Engine(cfg.engine), store)
    verdicts = []
    async with Acquirer(cfg) as acq:
        for i, off in enumerate(offsets):
            ev = CaptureEvent(url="http://example.org/a", timestamp=datetime(2020, i + 1, 1, tzinfo=UTC),
                              warc_filename=warc.name, warc_offset=off, crawler="heritrix")
            verdicts.append(w.score(await acq.get(ev)).verdict)
    store.close()
    assert verdicts[0].change == "baseline"
    assert [v.status for v in verdicts] == ["on-topic"] * 5
    assert all(v.word_count == verdicts[0].word_count for v in verdicts)


@pytest.mark.shared
def test_shared_gold_pages_plain_stay_plain_and_coded_come_back(gold_dir: Path) -> None:
    """On 2,302 real archived pages: no plain page is mistaken for a coded
    one, and each page gzipped or brotli-coded (with and without the header)
    decodes to itself.  Small brotli outputs can look like text (uncompressed
    meta-blocks): the case that needs the strict text-looking trial."""
    pages = [p.read_bytes() for p in sorted((gold_dir / "html").glob("*/*.html"))]
    assert len(pages) > 2000
    for body in pages:
        assert decode_body(body, {}, content_type="text/html").codings == ()
        if not body:
            continue
        br = brotli.compress(body, quality=4)
        for coded, headers in ((gzip.compress(body, 6), {}), (br, {"Content-Encoding": "br"}), (br, {})):
            assert decode_body(coded, headers).content == body


def test_streaming_dead_letter_reasons_name_the_failure(tmp_path: Path) -> None:
    """The Watcher raises (the consumer dead-letters) with a reason that says what happened."""
    from watcher.errors import ExtractError

    store = open_store(StoreConfig(backend="sqlite", path=str(tmp_path / "w.db")))
    w = Watcher(Engine(EngineConfig()), store)
    t = datetime(2024, 5, 1, tzinfo=UTC)
    w.score(Capture(url="https://example.org/", timestamp=t, content=HTML, content_type="text/html"))
    cut = gzip.compress(page(3, 30000))
    for i, (body, reason) in enumerate(((gzip_bomb(1), "bomb"), (cut[: len(cut) // 2], "truncated")), 1):
        with pytest.raises(ExtractError) as err:
            w.score(Capture(url="https://example.org/", timestamp=t.replace(day=1 + i), content=body,
                            content_type="text/html"))
        assert err.value.reason == reason
    store.close()
