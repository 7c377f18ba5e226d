"""A corpus of bad events through the real broker and the real consumers: nothing
is lost, nothing is misreported.

Each bad event is followed by a good one.  Every produced message must end
as exactly one of: a verdict, a dead letter with the expected reason slug, or
a counted skip with the expected reason; every good event gets its verdict;
no bad input is reported as ``internal`` (that slug is for bugs); the
consumer never dies.  The outcome per kind is written as a table
(``corpus-outcomes.md`` in the test's temp folder, and to the path in
``DRIFTLINE_CORPUS_REPORT`` when set).
"""

from __future__ import annotations

import base64
import gzip
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from consumers.app import ConsumerApp
from consumers.client import read_topic
from tests.fixtures.kafka import KafkaNames, WarcRef, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker

pytestmark = pytest.mark.kafka

TS = "20240101000000"


@dataclass(frozen=True)
class Kind:
    name: str
    value: bytes | None
    expect: str  # "verdict", "dead:<reason>" or "skip:<reason>"
    key: bytes | None = None
    url: str | None = None  # the verdict's URL, for kinds expected to be scored


def _crawl_log(ref: WarcRef, *, url: str | None = None, status: str = "200", when: str = "2024-01-01T00:00:00.000Z",
               info: dict[str, Any] | None = None, digest: str | None = None) -> bytes:
    extra = info if info is not None else {"warcFilename": ref.filename, "warcFileOffset": ref.offset}
    fields = [when, status, "1000", url or ref.url, "L", ref.url, "text/html", "#001", f"{TS}000+100",
              digest or ref.digest, ref.url, "-", json.dumps(extra)]
    return " ".join(fields).encode()


def _warcprox(ref: WarcRef, **fields: Any) -> bytes:
    msg: dict[str, Any] = {
        "url": ref.url, "timestamp": "2024-01-01T00:00:00Z", "status_code": 200, "content_type": "text/html",
        "content_digest": ref.digest, "warc_filename": ref.filename, "warc_offset": ref.offset,
        "warc_type": "response", "size": 1000, "http_method": "GET",
    }
    msg.update(fields)
    return json.dumps(msg).encode()


