"""The review server over HTTP (aiohttp's test client on loopback): CSRF, read-only, tokens, escaping,
the sandboxed archived frame, pinning a baseline, metrics."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from tests.fixtures.reviewdata import make_gold, scan_to
from watcher.config import load_config
from watcher.review.hosts import check_bind
from watcher.review.ingest import open_input
from watcher.review.server import make_app
from watcher.store import BaselineStore
from watcher.store.labels import Query, SQLReview

Client = TestClient[web.Request, web.Application]
Served = tuple[Client, BaselineStore, SQLReview]


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("review-srv")
    return scan_to(make_gold(root), root / "result.json")


async def _client(result: Path, tmp_path: Path, *, read_only: bool = False, token: str | None = None) -> Served:
    store, review, where, path = open_input(str(result), str(tmp_path / "r.sqlite"))
    app = make_app(store, review, load_config(None), where=where, result=path, read_only=read_only, token=token)
    client = TestClient(TestServer(app, host="127.0.0.1"))
    await client.start_server()
    return client, store, review


@pytest_asyncio.fixture
async def served(result: Path, tmp_path: Path) -> AsyncIterator[Served]:
    client, store, review = await _client(result, tmp_path)
    yield client, store, review
    await client.close()
    store.close()


def _csrf(html: str) -> str:
    m = re.search(r'name="csrf-token" content="([^"]+)"', html)
    assert m
    return m.group(1)


async def test_a_write_without_csrf_token_is_refused(served: Served) -> None:
    client, _, review = served
    page = await client.get("/")
    token = _csrf(await page.text())
    vid = review.queue(Query()).items[0].verdict_id
    r = await client.post("/label", data={"vid": vid, "label": "off-topic"})
    assert r.status == 403
    assert review.get_label(vid) is None
    r = await client.post("/label", data={"vid": vid, "label": "off-topic", "csrf": "wrong"})
    assert r.status == 403
    r = await client.post("/label", data={"vid": vid, "label": "off-topic"},
                          headers={"X-CSRF-Token": token, "Origin": "http://evil.example"})
    assert r.status == 403
    r = await client.post("/label", data={"vid": vid, "label": "off-topic"},
                          headers={"X-CSRF-Token": token, "HX-Request": "true"})
    assert r.status == 200 and 'data-label="off-topic"' in await r.text()
    label = review.get_label(vid)
    assert label is not None and label.label == "off-topic"


async def test_read_only_serves_no_write(result: Path, tmp_path: Path) -> None:
    client, store, review = await _client(result, tmp_path, read_only=True)
    try:
        html = await (await client.get("/")).text()
        assert "hx-post" not in html and "<form method=\"post\"" not in html
        vid = review.queue(Query()).items[0].verdict_id
        for path in ("/label", "/note", "/pin", "/mute"):
            r = await client.post(path, data={"vid": vid, "label": "on-topic", "csrf": _csrf(html)})
            assert r.status in (404, 405), path  # no write route exists at all
        assert review.reviewed() == 0
    finally:
        await client.close()
        store.close()


async def test_a_token_guards_every_request(result: Path, tmp_path: Path) -> None:
    client, store, _ = await _client(result, tmp_path, token="s3cret-token")
    try:
        assert (await client.get("/")).status == 401
        assert (await client.get("/?token=nope")).status == 401
        r = await client.get("/?token=s3cret-token")
        assert r.status == 200 and "driftline_review" in r.cookies
        assert (await client.get("/")).status == 200  # the cookie carries it from now on
    finally:
        await client.close()
        store.close()


def test_non_loopback_bind_without_token_is_refused(result: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from watcher.cli import main
    from watcher.errors import ConfigError

    with pytest.raises(ConfigError):
        check_bind("0.0.0.0", None)
    with pytest.raises(ConfigError):
        check_bind("192.168.1.10", "")
    check_bind("127.0.0.1", None)
    check_bind("::1", None)
    check_bind("0.0.0.0", "token")
    monkeypatch.delenv("DRIFTLINE__REVIEW__TOKEN", raising=False)
    assert main(["review", str(result), "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "review.token" in err[0] and "0.0.0.0" in err[0]
    assert not Path(f"{result}.review.sqlite").exists()  # refused before anything was opened


async def test_capture_text_that_looks_like_markup_is_shown_as_text(served: Served) -> None:
    client, _, review = served
    off = review.queue(Query(change="off-topic")).items[0]
    html = await (await client.get(f"/v/{off.verdict_id}")).text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "onerror=alert(2)" in html  # as text, in the diff
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    # the archived page goes to a sandboxed frame only, under a CSP that refuses every fetch
    assert re.search(r'<iframe sandbox=""', html)
    assert "allow-scripts" not in html and "allow-same-origin" not in html
    r = await client.get(f"/archived/{off.verdict_id}/capture")
    csp = r.headers["Content-Security-Policy"]
    assert csp.startswith("sandbox;") and "default-src 'none'" in csp
    assert "<script>alert(1)" not in await r.text()  # the page as archived (escaped by the site itself)
    page = await client.get("/")
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]


async def test_detail_shows_diff_evidence_measures_and_timeline(served: Served) -> None:
    client, _, review = served
    items = review.queue(Query(where="http://site1.example.org/")).items
    minor = next(i for i in items if i.change == "minor")
    html = await (await client.get(f"/v/{minor.verdict_id}?where=http%3A%2F%2Fsite1.example.org%2F")).text()
    assert "<del>" in html and "<ins>" in html  # the year changed
    assert 'id="text-baseline"' in html and 'id="text-capture"' in html
    assert "Rights group 1" in html and "voted" in html and "tfintersection" in html
    assert html.count('class="cell ') == 4  # the seed's timeline strip
    assert "http://wayback.example/" in html  # URI-M links
    only = await (await client.get(f"/v/{minor.verdict_id}?changes=1")).text()
    assert only.count("…") > 0 and len(only) < len(html)


async def test_pin_a_baseline_rescores_and_republishes(served: Served) -> None:
    client, store, review = served
    token = _csrf(await (await client.get("/")).text())
    tl = review.timeline("gold:2")
    # a parked page cannot be a baseline: the engine refuses it, and so does the page (nothing changes)
    r = await client.post("/pin", data={"vid": tl[2].verdict_id, "csrf": token}, allow_redirects=False)
    assert r.status == 400 and "cannot be a baseline" in await r.text()
    assert review.pins() == {}
    pin = tl[1]  # the 2011 capture becomes the baseline
    r = await client.post("/pin", data={"vid": pin.verdict_id, "csrf": token}, allow_redirects=False)
    assert r.status == 303
    after = {i.verdict_id: i for i in review.timeline("gold:2")}
    assert after[pin.verdict_id].change == "baseline" and after[pin.verdict_id].version == 2
    v = store.get_verdict(pin.verdict_id)
    assert v is not None and v.version == 2 and v.reason == "pinned baseline capture"
    later = store.get_verdict(tl[3].verdict_id)
    assert later is not None
    assert later.baseline_time is not None and later.baseline_time.year == 2011  # scored against the pin now
    assert later.version == 2
    assert review.pins() == {"gold:2": pin.ts}


async def test_metrics_and_header_show_reviewed_and_agreement(served: Served) -> None:
    client, _, review = served
    items = review.queue(Query()).items
    review.set_label(items[0].verdict_id, 1, "off-topic")
    text = await (await client.get("/metrics")).text()
    assert "driftline_review_captures_reviewed 1.0" in text
    assert 'driftline_review_agreement_ratio{change="off-topic"} 1.0' in text
    html = await (await client.get("/")).text()
    assert re.search(r"reviewed <b>1</b>", html) and "agreement <b>100%</b>" in html


async def test_bulk_labelling_of_a_selection(served: Served) -> None:
    client, _, review = served
    html = await (await client.get("/?change=minor")).text()
    ids = re.findall(r'<tr data-verdict-id="([0-9a-f]+)"', html)
    assert len(ids) == 4
    form = [("csrf", _csrf(html)), ("label", "on-topic"), ("next", "/?change=minor"), *[("ids", i) for i in ids[:3]]]
    r = await client.post("/label", data=form, allow_redirects=False)
    assert r.status == 303 and r.headers["Location"] == "/?change=minor"
    labels = [review.get_label(i) for i in ids]
    assert [x.label if x else None for x in labels] == ["on-topic", "on-topic", "on-topic", None]
    # an htmx label click answers the row's controls and the header's figures (out of band)
    r = await client.post("/label", data={"vid": ids[3], "label": "off-topic"},
                          headers={"X-CSRF-Token": _csrf(html), "HX-Request": "true"})
    body = await r.text()
    assert 'id="stats" hx-swap-oob="true"' in body and "reviewed <b>4</b>" in body


async def test_next_and_previous_cross_page_ends(result: Path, tmp_path: Path) -> None:
    """j/k walk the filtered queue across its pages: the last row of page 1 leads to page 2's first."""
    from watcher.config import Config

    store, review, where, path = open_input(str(result), str(tmp_path / "p.sqlite"))
    cfg = Config.model_validate({"review": {"page_size": 3}})
    client = TestClient(TestServer(make_app(store, review, cfg, where=where, result=path), host="127.0.0.1"))
    await client.start_server()
    try:
        order = [i.verdict_id for i in review.queue(Query(size=8)).items]
        html = await (await client.get(f"/v/{order[2]}")).text()
        m = re.search(r'href="([^"]+)" id="next"', html)
        assert m and m.group(1) == f"/v/{order[3]}?page=2"
        html = await (await client.get(m.group(1))).text()
        m = re.search(r'href="([^"]+)" id="prev"', html)
        assert m and m.group(1) == f"/v/{order[2]}"
        html = await (await client.get(f"/v/{order[7]}?page=3")).text()
        assert 'id="next"' not in html and 'id="prev"' in html
    finally:
        await client.close()
        store.close()


async def test_verdicts_stored_meanwhile_join_the_queue(result: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A store a crawl is writing: a verdict stored after the page started appears without a restart."""
    import asyncio
    import dataclasses

    import watcher.review.server as server

    monkeypatch.setattr(server, "SYNC_S", 0.2)
    client, store, review = await _client(result, tmp_path)
    try:
        assert review.queue(Query()).total == 8
        v = store.get_verdict(review.queue(Query()).items[0].verdict_id)
        assert v is not None
        store.put_verdict(dataclasses.replace(v, verdict_id="f" * 32, history="gold:9"))
        for _ in range(50):
            await asyncio.sleep(0.1)
            if "all <b>9</b>" in await (await client.get("/")).text():
                break
        else:
            raise AssertionError("the new verdict never joined the queue")
    finally:
        await client.close()
        store.close()
