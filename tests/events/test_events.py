"""Capture events: every feed format, the real crawl.log and Kafka message, the skip rule."""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict, Unpack

import jsonschema
import pytest

from watcher.config import CanonicalConfig, EventsConfig
from watcher.errors import EventError
from watcher.events import (
    CaptureEvent,
    detect_format,
    event_schema,
    iter_crawl_log,
    normalise_digest,
    parse_event,
    should_skip,
    validate_event,
)
from watcher.events.skip import SKIP_REASONS
from watcher.model import payload_digest

CFG = EventsConfig()


# -- the real crawl.log -------------------------------------------------------


@pytest.fixture(scope="module")
def crawl_log_lines(shared_data: Path) -> list[str]:
    return (shared_data / "feeds" / "heritrix-crawl.log").read_text(encoding="utf-8").splitlines()


@pytest.mark.shared
def test_every_crawl_log_line_parses_and_gets_a_skip_decision(crawl_log_lines: list[str]) -> None:
    assert len(crawl_log_lines) == 76
    reasons: Counter[str | None] = Counter()
    for line in crawl_log_lines:
        event = parse_event(line.encode("utf-8"))  # auto-detected, as a Kafka value
        assert event.format == "crawl-log"
        assert event.crawler == "heritrix"
        assert event.timestamp.tzinfo is UTC
        assert event.timestamp.year == 2018
        reason = should_skip(event, CFG)
        assert reason is None or reason in SKIP_REASONS
        reasons[reason] += 1
    assert reasons == Counter(
        {"mimetype": 40, None: 15, "dns": 6, "robots_txt": 6, "status": 5, "status_negative": 4}
    )


@pytest.mark.shared
def test_crawl_log_fields_of_a_document_line(crawl_log_lines: list[str]) -> None:
    line = next(x for x in crawl_log_lines if " http://crawl-test-site.webarchive.org.uk/about/ " in x)
    e = parse_event(line)
    assert e.url == "http://crawl-test-site.webarchive.org.uk/about/"
    assert e.status_code == 200
    assert e.content_length == 7340
    assert e.hop_path == "L"
    assert e.via == "http://crawl-test-site.webarchive.org.uk/"
    assert e.mimetype == "text/html"
    # capture time is the fetch start of start+duration, not the log time
    assert e.timestamp == datetime(2018, 11, 26, 14, 27, 58, 390000, tzinfo=UTC)
    assert e.extra["log_time"].startswith("2018-11-26T14:27:58.705")
    assert e.digest == "sha1:6SAJZ6V2GJV3PVPKI5C54NSWG76TQZKP"
    assert e.seed is None  # source tag column is '-'
    assert e.annotations == ("usingCharsetInHTML:UTF-8", "ip:172.19.0.3")
    assert e.warc_filename == "BL-NPLD-TEST-20181126142746308-00001-15396~h3w~8443.warc.gz"
    assert (e.warc_offset, e.warc_length) == (2102, 3396)
    assert e.extra["extra_info"]["contentSize"] == 7575
    assert should_skip(e, CFG) is None


@pytest.mark.shared
def test_crawl_log_annotation_with_spaces_and_failure_lines(crawl_log_lines: list[str]) -> None:
    eicar = parse_event(next(x for x in crawl_log_lines if "eicar.com.txt" in x.split()[3]))
    assert eicar.annotations == ("ip:172.19.0.3", "1: stream: Eicar-Test-Signature FOUND")
    assert eicar.warc_filename is not None and eicar.warc_filename.startswith("BL-NPLD-TEST-VIRAL")
    assert should_skip(eicar, EventsConfig(skip_annotations=("1: stream:",))) == "annotation"

    rejected = parse_event(next(x for x in crawl_log_lines if x.split()[1] == "-5000"))
    assert rejected.status_code == -5000
    assert rejected.digest is None and rejected.warc_filename is None and rejected.content_length is None
    # no start+duration: the log time is the capture time
    assert rejected.timestamp == datetime(2018, 11, 26, 14, 27, 58, 329000, tzinfo=UTC)
    assert should_skip(rejected, CFG) == "status_negative"

    dns = parse_event(crawl_log_lines[0])
    assert dns.url.startswith("dns:") and dns.status_code == 1
    assert should_skip(dns, CFG) == "dns"