def _driftline(url: str, **fields: Any) -> bytes:
    msg: dict[str, Any] = {"type": "driftline.capture", "url": url, "timestamp": "2024-01-01T00:00:00Z",
                           "mimetype": "text/html"}
    msg.update(fields)
    return json.dumps(msg).encode()


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _corpus(tmp_path: Path) -> tuple[list[Kind], list[WarcRef], Path]:
    """The bad kinds (with the WARC records the scorable ones point at) and the good events."""
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    special = {
        "bom": "http://bom.example.org/",
        "idn": "http://bücher.example.org/",
        "unicode_path": "http://path.example.org/ページ",
        "dupkey": "http://dupkey.example.org/",
        "start_garbage": "http://start.example.org/",
        "digest_wrong": "http://digestwrong.example.org/",
        "crawl_log": "http://crawllog.example.org/",
        "warcprox": "http://warcprox.example.org/",
        "warcprox_revisit": "http://revisit.example.org/",
        "binary_key": "http://binkey.example.org/",
        "empty_key": "http://emptykey.example.org/",
        "mime_lies": "http://mimelie.example.org/",
        "warc_len_short": "http://shortlen.example.org/",
        "status_str": "http://statusstr.example.org/",
        "epoch": "http://epoch.example.org/",
        "extra_fields": "http://extra.example.org/",
        "crawl_log_clamav": "http://clamav.example.org/",
        "bad_base": "http://badbase.example.org/",  # what the bad heritrix kinds are variations of
    }
    caps = [(url, TS, page_html(300 + i)) for i, url in enumerate(special.values())]
    caps.append(("http://other.example.org/", TS, page_html(299)))
    refs = write_warc(warcs / "CORPUS-00001.warc.gz", caps)
    by = dict(zip(special, refs, strict=False))
    other = refs[-1]
    goods_caps = [(f"http://good{i}.example.org/", TS, page_html(i)) for i in range(128)]
    goods = write_warc(warcs / "GOOD-00001.warc.gz", goods_caps)
    size = (warcs / "CORPUS-00001.warc.gz").stat().st_size
    any_ref = by["bad_base"]
    hm = heritrix_message

    def h(name: str, expect: str, **fields: Any) -> Kind:
        return Kind(name, hm(any_ref, **fields), expect)

    html = page_html(7).decode()
    kinds = [
        # -- framing and encodings
        Kind("empty value", b"", "dead:unparseable"),
        Kind("null value (tombstone)", None, "dead:unparseable", key=b"tomb"),
        Kind("whitespace only", b"  \n\t ", "dead:unparseable"),
        Kind("binary garbage", bytes(range(256)) * 4, "dead:bad_encoding"),
        Kind("latin-1 JSON", json.dumps({"url": "http://caf\u00e9.example.org/"}, ensure_ascii=False)
             .encode("latin-1"), "dead:bad_encoding"),
        Kind("UTF-16 JSON with BOM", hm(any_ref).decode().encode("utf-16"), "dead:bad_encoding"),
        Kind("UTF-8 BOM + heritrix JSON", b"\xef\xbb\xbf" + hm(by["bom"]), "verdict", url=by["bom"].url),
        Kind("gzip-compressed JSON", gzip.compress(hm(any_ref)), "dead:bad_encoding"),
        Kind("overlong UTF-8", b'{"url": "http://a.example.org/\xc0\xaf"}', "dead:bad_encoding"),
        Kind("CESU-8 surrogate bytes", b'{"url": "http://a.example.org/\xed\xa0\x80"}', "dead:bad_encoding"),
        Kind("lone surrogate in url", hm(any_ref, url="http://a.example.org/\ud800"), "dead:bad_encoding"),
        Kind("lone surrogate in seed", hm(any_ref, seed="\udfff"), "dead:bad_encoding"),
        Kind("lone surrogate in a JSON key", hm(any_ref, **{"x\udc80": 1}), "dead:bad_encoding"),
        Kind("NUL in url", hm(any_ref, url="http://a.example.org/\u0000x"), "dead:bad_url"),
        Kind("huge non-JSON value (900 kB)", b"x" * 900_000, "dead:unparseable"),
        # -- JSON
        Kind("truncated JSON", hm(any_ref)[:60], "dead:bad_json"),
        Kind("JSON array", b"[1, 2, 3]", "dead:bad_json"),
        Kind("JSON string", b'"http://a.example.org/"', "dead:unparseable"),
        Kind("JSON number", b"42", "dead:unparseable"),
        Kind("JSON null", b"null", "dead:unparseable"),
        Kind("JSON nested 100k deep", hm(any_ref)[:-1] + b', "deep": ' + _nested(100_000).encode() + b"}",
             "dead:bad_json"),
        Kind("JSON nested 40 deep", hm(any_ref)[:-1] + b', "deep": ' + _nested(40).encode() + b"}", "dead:bad_json"),
        Kind("5,000-digit integer", hm(any_ref)[:-1] + b', "content_length": ' + b"9" * 5000 + b"}", "dead:bad_json"),
        Kind("4,000-digit warc_offset", hm(any_ref)[:-1] + b', "warc_offset": ' + b"9" * 4000 + b"}",
             "dead:invalid_field"),
        Kind("NaN", hm(any_ref)[:-1] + b', "status_code": NaN}', "dead:bad_json"),
        Kind("Infinity", hm(any_ref)[:-1] + b', "size": Infinity}', "dead:bad_json"),
        Kind("-Infinity", hm(any_ref)[:-1] + b', "size": -Infinity}', "dead:bad_json"),
        Kind("float overflow 1e999", hm(any_ref)[:-1] + b', "size": 1e999}', "dead:bad_json"),
        Kind("duplicate keys (last wins)", hm(by["dupkey"])[:-1] + b', "url": "' + by["dupkey"].url.encode() + b'"}',
             "verdict", url=by["dupkey"].url),
        Kind("trailing garbage", hm(any_ref) + b" xyz", "dead:bad_json"),
        Kind("two JSON objects", hm(any_ref) + b"\n" + hm(any_ref), "dead:bad_json"),
        Kind("JSON with a comment", b'{"url": "http://a.example.org/" /* c */}', "dead:bad_json"),
        Kind("single-quoted JSON", b"{'url': 'http://a.example.org/'}", "dead:bad_json"),
        # -- URLs
        h("url missing", "dead:missing_field", url=None),
        h("url empty", "dead:missing_field", url=""),
        h("url a number", "dead:bad_url", url=42),
        h("url a list", "dead:bad_url", url=["http://a.example.org/"]),
        h("url an object", "dead:bad_url", url={"href": "http://a.example.org/"}),
        h("url with a space", "dead:bad_url", url="http://a.example.org/a b"),
        h("url with a tab", "dead:bad_url", url="http://a.example.org/a\tb"),
        h("url without scheme", "dead:bad_url", url="a.example.org/page"),
        h("url without host", "dead:bad_url", url="http:///page"),
        h("url with a broken IPv6 host", "dead:bad_url", url="http://[::1/"),
        h("url with port 99999", "dead:bad_url", url="http://a.example.org:99999/"),
        h("url of 9,000 characters", "dead:bad_url", url="http://a.example.org/" + "a" * 9000),
        h("javascript: url", "skip:scheme", url="javascript:alert(1)"),
        h("data: url", "skip:scheme", url="data:text/html,<h1>x</h1>"),
        h("file: url", "skip:scheme", url="file:///etc/passwd"),
        h("mailto: url", "skip:scheme", url="mailto:a@example.org"),
        h("dns: url", "skip:dns", url="dns:example.org"),
        h("robots.txt", "skip:robots_txt", url="http://a.example.org/robots.txt"),
        Kind("IDN host", hm(by["idn"]), "verdict", url=by["idn"].url),
        Kind("unicode path", hm(by["unicode_path"]), "verdict", url=by["unicode_path"].url),
        # -- status, MIME type, annotations
        h("status 404", "skip:status", status_code=404),
        h("status -9998", "skip:status_negative", status_code=-9998),
        h("status 'abc'", "dead:invalid_field", status_code="abc"),
        h("status true", "dead:invalid_field", status_code=True),
        h("status a list", "dead:invalid_field", status_code=[200]),
        h("status 3,000 digits as a string", "dead:invalid_field", status_code="2" * 3000),
        Kind("status '200' as a string", hm(by["status_str"], status_code="200"), "verdict", url=by["status_str"].url),
        h("mimetype image/png", "skip:mimetype", mimetype="image/png"),
        h("mimetype an object", "skip:mimetype", mimetype={"type": "text/html"}),
        # -- timestamps
        h("no timestamp at all", "dead:missing_field", timestamp=None, start_time_plus_duration=None),
        h("timestamp 'yesterday'", "dead:bad_timestamp", timestamp="yesterday", start_time_plus_duration=None),
        h("timestamp 9999-12-31T23:59:59-05:00", "dead:bad_timestamp", timestamp="9999-12-31T23:59:59-05:00",
          start_time_plus_duration=None),
        h("timestamp year 0", "dead:bad_timestamp", timestamp="0000-01-01T00:00:00Z", start_time_plus_duration=None),
        h("timestamp year 9999", "dead:bad_timestamp", timestamp="9999-12-31T23:59:59Z", start_time_plus_duration=None),
        h("timestamp epoch 1e20", "dead:bad_timestamp", timestamp=1e20, start_time_plus_duration=None),
        h("timestamp epoch -1", "dead:bad_timestamp", timestamp=-1, start_time_plus_duration=None),
        h("timestamp an object", "dead:bad_timestamp", timestamp={"t": 1}, start_time_plus_duration=None),
        h("timestamp true", "dead:bad_timestamp", timestamp=True, start_time_plus_duration=None),
        h("timestamp February 30", "dead:bad_timestamp", timestamp="2024-02-30T00:00:00Z",
          start_time_plus_duration=None),
        h("timestamp of 1,000 characters", "dead:bad_timestamp", timestamp="2" * 1000, start_time_plus_duration=None),
        Kind("start_time_plus_duration garbage, timestamp good",
             hm(by["start_garbage"], start_time_plus_duration="x+y"), "verdict", url=by["start_garbage"].url),
        Kind("timestamp as epoch seconds", hm(by["epoch"], timestamp=1704067200, start_time_plus_duration=None),
             "verdict", url=by["epoch"].url),
        # -- digests
        h("digest of 100 kB", "dead:bad_digest", content_digest="sha1:" + "A" * 100_000),
        h("digest with a space", "dead:bad_digest", content_digest="sha1:AB CD"),
        h("digest a number", "dead:bad_digest", content_digest=12345),
        h("digest with unicode", "dead:bad_digest", content_digest="sha1:ÄÖÜ"),
        Kind("digest well-formed but wrong", hm(by["digest_wrong"], content_digest="sha1:" + "B" * 32), "verdict",
             url=by["digest_wrong"].url),
        # -- WARC references
        h("WARC file missing", "dead:warc_missing", warc_filename="NOPE-00001.warc.gz"),
        h("WARC offset past the end", "dead:warc_unreadable", warc_offset=size + 10_000),
        h("WARC offset negative", "dead:bad_warc_ref", warc_offset=-5),
        h("WARC offset inside a record", "dead:warc_unreadable", warc_offset=any_ref.offset + 7),
        h("WARC name with path traversal", "dead:bad_warc_name", warc_filename="../../../etc/passwd"),
        h("WARC name absolute", "dead:bad_warc_name", warc_filename="/etc/passwd"),
        h("WARC offset 'abc'", "dead:invalid_field", warc_offset="abc"),
        h("WARC name a number", "dead:warc_missing", warc_filename=12345),
        h("WARC record of another URL", "dead:warc_mismatch", warc_offset=other.offset),
        h("WARC record length negative", "dead:bad_warc_ref", warc_length=-1),
        Kind("WARC record length too short", hm(by["warc_len_short"], warc_length=10), "dead:warc_unreadable"),
        # -- crawl.log lines
        Kind("crawl.log line", _crawl_log(by["crawl_log"]), "verdict", url=by["crawl_log"].url),
        Kind("crawl.log line with ClamAV annotation", _crawl_log(by["crawl_log_clamav"]).replace(
            b" - {", b" 1: stream: Eicar-Test-Signature FOUND {"), "verdict", url=by["crawl_log_clamav"].url),
        Kind("crawl.log too few fields", b"2024-01-01T00:00:00.000Z 200 1000 http://a.example.org/",
             "dead:unparseable"),
        Kind("crawl.log bad time", _crawl_log(any_ref, when="not-a-time"), "dead:bad_timestamp"),
        Kind("crawl.log status 'abc'", _crawl_log(any_ref, status="abc"), "dead:invalid_field"),
        Kind("crawl.log negative warcFileOffset", _crawl_log(any_ref, info={"warcFilename": any_ref.filename,
                                                                            "warcFileOffset": -1}),
             "dead:bad_warc_ref"),
        Kind("crawl.log two lines", _crawl_log(any_ref) + b"\n" + _crawl_log(any_ref), "dead:unparseable"),
        Kind("crawl.log url with a surrogate escape", _crawl_log(any_ref, url="http://a.example.org/\\ud800"),
             "dead:warc_mismatch"),
        Kind("crawl.log bad digest", _crawl_log(any_ref, digest="sha1:" + "!" * 20), "dead:bad_digest"),
        # -- warcprox listener JSON
        Kind("warcprox message", _warcprox(by["warcprox"]), "verdict", url=by["warcprox"].url),
        Kind("warcprox revisit", _warcprox(by["warcprox_revisit"], warc_type="revisit"), "verdict",
             url=by["warcprox_revisit"].url),
        Kind("warcprox without url", _warcprox(any_ref, url=None), "dead:missing_field"),
        Kind("warcprox negative warc_length", _warcprox(any_ref, warc_length=-3), "dead:bad_warc_ref"),
        # -- driftline events
        Kind("driftline inline HTML", _driftline("http://inline.example.org/", content=html), "verdict",
             url="http://inline.example.org/"),
        Kind("driftline empty inline content", _driftline("http://emptyinline.example.org/", content=""), "verdict",
             url="http://emptyinline.example.org/"),
        Kind("driftline PNG bytes said to be HTML", _driftline(
            "http://png.example.org/", content=base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8).decode(),
            content_encoding="base64"), "verdict", url="http://png.example.org/"),
        Kind("driftline HTML said to be a PDF", _driftline(by["mime_lies"].url, content=html,
                                                           mimetype="application/pdf"), "verdict",
             url=by["mime_lies"].url),
        Kind("driftline unknown field", _driftline("http://a.example.org/", colour="red"), "dead:invalid_field"),
        Kind("driftline bad base64", _driftline("http://a.example.org/", content="!!!", content_encoding="base64"),
             "dead:invalid_field"),
        Kind("driftline bad timestamp", _driftline("http://a.example.org/", timestamp="soon"), "dead:bad_timestamp"),
        Kind("driftline url with a lone surrogate", _driftline("http://a.example.org/\ud800"), "dead:bad_encoding"),
        Kind("driftline url a number", _driftline(7), "dead:bad_url"),  # type: ignore[arg-type]  # a number on purpose
        Kind("driftline watch of the wrong type", _driftline("http://a.example.org/", watch="yes"),
             "dead:invalid_field"),
        Kind("driftline watch id of 10,000 characters (a store key)",
             _driftline("http://a.example.org/", watch={"id": "w" * 10_000}), "dead:invalid_field"),
        Kind("driftline with no source of bytes", _driftline("http://nosource.example.org/"), "dead:no_source"),
        Kind("driftline 900 kB inline page", _driftline("http://bigpage.example.org/", content="<p>w</p>" * 110_000),
             "dead:too_large", url="http://bigpage.example.org/"),
        # -- keys and extras
        Kind("binary key", hm(by["binary_key"]), "verdict", key=b"\xff\x00\xfe", url=by["binary_key"].url),
        Kind("empty key", hm(by["empty_key"]), "verdict", key=b"", url=by["empty_key"].url),
        Kind("100 kB key on a bad event", b"{", "dead:bad_json", key=b"k" * 100_000),
        Kind("unknown extra fields kept",
             hm(by["extra_fields"], account_id=1, collection_id="x", is_test_crawl="false"), "verdict",
             url=by["extra_fields"].url),
    ]
    return kinds, goods, warcs


