"""The review server's security over HTTP (aiohttp's test client on loopback): the Host check, locators
held to the operator's roots (no file content echoed), URI-Ms held to the configured archives (nothing
fetched from anywhere else: a socket-level counter of every outgoing connection and name lookup), the
archived frame and its subresources served from the WARC under a server-only policy, the Secure
cookie, and three small things (a taken port, agreement metrics, the favicon)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import ClientResponse, web
from aiohttp.test_utils import TestClient, TestServer

from tests.fixtures.reviewleaks import CDN_HOST, LIVE_HOST, LIVE_IP, PAGE_URL, SITE, Leaky, make_leaky
from tests.fixtures.webserver import serve
from watcher.config import Config, load_config
from watcher.review.access import Access, Archive
from watcher.review.ingest import open_input
from watcher.review.server import make_app
from watcher.store import BaselineStore
from watcher.store.labels import Query, SQLReview

SECRET = "TOPSECRET-d41d8cd9-this-must-never-be-shown"

# -- a socket-level counter of what leaves the process --------------------------------------------------

_OUT: list[list[str]] = []  # the lists of the tests counting right now


def _loopback(host: object) -> bool:
    if host is None:
        return True
    h = host.decode() if isinstance(host, bytes) else str(host)
    if h in ("localhost", ""):
        return True
    try:
        import ipaddress

        return ipaddress.ip_address(h.split("%")[0]).is_loopback
    except ValueError:
        return False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _OUT:
        return
    host: object = None
    if event == "socket.connect" and isinstance(args[1], tuple):
        host = args[1][0]
    elif event == "socket.getaddrinfo":
        host = args[0]
    else:
        return
    if not _loopback(host):
        for out in _OUT:
            out.append(f"{event} {host!r}")


_HOOKED = False


@pytest.fixture
def outgoing() -> Iterator[list[str]]:
    """Every connection and name lookup this process attempts to a non-loopback host while the test runs
    (a Python audit hook: it sees every socket, whatever client opened it)."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_hook)
        _HOOKED = True
    seen: list[str] = []
    _OUT.append(seen)
    try:
        yield seen
    finally:
        _OUT.remove(seen)


def test_the_counter_sees_an_outgoing_connection(outgoing: list[str]) -> None:
    """The counter itself: a connection attempt to a public address is seen (it fails at once: the
    socket is non-blocking), so a zero below means nothing was attempted."""
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect((LIVE_IP, 9))
    except OSError:
        pass
    finally:
        s.close()
    assert outgoing == [f"socket.connect '{LIVE_IP}'"]


# -- fixtures -----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory) -> Leaky:
    return make_leaky(tmp_path_factory.mktemp("review-sec") / "collection")


Client = TestClient[web.Request, web.Application]
Served = tuple[Client, BaselineStore, SQLReview]


async def _client(result: Path, store: Path, cfg: Config | None = None, *, token: str | None = None,
                  tls: ssl.SSLContext | None = None) -> Served:
    st, review, where, path = open_input(str(result), str(store))
    app = make_app(st, review, cfg or load_config(None), where=where, result=path, token=token)
    client = TestClient(TestServer(app, host="127.0.0.1"))
    await client.server.start_server(ssl=tls)
    return client, st, review


@pytest_asyncio.fixture
async def served(leaky: Leaky, tmp_path: Path) -> AsyncIterator[Served]:
    client, store, review = await _client(leaky.result, tmp_path / "r.sqlite")
    yield client, store, review
    await client.close()
    store.close()


def _csrf(html: str) -> str:
    m = re.search(r'name="csrf-token" content="([^"]+)"', html)
    assert m
    return m.group(1)


# -- Host ------------------------------------------------------------------------------------------------

