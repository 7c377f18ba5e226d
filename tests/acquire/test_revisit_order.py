"""Revisits in any order: batch's verdict, never a dead letter, whatever order the feed brings.

pywb-style WARCs (originals, revisits referring by target URI and date, by
record id, by digest alone, a URL-agnostic revisit, revisits of an image) are
written here with warcio; ``driftline feed``'s event builder announces them as
Heritrix does (unkeyed, no extra fields); twenty copies, each under its own
host and in its own shuffled order, go through the real router and scorer on
the test broker.  The newest verdict of every capture must equal the batch
scan of the same WARCs, with no dead letter, and the image revisits are
skipped by their type.  The real pywb sample (``example.warc.gz`` and its
CDXJ) is fed revisit first, when the shared data is present.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, page_html, stream_config
from watcher.broker import EmbeddedBroker
from watcher.config import Config
from watcher.feed import FeedBuilder
from watcher.model import payload_digest
from watcher.scan import score_histories
from watcher.sources import iter_histories

pytestmark = pytest.mark.kafka

ORDERS = 20
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def _iso(ts: str) -> str:
    return f"{ts[0:4]}-{ts[4:6]}-{ts[6:8]}T{ts[8:10]}:{ts[10:12]}:{ts[12:14]}Z"


def _http(mime: str, size: int) -> StatusAndHeaders:
    return StatusAndHeaders("200 OK", [("Content-Type", mime), ("Content-Length", str(size))], protocol="HTTP/1.1")


def write_pywb_style(path: Path, host: str) -> None:
    """Originals and revisits of one small crawl of ``host`` (a WARC as pywb's samples are written)."""
    a, b, c, d, img = (f"http://{host}/{p}" for p in ("report", "news", "copy-of-news", "about", "logo.png"))
    page_a, page_a2, page_b, page_d, parked = (page_html(1), page_html(1, variant=1), page_html(2), page_html(3),
                                               page_html(0, off_topic=True))
    with path.open("wb") as fh:
        w = WARCWriter(fh, gzip=True)

        def response(url: str, ts: str, payload: bytes, mime: str = "text/html; charset=utf-8") -> str:
            rec = w.create_warc_record(url, "response", payload=io.BytesIO(payload),
                                       http_headers=_http(mime, len(payload)),
                                       warc_headers_dict={"WARC-Date": _iso(ts)})
            w.write_record(rec)
            return str(rec.rec_headers.get_header("WARC-Record-ID"))

        def revisit(url: str, ts: str, payload: bytes, refers_uri: str, refers_ts: str, *, record_id: str | None = None,
                    mime: str = "text/html; charset=utf-8", by_target: bool = True) -> None:
            headers = {"WARC-Date": _iso(ts)}
            if record_id:
                headers["WARC-Refers-To"] = record_id
            rec = w.create_revisit_record(url, payload_digest(payload), refers_uri, _iso(refers_ts),
                                          http_headers=_http(mime, len(payload)), warc_headers_dict=headers)
            if not by_target:  # a digest-only revisit (what Heritrix writes without the WARC/1.1 references)
                rec.rec_headers.remove_header("WARC-Refers-To-Target-URI")
                rec.rec_headers.remove_header("WARC-Refers-To-Date")
            w.write_record(rec)

        id_a = response(a, "20240101000000", page_a)
        revisit(a, "20240201000000", page_a, a, "20240101000000")
        revisit(a, "20240301000000", page_a, a, "20240101000000", record_id=id_a)
        response(a, "20240401000000", page_a2)
        revisit(a, "20240501000000", page_a2, a, "20240401000000", by_target=False)
        response(b, "20240101000100", page_b)
        revisit(c, "20240102000000", page_b, b, "20240101000100")  # URL-agnostic: another URL's payload
        response(d, "20240101000200", page_d)
        response(d, "20240201000200", parked)
        revisit(d, "20240301000200", parked, d, "20240201000200")
        response(img, "20240101000300", PNG, mime="image/png")
        revisit(img, "20240201000300", PNG, img, "20240101000300", mime="image/png")


def batch_verdicts(paths: list[str], cfg: Config) -> dict[str, tuple[Any, ...]]:
    """verdict id -> (status, change, reason, had a baseline), as `driftline scan` says."""
    bcfg = cfg.model_copy(update={"scan": cfg.scan.model_copy(update={"workers": 1, "progress": False})})
    # Images are not the stream's business (skipped by type); batch's own handling of them is not compared here.
    return {v.verdict_id: (v.status, v.change, v.reason, v.baseline_time is not None)
            for h in score_histories(iter_histories(paths, bcfg), bcfg, workers=1) for v in h.verdicts
            if not v.url.endswith(".png")}


# verdict id -> (URL, capture time to the second) of the last stream_verdicts call's captures
_WHERE: dict[str, tuple[str, str]] = {}


def _where(verdict_id: str) -> tuple[str, str]:
    return _WHERE[verdict_id]


async def stream_verdicts(cfg: Config, broker: EmbeddedBroker, messages: list[bytes]) -> tuple[
        dict[str, tuple[Any, ...]], list[dict[str, Any]], float]:
    """Feed ``messages`` in this order; the newest verdict of each capture, the dead letters, images skipped."""
    boot, k = broker.bootstrap_servers, cfg.kafka
    await produce(boot, next(iter(k.input_topics)), messages)
    async with ConsumerApp(cfg) as app:
        assert await app.wait_caught_up(timeout_s=300)
        skipped = app.metrics.events_skipped.labels(reason="mimetype")._value.get()
    out = await read_topic(boot, k.results_topic, timeout_s=60, idle_s=2.0)
    dead = await read_topic(boot, k.dead_letter_topic, timeout_s=5, idle_s=0.5)
    newest: dict[str, dict[str, Any]] = {}
    for m in out:
        v = m["value"]
        if v["verdict_id"] not in newest or v["version"] >= newest[v["verdict_id"]]["version"]:
            newest[v["verdict_id"]] = v
    got = {vid: (v["status"], v["change"], v["reason"], v["baseline_time"] is not None) for vid, v in newest.items()}
    _WHERE.clear()
    _WHERE.update({vid: (v["url"], v["capture_time"][:19]) for vid, v in newest.items()})
    return got, dead, skipped


@pytest.mark.timeout(900)
async def test_revisits_in_twenty_shuffled_orders_equal_batch(kafka_broker: EmbeddedBroker, kafka_names: KafkaNames,
                                                             tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(warcs),))
    paths, messages = [], []
    for i in range(ORDERS):
        path = warcs / f"CRAWL-{i:02d}-00000.warc.gz"
        write_pywb_style(path, f"site{i}.example.org")
        paths.append(str(path))
        builder = FeedBuilder(cfg, "heritrix-kafka", warn=pytest.fail)
        order = [m.value for m in builder.messages([str(path)])]
        assert all(m.key is None for m in builder.messages([str(path)]))  # unkeyed, as Heritrix sends them
        random.Random(i).shuffle(order)  # each copy in an order of its own
        messages.append(order)
    # the copies interleaved: copy i's events keep their shuffled order among themselves
    rng = random.Random(99)
    queue = [list(m) for m in messages]
    backlog: list[bytes] = []
    while any(queue):
        backlog.append(rng.choice([q for q in queue if q]).pop(0))
    orders = {tuple(m) for m in messages}
    assert len(orders) == ORDERS  # twenty different orders

    got, dead, skipped = await stream_verdicts(cfg, kafka_broker, backlog)
    want = batch_verdicts(paths, cfg)

    assert dead == [], [d["value"]["reason"] for d in dead][:5]
    assert len(want) == ORDERS * 10  # 12 records a copy, the image and its revisit not documents
    assert got == want
    assert skipped == 2 * ORDERS  # revisits of non-documents are still skipped by their type
    changes = {v[1] for v in want.values()}
    assert {"baseline", "unchanged", "off-topic"} <= changes or {"baseline", "unchanged"} <= changes


