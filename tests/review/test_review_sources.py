"""The detail view re-reads each capture from where the scan read it: a WARC record by its offset (a
revisit's from its original), a TimeMap memento raw (``id_``) from its archive (a local server here),
never the live web."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from tests.fixtures.kafka import page_html, write_warc
from tests.fixtures.webserver import serve
from watcher.cli import main
from watcher.config import Config, load_config
from watcher.review.access import Access
from watcher.review.content import load_content, page_text
from watcher.review.ingest import iter_result, open_input
from watcher.review.server import make_app
from watcher.store.labels import Query

URL = "http://www.rights.example.org/report"


async def test_warc_captures_are_read_again_by_their_offset(tmp_path: Path) -> None:
    refs = write_warc(tmp_path / "crawl.warc.gz", [
        (URL, "20240101000000", page_html(1)),
        (URL, "20240201000000", page_html(1, variant=1)),
        (URL, "20240301000000", page_html(0, off_topic=True)),
    ])
    result = tmp_path / "result.jsonl"
    assert main(["--log-level", "WARNING", "scan", str(tmp_path / "crawl.warc.gz"), "-o", str(result), "-f",
                 "jsonl", "-j", "1", "--no-progress"]) == 0
    located = {v.capture_time.strftime("%Y%m%d%H%M%S"): loc for v, loc in iter_result(result)}
    for ref in refs:
        assert located[ref.timestamp] == f"warc:{(tmp_path / 'crawl.warc.gz').resolve()}#{ref.offset}"
    cfg = load_config(None)
    access = Access.of(cfg, result)  # the result's folder holds the WARC
    for v, loc in iter_result(result):
        c = await asyncio.to_thread(load_content, loc, v.uri_m, v.url, v.capture_time, cfg, access)
        assert c.data is not None and c.error is None
        assert page_text(c, 10_000).split()  # the page's words, from the record at that offset
    store, review, where, path = open_input(str(result))
    client = TestClient(TestServer(make_app(store, review, cfg, where=where, result=path), host="127.0.0.1"))
    await client.start_server()
    try:
        off = review.queue(Query(change="off-topic")).items[0]
        html = await (await client.get(f"/v/{off.verdict_id}")).text()
        assert "<del>" in html and "<ins>" in html
        assert f"{(tmp_path / 'crawl.warc.gz').resolve()}" in html  # where it was read
    finally:
        await client.close()
        store.close()


async def test_a_memento_is_read_raw_from_its_archive(tmp_path: Path) -> None:
    seen: list[str] = []

    async def memento(request: web.Request) -> web.StreamResponse:
        seen.append(request.path)
        if not request.match_info["ts"].endswith("id_"):
            return web.Response(text="<html><body>replay banner and rewritten page</body></html>",
                                content_type="text/html")
        return web.Response(body=page_html(2), content_type="text/html",
                            headers={"Memento-Datetime": "Mon, 01 Jan 2024 00:00:00 GMT"})

    app = web.Application()
    app.router.add_get("/web/{ts}/{rest:.*}", memento)
    async with serve(app) as base:
        uri_m = f"{base}/web/20240101000000/{URL}"
        cfg = Config.model_validate({"acquire": {"allow_addresses": ["127.0.0.1/32"]},
                                     "review": {"archives": [f"{base}/web/"]}})
        from datetime import UTC, datetime

        c = await asyncio.to_thread(load_content, None, uri_m, URL, datetime(2024, 1, 1, tzinfo=UTC), cfg)
        assert c.data == page_html(2)
        assert seen == [f"/web/20240101000000id_/{URL}"]  # raw, one request, to the archive only
        # and without an allow-list admitting the (loopback) archive, the guard refuses it: no fetch
        c = await asyncio.to_thread(load_content, None, uri_m, URL, datetime(2024, 1, 1, tzinfo=UTC),
                                    Config.model_validate({"review": {"archives": [f"{base}/web/"]}}))
        assert c.data is None and c.error and re.search(r"blocked", c.error)
        assert len(seen) == 1


def test_pin_in_a_store_the_stream_writes(tmp_path: Path) -> None:
    """A store written capture by capture (the stream's Watcher) keeps no pages: the pin re-scores from
    the fingerprints it keeps, and the history's state takes the pin for the captures still to come."""
    from datetime import UTC, datetime

    from watcher.engine import Engine
    from watcher.model import Capture
    from watcher.review.rescore import pin_baseline
    from watcher.store.labels import review_data
    from watcher.store.sqlite import SQLiteStore
    from watcher.watch import Watcher

    cfg = load_config(None)
    store = SQLiteStore(tmp_path / "stream.db")
    watcher = Watcher(Engine(cfg.engine), store)
    pages = [page_html(1), page_html(1, variant=1), page_html(0, off_topic=True), page_html(1, variant=2)]
    for month, body in enumerate(pages, 1):
        watcher.score(Capture(url=URL, timestamp=datetime(2024, month, 1, tzinfo=UTC), content=body,
                               content_type="text/html"))
    try:
        review = review_data(store)
        review.sync()
        history = review.queue(Query()).items[0].history
        tl = review.timeline(history)
        assert tl[0].change == "baseline" and tl[1].change != "baseline"
        changed = pin_baseline(store, review, tl[1].verdict_id, cfg)
        assert changed and changed[0].verdict_id == tl[1].verdict_id and changed[0].change == "baseline"
        assert changed[0].version == 2
        for v in (store.get_verdict(i.verdict_id) for i in tl[2:]):
            assert v is not None and v.baseline_time == datetime(2024, 2, 1, tzinfo=UTC)  # against the pin
        assert store.get_state(history).pinned is not None
        assert review.pins() == {history: "20240201000000"}
        nxt = watcher.score(Capture(url=URL, timestamp=datetime(2024, 5, 1, tzinfo=UTC), content=page_html(1),
                                     content_type="text/html")).verdict
        assert nxt.baseline_time == datetime(2024, 2, 1, tzinfo=UTC)  # the stream goes on from the pin
    finally:
        store.close()