async def test_a_foreign_host_gets_neither_the_page_nor_a_write(served: Served) -> None:
    """DNS rebinding: the attacker's name resolves to 127.0.0.1, so the browser sends its Host and a
    matching Origin.  Refused before any handler: no page, no token, no label."""
    client, _, review = served
    port = client.server.port
    evil = f"rebind.attacker-site.com:{port}"
    r = await client.get("/", headers={"Host": evil})
    assert r.status == 421
    assert "csrf-token" not in await r.text()
    token = _csrf(await (await client.get("/")).text())  # the attacker somehow holds the real token
    vid = review.queue(Query()).items[0].verdict_id
    r = await client.post("/label", data={"vid": vid, "label": "off-topic", "csrf": token},
                          headers={"Host": evil, "Origin": f"http://{evil}"})
    assert r.status == 421
    assert review.get_label(vid) is None
    for path in ("/metrics", f"/v/{vid}", f"/archived/{vid}/capture", "/static/htmx.min.js"):
        assert (await client.get(path, headers={"Host": evil})).status == 421, path
    # the names it does answer to
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "localhost"):
        assert (await client.get("/", headers={"Host": host})).status == 200, host
    r = await client.post("/label", data={"vid": vid, "label": "off-topic", "csrf": token},
                          headers={"Origin": f"http://127.0.0.1:{port}", "HX-Request": "true"})
    label = review.get_label(vid)
    assert r.status == 200 and label is not None and label.label == "off-topic"  # the same write, from the page


async def test_configured_host_names_are_answered(leaky: Leaky, tmp_path: Path) -> None:
    cfg = Config.model_validate({"review": {"allowed_hosts": ["review.lab.internal"]}})
    client, store, _ = await _client(leaky.result, tmp_path / "h.sqlite", cfg)
    try:
        port = client.server.port
        assert (await client.get("/", headers={"Host": f"review.lab.internal:{port}"})).status == 200
        assert (await client.get("/", headers={"Host": f"review.lab.internal.evil.com:{port}"})).status == 421
    finally:
        await client.close()
        store.close()


# -- locators --------------------------------------------------------------------------------------------

def _hostile_result(leaky: Leaky, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The scan result with its locators pointed outside the roots: /etc/passwd, a secret beside the
    collection reached by a symlink and by '..', a text file inside the root named as a WARC."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\nsecond line\n")
    root = tmp_path / "collection"
    root.mkdir()
    result = root / "result.jsonl"
    (root / "notes.warc.gz").write_text(f"{SECRET} first line of a text file\n")
    (root / "link.html").symlink_to(outside / "secret.txt")
    entries = [json.loads(x) for x in leaky.result.read_text().splitlines()]
    ids = [e["driftline"]["verdict_id"] for e in entries if "source" in e["driftline"]]
    hostile = {ids[0]: "file:/etc/passwd", ids[1]: f"warc:{root / 'notes.warc.gz'}#0",
               ids[2]: f"file:{root / 'link.html'}", ids[3]: f"file:{root}/../outside/secret.txt"}
    for e in entries:
        if e["driftline"]["verdict_id"] in hostile:
            e["driftline"]["source"] = {"locator": hostile[e["driftline"]["verdict_id"]]}
    result.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return result, hostile