@pytest.mark.shared
def test_iter_crawl_log_over_the_file(crawl_log_lines: list[str]) -> None:
    items = list(iter_crawl_log([*crawl_log_lines, "", "garbage line"]))
    assert len(items) == 77
    assert all(isinstance(i, CaptureEvent) for i in items[:76])
    assert isinstance(items[76], EventError) and items[76].reason == "unparseable"


# -- the real Kafka message ----------------------------------------------------


@pytest.mark.shared
def test_real_archive_it_kafka_message(shared_data: Path) -> None:
    raw = (shared_data / "feeds" / "heritrix-kafka-archiveit.json").read_bytes()
    assert detect_format(raw) == "heritrix-kafka"
    e = parse_event(raw)
    assert e.format == "heritrix-kafka" and e.crawler == "heritrix"
    assert e.url == "http://www.kaosgl.com/resim/HomofobiKarsitiBulusma/trabzon05.jpg"
    assert e.timestamp == datetime(2015, 9, 3, 17, 57, 9, 637000, tzinfo=UTC)
    assert e.status_code == 200 and e.mimetype == "image/jpeg" and e.content_length == 29432
    assert e.digest == "sha1:3VU56HI3BTMDZBL2TP7SQYXITT7VEAJQ"
    assert e.seed == "http://www.kaosgl.com/" and e.via == "http://www.kaosgl.com/sayfa.php?id=4427"
    assert e.hop_path == "RLLLLLE" and e.job == "6003-20150902172136074"
    assert e.warc_filename == "ARCHIVEIT-6003-WEEKLY-JOB171310-20150903100014694-00002.warc.gz"
    assert e.warc_offset == 856320200 and e.warc_length is None
    assert e.annotations == ("duplicate:digest",) and e.is_duplicate
    for key, value in {"account_id": "877", "collection_id": "6003", "is_test_crawl": "false"}.items():
        assert e.extra[key] == value
    assert e.extra["extra_info"] == {} and e.extra["size"] == 29700
    assert "job_name" not in e.extra and "url" not in e.extra
    assert should_skip(e, CFG) == "mimetype"
    assert e.history_key() == "com,kaosgl)/resim/HomofobiKarsitiBulusma/trabzon05.jpg"
    assert e.history_key(CanonicalConfig(strip_www=False)).startswith("com,kaosgl,www)")


def test_heritrix_kafka_falls_back_to_timestamp() -> None:
    msg = {"url": "http://example.org/", "timestamp": "2015-09-03T17:57:10.707Z", "status_code": 200,
           "content_digest": "sha1:3VU56HI3BTMDZBL2TP7SQYXITT7VEAJQ", "mimetype": "text/html",
           "extra_info": {"warcFileRecordLength": 1234}, "warc_filename": "a.warc.gz", "warc_offset": "10"}
    e = parse_event(json.dumps(msg))
    assert e.format == "heritrix-kafka"
    assert e.timestamp == datetime(2015, 9, 3, 17, 57, 10, 707000, tzinfo=UTC)
    assert (e.warc_offset, e.warc_length) == (10, 1234)
    with pytest.raises(EventError) as err:
        parse_event(json.dumps({"url": "http://example.org/", "content_digest": "-", "status_code": 200}))
    assert err.value.reason == "missing_field"


# -- warcprox listener ---------------------------------------------------------

WARCPROX_MSG = {
    "url": "https://example.com/page",
    "host": "example.com",
    "http_method": "GET",
    "status_code": 200,
    "wire_bytes": 2345,
    "content_type": "text/html; charset=utf-8",
    "content_digest": "sha1:" + "ab" * 20,
    "content_length": 2000,
    "start_time_plus_duration": "20240102030405678+120",
    "annotations": "",
    "warc_filename": "WARCPROX-20240102030405-00000.warc.gz",
    "warc_offset": 1024,
    "warc_length": 900,
    "warc_content_type": "application/http;msgtype=response",
    "warc_type": "response",
    "warc_id": "<urn:uuid:1c1e5c38-5f5e-4c5c-9b1d-3f4b8e4d2a11>",
    "timestamp": "2024-01-02T03:04:05.900Z",
}


