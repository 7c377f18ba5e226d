"""Inputs that could not be read are errors with a reason, never pages.

Cut WARC records (batch and streaming), records over the size cap, missing
WARC files: real files, the real index/loader, the real Acquirer and a local
aiohttp "live" server that must never be asked.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack

import pytest
from aiohttp import web
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from tests.fixtures.payloads import gzip_bomb, page
from tests.fixtures.webserver import serve
from watcher.acquire import Acquirer
from watcher.archive.index import index_archive
from watcher.cli import EXIT_UNREADABLE, main
from watcher.config import AcquireConfig, Config, LiveFetchConfig
from watcher.engine import Engine
from watcher.errors import AcquireError
from watcher.events import CaptureEvent
from watcher.model import Verdict
from watcher.sources import iter_histories

TS = datetime(2024, 3, 1, 12, 0, 0, tzinfo=UTC)


@dataclass
class Rec:
    url: str
    offset: int
    length: int


def write_warc(path: Path, urls: list[str], *, gz: bool, words: int = 20000) -> list[Rec]:
    """One response per URL (different pages, so no digest is shared)."""
    recs: list[Rec] = []
    with path.open("wb") as fh:
        w = WARCWriter(fh, gzip=gz)
        for i, url in enumerate(urls):
            start = fh.tell()
            date = f"2020-0{i + 1}-01T00:00:00Z"
            w.write_record(w.create_warc_record(
                url, "response", payload=io.BytesIO(page(i, words)), warc_headers_dict={"WARC-Date": date},
                http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")))
            recs.append(Rec(url, start, fh.tell() - start))
    return recs


def scan_verdicts(inputs: list[Path], cfg: Config | None = None) -> Iterator[Verdict]:
    cfg = cfg or Config()
    eng = Engine(cfg.engine)
    for hist, caps in iter_histories([str(p) for p in inputs], cfg):
        yield from eng.scan_history(hist, caps).verdicts


# -- batch ---------------------------------------------------------------------


@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
@pytest.mark.parametrize("frac", [0.3, 0.9])
def test_batch_cut_record_is_an_error_not_a_verdict(tmp_path: Path, gz: bool, frac: float) -> None:
    full = tmp_path / ("full.warc.gz" if gz else "full.warc")
    urls = ["http://example.org/", "http://example.org/", "http://example.org/"]
    recs = write_warc(full, urls, gz=gz)
    data = full.read_bytes()
    cut = tmp_path / ("cut.warc.gz" if gz else "cut.warc")
    cut.write_bytes(data[: recs[-1].offset + int(recs[-1].length * frac)])
    verdicts = list(scan_verdicts([cut]))
    assert len(verdicts) == 3
    assert [v.status for v in verdicts[:2]] == ["on-topic", "on-topic"]
    last = verdicts[-1]
    assert last.status == "error" and last.change == "error" and "truncated" in last.reason, last
    assert last.word_count == 0


def test_batch_content_length_longer_than_the_record(tmp_path: Path) -> None:
    """A plain WARC record whose Content-Length promises more than is there
    (the file goes on with nothing but the end of the file)."""
    path = tmp_path / "short.warc"
    write_warc(path, ["http://example.org/a"], gz=False, words=3000)
    data = path.read_bytes()
    head_end = data.index(b"\r\n\r\n")
    head = data[:head_end]
    import re

    m = re.search(rb"Content-Length: (\d+)", head)
    assert m is not None
    longer = head.replace(m.group(0), b"Content-Length: " + str(int(m.group(1)) + 5000).encode())
    path.write_bytes(longer + data[head_end:])
    [v] = list(scan_verdicts([path]))
    assert v.status == "error" and "truncated" in v.reason


def test_batch_cut_record_inside_a_cdx_scan(tmp_path: Path) -> None:
    """CDX rows pointing into a WARC whose last record is cut, and into a WARC that is missing."""
    warc = tmp_path / "a.warc.gz"
    recs = write_warc(warc, ["http://example.org/", "http://example.org/"], gz=True)
    whole = warc.read_bytes()
    warc.write_bytes(whole[: recs[1].offset + recs[1].length // 2])
    lines = []
    for i, r in enumerate(recs):
        lines.append(f'org,example)/ 2020010{i + 1}000000 {{"url": "{r.url}", "mime": "text/html", "status": "200", '
                     f'"offset": "{r.offset}", "length": "{r.length}", "filename": "a.warc.gz"}}')
    lines.append('org,example)/ 20200301000000 {"url": "http://example.org/", "mime": "text/html", '
                 '"status": "200", "offset": "0", "length": "100", "filename": "gone.warc.gz"}')
    cdx = tmp_path / "index.cdxj"
    cdx.write_text("\n".join(lines) + "\n")
    verdicts = list(scan_verdicts([cdx]))
    assert [v.status for v in verdicts] == ["on-topic", "error", "error"], verdicts
    assert "truncated" in verdicts[1].reason
    assert "warc_missing" in verdicts[2].reason


# -- streaming: the Acquirer ---------------------------------------------------


class LiveCanary:
    """A loopback "live web" that records every request it gets."""

    def __init__(self) -> None:
        self.hits: list[str] = []

    def app(self) -> web.Application:
        async def any_page(request: web.Request) -> web.Response:
            self.hits.append(request.path)
            return web.Response(text="<html><title>today</title><body>today's live page</body></html>",
                                content_type="text/html")

        app = web.Application()
        app.router.add_get("/{tail:.*}", any_page)
        return app


class AcquireFields(TypedDict, total=False):
    """The other AcquireConfig fields a test gives ``acq_cfg`` (typed as in :class:`AcquireConfig`)."""

    order: tuple[Literal["warc", "replay", "live"], ...]
    warc_max_bytes: int


def acq_cfg(warc_dir: Path, **kw: Unpack[AcquireFields]) -> Config:
    live = LiveFetchConfig(timeout_s=5.0, per_host_delay_s=0.0)
    return Config(acquire=AcquireConfig(warc_dirs=(str(warc_dir),), allow_addresses=("127.0.0.1/32",),
                                        live=live, **kw))


def warc_event(path: Path, rec: Rec, *, with_length: bool) -> CaptureEvent:
    return CaptureEvent(url=rec.url, timestamp=TS, warc_filename=path.name, warc_offset=rec.offset,
                        warc_length=rec.length if with_length else None, crawler="heritrix")


@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
@pytest.mark.parametrize("with_length", [True, False], ids=["with-length", "open-ended"])
async def test_stream_cut_record_is_truncated_and_never_fetched_live(
        tmp_path: Path, gz: bool, with_length: bool) -> None:
    canary = LiveCanary()
    async with serve(canary.app()) as live:
        url = f"{live}/page"
        path = tmp_path / ("CRAWL-1.warc.gz" if gz else "CRAWL-1.warc")
        recs = write_warc(path, [url, url], gz=gz)
        data = path.read_bytes()
        path.write_bytes(data[: recs[1].offset + recs[1].length // 2])
        async with Acquirer(acq_cfg(tmp_path)) as acq:  # default order: warc, replay, live
            assert acq.acfg.order == ("warc", "replay", "live")
            ok = await acq.get(warc_event(path, recs[0], with_length=with_length))
            assert ok.content == page(0, 20000) and ok.source == "warc"
            with pytest.raises(AcquireError) as err:
                await acq.get(warc_event(path, recs[1], with_length=with_length))
    assert err.value.reason == "truncated", err.value
    assert canary.hits == []


async def test_stream_record_over_the_cap_is_too_large_and_missing_warc_is_missing(tmp_path: Path) -> None:
    canary = LiveCanary()
    async with serve(canary.app()) as live:
        url = f"{live}/page"
        path = tmp_path / "CRAWL-2.warc"
        [rec] = write_warc(path, [url], gz=False)
        async with Acquirer(acq_cfg(tmp_path, warc_max_bytes=10_000)) as acq:
            for with_length in (True, False):
                with pytest.raises(AcquireError) as err:
                    await acq.get(warc_event(path, rec, with_length=with_length))
                assert err.value.reason == "too_large", err.value
            with pytest.raises(AcquireError) as err:
                await acq.get(CaptureEvent(url=url, timestamp=TS, warc_filename="GONE.warc.gz", warc_offset=0,
                                           crawler="heritrix"))
            assert err.value.reason == "warc_missing"
            assert canary.hits == []
            # Events that ask for live fetching still get it: no WARC reference,
            # or a watch event (the DOI scheduler's).
            cap = await acq.get(CaptureEvent(url=url, timestamp=TS, crawler="heritrix"))
            assert cap.source == "live" and canary.hits == ["/page"]
            cap = await acq.get(CaptureEvent(url=url, timestamp=TS, warc_filename="GONE.warc.gz", warc_offset=0,
                                             crawler="driftline", watch={"id": "w1"}))
            assert cap.source == "live" and len(canary.hits) == 2


def test_index_marks_the_cut_record(tmp_path: Path) -> None:
    path = tmp_path / "x.warc.gz"
    recs = write_warc(path, ["http://example.org/a", "http://example.org/b"], gz=True)
    path.write_bytes(path.read_bytes()[: recs[1].offset + recs[1].length // 3])
    entries = list(index_archive(str(path), Config()))
    assert [e.truncated for e in entries] == [False, True]


# -- batch scan: missing inputs, counts and the exit code -----------------------


def _cdxj_with_missing_warc(tmp_path: Path) -> Path:
    warc = tmp_path / "here.warc.gz"
    [rec] = write_warc(warc, ["http://example.org/"], gz=True)
    rows = [
        f'org,example)/ 20200101000000 {{"url": "http://example.org/", "mime": "text/html", "status": "200", '
        f'"offset": "{rec.offset}", "length": "{rec.length}", "filename": "here.warc.gz"}}',
        'org,example)/ 20200201000000 {"url": "http://example.org/", "mime": "text/html", "status": "200", '
        '"offset": "0", "length": "900", "filename": "gone.warc.gz"}',
    ]
    cdx = tmp_path / "index.cdxj"
    cdx.write_text("\n".join(rows) + "\n")
    return cdx


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_scan_missing_warc_behind_a_cdxj_is_an_error_and_exits_3(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cdx = _cdxj_with_missing_warc(tmp_path)
    out = tmp_path / "out.jsonl"
    with caplog.at_level(logging.INFO):
        code = main(["--log-level", "INFO", "scan", str(cdx), "-f", "jsonl", "-o", str(out), "--no-progress"])
    assert code == EXIT_UNREADABLE == 3
    recs = _jsonl(out)
    statuses = [r["overall topic status"] for r in recs]
    assert statuses == ["on-topic", "error"], recs
    assert "warc_missing" in recs[1]["driftline"]["reason"]
    summary = " ".join(r.getMessage() for r in caplog.records if r.name == "watcher.cli")
    assert "unreadable: 1 captures, 0 inputs" in summary
    # Accepting it: the option, or the config key.
    assert main(["--log-level", "WARNING", "scan", str(cdx), "-o", str(out), "--no-progress",
                 "--allow-missing"]) == 0
    conf = tmp_path / "c.yaml"
    conf.write_text("scan:\n  allow_missing: true\n")
    assert main(["--log-level", "WARNING", "-c", str(conf), "scan", str(cdx), "-o", str(out),
                 "--no-progress"]) == 0
    assert scan_counts([cdx])["unreadable captures"] == 1


def scan_counts(inputs: list[Path]) -> dict[str, int]:
    from watcher.scan import scan

    return scan([str(p) for p in inputs], Config.model_validate({"scan": {"workers": 1, "progress": False}}),
                os.devnull, "jsonl")


def test_scan_of_whole_inputs_still_exits_0(tmp_path: Path) -> None:
    warc = tmp_path / "ok.warc.gz"
    write_warc(warc, ["http://example.org/", "http://example.org/"], gz=True)
    assert main(["--log-level", "WARNING", "scan", str(warc), "-o", str(tmp_path / "o.json"), "--no-progress"]) == 0


async def test_timemap_unfetched_memento_is_an_error_and_gzip_mementos_are_read(tmp_path: Path) -> None:
    """A TimeMap served by a local archive: a plain memento, one sent with
    Content-Encoding: gzip, one stored gzipped and served without the header,
    one the archive cannot serve (404) and a gzip bomb."""
    orig = "http://example.site/"
    body = page(7, 3000)

    async def memento(request: web.Request) -> web.Response:
        stamp = request.match_info["ts"].removesuffix("id_")
        if stamp == "20200101000000":
            return web.Response(body=body, content_type="text/html")
        if stamp == "20200201000000":
            return web.Response(body=gzip.compress(body), content_type="text/html",
                                headers={"Content-Encoding": "gzip"})
        if stamp == "20200301000000":
            return web.Response(body=gzip.compress(body), content_type="text/html")
        if stamp == "20200501000000":  # 1 GiB of zeros: the fetcher must not inflate it
            return web.Response(body=bomb, content_type="text/html", headers={"Content-Encoding": "gzip"})
        return web.Response(status=404, text="not in archive")

    bomb = gzip_bomb(1)
    stamps = ["20200101000000", "20200201000000", "20200301000000", "20200401000000", "20200501000000"]

    async def timemap(request: web.Request) -> web.Response:
        base = f"{request.scheme}://{request.host}"
        lines = [f'<{orig}>; rel="original"']
        for s in stamps:
            dt = datetime.strptime(s, "%Y%m%d%H%M%S").strftime("%a, %d %b %Y %H:%M:%S GMT")
            lines.append(f'<{base}/web/{s}/{orig}>; rel="memento"; datetime="{dt}"')
        return web.Response(text=",\n".join(lines) + "\n", content_type="application/link-format")

    app = web.Application()
    app.router.add_get("/web/{ts}/{rest:.*}", memento)
    app.router.add_get("/timemap", timemap)
    out = tmp_path / "tm.jsonl"
    conf = tmp_path / "local.yaml"  # the archive is on loopback: admitted explicitly, as an operator would
    conf.write_text("acquire:\n  allow_addresses: [127.0.0.1/32]\n")
    async with serve(app) as base:
        code = await asyncio.to_thread(main, ["--log-level", "WARNING", "-c", str(conf), "scan", f"{base}/timemap",
                                              "-f", "jsonl", "-o", str(out), "--no-progress", "-j", "1"])
    assert code == 3
    recs = sorted(_jsonl(out), key=lambda r: r["uri_m"])
    statuses = [r["overall topic status"] for r in recs]
    assert statuses == ["on-topic", "on-topic", "on-topic", "error", "error"], recs
    assert recs[1]["driftline"]["change"] == "unchanged"  # decoded by the fetcher: the same payload
    assert recs[2]["driftline"]["change"] in ("unchanged", "minor")  # decoded by the fingerprint
    assert "http_404" in recs[3]["driftline"]["reason"]
    assert "bomb" in recs[4]["driftline"]["reason"]


async def test_bytes_after_the_payload_are_not_a_cut_record(tmp_path: Path) -> None:
    """A chunked body with bytes after its last chunk, or bytes after a gzip
    stream, leaves part of the block unread by the payload reader: that is
    not a truncated record (in batch or streaming)."""
    body = page(5, 2000)
    wire = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    path = tmp_path / "TRAIL-1.warc.gz"
    recs: list[Rec] = []
    with path.open("wb") as fh:
        w = WARCWriter(fh, gzip=True)
        for i, (payload, extra) in enumerate((
                (wire + b"\r\n", [("Transfer-Encoding", "chunked")]),
                (gzip.compress(body) + b"trailing", [("Content-Encoding", "gzip")]))):
            start = fh.tell()
            url = f"http://example.org/{i}"
            w.write_record(w.create_warc_record(
                url, "response", payload=io.BytesIO(payload),
                warc_headers_dict={"WARC-Date": f"2020-0{i + 1}-01T00:00:00Z"},
                http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html"), *extra],
                                              protocol="HTTP/1.1")))
            recs.append(Rec(url, start, fh.tell() - start))
    caps = [c for _, cs in iter_histories([str(path)], Config()) for c in cs]
    assert [(c.error, c.content) for c in caps] == [(None, body), (None, body)]
    async with Acquirer(acq_cfg(tmp_path, order=("warc",))) as acq:
        for rec in recs:
            cap = await acq.get(warc_event(path, rec, with_length=False))
            assert cap.content == body
