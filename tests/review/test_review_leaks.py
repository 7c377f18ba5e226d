"""Nothing leaves the machine from the review page, in a real browser.

The real ``driftline review`` command serves a WARC scan whose pages name their images, styles, fonts,
frames, scripts and links by live-web URLs (a made-up public host name and a public IP), some archived in
the same WARC and some not, plus a verdict whose URI-M is a live address.  Debian's Chromium (Playwright)
opens the queue and the detail views, waits for the archived frames' images (from the WARC) and for the
screenshots the server renders with its own Chromium, and follows links inside the archived frames.

Counted, and each must stay at zero:
- every request the curator's Chromium issues for a host outside loopback (``request`` events and a
  ``context.route`` that aborts them); a request the page's Content-Security-Policy refuses is never
  issued;
- every connection that Chromium makes outside Playwright's routing (preconnects, redirect hops, its
  own fetches): it is started with ``--proxy-server`` pointing at a local recorder, so any such
  connection to a host outside loopback arrives there;
- every connection and name lookup the review server's process attempts to a host outside loopback (a
  Python audit hook in that process; the server's own Chromium resolves no name and is routed to the
  WARC, so its requests that reach the network would be this process's too).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.conftest import REPO_ROOT
from tests.fixtures.reviewleaks import LIVE_IP, make_leaky

pytestmark = pytest.mark.browser

_AUDITED = r"""
import ipaddress, sys
out = open(sys.argv[1], "a", buffering=1)
def loopback(h):
    h = h.decode() if isinstance(h, bytes) else str(h)
    if h in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(h.split("%")[0]).is_loopback
    except ValueError:
        return False
def hook(event, args):
    if event == "socket.connect" and isinstance(args[1], tuple):
        host = args[1][0]
    elif event == "socket.getaddrinfo":
        host = args[0]
    else:
        return
    if host is not None and not loopback(host):
        out.write(f"{event} {host!r}\n")