def test_warcprox_listener_message() -> None:
    e = parse_event(json.dumps(WARCPROX_MSG).encode())
    assert e.format == "warcprox" and e.crawler == "warcprox"
    assert e.timestamp == datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    assert e.mimetype == "text/html; charset=utf-8"
    assert (e.warc_filename, e.warc_offset, e.warc_length) == ("WARCPROX-20240102030405-00000.warc.gz", 1024, 900)
    # hex sha1 (warcprox without --base32) is normalised to base32
    assert e.digest == "sha1:" + base64.b32encode(bytes.fromhex("ab" * 20)).decode()
    assert e.digest == "sha1:VOV2XK5LVOV2XK5LVOV2XK5LVOV2XK5L"
    assert e.annotations == () and not e.is_duplicate
    assert e.extra["warc_id"].startswith("<urn:uuid:") and e.extra["wire_bytes"] == 2345
    assert should_skip(e, CFG) is None
    revisit = parse_event(json.dumps({**WARCPROX_MSG, "warc_type": "revisit"}), "warcprox")
    assert revisit.is_duplicate and revisit.annotations == ("duplicate:digest",)


def test_warcprox_crawl_log_line() -> None:
    line = (
        '2017-08-03T21:45:24.496Z   200       2189 https://autismcouncil.wisconsin.gov/ - - text/html - '
        "20170803214523617+365 sha1:PBS2CEF7B4OSEXZZF3QE2XN2VHYCPNPX https://autismcouncil.wisconsin.gov/ "
        'duplicate:digest {"warcFileOffset":942,"contentSize":2495,"warcFilename":"ARCHIVEIT-2159-TEST.warc.gz"}'
    )
    e = parse_event(line, "crawl-log")
    assert e.crawler == "warcprox"  # thread column is '-'
    assert e.seed == "https://autismcouncil.wisconsin.gov/"
    assert e.is_duplicate and e.warc_offset == 942 and e.warc_length is None


# -- driftline events ----------------------------------------------------------


def test_driftline_event_inline_base64_and_doi() -> None:
    body = b"<html><body>Hello</body></html>"
    msg = {
        "type": "driftline.capture",
        "url": "https://doi.example.org/landing/1",
        "timestamp": "20240501120000",
        "status_code": 200,
        "mimetype": "text/html",
        "content": base64.b64encode(body).decode(),
        "content_encoding": "base64",
        "doi": "10.1234/abc.def",
        "watch": {"id": "w-17", "name": "journal landing pages", "interval_s": 86400},
        "extra": {"publisher": "x"},
    }
    e = parse_event(json.dumps(msg))
    assert e.format == "driftline" and e.crawler == "driftline"
    assert e.content == body and e.content_encoding == "base64"
    assert e.doi == "10.1234/abc.def" and e.watch is not None and e.watch["id"] == "w-17"
    assert e.timestamp == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    cap = e.to_capture(e.content, source="inline")
    assert cap.content == body and cap.status == 200 and cap.content_type == "text/html"
    assert cap.effective_digest == payload_digest(body) and cap.source == "inline"


def test_driftline_event_variants_and_detection() -> None:
    text = parse_event('{"url": "http://a.example/", "timestamp": "2024-05-01T12:00:00+02:00", "content": "héllo"}')
    assert text.content == "héllo".encode() and text.timestamp.hour == 10
    ref = parse_event(json.dumps({"url": "http://a.example/", "timestamp": 1714564800,
                                  "warc_filename": "x.warc.gz", "warc_offset": 0, "digest": "sha1:" + "0" * 40}))
    assert ref.warc_offset == 0 and ref.digest == "sha1:" + "A" * 32
    live = parse_event(b'{"url": "http://a.example/", "timestamp": "2024-05-01T12:00:00Z"}')
    assert live.format == "driftline" and live.content is None and live.replay_uri is None


