"""Memento TimeMaps served by a local aiohttp server: raw (id_) fetching,
HTTP / JavaScript / meta-refresh redirect chains, fetch errors as captures."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiohttp import web

from watcher.config import Config, EngineConfig
from watcher.engine import Engine
from watcher.errors import InputError
from watcher.model import Capture
from watcher.sources import detect_input, iter_histories
from watcher.sources.fetch import html_redirect, raw_uri_m
from watcher.sources.timemap import parse_link_format, parse_timemap

CFG = Config.model_validate({"scan": {"timemap_timeout_s": 1.0, "follow_redirects": 3},
                             "acquire": {"allow_addresses": ["127.0.0.1/32"]}})  # the test archive is local
ORIG = "http://site.example/"

JS_PAGE = """<html><head><title>Wayback Machine</title></head><body>
<p class="code">Redirecting to...</p><p class="impatient"><a href="{t}">Impatient?</a></p>
<script type="text/javascript">
  var timeout = 0; window.setTimeout(function() {{ window.location.replace("{t}"); }}, timeout);
</script></body></html>"""
META_PAGE = '<html><head><meta http-equiv="Refresh" content="0; URL={t}"></head><body>moved</body></html>'


class Archive:
    """A tiny Wayback-style archive: /web/<ts>[id_]/<original>."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.base = ""
        self.pages: dict[str, Callable[[], web.StreamResponse]] = {}
        self.timemaps: dict[str, str] = {}

    async def timemap(self, request: web.Request) -> web.StreamResponse:
        text = self.timemaps.get(request.match_info["name"])
        if text is None:
            return web.Response(status=404, text="no such TimeMap")
        return web.Response(text=text, content_type="application/link-format")

    async def pywb_timemap(self, request: web.Request) -> web.StreamResponse:
        """pywb's ``<coll>/timemap/json/<url>``: one CDX object per line."""
        text = self.timemaps.get("pywb:" + request.match_info["rest"])
        if text is None:
            return web.Response(status=404, text="no such TimeMap")
        return web.Response(text=text, content_type="application/x-ndjson")

    async def memento(self, request: web.Request) -> web.StreamResponse:
        ts, rest = request.match_info["ts"], request.match_info["rest"]
        self.requests.append(request.path_qs)
        if not ts.endswith("id_"):
            return web.Response(text="<div id='wm-ipp'>BANNER</div> replay, not raw", content_type="text/html")
        stamp = ts[:-3]
        if stamp == "20200501000000":
            await asyncio.sleep(1.6)
        factory = self.pages.get(f"{stamp}/{rest}")
        if factory is None:
            return web.Response(status=404, text="not in archive")
        return factory()

    def html(self, text: str) -> Callable[[], web.StreamResponse]:
        return lambda: web.Response(text=text, content_type="text/html")

    def archived(self, status: int, text: str) -> Callable[[], web.StreamResponse]:
        """A memento of an error response: the crawl's status, with Memento-Datetime."""
        return lambda: web.Response(status=status, text=text, content_type="text/html",
                                    headers={"Memento-Datetime": "Wed, 01 Jul 2020 00:00:00 GMT"})

    def redirect(self, location: str) -> Callable[[], web.StreamResponse]:
        return lambda: web.Response(status=302, headers={"Location": location})


@pytest.fixture
async def archive(port: int) -> AsyncIterator[Archive]:
    arc = Archive()
    arc.base = f"http://127.0.0.1:{port}"
    app = web.Application()
    app.router.add_get("/web/timemap/json/{rest:.*}", arc.pywb_timemap)  # before the mementos' route
    app.router.add_get("/web/{ts}/{rest:.*}", arc.memento)
    app.router.add_get("/timemap/{name}", arc.timemap)
    app.router.add_get("/memento/{ts}/{rest:.*}", arc.memento)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        yield arc
    finally:
        await runner.cleanup()


def _link_timemap(base: str, stamps: list[str]) -> str:
    lines = [f"<{ORIG}>; rel=\"original\"", f"<{base}/timemap/t1>; rel=\"self\"; type=\"application/link-format\""]
    for s in stamps:
        dt = datetime.strptime(s, "%Y%m%d%H%M%S").strftime("%a, %d %b %Y %H:%M:%S GMT")
        lines.append(f"<{base}/web/{s}/{ORIG}>; rel=\"memento\"; datetime=\"{dt}\"")
    return ",\n".join(lines) + "\n"