@pytest.mark.shared
@pytest.mark.timeout(300)
async def test_pywb_example_revisit_first_equals_batch(shared_data: Path, kafka_broker: EmbeddedBroker,
                                                       kafka_names: KafkaNames, tmp_path: Path) -> None:
    """The issue's case: pywb's example (an original and its revisit) from its CDXJ, revisit first, fresh store."""
    warc_dir = shared_data / "warc"
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(warc_dir),))
    builder = FeedBuilder(cfg, "heritrix-kafka", warn=pytest.fail)
    messages = [m.value for m in builder.messages([str(warc_dir / "example.cdxj"), str(warc_dir / "dupes.cdxj")])]
    messages.reverse()  # every revisit before its original
    got, dead, _ = await stream_verdicts(cfg, kafka_broker, messages)
    want = batch_verdicts([str(warc_dir / "example.warc.gz")], cfg)
    assert dead == [], [d["value"]["message"] for d in dead][:5]
    assert {vid: got[vid] for vid in want if vid in got} == want and len(want) == 3
    # dupes.warc.gz's revisits repeat captures of the day before, kept in iana.warc.gz beside it: found there
    # (batch, given dupes.warc.gz alone, has no payload for them: "no content").  Not asked of iana.org's
    # redirect, captured in the same second as the www.iana.org page of its history: which of the two the
    # stream reads first depends on the arrival order, and only the first reads "no baseline yet".
    revisits = {(json.loads(m)["url"], json.loads(m)["timestamp"][:19]) for m in messages
                if "duplicate:digest" in (json.loads(m).get("annotations") or "")}
    assert len(got) == 7 and len(revisits) >= 2
    assert not [v for vid, v in got.items() if "no content" in v[2] and _where(vid) in revisits]
    assert [v[1] for v in got.values()].count("unchanged") >= 2
    assert ("on-topic", "baseline", "baseline capture", True) in got.values()