@pytest.mark.parametrize(
    ("msg", "reason", "needle"),
    [
        ({"timestamp": "20240501120000"}, "missing_field", "url"),
        ({"url": "http://a/"}, "missing_field", "timestamp"),
        ({"url": "http://a/", "timestamp": "20240501120000", "colour": "red"}, "invalid_field", "colour"),
        ({"url": "http://a/", "timestamp": "yesterday"}, "bad_timestamp", "timestamp"),
        ({"url": "http://a/", "timestamp": "20240501120000", "warc_offset": 5}, "missing_field", "warc_filename"),
        ({"url": "http://a/", "timestamp": "20240501120000", "warc_filename": "../../etc/passwd", "warc_offset": 0},
         "invalid_field", "warc_filename"),
        ({"url": "http://a/", "timestamp": "20240501120000", "content": "%%%", "content_encoding": "base64"},
         "invalid_field", "base64"),
        ({"url": "http://a/", "timestamp": "20240501120000", "doi": "not-a-doi"}, "invalid_field", "doi"),
        ({"url": "http://a/", "timestamp": "20240501120000", "watch": {"name": "no id"}}, "missing_field", "id"),
    ],
)
def test_driftline_event_errors(msg: dict[str, object], reason: str, needle: str) -> None:
    with pytest.raises(EventError) as err:
        parse_event(json.dumps(msg), "driftline")
    assert err.value.reason == reason
    assert needle in str(err.value)


@pytest.mark.shared
def test_round_trip_through_driftline_json(shared_data: Path) -> None:
    """Any parsed event re-serialised as driftline JSON validates and parses back to the same capture."""
    raw = (shared_data / "feeds" / "heritrix-kafka-archiveit.json").read_bytes()
    lines = (shared_data / "feeds" / "heritrix-crawl.log").read_text().splitlines()
    inline = _event(content=b"\x00binary\xff", doi="10.5555/xyz", watch={"id": "w1"}, status_code=200)
    for original in [parse_event(raw), inline, *(parse_event(x) for x in lines)]:
        doc = original.to_driftline()
        validate_event(doc)
        back = parse_event(json.dumps(doc))
        assert back.format == "driftline"
        for name in ("url", "timestamp", "status_code", "mimetype", "digest", "seed", "via", "hop_path", "job",
                     "warc_filename", "warc_offset", "warc_length", "content", "annotations", "doi", "watch"):
            assert getattr(back, name) == getattr(original, name), name


def test_schema_is_valid_and_documents_the_fields() -> None:
    schema = event_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert {"doi", "watch", "content", "replay_uri", "warc_filename"} <= set(schema["properties"])
    assert schema["required"] == ["url", "timestamp"]


# -- errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "fmt", "reason"),
    [
        (b"", "auto", "unparseable"),
        (None, "auto", "unparseable"),
        (b"\xff\xfe\x00garbage", "auto", "bad_encoding"),
        (b"{not json", "auto", "bad_json"),
        (b"[1, 2]", "driftline", "bad_json"),
        (b"hello world", "auto", "unparseable"),
        (b"2018-11-26T14:27:46.376Z 200 70", "crawl-log", "unparseable"),
        (b"line one\nline two", "auto", "unparseable"),
        (b'{"url": "http://a/"}', "nope", "unknown_format"),
        (b"2018-11-26T14:27:46.376Z 200 70 - P - text/html #1 - - - -", "auto", "missing_field"),
        (b"2018-11-26T14:27:46.376Z abc 70 http://a/ P - text/html #1 - - - -", "auto", "invalid_field"),
        (b'{"url": "http://a/", "status_code": "x", "content_digest": "-", "timestamp": "2015-09-03T17:57:10Z"}',
         "auto", "invalid_field"),
    ],
)
def test_unparseable_messages(value: bytes | None, fmt: str, reason: str) -> None:
    with pytest.raises(EventError) as err:
        parse_event(value, fmt)
    assert err.value.reason == reason


# -- skip rule -------------------------------------------------------------------


class EventFields(TypedDict, total=False):
    """The CaptureEvent fields a test gives ``_event`` (typed as in :class:`CaptureEvent`)."""

    status_code: int | None
    mimetype: str | None
    digest: str | None
    seed: str | None
    job: str | None
    replay_uri: str | None
    content: bytes | None
    annotations: tuple[str, ...]
    doi: str | None
    watch: Mapping[str, Any] | None


