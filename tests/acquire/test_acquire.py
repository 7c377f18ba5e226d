"""Acquirer: inline content, WARC records (file and HTTP Range), raw replay, source order."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypedDict, Unpack

import pytest
from aiohttp import web
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from tests.fixtures.webserver import serve
from watcher.acquire import Acquirer, build_replay_uri, raw_replay_uri
from watcher.acquire.warc import RecordExtent
from watcher.config import AcquireConfig, Config, LiveFetchConfig
from watcher.errors import AcquireError, BlockedAddressError, TooLargeError
from watcher.events import CaptureEvent, parse_event
from watcher.model import payload_digest

TS = datetime(2024, 3, 1, 12, 0, 0, tzinfo=UTC)
FAST = LiveFetchConfig(timeout_s=5.0, per_host_delay_s=0.0)


class AcquireFields(TypedDict, total=False):
    """The AcquireConfig fields a test gives ``make_cfg`` (typed as in :class:`AcquireConfig`)."""

    warc_dirs: tuple[str, ...]
    warc_http_base: str | None
    replay_base: str | None
    live: LiveFetchConfig
    allow_addresses: tuple[str, ...]
    order: tuple[Literal["warc", "replay", "live"], ...]


class EventFields(TypedDict, total=False):
    """The CaptureEvent fields a test gives ``event`` (typed as in :class:`CaptureEvent`)."""

    status_code: int | None
    mimetype: str | None
    digest: str | None
    warc_filename: str | None
    warc_offset: int | None
    warc_length: int | None
    replay_uri: str | None
    content: bytes | None


def make_cfg(**acquire: Unpack[AcquireFields]) -> Config:
    acquire.setdefault("live", FAST)
    acquire.setdefault("order", ("warc", "replay"))  # never live here: these tests must not touch DNS
    return Config(acquire=AcquireConfig(**acquire))


def event(url: str = "http://example.org/page", **kw: Unpack[EventFields]) -> CaptureEvent:
    return CaptureEvent(url=url, timestamp=TS, **kw)


@dataclass
class Rec:
    url: str
    offset: int
    length: int
    body: bytes


def write_warc(path: Path, *, gz: bool) -> dict[str, Rec]:
    """A WARC with request/response pairs, a gzip-encoded and a chunked response, a revisit and a resource."""
    recs: dict[str, Rec] = {}
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=gz)

        def add(name: str, url: str, record: object, body: bytes) -> None:
            start = fh.tell()
            writer.write_record(record)
            recs[name] = Rec(url, start, fh.tell() - start, body)

        for i in range(3):
            url = f"http://example.org/page{i}"
            req_headers = StatusAndHeaders("GET /page HTTP/1.1", [("Host", "example.org")], is_http_request=True)
            req = writer.create_warc_record(url, "request", payload=io.BytesIO(b""), http_headers=req_headers)
            add(f"req{i}", url, req, b"")
            body = f"<html><title>Page {i}</title><body>{'word ' * (200 * i + 5)}</body></html>".encode()
            resp = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body),
                http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")],
                                              protocol="HTTP/1.1"),
            )
            add(f"resp{i}", url, resp, body)
        plain = b"<html><body>compressed on the wire</body></html>"
        resp = writer.create_warc_record(
            "http://example.org/gz", "response", payload=io.BytesIO(gzip.compress(plain)),
            http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
                                          protocol="HTTP/1.1"),
        )
        add("gzip", "http://example.org/gz", resp, plain)
        chunked = b"<html>chunked body</html>"
        wire = b"%x\r\n%s\r\n0\r\n\r\n" % (len(chunked), chunked)
        resp = writer.create_warc_record(
            "http://example.org/chunked", "response", payload=io.BytesIO(wire),
            http_headers=StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Transfer-Encoding", "chunked")],
                                          protocol="HTTP/1.1"),
        )
        add("chunked", "http://example.org/chunked", resp, chunked)
        rev = writer.create_revisit_record(
            "http://example.org/page0", digest=payload_digest(recs["resp0"].body),
            refers_to_uri="http://example.org/page0", refers_to_date="2024-01-01T00:00:00Z",
        )
        add("revisit", "http://example.org/page0", rev, b"")
        res = writer.create_warc_record("http://example.org/notes.txt", "resource", payload=io.BytesIO(b"plain notes"),
                                        warc_content_type="text/plain")
        add("resource", "http://example.org/notes.txt", res, b"plain notes")
    return recs


@pytest.fixture(params=[True, False], ids=["warc.gz", "warc"])
def warc(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, dict[str, Rec]]:
    name = "TEST-20240301-00000.warc" + (".gz" if request.param else "")
    path = tmp_path / name
    return path, write_warc(path, gz=request.param)


def warc_event(path: Path, rec: Rec, *, with_length: bool, digest: str | None = None) -> CaptureEvent:
    return event(rec.url, warc_filename=path.name, warc_offset=rec.offset,
                 warc_length=rec.length if with_length else None, digest=digest)


# -- inline ----------------------------------------------------------------------


async def test_inline_content_needs_no_source() -> None:
    calls: list[str] = []
    async with Acquirer(make_cfg(order=()), on_fetch=lambda s, t: calls.append(s)) as acq:
        cap = await acq.get(event(content=b"<p>inline</p>", mimetype="text/html", status_code=200))
    assert cap.content == b"<p>inline</p>" and cap.source == "inline" and cap.status == 200
    assert calls == []


async def test_no_source_configured() -> None:
    async with Acquirer(make_cfg(order=("warc", "replay"))) as acq:
        with pytest.raises(AcquireError) as err:
            await acq.get(event())
    assert err.value.reason == "no_source"


# -- WARC from disk ----------------------------------------------------------------


@pytest.mark.parametrize("with_length", [True, False], ids=["with-length", "open-ended"])
async def test_reads_one_record_by_offset(warc: tuple[Path, dict[str, Rec]], with_length: bool) -> None:
    path, recs = warc
    seen: list[tuple[str, float]] = []
    async with Acquirer(make_cfg(warc_dirs=(str(path.parent),)), on_fetch=lambda s, t: seen.append((s, t))) as acq:
        for name in ("resp0", "resp1", "resp2", "gzip", "chunked"):
            rec = recs[name]
            cap = await acq.get(warc_event(path, rec, with_length=with_length))
            assert cap.content == rec.body, name
            assert cap.status == 200 and cap.source == "warc"
            assert cap.content_type is not None and cap.content_type.startswith("text/html")
            assert cap.effective_digest is not None
        res = await acq.get(warc_event(path, recs["resource"], with_length=with_length))
        assert res.content == b"plain notes" and res.content_type == "text/plain" and res.status is None
    assert [s for s, _ in seen] == ["warc"] * 6 and all(t >= 0 for _, t in seen)


async def test_warc_errors(warc: tuple[Path, dict[str, Rec]]) -> None:
    path, recs = warc
    async with Acquirer(make_cfg(warc_dirs=(str(path.parent),), order=("warc",))) as acq:
        cases = {
            "warc_wrong_record": warc_event(path, recs["req0"], with_length=True),
            "warc_missing": event(warc_filename="ABSENT.warc.gz", warc_offset=0),
            "bad_warc_name": event(warc_filename="../" + path.name, warc_offset=0),
            "warc_unreadable": event(recs["resp0"].url, warc_filename=path.name, warc_offset=recs["resp0"].offset + 7),
            "warc_mismatch": event("http://other.example/", warc_filename=path.name, warc_offset=recs["resp1"].offset),
        }
        for reason, ev in cases.items():
            with pytest.raises(AcquireError) as err:
                await acq.get(ev)
            assert err.value.reason == reason, (reason, str(err.value))
        # a revisit has no payload of its own: its original's, found in the same WARC by its references
        cap = await acq.get(warc_event(path, recs["revisit"], with_length=False))
        assert cap.content == recs["resp0"].body and cap.source == "warc"
        beyond = event(warc_filename=path.name, warc_offset=path.stat().st_size + 10)
        with pytest.raises(AcquireError) as err:
            await acq.get(beyond)
        assert err.value.reason == "warc_unreadable"


async def test_heritrix_open_file_and_payload_cap(warc: tuple[Path, dict[str, Rec]]) -> None:
    path, recs = warc
    path.rename(path.with_name(path.name + ".open"))  # Heritrix's in-progress name
    small = make_cfg(warc_dirs=(str(path.parent),), live=LiveFetchConfig(max_bytes=500, per_host_delay_s=0))
    async with Acquirer(small) as acq:
        cap = await acq.get(warc_event(path, recs["resp0"], with_length=False))
        assert cap.content == recs["resp0"].body
        with pytest.raises(TooLargeError) as err:
            await acq.get(warc_event(path, recs["resp2"], with_length=False))
        assert err.value.reason == "too_large"


def test_record_extent_finds_the_end(warc: tuple[Path, dict[str, Rec]]) -> None:
    path, recs = warc
    data = path.read_bytes()
    for rec in recs.values():
        tracker = RecordExtent()
        found = None
        for i in range(rec.offset, len(data), 100):  # feed in small pieces
            found = tracker.feed(data[i:i + 100])
            if found is not None:
                break
        assert found == rec.length


# -- WARC over HTTP (Range) -----------------------------------------------------------


@pytest.fixture
async def warc_server(warc: tuple[Path, dict[str, Rec]]) -> AsyncIterator[tuple[str, list[str], list[int]]]:
    """Serves the WARC directory with Range support; records Range headers and bytes sent."""
    path, _ = warc
    ranges: list[str] = []
    sent: list[int] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        file = path.parent / name
        if not file.is_file():
            raise web.HTTPNotFound()
        data = file.read_bytes()
        rng = request.headers.get("Range")
        if rng is None:
            return web.Response(body=data)
        ranges.append(rng)
        start_s, _, end_s = rng.removeprefix("bytes=").partition("-")
        start, end = int(start_s), int(end_s) if end_s else len(data) - 1
        part = data[start:end + 1]
        resp = web.StreamResponse(status=206, headers={"Content-Range": f"bytes {start}-{end}/{len(data)}"})
        resp.content_length = len(part)
        await resp.prepare(request)
        count = 0
        for i in range(0, len(part), 4096):
            try:
                await resp.write(part[i:i + 4096])
            except ConnectionResetError:
                break
            count += len(part[i:i + 4096])
        sent.append(count)
        return resp

    app = web.Application()
    app.router.add_get("/warcs/{name}", handler)
    async with serve(app) as base:
        yield base + "/warcs/", ranges, sent


@pytest.mark.parametrize("with_length", [True, False], ids=["bounded-range", "open-range"])
async def test_reads_record_over_http_range(
    warc: tuple[Path, dict[str, Rec]], warc_server: tuple[str, list[str], list[int]], with_length: bool
) -> None:
    path, recs = warc
    base, ranges, _ = warc_server
    # no allow-list: the WARC server is operator configuration, trusted even on loopback
    cfg = make_cfg(warc_http_base=base, order=("warc",))
    seen: list[str] = []
    async with Acquirer(cfg, on_fetch=lambda s, t: seen.append(s)) as acq:
        for name in ("resp1", "gzip", "chunked"):
            rec = recs[name]
            cap = await acq.get(warc_event(path, rec, with_length=with_length))
            assert cap.content == rec.body and cap.source == "warc_http"
        with pytest.raises(AcquireError) as err:
            await acq.get(event(warc_filename="NOPE.warc.gz", warc_offset=0))
        assert err.value.reason == "warc_missing"
    rec = recs["resp1"]
    expected = f"bytes={rec.offset}-{rec.offset + rec.length - 1}" if with_length else f"bytes={rec.offset}-"
    assert ranges[0] == expected
    assert seen[:3] == ["warc_http"] * 3


async def test_local_miss_falls_back_to_http(
    warc: tuple[Path, dict[str, Rec]], warc_server: tuple[str, list[str], list[int]], tmp_path: Path
) -> None:
    path, recs = warc
    base, ranges, _ = warc_server
    empty = tmp_path / "empty"
    empty.mkdir()
    async with Acquirer(make_cfg(warc_dirs=(str(empty),), warc_http_base=base, order=("warc",))) as acq:
        cap = await acq.get(warc_event(path, recs["resp2"], with_length=False))
    assert cap.content == recs["resp2"].body and cap.source == "warc_http" and len(ranges) == 1


@pytest.mark.shared
async def test_real_iana_warc_by_cdxj_offsets(shared_data: Path) -> None:
    """Every text/html 200 capture of a real crawl, read by offset: payload digest == CDXJ digest."""
    warc_dir = shared_data / "warc"
    rows = [json.loads(line.split(" ", 2)[2]) for line in (warc_dir / "iana.cdxj").read_text().splitlines()]
    html = [r for r in rows if r.get("mime") == "text/html" and r.get("status") == "200"]
    revisits = [r for r in rows if r.get("mime") == "warc/revisit"]
    assert len(html) >= 5 and revisits
    app = web.Application()
    app.router.add_static("/w/", warc_dir)  # aiohttp's static handler answers Range with 206
    async with serve(app) as base:
        for source, cfg in (("warc", make_cfg(warc_dirs=(str(warc_dir),), order=("warc",))),
                            ("warc_http", make_cfg(warc_http_base=base + "/w", order=("warc",)))):
            async with Acquirer(cfg) as acq:
                for row in html:
                    ev = event(row["url"], warc_filename=row["filename"], warc_offset=int(row["offset"]),
                               warc_length=int(row["length"]) if source == "warc" else None)
                    cap = await acq.get(ev)
                    assert cap.source == source
                    assert payload_digest(cap.content or b"") == "sha1:" + row["digest"], row["url"]
                r = revisits[0]
                rev = event(r["url"], warc_filename=r["filename"], warc_offset=int(r["offset"]))
                if source == "warc":  # the original, found in the same WARC: the payload the revisit repeats
                    cap = await acq.get(rev)
                    assert payload_digest(cap.content or b"") == "sha1:" + r["digest"], r["url"]
                else:  # over HTTP the original is not searched for
                    with pytest.raises(AcquireError) as err:
                        await acq.get(rev)
                    assert err.value.reason == "warc_revisit"


# -- replay ---------------------------------------------------------------------------


def test_raw_replay_uri() -> None:
    assert raw_replay_uri("https://wayback.archive-it.org/1068/20120103014326/http://x.org/a?b=1") == (
        "https://wayback.archive-it.org/1068/20120103014326id_/http://x.org/a?b=1")
    assert raw_replay_uri("http://web.archive.org/web/20120103014326if_/http://x.org/") == (
        "http://web.archive.org/web/20120103014326id_/http://x.org/")
    assert raw_replay_uri("http://wb/20120103014326id_/http://x.org/") == "http://wb/20120103014326id_/http://x.org/"
    assert raw_replay_uri("http://archive.example/item/42") == "http://archive.example/item/42"
    assert build_replay_uri("http://wb/coll/", TS, "http://x.org/") == "http://wb/coll/20240301120000id_/http://x.org/"


@pytest.fixture
async def wayback() -> AsyncIterator[tuple[str, list[str]]]:
    """A Wayback-like replay: raw bytes for id_, a bannered page otherwise."""
    paths: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        paths.append(request.path_qs)
        ts, url = request.match_info["ts"], request.match_info["url"]
        if "redirect-out" in url:  # an archived redirect, not rewritten: Location is the live target
            raise web.HTTPFound(request.query["to"])
        if ts.endswith("id_"):
            if "missing" in url:
                raise web.HTTPNotFound()  # the archive's own answer: no memento
            if "gone" in url:  # a memento of the site's own 404 page: the crawl's status, as a memento
                return web.Response(status=404, body=b"<html><title>404 Not Found</title>gone</html>",
                                    content_type="text/html",
                                    headers={"Memento-Datetime": "Fri, 01 Mar 2024 12:00:00 GMT"})
            return web.Response(body=f"<html>raw capture of {url}</html>".encode(), content_type="text/html")
        return web.Response(text=f'<div id="wm-ipp">BANNER</div><html>{url}</html>', content_type="text/html")

    app = web.Application()
    app.router.add_get("/wb/{ts}/{url:.*}", handler)
    async with serve(app) as base:
        yield base + "/wb/", paths


async def test_replay_uses_raw_id_(wayback: tuple[str, list[str]]) -> None:
    base, paths = wayback
    seen: list[str] = []
    async with Acquirer(make_cfg(replay_base=base, order=("replay",)), on_fetch=lambda s, t: seen.append(s)) as acq:
        cap = await acq.get(event("http://x.org/a", replay_uri=f"{base}20240301120000/http://x.org/a"))
        assert cap.content == b"<html>raw capture of http://x.org/a</html>" and cap.source == "replay"
        assert cap.uri_m == f"{base}20240301120000id_/http://x.org/a"
        built = await acq.get(event("http://x.org/b"))  # no replay_uri: replay_base + timestamp + id_
        assert built.content == b"<html>raw capture of http://x.org/b</html>"
        with pytest.raises(AcquireError) as err:
            await acq.get(event("http://x.org/missing"))
        assert err.value.reason == "http_status"
        # an archived 404 is the capture (judged as the site's error page), not a failed fetch
        gone = await acq.get(event("http://x.org/gone"))
        assert gone.status == 404 and gone.content == b"<html><title>404 Not Found</title>gone</html>"
        assert (await acq.get(event("http://x.org/gone", status_code=404))).status == 404
        with pytest.raises(AcquireError) as err:  # the crawler saw a 200: the replay served another capture
            await acq.get(event("http://x.org/gone", status_code=200))
        assert err.value.reason == "http_status"
    assert paths == ["/wb/20240301120000id_/http://x.org/a", "/wb/20240301120000id_/http://x.org/b",
                     "/wb/20240301120000id_/http://x.org/missing"] + ["/wb/20240301120000id_/http://x.org/gone"] * 3
    assert seen == ["replay"] * 6


async def test_event_replay_uri_on_unconfigured_host_is_guarded(wayback: tuple[str, list[str]]) -> None:
    base, paths = wayback
    async with Acquirer(make_cfg(order=("replay",))) as acq:  # no replay_base: event URI is untrusted
        with pytest.raises(BlockedAddressError):
            await acq.get(event("http://x.org/a", replay_uri=f"{base}20240301120000/http://x.org/a"))
    assert paths == []
    allowed = make_cfg(order=("replay",), allow_addresses=("127.0.0.1/32",))
    async with Acquirer(allowed) as acq:
        cap = await acq.get(event("http://x.org/a", replay_uri=f"{base}20240301120000/http://x.org/a"))
    assert cap.content is not None and b"raw capture" in cap.content


async def test_sources_fall_through_in_order(
    warc: tuple[Path, dict[str, Rec]], wayback: tuple[str, list[str]], tmp_path: Path
) -> None:
    path, _ = warc
    base, _ = wayback
    seen: list[str] = []
    # a revisit whose original is in none of the WARCs searched (its own, its folder's)
    orphans = tmp_path / "orphans"
    orphans.mkdir()
    with (orphans / "ORPHAN.warc.gz").open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        writer.write_record(writer.create_revisit_record(
            "http://example.org/page0", digest="sha1:" + "B" * 32, refers_to_uri="http://example.org/page0",
            refers_to_date="2023-01-01T00:00:00Z"))
    orphan = Rec("http://example.org/page0", 0, (orphans / "ORPHAN.warc.gz").stat().st_size, b"")
    cfg = make_cfg(warc_dirs=(str(path.parent), str(orphans)), replay_base=base, order=("warc", "replay"))
    async with Acquirer(cfg, on_fetch=lambda s, t: seen.append(s)) as acq:
        # the revisit record has no payload and its original is nowhere: the raw replay provides it
        ev = warc_event(orphans / "ORPHAN.warc.gz", orphan, with_length=False, digest="sha1:" + "A" * 32)
        cap = await acq.get(ev)
        assert cap.source == "replay" and cap.digest == "sha1:" + "A" * 32
        assert seen == ["warc", "replay"]
        seen.clear()
        with pytest.raises(AcquireError) as err:  # warc missing: no replay guess, no live fetch
            await acq.get(event("http://x.org/missing", warc_filename="NOPE.warc", warc_offset=0))
        assert err.value.reason == "warc_missing" and seen == ["warc"]
        with pytest.raises(AcquireError) as err:  # an event naming its replay URI: replay is tried too
            await acq.get(event("http://x.org/missing", warc_filename="NOPE.warc", warc_offset=0,
                                replay_uri=f"{base}20240301120000/http://x.org/missing"))
        assert err.value.reason == "warc_missing" and "http_status" in str(err.value)


async def test_redirect_out_of_trusted_archive_is_guarded(wayback: tuple[str, list[str]]) -> None:
    base, paths = wayback
    hits: list[str] = []

    async def secret(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="internal")

    app = web.Application()
    app.router.add_get("/{tail:.*}", secret)
    async with serve(app, host="127.0.0.2") as internal, Acquirer(make_cfg(replay_base=base)) as acq:
        with pytest.raises(BlockedAddressError):
            await acq.get(event(f"http://x.org/redirect-out?to={internal}/admin"))
    assert len(paths) == 1 and hits == []


@pytest.mark.shared
async def test_real_kafka_event_acquires_from_its_warc_when_present(shared_data: Path, tmp_path: Path) -> None:
    """The Archive-It message names a WARC we do not have: a clear warc_missing, no crash."""
    ev = parse_event((shared_data / "feeds" / "heritrix-kafka-archiveit.json").read_bytes())
    async with Acquirer(make_cfg(warc_dirs=(str(tmp_path),), order=("warc",))) as acq:
        with pytest.raises(AcquireError) as err:
            await acq.get(ev)
    assert err.value.reason == "warc_missing" and ev.warc_filename is not None