async def test_locators_outside_the_roots_are_refused_without_echo(
        leaky: Leaky, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    result, hostile = _hostile_result(leaky, tmp_path)
    passwd = Path("/etc/passwd").read_text().splitlines()[0] if Path("/etc/passwd").exists() else "root:x:0:0"
    client, store, _ = await _client(result, tmp_path / "l.sqlite")
    try:
        for vid in hostile:
            for path in (f"/v/{vid}", f"/archived/{vid}/capture", f"/archived/{vid}/res?url={PAGE_URL}"):
                r = await client.get(path)
                body = await r.text()
                assert SECRET not in body and passwd not in body and "second line" not in body, (vid, path)
            assert "refused" in await (await client.get(f"/archived/{vid}/capture")).text()
    finally:
        await client.close()
        store.close()
    assert caplog.text and "refused" in caplog.text
    assert SECRET not in caplog.text and passwd not in caplog.text


def test_access_roots_and_archives() -> None:
    cfg = Config.model_validate({"review": {"archives": ["https://web.archive.org/web/", "http://127.0.0.1:8080/w"]}})
    access = Access.of(cfg, Path("/srv/col/result.json"))
    assert "/srv/col" in access.roots
    a = Archive.parse("https://web.archive.org/web/")
    assert a is not None
    assert a.holds("https://web.archive.org/web/2024id_/http://x/")
    assert a.holds("https://WEB.archive.org:443/web/2024/http://x/")
    for uri in ("https://web.archive.org.evil.com/web/2024/http://x/", "https://web.archive.org@evil.com/web/",
                "http://web.archive.org/web/2024/http://x/", "https://web.archive.org/webx/2024/http://x/",
                "https://web.archive.org:8443/web/2024/", f"http://{LIVE_IP}/web/2024/http://x/",
                "https://evil.com/https://web.archive.org/web/"):
        assert not a.holds(uri), uri
    assert access.archive_of("http://127.0.0.1:8080/w/2024/http://x/") is not None
    assert access.archive_of("http://127.0.0.1:8080/wx/2024/http://x/") is None


# -- URI-Ms ----------------------------------------------------------------------------------------------

async def test_a_uri_m_on_a_live_address_is_never_fetched(served: Served, leaky: Leaky,
                                                          outgoing: list[str]) -> None:
    client, _, _ = served
    html = await (await client.get(f"/v/{leaky.live_uri_m_id}")).text()
    assert "review.archives" in html  # why there is no text: the URI-M is under no configured archive
    r = await client.get(f"/archived/{leaky.live_uri_m_id}/capture")
    assert "not under an archive" in await r.text()
    r = await client.get(f"/archived/{leaky.live_uri_m_id}/res?url={SITE}/logo.png")
    assert r.status == 404
    assert f'href="http://{LIVE_IP}' not in html  # not offered as a link either
    assert outgoing == []


async def test_a_uri_m_is_read_from_a_configured_archive_only(tmp_path: Path) -> None:
    """A loopback server the address guard admits stands for the live web and for an archive: the
    URI-M under review.archives is read, a redirect out of the archive's prefix is not followed, a
    URI-M elsewhere on the same server is not fetched."""
    from datetime import UTC, datetime

    from watcher.review.content import load_content

    hits: list[str] = []

    async def any_path(request: web.Request) -> web.StreamResponse:
        hits.append(request.path)
        if request.path.startswith("/web/2024010100000"):
            return web.Response(text="<html><body>archived words</body></html>", content_type="text/html")
        if request.path.startswith("/web/2023"):
            raise web.HTTPFound("/live/elsewhere")
        return web.Response(text="<html><body>live words</body></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{rest:.*}", any_path)
    async with serve(app) as base:
        cfg = Config.model_validate({"acquire": {"allow_addresses": ["127.0.0.1/32"]},
                                     "review": {"archives": [f"{base}/web/"]}})
        when = datetime(2024, 1, 1, tzinfo=UTC)
        c = await asyncio.to_thread(load_content, None, f"{base}/web/20240101000000/{PAGE_URL}", PAGE_URL, when, cfg)
        assert c.data is not None and b"archived words" in c.data
        c = await asyncio.to_thread(load_content, None, f"{base}/web/20230101000000/{PAGE_URL}", PAGE_URL, when, cfg)
        assert c.data is None
        c = await asyncio.to_thread(load_content, None, f"{base}/live/{PAGE_URL}", PAGE_URL, when, cfg)
        assert c.data is None and c.error and "review.archives" in c.error
    assert [h for h in hits if h.startswith("/live")] == []  # the redirect hop and the live URI-M: not fetched


# -- archived frames and their subresources ------------------------------------------------------------------

async def test_archived_frame_points_every_url_at_the_server(served: Served, leaky: Leaky,
                                                            outgoing: list[str]) -> None:
    client, _, _ = served
    vid = leaky.page_ids[1]
    r = await client.get(f"/archived/{vid}/capture")
    body, csp = await r.text(), r.headers["Content-Security-Policy"]
    assert r.status == 200 and "Rights report, new" in body
    for live in (f"http://{LIVE_IP}", f"//{LIVE_HOST}", f"//{CDN_HOST}"):
        assert live not in body, live  # every URL rewritten (or dropped: scripts, preconnect, dns-prefetch)
    assert "preconnect" not in body and "dns-prefetch" not in body and "<script" not in body
    origins = set(re.findall(r"https?://[^\s;']+", csp))
    assert origins == {f"http://127.0.0.1:{client.server.port}"}, csp
    assert csp.startswith("sandbox;") and "script-src 'none'" in csp and "default-src 'none'" in csp
    srcs = dict(re.findall(r'<img id="([\w-]+)" src="([^"]+)"', body))
    assert srcs["archived-logo"].startswith(f"/archived/{vid}/res?")
    # the subresources: from the WARC when it holds them (absolute and relative alike), else 404
    for key in ("archived-logo", "relative-logo"):
        got = await client.get(srcs[key].replace("&amp;", "&"))
        assert got.status == 200 and got.headers["Content-Type"] == "image/png"
        assert await got.read() == leaky.logo
    assert (await client.get(srcs["live-only"].replace("&amp;", "&"))).status == 404
    css = await client.get(f"/archived/{vid}/res?which=capture&url={SITE}/style.css")
    text = await css.text()
    assert css.status == 200 and "#123456" in text and f"http://{LIVE_IP}" not in text
    assert f"/archived/{vid}/res?" in text
    assert "sandbox" in css.headers["Content-Security-Policy"]
    embed = await (await client.get(f"/archived/{vid}/res?which=capture&url={SITE}/embed.html")).text()
    assert 'id="inner-logo"' in embed and f"http://{LIVE_IP}" not in embed
    page_csp = (await client.get(f"/v/{vid}")).headers["Content-Security-Policy"]
    assert "http" not in page_csp and "default-src 'self'" in page_csp
    assert outgoing == []


# -- the Secure cookie ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> ssl.SSLContext:
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=IP:127.0.0.1,DNS:localhost"], check=True, capture_output=True)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    return ctx


def _cookie(r: ClientResponse) -> str:
    return next(v for v in r.headers.getall("Set-Cookie") if v.startswith("driftline_review="))


async def test_the_token_cookie_is_secure_over_https(leaky: Leaky, tmp_path: Path, tls: ssl.SSLContext) -> None:
    client, store, _ = await _client(leaky.result, tmp_path / "s.sqlite", token="s3cret", tls=tls)
    try:
        r = await client.get("/?token=s3cret", ssl=False)
        assert r.status == 200 and "secure" in _cookie(r).lower() and "httponly" in _cookie(r).lower()
    finally:
        await client.close()
        store.close()
    client, store, _ = await _client(leaky.result, tmp_path / "s.sqlite", token="s3cret")
    try:
        r = await client.get("/?token=s3cret")
        assert "secure" not in _cookie(r).lower()  # plain HTTP: a Secure cookie would never come back
        r = await client.get("/?token=s3cret", headers={"X-Forwarded-Proto": "https"})
        assert "secure" not in _cookie(r).lower()  # the header is anyone's to send unless the proxy is trusted
    finally:
        await client.close()
        store.close()
    cfg = Config.model_validate({"review": {"trust_forwarded_proto": True}})
    client, store, _ = await _client(leaky.result, tmp_path / "s.sqlite", cfg, token="s3cret")
    try:
        r = await client.get("/?token=s3cret", headers={"X-Forwarded-Proto": "https"})
        assert "secure" in _cookie(r).lower()
        r = await client.get("/?token=s3cret", headers={"X-Forwarded-Proto": "http"})
        assert "secure" not in _cookie(r).lower()
    finally:
        await client.close()
        store.close()


# -- small things ------------------------------------------------------------------------------------------

def test_a_taken_port_is_one_line_naming_it_and_the_option(leaky: Leaky, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        env.pop("DRIFTLINE__REVIEW__TOKEN", None)
        done = subprocess.run([sys.executable, "-m", "watcher.cli", "--log-level", "WARNING", "review",
                               str(leaky.result), "--store", str(tmp_path / "p.sqlite"), "--port", str(port)],
                              capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2
    err = done.stderr.strip().splitlines()
    assert len(err) == 1, done.stderr
    assert str(port) in err[0] and "--port" in err[0] and "Errno" not in err[0]


async def test_agreement_is_exported_only_for_classes_with_labels(served: Served,
                                                                  leaky: Leaky) -> None:
    client, _, review = served
    text = await (await client.get("/metrics")).text()
    assert "driftline_review_agreement_ratio{" not in text
    assert 'driftline_review_labelled{change="off-topic"} 0.0' in text
    review.set_label(leaky.page_ids[1], 1, "on-topic")
    text = await (await client.get("/metrics")).text()
    assert re.findall(r"driftline_review_agreement_ratio\{change=\"([\w-]+)\"\}", text) == ["minor"]


async def test_the_favicon_is_served(served: Served) -> None:
    client, _, _ = served
    r = await client.get("/favicon.ico")
    assert r.status == 200 and r.headers["Content-Type"].startswith("image/svg+xml")
    assert b"<svg" in await r.read()


async def test_a_subresource_in_the_next_warc_file_is_found(tmp_path: Path) -> None:
    """A crawler rolls over to a new WARC file mid-page: the page's image is in the next file."""
    from tests.fixtures.reviewleaks import page, png, write_records
    from watcher.cli import main

    col = tmp_path / "col"
    col.mkdir()
    logo = png()
    write_records(col / "job-00000.warc.gz", [(PAGE_URL, "20231201000000", "text/html", page(2023)),
                                              (PAGE_URL, "20240101000000", "text/html", page(2024))])
    write_records(col / "job-00001.warc.gz", [(f"{SITE}/logo.png", "20240101000005", "image/png", logo)])
    write_records(col / "job-00002.warc.gz", [(f"{SITE}/other", "20240101000009", "text/html", b"<p>x</p>")])
    result = col / "result.jsonl"
    assert main(["--log-level", "WARNING", "scan", str(col / "job-00000.warc.gz"), "-o", str(result), "-f", "jsonl",
                 "-j", "1", "--no-progress"]) == 0
    vid = json.loads(result.read_text().splitlines()[-1])["driftline"]["verdict_id"]
    client, store, _ = await _client(result, tmp_path / "n.sqlite")
    try:
        r = await client.get(f"/archived/{vid}/res?which=capture&url={SITE}/logo.png")
        assert r.status == 200 and await r.read() == logo
        assert (await client.get(f"/archived/{vid}/res?which=capture&url={SITE}/none.png")).status == 404
    finally:
        await client.close()
        store.close()


async def test_screenshot_resolver_never_hands_chromium_a_redirect_out_of_the_archive(tmp_path: Path,
                                                                                     outgoing: list[str]) -> None:
    """An archived redirect to a URL the WARC does not hold is missing (404), not a 3xx: Chromium would
    follow a redirect it is handed on its own, outside the routing."""
    from datetime import UTC, datetime
    from io import BytesIO

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from watcher.acquire.archived import WarcIndexCache
    from watcher.review.frames import resolver_for

    warc = tmp_path / "r.warc.gz"
    with warc.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, status, headers in ((f"{SITE}/moved.png", "301 Moved Permanently",
                                      [("Location", f"http://{LIVE_IP}/elsewhere.png"), ("Content-Length", "0")]),
                                     (f"{SITE}/inside.png", "302 Found",
                                      [("Location", f"{SITE}/logo.png"), ("Content-Length", "0")]),
                                     (f"{SITE}/logo.png", "200 OK", [("Content-Type", "image/png")])):
            http = StatusAndHeaders(status, headers, protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=BytesIO(b"png" * (status[0] == "2")),
                                                          http_headers=http,
                                                          warc_headers_dict={"WARC-Date": "2024-01-01T00:00:00Z"}))
    cfg = load_config(None)
    resolver = resolver_for(Access.of(cfg, warc), f"warc:{warc}#0", None, WarcIndexCache(cfg), None)
    when = datetime(2024, 1, 1, tzinfo=UTC)
    assert await resolver.resolve(f"{SITE}/moved.png", when) is None
    inside = await resolver.resolve(f"{SITE}/inside.png", when)  # followed inside the WARC
    assert inside is not None and inside.status == 200 and inside.body == b"png"
    assert outgoing == []