def _event(url: str = "http://example.org/page", **kw: Unpack[EventFields]) -> CaptureEvent:
    return CaptureEvent(url=url, timestamp=datetime(2024, 1, 1, tzinfo=UTC), **kw)


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (_event("dns:example.org"), "dns"),
        (_event("whois://example.org/"), "scheme"),
        (_event("mailto:someone@example.org"), "scheme"),
        (_event("ftp://example.org/file.txt"), "scheme"),
        (_event("screenshot:http://example.org/"), "scheme"),
        (_event("https://example.org/robots.txt"), "robots_txt"),
        (_event(status_code=-9998), "status_negative"),
        (_event(status_code=404), "status"),
        (_event(status_code=500), "status"),
        (_event(status_code=200, mimetype="image/png"), "mimetype"),
        (_event(status_code=200, mimetype="text/html; charset=ISO-8859-1"), None),
        (_event(status_code=301, mimetype="text/html"), None),
        (_event(status_code=200, mimetype="application/pdf"), None),
        (_event(status_code=200, mimetype="unknown"), None),
        (_event(), None),
        (_event("https://example.org/robots.txt/page"), None),
    ],
)
def test_should_skip(event: CaptureEvent, reason: str | None) -> None:
    assert should_skip(event, CFG) == reason


def test_should_skip_follows_configuration() -> None:
    dup = _event(status_code=200, mimetype="text/html", annotations=("duplicate:digest",))
    assert should_skip(dup, CFG) is None
    assert should_skip(dup, EventsConfig(skip_annotations=("duplicate",))) == "annotation"
    assert should_skip(_event(status_code=301), EventsConfig(accept_status=(200, 299))) == "status"
    assert should_skip(_event(mimetype="text/css"), EventsConfig(document_mimetypes=("text/css",))) is None


# -- model helpers -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, None),
        ("-", None),
        ("", None),
        ("sha1:3VU56HI3BTMDZBL2TP7SQYXITT7VEAJQ", "sha1:3VU56HI3BTMDZBL2TP7SQYXITT7VEAJQ"),
        ("SHA1:3vu56hi3btmdzbl2tp7sqyxitt7veajq", "sha1:3VU56HI3BTMDZBL2TP7SQYXITT7VEAJQ"),
        ("3VU56HI3BTMDZBL2TP7SQYXITT7VEAJQ", "sha1:3VU56HI3BTMDZBL2TP7SQYXITT7VEAJQ"),
        ("sha1:" + "ff" * 20, "sha1:" + "7" * 32),
        ("sha256:abc", "sha256:abc"),
    ],
)
def test_normalise_digest(raw: str | None, expected: str | None) -> None:
    assert normalise_digest(raw) == expected


def test_to_capture_and_position() -> None:
    e = _event(status_code=200, mimetype="text/html", digest="sha1:" + "ab" * 20, seed="http://example.org/",
               job="job1", annotations=("duplicate:digest",), replay_uri="http://wb.example/20240101000000/x")
    cap = e.to_capture(None)
    assert cap.content is None and cap.is_revisit and cap.digest == e.digest
    assert (cap.seed, cap.job, cap.status, cap.uri_m) == ("http://example.org/", "job1", 200, e.replay_uri)
    full = e.to_capture(b"x", "text/plain", 203, {"A": "b"}, source="warc")
    assert not full.is_revisit and full.status == 203 and full.content_type == "text/plain"
    assert full.headers == {"A": "b"} and full.source == "warc"
    placed = e.with_position("heritrix-crawl-log", 3, 42)
    assert placed.position == "heritrix-crawl-log[3]@42" and e.position == "-"
    assert placed.url == e.url
    naive = CaptureEvent(url="http://x/", timestamp=datetime(2024, 1, 1, 12))
    assert naive.timestamp.tzinfo is UTC


@pytest.mark.parametrize("stamp", [
    "20120101000000", "20121231235959999", "20120229120000", "19991231235959", "99991231235959",
    "20130229120000", "20121301000000", "20120100000000", "20120101240000", "20120101006000",
    "20120101000060", "00000101000000", "2012010100000", "201201010000001", "2012-01-01T00:00",
])
def test_digit_stamps_read_as_strptime_reads_them(stamp: str) -> None:
    """``YYYYmmddHHMMSS[SSS]`` is read field by field; an impossible date or time is no time."""
    from watcher.events.fields import parse_digits

    try:
        want: datetime | None = datetime.strptime(stamp[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        want = None
    if len(stamp) not in (14, 17) or not stamp.isdigit():
        want = None
    elif want is not None and len(stamp) == 17:
        want = want.replace(microsecond=int(stamp[14:]) * 1000)
    assert parse_digits(stamp) == want
