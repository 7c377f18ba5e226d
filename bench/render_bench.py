"""Rendering script-built pages: archived (from the WARC) against live, in one run.

Generates its own data (no ../shared needed): ``--pages`` script-built pages,
each a shell whose text comes from two external scripts, written into one
gzipped WARC and served by a local aiohttp server. Then, through
:class:`watcher.acquire.Acquirer` with one :class:`RenderPool` (Debian
Chromium), it times:

* ``warc, no render``: the WARC record only (the floor);
* ``warc + render``: the archived capture rendered, scripts answered from the
  same WARC file (its index built on first use: timed separately too);
* ``live + render``: the same page fetched from the local server and rendered,
  scripts fetched from it too (the reference);

and prints captures/s and the ratio of archived to live rendering. With
``--warc PATH`` it also times indexing that WARC (MB/s of file) for sizing.

    .venv/bin/python bench/render_bench.py [--pages 40] [--warc ../shared/...warc.gz]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

from aiohttp import web
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from watcher.acquire import Acquirer, RenderPool
from watcher.acquire.archived import WarcIndexCache
from watcher.config import Config
from watcher.events import CaptureEvent

WHEN = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
WORDS = ["river", "water", "basin", "survey", "flood", "report", "council", "station", "gauge", "level",
         "rain", "season", "drought", "monitoring", "network", "volunteers", "data", "field", "sample", "quality"]


@dataclass
class Site:
    pages: dict[str, tuple[str, bytes]]  # path -> (content type, body)


def make_site(n: int, seed: int = 7) -> Site:
    rnd = random.Random(seed)
    pages: dict[str, tuple[str, bytes]] = {}
    for i in range(n):
        words = [rnd.choice(WORDS) for _ in range(300)]
        head = ", ".join(repr(w) for w in words[:150])
        tail = ", ".join(repr(w) for w in words[150:])
        pages[f"/p{i}/"] = ("text/html", (
            f"<!doctype html><html><head><title>Station {i}</title>"
            f"<script src='/s/{i}-a.js'></script><script src='/s/{i}-b.js'></script>"
            "<script>setTimeout(function(){document.body.innerHTML='<h1>Report</h1><p>'+W.join(' ')+'</p>';},0);"
            "</script></head><body>Loading</body></html>").encode())
        pages[f"/s/{i}-a.js"] = ("application/javascript", f"var W = [{head}];".encode())
        pages[f"/s/{i}-b.js"] = ("application/javascript", f"W.push({tail});".encode())
    return Site(pages)


def write_warc(path: Path, host: str, site: Site) -> dict[str, int]:
    offsets: dict[str, int] = {}
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for rel, (ctype, body) in site.pages.items():
            http = StatusAndHeaders("200 OK", [("Content-Type", ctype), ("Content-Length", str(len(body)))],
                                    protocol="HTTP/1.1")
            rec = writer.create_warc_record(host + rel, "response", payload=BytesIO(body), http_headers=http,
                                            warc_headers_dict={"WARC-Date": "2025-05-01T12:00:00Z"})
            offsets[rel] = fh.tell()
            writer.write_record(rec)
    return offsets


async def timed(acq: Acquirer, events: list[CaptureEvent], concurrency: int) -> tuple[float, int]:
    sem = asyncio.Semaphore(concurrency)
    rendered = 0

    async def one(ev: CaptureEvent) -> None:
        nonlocal rendered
        async with sem:
            cap = await acq.get(ev)
            rendered += (cap.source or "").endswith("+render") and b"Report" in (cap.content or b"")

    started = time.perf_counter()
    await asyncio.gather(*(one(e) for e in events))
    return time.perf_counter() - started, rendered


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=40)
    ap.add_argument("--warc", help="also time indexing this WARC file")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()

    site = make_site(args.pages)
    work = Path(tempfile.mkdtemp(prefix="driftline-render-bench-"))
    app = web.Application()

    async def serve_page(request: web.Request) -> web.Response:
        ctype, body = site.pages[request.path]
        return web.Response(body=body, content_type=ctype)

    for rel in site.pages:
        app.router.add_get(rel, serve_page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    offsets = write_warc(work / "site.warc.gz", base, site)

    def cfg(order: list[str], render: bool) -> Config:
        return Config.model_validate({
            "acquire": {"order": order, "warc_dirs": [str(work)], "allow_addresses": ["127.0.0.1/32"],
                        "live": {"per_host_delay_s": 0.0, "per_host_concurrency": 8}},
            "render": {"enabled": render, "executable_path": args.chromium, "settle_s": 0.5},
        })

    page_paths = [p for p in site.pages if p.endswith("/")]
    warc_events = [CaptureEvent(url=base + p, timestamp=WHEN, warc_filename="site.warc.gz", warc_offset=offsets[p])
                   for p in page_paths]
    live_events = [CaptureEvent(url=base + p, timestamp=WHEN) for p in page_paths]
    rows: list[tuple[str, float, int]] = []
    c = cfg(["warc"], True)
    async with RenderPool(c.render, c.acquire.allow_addresses, fetch=c.acquire.live) as pool:
        async with Acquirer(cfg(["warc"], False)) as acq:
            secs, _ = await timed(acq, warc_events, c.render.pages)
            rows.append(("warc, no render", secs, 0))
        async with Acquirer(cfg(["live"], True), renderer=pool) as acq:
            await acq.get(live_events[0])  # warm-up: Chromium pages created
            secs, ok = await timed(acq, live_events, c.render.pages)
            rows.append(("live + render", secs, ok))
        async with Acquirer(cfg(["warc"], True), renderer=pool) as acq:
            started = time.perf_counter()
            await acq.warc_indexes.get(str(work / "site.warc.gz"))
            index_s = time.perf_counter() - started
            secs, ok = await timed(acq, warc_events, c.render.pages)
            rows.append(("warc + render", secs, ok))
    await runner.cleanup()

    n = len(page_paths)
    print(f"{n} script-built pages, 2 scripts each; Chromium pool of {c.render.pages} pages; settle_s 0.5")
    print(f"{'path':<18}{'seconds':>9}{'captures/s':>12}{'rendered':>10}")
    for name, secs, ok in rows:
        print(f"{name:<18}{secs:>9.2f}{n / secs:>12.1f}{ok:>10}")
    live = next(s for name, s, _ in rows if name == "live + render")
    archived = next(s for name, s, _ in rows if name == "warc + render")
    print(f"archived render speed / live render speed: {live / archived:.2f}")
    size = (work / "site.warc.gz").stat().st_size
    print(f"index of the generated WARC ({size / 1e6:.2f} MB, {len(site.pages)} records): {index_s:.3f} s")
    if args.warc:
        cache = WarcIndexCache(Config())
        started = time.perf_counter()
        index = await cache.get(os.path.abspath(args.warc))
        secs = time.perf_counter() - started
        mb = os.path.getsize(args.warc) / 1e6
        print(f"index of {args.warc}: {mb:.1f} MB in {secs:.2f} s ({mb / secs:.1f} MB/s of file), "
              f"{sum(len(v) for v in index.values())} records")


if __name__ == "__main__":
    asyncio.run(main())