sys.addaudithook(hook)
from watcher.cli import main
sys.exit(main(sys.argv[2:]))
"""


@contextmanager
def audited_review(audit: Path, *args: str) -> Iterator[str]:
    """``driftline review ARGS --port 0`` in its own process, every outgoing attempt written to ``audit``."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("DRIFTLINE__REVIEW__TOKEN", None)
    proc = subprocess.Popen([sys.executable, "-c", _AUDITED, str(audit), "--log-level", "WARNING", "review", *args,
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=REPO_ROOT)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "serving" not in line:
            proc.kill()
            raise AssertionError(f"review did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
        yield line.rsplit(" ", 1)[1].strip()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextmanager
def recorder() -> Iterator[tuple[int, list[str]]]:
    """A local HTTP proxy that answers nothing and records every request it is sent (CONNECT too)."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _record(self) -> None:
            seen.append(f"{self.command} {self.path}")
            self.send_response(502)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_HEAD = do_PUT = do_OPTIONS = do_CONNECT = _record  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


def _loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return host in ("127.0.0.1", "localhost", "::1") or not url.lower().startswith(("http:", "https:", "ws"))


@contextmanager
def curator_browser(chromium_path: Path, proxy_port: int) -> Iterator[tuple[Any, list[str]]]:
    from playwright.sync_api import sync_playwright

    outside: list[str] = []
    with sync_playwright() as pw:
        args = [f"--proxy-server=http://127.0.0.1:{proxy_port}", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
                "--disable-domain-reliability", "--disable-client-side-phishing-detection", "--no-pings",
                "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication"]
        b = pw.chromium.launch(executable_path=str(chromium_path), headless=True,
                               args=[*args, *(["--no-sandbox"] if os.geteuid() == 0 else [])])
        try:
            context = b.new_context(viewport={"width": 1400, "height": 1000})
            context.on("request", lambda r: None if _loopback(r.url) else outside.append(f"request {r.url}"))

            def route(r: Any) -> None:
                if _loopback(r.request.url):
                    r.continue_()
                else:
                    outside.append(f"routed {r.request.url}")
                    r.abort()

            context.route("**/*", route)
            yield context.new_page(), outside
        finally:
            b.close()


# Chromium's own service traffic (updates, account and autofill services), whatever page is open; not
# from the review page, and named here host by host so that nothing else can hide behind it.
_BROWSER_OWN = ("update.googleapis.com", "clients2.google.com", "accounts.google.com",
                "content-autofill.googleapis.com", "optimizationguide-pa.googleapis.com", "safebrowsing.googleapis.com")


def _browser_own(line: str) -> bool:
    target = line.split(" ", 1)[1]
    host = urlsplit(target).hostname if "://" in target else target.rsplit(":", 1)[0]
    return host in _BROWSER_OWN


def _frame(page: Any, title: str) -> Any:
    handle = page.wait_for_selector(f'iframe[title="{title}"]', state="attached")
    frame = handle.content_frame()
    assert frame is not None
    return frame


def test_nothing_leaves_the_machine_from_the_review_page(chromium_path: Path, tmp_path: Path) -> None:
    leaky = make_leaky(tmp_path / "collection")
    audit = tmp_path / "server-outgoing.txt"
    audit.touch()
    base_id, cap_id = leaky.page_ids
    with recorder() as (proxy_port, proxied), audited_review(audit, str(leaky.result)) as url, \
            curator_browser(chromium_path, proxy_port) as (page, outside):
        page.goto(url)
        assert page.locator("tr[data-verdict-id]").count() >= 3
        page.goto(f"{url}v/{cap_id}")
        # the archived frames show the images their WARC holds: absolute, relative and in a nested frame
        for title in ("capture as archived", "baseline as archived"):
            frame = _frame(page, title)
            frame.wait_for_load_state("load")
            for sel in ("#archived-logo", "#relative-logo"):
                frame.wait_for_function("() => { const i = document.querySelector('" + sel + "'); "
                                        "return i && i.complete && i.naturalWidth === 40; }", timeout=60_000)
            assert frame.evaluate("() => document.querySelector('#live-only').naturalWidth") == 0
        embed = next(f for f in page.frames if "embed.html" in f.url)
        embed.wait_for_function("() => { const i = document.querySelector('#inner-logo'); "
                                "return i && i.complete && i.naturalWidth === 40; }", timeout=60_000)
        # both screenshots, rendered by the server's Chromium from the WARC
        page.locator(".shots img").last.scroll_into_view_if_needed()
        page.wait_for_function("() => Array.from(document.querySelectorAll('.shots img'))"
                               ".every(i => i.complete && i.naturalWidth > 100)", timeout=120_000)
        # links inside the archived frames stay in the archive: an archived page, or "not archived"
        cap = _frame(page, "capture as archived")
        cap.click("#away")
        _frame(page, "capture as archived").wait_for_selector("text=Other page", timeout=60_000)
        base = _frame(page, "baseline as archived")
        base.click("#ipaway")
        _frame(page, "baseline as archived").wait_for_selector("text=not archived", timeout=60_000)
        # a verdict whose URI-M is a live address: refused, not fetched
        page.goto(f"{url}v/{leaky.live_uri_m_id}")
        page.wait_for_selector("text=review.archives")
        _frame(page, "capture as archived").wait_for_selector("text=not under an archive", timeout=60_000)
        page.goto(f"{url}v/{base_id}")
        _frame(page, "capture as archived").wait_for_load_state("load")
        assert outside == []
        from_page = [p for p in proxied if not _browser_own(p)]
        assert from_page == [], "\n".join(from_page)
        # the recorder does see what Chromium sends outside Playwright's routing (a canary, unrouted)
        context = page.context.browser.new_context()
        try:
            with pytest.raises(Exception):  # noqa: B017 - the recorder answers 502; any failure will do
                context.new_page().goto(f"http://{LIVE_IP}/canary", timeout=30_000)
        finally:
            context.close()
        assert f"GET http://{LIVE_IP}/canary" in proxied
    lines = audit.read_text().splitlines()
    assert lines == [], lines
    assert LIVE_IP  # (the public address the pages name; never reached)