def any_ref_url(kinds: list[Kind]) -> str:
    return "http://badbase.example.org/"


def _table(rows: list[tuple[str, str, str]]) -> str:
    lines = ["| # | kind | expected | outcome |", "|--:|---|---|---|"]
    lines += [f"| {i} | {name} | {expect} | {got} |" for i, (name, expect, got) in enumerate(rows, 1)]
    return "\n".join(lines) + "\n"


async def _produce(boot: str, topic: str, items: list[tuple[bytes | None, bytes | None]]) -> list[int]:
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=boot, acks="all", max_request_size=2_000_000)
    await producer.start()
    try:
        futures = [await producer.send(topic, value=v, key=k) for k, v in items]
        return [int(m.offset) for m in [await f for f in futures]]
    finally:
        await producer.stop()


async def test_bad_event_corpus_nothing_lost_nothing_misreported(
    kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path
) -> None:
    kinds, goods, warcs = _corpus(tmp_path)
    assert len(kinds) >= 80 and len(goods) >= len(kinds)
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, partitions=1,
                        warc_dirs=(str(warcs),), extra={"acquire": {"live": {"max_bytes": 500_000}}})
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    items: list[tuple[bytes | None, bytes | None]] = []
    for kind, good in zip(kinds, goods, strict=False):
        items += [(kind.key, kind.value), (None, heritrix_message(good))]
    async with ConsumerApp(cfg) as app:
        offsets = await _produce(boot, crawl, items)
        assert await app.wait_caught_up(timeout_s=180)
        verdicts = await read_topic(boot, k.results_topic, timeout_s=30, idle_s=1.5)
        dead = await read_topic(boot, k.dead_letter_topic, timeout_s=30, idle_s=1.5)
        skipped = {r: int(app.metrics.events_skipped.labels(reason=r)._value.get())
                   for r in {kd.expect.split(":", 1)[1] for kd in kinds if kd.expect.startswith("skip:")}}
        assert app.router is not None and app.scorer is not None
        assert app.router._loop_task is not None and not app.router._loop_task.done()
        assert app.scorer._loop_task is not None and not app.scorer._loop_task.done()

    dead_at: dict[int, list[dict[str, Any]]] = {}
    for d in dead:
        body = d["value"]
        assert body["topic"] == crawl
        dead_at.setdefault(int(body["offset"]), []).append(body)
    verdict_urls = Counter(v["value"]["url"] for v in verdicts)

    rows: list[tuple[str, str, str]] = []
    unexplained: list[str] = []
    for i, kind in enumerate(kinds):
        offset = offsets[2 * i]
        letters = dead_at.pop(offset, [])
        outcomes = [f"dead:{b['reason']}" for b in letters]
        if kind.url is not None and verdict_urls.get(kind.url):
            outcomes += ["verdict"] * verdict_urls[kind.url]
        if not outcomes:
            outcomes = [kind.expect if kind.expect.startswith("skip:") else "NOTHING"]
        got = " + ".join(outcomes)
        rows.append((kind.name, kind.expect, got))
        if got != kind.expect:
            unexplained.append(f"{kind.name}: expected {kind.expect}, got {got}")
        for body in letters:  # the original bytes and key ride along, whole or cut at the cap
            value = base64.b64decode(body["value_b64"]) if body.get("value_b64") is not None else None
            if kind.value is not None and len(kind.value) <= 512 * 1024:
                assert value == kind.value, kind.name
            if kind.key is not None and len(kind.key) <= 64 * 1024:
                assert base64.b64decode(body["key_b64"]) == kind.key, kind.name
            assert body["message"]
    report = _table(rows)
    (tmp_path / "corpus-outcomes.md").write_text(report, encoding="utf-8")
    if os.environ.get("DRIFTLINE_CORPUS_REPORT"):
        Path(os.environ["DRIFTLINE_CORPUS_REPORT"]).write_text(report, encoding="utf-8")
    print(f"\ncorpus: {len(kinds)} kinds of bad event\n{report}")

    # No bad variation of the base event was scored (it would have been attributed to no kind).
    assert verdict_urls.get(any_ref_url(kinds)) is None
    # Every good event got its verdict (exactly one), and no good event was dead-lettered.
    missing = [g.url for g in goods[:len(kinds)] if verdict_urls.get(g.url) != 1]
    assert missing == [], f"good events without exactly one verdict: {missing[:5]}"
    assert dead_at == {}, f"dead letters for good events: {sorted(dead_at)[:5]}"
    # No bad input reported as a bug, and every kind ended as expected.
    assert not [r for r in rows if "internal" in r[2]]
    assert unexplained == [], "\n".join(unexplained)
    # Skips are counted with the expected reasons (none silently dropped).
    expected_skips = Counter(kd.expect.split(":", 1)[1] for kd in kinds if kd.expect.startswith("skip:"))
    assert skipped == dict(expected_skips)
