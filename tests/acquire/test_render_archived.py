"""Rendering archived captures with real Chromium: a script-built page from a
WARC (its scripts from the same WARC, nearest in time, redirects followed
inside it) and from an archive's raw replay; nothing reaches the network."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from tests.fixtures.webserver import serve
from watcher.acquire import Acquirer, RenderPool
from watcher.config import Config
from watcher.events import CaptureEvent

SITE = "http://news.example"
PAGE = """<!doctype html><html><head><title>app</title>
<script src="/static/a.js"></script><script src="/static/b.js"></script><script src="/static/c.js"></script>
<script>
fetch("LEAK/fetch").catch(function () {});
setTimeout(function () {
  document.body.innerHTML = '<main><h1>Quarterly report</h1><p>' + PARTS.join(' ') + '</p></main>';
}, 50);
</script></head><body><div id="app">Loading</div><img src="/never-archived.png"></body></html>"""
# (path, 14-digit time, status, content type, body, extra headers)
RECORDS: list[tuple[str, str, str, str, bytes, list[tuple[str, str]]]] = [
    ("/app/", "20240301120000", "200 OK", "text/html", b"", []),
    ("/static/a.js", "20240301120003", "200 OK", "application/javascript",
     b"var PARTS = ['built', 'by', 'javascript'];", []),
    ("/static/b.js", "20240301120004", "200 OK", "application/javascript", b"PARTS.push('kumquat');", []),
    ("/static/c.js", "20240301120005", "301 Moved Permanently", "text/html", b"", [("Location", "/static/c2.js")]),
    ("/static/c2.js", "20240301120006", "200 OK", "application/javascript", b"PARTS.push('fig');", []),
    # The same script captured a year later: not the one this page ran with.
    ("/static/a.js", "20250301120000", "200 OK", "application/javascript",
     b"var PARTS = ['a', 'later', 'release'];", []),
]
WHEN = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


@dataclass
class Leak:
    base: str
    hits: list[str]


@pytest_asyncio.fixture(loop_scope="session")
async def leak() -> AsyncIterator[Leak]:
    """A server on an allowed address: an archived render must still never reach it."""
    hits: list[str] = []

    async def anything(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="live")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", anything)
    async with serve(app) as base:
        yield Leak(base, hits)


def _page(leak: Leak) -> bytes:
    return PAGE.replace("LEAK", leak.base).encode()


def _warc(path: Path, leak: Leak, records: slice = slice(None), mode: str = "wb") -> int:
    """Write (or append) the records; returns the first one's offset."""
    offsets: list[int] = []
    with path.open(mode) as fh:
        writer = WARCWriter(fh, gzip=True)
        for rel, ts, status, ctype, body, extra in RECORDS[records]:
            payload = _page(leak) if rel == "/app/" else body
            http = StatusAndHeaders(status, [("Content-Type", ctype), ("Content-Length", str(len(payload))), *extra],
                                    protocol="HTTP/1.1")
            iso = f"{ts[0:4]}-{ts[4:6]}-{ts[6:8]}T{ts[8:10]}:{ts[10:12]}:{ts[12:14]}Z"
            rec = writer.create_warc_record(SITE + rel, "response", payload=BytesIO(payload), http_headers=http,
                                            warc_headers_dict={"WARC-Date": iso})
            offsets.append(fh.tell())
            writer.write_record(rec)
    return offsets[0]


def _cfg(tmp_path: Path, **render: object) -> Config:
    return Config.model_validate({
        "acquire": {"order": ["warc", "replay"], "warc_dirs": [str(tmp_path)], "allow_addresses": ["127.0.0.1/32"]},
        "render": render,
    })


@pytest.mark.browser
@pytest.mark.asyncio(loop_scope="session")
async def test_warc_capture_renders_with_its_archived_scripts(
    render_pool_session: RenderPool, leak: Leak, tmp_path: Path
) -> None:
    offset = _warc(tmp_path / "crawl.warc.gz", leak)
    event = CaptureEvent(url=SITE + "/app/", timestamp=WHEN, warc_filename="crawl.warc.gz", warc_offset=offset)
    seen: list[str] = []
    async with Acquirer(_cfg(tmp_path), renderer=render_pool_session, on_fetch=lambda s, t: seen.append(s)) as acq:
        cap = await acq.get(event)
        assert cap.source == "warc+render" and seen == ["warc", "render"]
        assert cap.content is not None
        text = cap.content.decode()
        # a.js and b.js from the same WARC, c.js through its archived redirect; the 2025 a.js not used.
        assert "Quarterly report" in text and "built by javascript kumquat fig" in text
        assert "later release" not in text and "Loading" not in text
        assert leak.hits == []  # the page's fetch() to a live (even allowed) server never left the archive
        assert cap.digest is not None and cap.digest == event.to_capture(_page(leak)).effective_digest
        assert acq.warc_indexes.indexed_files == 1
        again = await acq.get(event)  # a second capture from the same file: the index is reused
        assert again.content == cap.content or b"kumquat" in (again.content or b"")
        assert acq.warc_indexes.indexed_files == 1

    # Off by configuration: the capture is scored as captured.
    async with Acquirer(_cfg(tmp_path, archived=False), renderer=render_pool_session) as acq:
        raw = await acq.get(event)
    assert raw.source == "warc" and raw.content == _page(leak)