async def _scan(inputs: list[str], cfg: Config = CFG) -> tuple[dict[str, list[Capture]], dict[str, str]]:
    def run() -> tuple[dict[str, list[Capture]], dict[str, str]]:
        it = iter_histories(inputs, cfg)
        return dict(it), dict(it.uri_t)

    return await asyncio.to_thread(run)


async def test_timemap_mementos_and_redirect_chains(archive: Archive, tmp_path: Path) -> None:
    b = archive.base
    archive.pages = {
        f"20200101000000/{ORIG}": archive.html("<p>first capture</p>"),
        f"20200201000000/{ORIG}": archive.html(JS_PAGE.format(t=f"{b}/web/20200202000000/{ORIG}new")),
        f"20200202000000/{ORIG}new": archive.html("<p>after the JS redirect</p>"),
        f"20200301000000/{ORIG}": archive.html(META_PAGE.format(t=f"{ORIG}moved")),  # live URL: kept in archive
        f"20200301000000/{ORIG}moved": archive.redirect(f"/web/20200302000000id_/{ORIG}final"),
        f"20200302000000/{ORIG}final": archive.html("<p>after meta refresh and HTTP redirect</p>"),
        f"20200601000000/{ORIG}": archive.redirect(f"/web/20200601000001id_/{ORIG}"),
    }
    for i in range(1, 8):  # a chain longer than follow_redirects
        archive.pages[f"2020060100000{i}/{ORIG}"] = archive.redirect(f"/web/2020060100000{i + 1}id_/{ORIG}")
    stamps = ["20200101000000", "20200201000000", "20200301000000", "20200401000000", "20200501000000",
              "20200601000000"]
    archive.timemaps["t1"] = _link_timemap(b, stamps)
    hs, uri_t = await _scan([f"{b}/timemap/t1"])
    assert list(hs) == ["example,site)/"]
    caps = hs["example,site)/"]
    assert [c.timestamp for c in caps] == [datetime.strptime(s, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
                                           for s in stamps]
    assert all(c.url == ORIG and c.source == "timemap" for c in caps)
    assert caps[0].uri_m == f"{b}/web/20200101000000/{ORIG}"  # the memento URI as listed
    assert caps[0].content == b"<p>first capture</p>" and caps[0].redirects == ()
    assert caps[1].content == b"<p>after the JS redirect</p>"
    assert caps[1].redirects == (f"{b}/web/20200201000000id_/{ORIG}", f"{b}/web/20200202000000id_/{ORIG}new")
    assert caps[2].content == b"<p>after meta refresh and HTTP redirect</p>"
    assert len(caps[2].redirects) == 3 and caps[2].redirects[1] == f"{b}/web/20200301000000id_/{ORIG}moved"
    assert caps[3].content is None and caps[3].error == "http_404" and caps[3].status == 404
    assert caps[4].content is None and caps[4].error == "timeout"
    assert caps[5].content is None and caps[5].error == "too_many_redirects"
    assert uri_t["example,site)/"] == f"{b}/timemap/t1"
    # every memento was fetched raw, never as a replay with a banner
    assert all("id_/" in p for p in archive.requests)


async def test_an_archived_error_response_is_a_capture_not_a_failed_fetch(archive: Archive) -> None:
    """A raw replay answers a memento of the site's "404 Not Found" with HTTP 404, as the crawler
    recorded it, and with Memento-Datetime: that is the capture, judged as the site's error page
    (off topic, never a baseline).  The archive's own 404 (no memento: no Memento-Datetime) stays a
    failed fetch, an error verdict (test_timemap_mementos_and_redirect_chains)."""
    b = archive.base
    page = "<html><head><title>Rights Project</title></head><body><p>" + "rights report " * 60 + "</p></body></html>"
    archive.pages = {f"20200101000000/{ORIG}": archive.html(page),
                     f"20200201000000/{ORIG}": archive.archived(404, "<html><title>404 Not Found</title>"
                                                                     "<h1>Not Found</h1></html>"),
                     f"20200301000000/{ORIG}": archive.archived(503, "<html><title>503</title></html>"),
                     f"20200401000000/{ORIG}": archive.html(page)}
    archive.timemaps["t1"] = _link_timemap(b, ["20200101000000", "20200201000000", "20200301000000",
                                               "20200401000000"])
    hs, _ = await _scan([f"{b}/timemap/t1"])
    caps = hs["example,site)/"]
    assert [(c.status, c.error) for c in caps] == [(200, None), (404, None), (503, None), (200, None)]
    assert caps[1].content is not None and b"Not Found" in caps[1].content
    verdicts = Engine(EngineConfig()).scan_history("t1", caps).verdicts
    assert [v.status for v in verdicts] == ["on-topic", "off-topic", "off-topic", "on-topic"], \
        [v.reason for v in verdicts]
    assert verdicts[0].change == "baseline" and verdicts[3].change == "unchanged"


async def test_timemap_file_and_errors(archive: Archive, tmp_path: Path) -> None:
    b = archive.base
    archive.pages = {f"20200101000000/{ORIG}": archive.html("<p>one</p>")}
    tm = tmp_path / "tm.txt"
    tm.write_text(_link_timemap(b, ["20200101000000"]))
    assert detect_input(str(tm)) == "timemap"
    hs, uri_t = await _scan([str(tm)])
    assert hs["example,site)/"][0].content == b"<p>one</p>"
    assert uri_t["example,site)/"] == f"{b}/timemap/t1"  # the TimeMap's own "self" URI
    gz = tmp_path / "tm.gz"
    gz.write_bytes(gzip.compress(tm.read_bytes()))
    hs_gz, _ = await _scan([str(gz)])
    assert hs_gz["example,site)/"][0].content == b"<p>one</p>"
    with pytest.raises(InputError) as err:  # up front, before any history is produced
        await asyncio.to_thread(iter_histories, [str(tm), f"{b}/timemap/missing"], CFG)
    assert err.value.reason == "timemap_http"
    empty = tmp_path / "empty.link"
    empty.write_text(f"<{ORIG}>; rel=\"original\"\n")
    with pytest.raises(InputError, match="no mementos"):
        await _scan([str(empty)])


async def test_shared_5mementos_link_served(archive: Archive, shared_data: Path, tmp_path: Path) -> None:
    """The ipwb sample TimeMap names localhost:2016: rewritten to our server."""
    text = (shared_data / "warc" / "5mementos.link").read_text().replace("http://localhost:2016", archive.base)
    archive.timemaps["memento.us"] = text
    for stamp in ("20130202100000", "20140114100000", "20140115101500", "20161231110000", "20161231110001"):
        archive.pages[f"{stamp}/memento.us/"] = archive.html(f"<html><body>Memento {stamp}</body></html>")
    hs, _ = await _scan([f"{archive.base}/timemap/memento.us"])
    caps = hs["us,memento)/"]
    assert len(caps) == 5
    assert all(c.url == "http://memento.us/" for c in caps)
    assert caps[0].content == b"<html><body>Memento 20130202100000</body></html>"
    assert caps[-1].timestamp == datetime(2016, 12, 31, 11, 0, 1, tzinfo=UTC)
    assert all("id_/" in p for p in archive.requests)
    # the CDXJ form of the same TimeMap parses to the same mementos
    cdxj = parse_timemap((shared_data / "warc" / "5mementos.cdxj").read_text(), "x")
    link = parse_timemap((shared_data / "warc" / "5mementos.link").read_text(), "x")
    assert [m.uri_m for m in cdxj.mementos] == [m.uri_m for m in link.mementos]
    assert cdxj.original == link.original == "http://memento.us/"


def test_link_format_parsing_and_redirect_detection() -> None:
    links = parse_link_format('<http://a/>; rel="original", <http://b/x,y>; rel="memento"; '
                              'datetime="Sat, 02 Feb 2013 10:00:00 GMT",<http://c/>;rel=memento')
    assert [u for u, _ in links] == ["http://a/", "http://b/x,y", "http://c/"]
    assert links[1][1]["datetime"] == "Sat, 02 Feb 2013 10:00:00 GMT"
    assert raw_uri_m("http://w.example/web/20200101000000/http://x/") == "http://w.example/web/20200101000000id_/http://x/"
    assert raw_uri_m("http://w.example/1068/20200101000000im_/http://x/") == \
        "http://w.example/1068/20200101000000id_/http://x/"
    assert raw_uri_m("http://x.example/page") == "http://x.example/page"
    assert html_redirect(b'<script>document.location.href = "http://t/";</script>') == "http://t/"
    ia = (b'<p class="impatient"><a href="https://web.archive.org/web/20120103014326/http://x.org/">Impatient?</a>'
          b'</p><script>function go() { document.location.href = '
          b'"https:\\/\\/web.archive.org\\/web\\/20120103014326\\/http:\\/\\/x.org\\/"; }</script>')
    assert html_redirect(ia) == "https://web.archive.org/web/20120103014326/http://x.org/"
    assert html_redirect(b"<meta http-equiv='refresh' content='5;url=/next'>") == "/next"
    assert html_redirect(b'<meta http-equiv="refresh" content="300">') is None  # a reload, not a redirect
    assert html_redirect(b'<meta http-equiv="refresh" content="900; url=/?reload=1">') is None
    long_page = b"<html><body>" + b"<p>real article text</p>" * 200 + \
        b'<script>if (x) window.location.replace("/login");</script></body></html>'
    assert html_redirect(long_page) is None  # a real page with a script is not a redirect page


def test_unreachable_timemap_is_an_input_error() -> None:
    from tests.conftest import free_port

    with pytest.raises(InputError) as err:
        iter_histories([f"http://127.0.0.1:{free_port()}/timemap/link/http://x.example/"], CFG)
    assert err.value.reason == "timemap_unreachable"


def _page(base: str, name: str, stamps: list[str], links: list[tuple[str, str]], original: str = ORIG) -> str:
    lines = [f"<{original}>; rel=\"original\"", f"<{base}/timemap/{name}>; rel=\"self\""]
    lines += [f"<{uri}>; rel=\"{rel}\"; type=\"application/link-format\"" for uri, rel in links]
    for s in stamps:
        dt = datetime.strptime(s, "%Y%m%d%H%M%S").strftime("%a, %d %b %Y %H:%M:%S GMT")
        lines.append(f"<{base}/web/{s}/{original}>; rel=\"memento\"; datetime=\"{dt}\"")
    return ",\n".join(lines) + "\n"


async def test_paged_timemap_and_index_are_followed(archive: Archive, tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    b = archive.base
    stamps = [f"2021{m:02d}01000000" for m in range(1, 8)]
    for s in stamps:
        archive.pages[f"{s}/{ORIG}"] = archive.html(f"<p>capture {s}</p>")
    # p1 -next-> p2 (relative link) -next-> p3, which points back (prev) and to p1 again: each read once.
    # p1 also names, as an index would, a TimeMap of another archive (rel="timemap"), a dead page and a
    # page about another resource: the dead and the foreign one are skipped with a warning.
    archive.timemaps["p1"] = _page(b, "p1", stamps[:2], [("p2", "next"), (f"{b}/timemap/other", "timemap"),
                                                         (f"{b}/timemap/dead", "timemap"),
                                                         (f"{b}/timemap/foreign", "timemap")])
    archive.timemaps["p2"] = _page(b, "p2", stamps[2:4] + stamps[1:2], [(f"{b}/timemap/p3", "next"),
                                                                      (f"{b}/timemap/p1", "prev")])
    archive.timemaps["p3"] = _page(b, "p3", stamps[4:6], [(f"{b}/timemap/p2", "prev"),
                                                          (f"{b}/timemap/p1", "first timemap")])
    archive.timemaps["other"] = _page(b, "other", stamps[6:], [])
    archive.timemaps["foreign"] = _page(b, "foreign", ["20211201000000"], [], original="http://elsewhere.example/")
    caplog.set_level("WARNING", logger="watcher.sources.timemap")
    hs, uri_t = await _scan([f"{b}/timemap/p1"])
    caps = hs["example,site)/"]
    assert [c.content for c in caps] == [f"<p>capture {s}</p>".encode() for s in stamps]  # 7, each once
    assert uri_t["example,site)/"] == f"{b}/timemap/p1"
    assert "timemap/dead" in caplog.text and "HTTP 404" in caplog.text
    assert "elsewhere.example" in caplog.text and "skipped" in caplog.text
    assert sum(p.startswith("/timemap/") for p in archive.requests) == 0  # TimeMaps are not mementos
    # scan.timemap_max_pages caps the documents read, the first included.
    capped = Config.model_validate({"scan": {"timemap_timeout_s": 1.0, "timemap_max_pages": 2},
                                    "acquire": {"allow_addresses": ["127.0.0.1/32"]}})
    caplog.clear()
    hs2, _ = await _scan([f"{b}/timemap/p1"], capped)
    assert len(hs2["example,site)/"]) == 4 and "timemap_max_pages" in caplog.text
    # A TimeMap file is read alone (it may be an offline snapshot); the further pages are named in a warning.
    saved = tmp_path / "p1.link"
    saved.write_text(archive.timemaps["p1"])
    caplog.clear()
    hs3, _ = await _scan([str(saved)])
    assert len(hs3["example,site)/"]) == 2 and "4 further TimeMap page(s)" in caplog.text


async def test_timemap_and_warc_of_one_seed_form_one_history(archive: Archive, tmp_path: Path) -> None:
    from warcio.warcwriter import WARCWriter

    from tests.fixtures.warcfiles import make_warc, write_response

    b = archive.base
    archive.pages[f"20200101000000/{ORIG}"] = archive.html("<p>from the archive, January</p>")
    archive.pages[f"20200301000000/{ORIG}"] = archive.html("<p>the same record, replayed</p>")
    archive.timemaps["t1"] = _link_timemap(b, ["20200101000000", "20200301000000"])

    def build(w: WARCWriter) -> None:
        write_response(w, "http://www.site.example:80/", "20200201000000", b"<p>our own crawl, February</p>")
        write_response(w, ORIG, "20200301000000", b"<p>the same record, replayed</p>")
        write_response(w, "http://unrelated.example/", "20200201000000", b"<p>another seed</p>")

    warc = make_warc(tmp_path / "crawl.warc.gz", build)
    hs, uri_t = await _scan([f"{b}/timemap/t1", str(warc)])
    assert sorted(hs) == ["example,site)/", "example,unrelated)/"]
    caps = hs["example,site)/"]
    assert [c.timestamp.month for c in caps] == [1, 2, 3]  # merged in time order; March once, not twice
    assert [c.source for c in caps] == ["timemap", "warc", "timemap"]
    assert uri_t["example,site)/"] == f"{b}/timemap/t1"


def _iso(stamp: str) -> str:
    return datetime.strptime(stamp, "%Y%m%d%H%M%S").strftime("%Y-%m-%dT%H:%M:%SZ")


async def test_json_timemaps_the_aggregators_and_pywbs(archive: Archive, tmp_path: Path) -> None:
    """The JSON TimeMaps archives serve are read as link-format ones are: the Memento aggregator's
    and MemGator's object (ISO datetimes, paged through ``pages``), and pywb's ``timemap/json``
    lines, whose memento URIs come from the TimeMap's own address."""
    import json

    b = archive.base
    stamps = ["20200101000000", "20200201000000", "20200301000000"]
    archive.pages = {f"{s}/{ORIG}": archive.html(f"<p>capture {s[:6]}</p>") for s in stamps}

    def memgator(name: str, own: list[str], pages: dict[str, str]) -> str:
        return json.dumps({"original_uri": ORIG, "self": f"{b}/timemap/{name}",
                           "mementos": {"list": [{"datetime": _iso(s), "uri": f"{b}/web/{s}/{ORIG}"} for s in own],
                                        "first": {"datetime": _iso(own[0]), "uri": f"{b}/web/{own[0]}/{ORIG}"}},
                           "timemap_uri": {"json_format": f"{b}/timemap/{name}"}, "pages": pages}, indent=1)

    archive.timemaps["j1"] = memgator("j1", stamps[:2], {"next": f"{b}/timemap/j2"})
    archive.timemaps["j2"] = memgator("j2", stamps[2:], {"prev": f"{b}/timemap/j1"})
    hs, uri_t = await _scan([f"{b}/timemap/j1"])
    caps = hs["example,site)/"]
    assert [c.content for c in caps] == [f"<p>capture {s[:6]}</p>".encode() for s in stamps]  # both pages
    assert caps[0].timestamp == datetime(2020, 1, 1, tzinfo=UTC) and uri_t["example,site)/"] == f"{b}/timemap/j1"

    f = tmp_path / "tm.json"
    f.write_text(archive.timemaps["j1"])
    assert detect_input(str(f)) == "timemap"
    hs, _ = await _scan([str(f)])
    assert len(hs["example,site)/"]) == 2  # a file's further pages are not followed

    archive.timemaps[f"pywb:{ORIG}"] = "\n".join(
        json.dumps({"urlkey": "example,site)/", "timestamp": s, "url": ORIG, "mime": "text/html", "status": "200",
                    "digest": "X", "length": "100", "offset": "0", "filename": "a.warc.gz"}) for s in stamps) + "\n"
    hs, _ = await _scan([f"{b}/web/timemap/json/{ORIG}"])
    caps = hs["example,site)/"]
    assert [c.content for c in caps] == [f"<p>capture {s[:6]}</p>".encode() for s in stamps]
    assert caps[1].uri_m == f"{b}/web/20200201000000/{ORIG}"

    lines = tmp_path / "pywb.json"
    lines.write_text(archive.timemaps[f"pywb:{ORIG}"])
    assert detect_input(str(lines)) == "timemap"
    with pytest.raises(InputError) as err:  # no memento URIs and no archive to build them from
        await _scan([str(lines)])
    assert err.value.reason == "timemap_no_archive"
    assert parse_timemap('{"original_uri": "http://a.example/", "mementos": {"list": []}}', "x").mementos == ()