@pytest.mark.browser
@pytest.mark.asyncio(loop_scope="session")
async def test_replay_capture_renders_from_the_archive(render_pool_session: RenderPool, leak: Leak) -> None:
    requests: list[str] = []
    pages = {SITE + rel: (status, ctype, _page(leak) if rel == "/app/" else body, extra)
             for rel, ts, status, ctype, body, extra in RECORDS if ts.startswith("2024")}

    async def replay(request: web.Request) -> web.Response:
        ts, url = request.match_info["ts"], request.match_info["url"]
        requests.append(f"{ts}/{url}")
        if not ts.endswith("id_") or url not in pages:
            return web.Response(status=404, text="not archived")
        status, ctype, body, extra = pages[url]
        return web.Response(status=int(status.split()[0]), body=body, headers=dict(extra), content_type=ctype)

    app = web.Application()
    app.router.add_get("/web/{ts}/{url:.*}", replay)
    async with serve(app) as base:
        cfg = Config.model_validate({"acquire": {"order": ["replay"], "replay_base": f"{base}/web",
                                                 "allow_addresses": ["127.0.0.1/32"]}})
        event = CaptureEvent(url=SITE + "/app/", timestamp=WHEN, replay_uri=f"{base}/web/20240301120000/{SITE}/app/")
        async with Acquirer(cfg, renderer=render_pool_session) as acq:
            cap = await acq.get(event)
    assert cap.source == "replay+render" and cap.content is not None
    assert "built by javascript kumquat fig" in cap.content.decode()
    # every subresource asked of the archive, raw, at the capture's time; nothing from the live web
    assert f"20240301120000id_/{SITE}/static/a.js" in requests
    assert all("id_/" in r for r in requests) and leak.hits == []


def test_replay_base_of_wayback_uris() -> None:
    from watcher.acquire.acquirer import replay_base_of

    assert replay_base_of("https://wayback.archive-it.org/1068/20200101000000id_/http://x.org/a") == \
        "https://wayback.archive-it.org/1068"
    assert replay_base_of("http://127.0.0.1:8080/pywb/20240301120000/http://news.example/app/") == \
        "http://127.0.0.1:8080/pywb"
    assert replay_base_of("http://archive.example/page") is None


@pytest.mark.browser
@pytest.mark.asyncio(loop_scope="session")
async def test_a_failing_archive_lookup_is_a_404_not_a_hung_page(render_pool_session: RenderPool) -> None:
    from watcher.acquire.archived import ChainResolver
    from watcher.net.http import FetchResult

    class Broken:
        calls = 0

        async def resolve(self, url: str, when: datetime) -> FetchResult | None:
            Broken.calls += 1
            if url.endswith("a.js"):
                raise ValueError("corrupt index")
            return None

    page = (b"<html><body><p id='p'>static text</p><script src='/static/a.js'></script>"
            b"<script>document.getElementById('p').textContent += ' and inline';</script></body></html>")
    doc = FetchResult(url=SITE + "/x", status=200, headers={"Content-Type": "text/html"}, body=page)
    resolver = ChainResolver([Broken()])
    html, seconds = await render_pool_session.render_archived(SITE + "/x", doc, resolver, WHEN)
    assert b"static text and inline" in html and Broken.calls >= 1
    assert seconds < render_pool_session.cfg.timeout_s


@pytest.mark.browser
@pytest.mark.asyncio(loop_scope="session")
async def test_growing_warc_index_is_extended(render_pool_session: RenderPool, leak: Leak, tmp_path: Path) -> None:
    """At crawl time the page is written before its scripts: a later capture
    from the grown file finds them, and the index is extended, not rebuilt."""
    warc = tmp_path / "crawl.warc.gz.open"  # Heritrix's name while it writes
    offset = _warc(warc, leak, slice(0, 1))
    event = CaptureEvent(url=SITE + "/app/", timestamp=WHEN, warc_filename="crawl.warc.gz", warc_offset=offset)
    with warc.open("ab") as fh:
        fh.write(b"\x1f\x8b\x08\x00")  # the start of a record still being written
    async with Acquirer(_cfg(tmp_path), renderer=render_pool_session) as acq:
        first = await acq.get(event)
        assert first.source == "warc+render" and b"kumquat" not in (first.content or b"")  # scripts not crawled yet
        with warc.open("r+b") as fh:  # the torn member is completed by the crawler's next records
            fh.seek(-4, 2)
            fh.truncate()
        _warc(warc, leak, slice(1, None), mode="ab")
        second = await acq.get(event)
        assert b"built by javascript kumquat fig" in (second.content or b"")
        assert acq.warc_indexes.indexed_files == 1 and acq.warc_indexes.extensions == 1
