"""The demo crawl generator: a real WARC that reads back, and feed events that
agree with it byte for byte (offsets, digests, times)."""

from __future__ import annotations

import hashlib
import ipaddress
import itertools
from pathlib import Path

import pytest
from lxml import html as lxml_html
from warcio.archiveiterator import ArchiveIterator

from watcher.config import EventsConfig
from watcher.demo import SEEDS, DemoCrawl, build_demo_warc
from watcher.demo.crawl import CAPTURES_PER_SEED
from watcher.events import parse_event, should_skip
from watcher.model import payload_digest

HERITRIX_FIELDS = {
    "timestamp", "content_length", "size", "status_code", "url", "hop_path", "via", "mimetype", "thread",
    "start_time_plus_duration", "content_digest", "seed", "host", "annotations", "warc_filename", "warc_offset",
    "extra_info", "job_name", "account_id", "collection_id", "is_test_crawl",
}


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> DemoCrawl:
    return build_demo_warc(tmp_path_factory.mktemp("demo"))


def test_warc_reads_back_with_warcio(crawl: DemoCrawl) -> None:
    with open(crawl.path, "rb") as fh:
        recs = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"),
                 r.rec_headers.get_header("WARC-Payload-Digest"), r.content_stream().read())
                for r in ArchiveIterator(fh)]
    # warcinfo + dns: + robots.txt + 6 seeds x 5 captures
    assert len(recs) == 1 + 2 + len(SEEDS) * CAPTURES_PER_SEED == 33
    assert recs[0][0] == "warcinfo"
    assert [t for t, *_ in recs].count("revisit") == 1
    for rtype, uri, digest, payload in recs[1:]:
        assert uri
        if rtype == "response":
            assert digest == payload_digest(payload), uri
    assert len(crawl.records) == 32 and crawl.scored_events == 30


def test_every_event_points_at_its_record(crawl: DemoCrawl) -> None:
    assert len(crawl.events) == len(crawl.records)
    with open(crawl.path, "rb") as fh:
        for event, rec in zip(crawl.events, crawl.records, strict=True):
            assert set(event) == HERITRIX_FIELDS
            assert event["warc_filename"] == crawl.path.name and event["warc_offset"] == rec.offset
            fh.seek(event["warc_offset"])
            record = next(iter(ArchiveIterator(fh)))
            assert record.rec_headers.get_header("WARC-Target-URI") == event["url"]
            assert record.rec_headers.get_header("WARC-Payload-Digest") == event["content_digest"]
            # The WARC-Date is the fetch start of start_time_plus_duration.
            start = event["start_time_plus_duration"].split("+")[0]
            warc_date = record.rec_headers.get_header("WARC-Date")
            assert warc_date.replace("-", "").replace(":", "").replace("T", "").replace(".", "")[:17] == start
            if record.rec_type == "response" and not event["url"].startswith("dns:"):
                payload = record.content_stream().read()
                assert len(payload) == event["content_length"]
                assert hashlib.sha1(payload).digest() and payload_digest(payload) == event["content_digest"]
            ip = record.rec_headers.get_header("WARC-IP-Address")
            assert ipaddress.ip_address(ip).is_private  # documentation ranges only (TEST-NET)


def test_events_parse_and_prerequisites_are_skipped(crawl: DemoCrawl) -> None:
    cfg = EventsConfig()
    reasons = []
    for raw in crawl.events_jsonl().splitlines():
        ev = parse_event(raw, "heritrix-kafka")
        reasons.append(should_skip(ev, cfg))
        assert ev.job == "driftline-demo" and ev.crawler
    assert reasons[0] == "dns" and reasons[1] == "robots_txt"
    assert reasons[2:] == [None] * 30
    dup = [parse_event(r) for r in crawl.events_jsonl().splitlines() if '"duplicate:digest"' in r]
    assert len(dup) == 1 and dup[0].is_duplicate and dup[0].url == SEEDS[1].url


def test_pages_look_like_real_sites(crawl: DemoCrawl) -> None:
    by_seed: dict[str, list[bytes]] = {}
    for rec in crawl.records:
        if rec.capture >= 0:
            by_seed.setdefault(rec.url, []).append(rec.payload)
    assert set(by_seed) == {s.url for s in SEEDS}
    langs = set()
    for seed in SEEDS:
        pages = by_seed[seed.url]
        assert len(pages) == CAPTURES_PER_SEED
        first = lxml_html.fromstring(pages[0])
        langs.add(first.get("lang"))
        for tag in ("header", "nav", "main", "article", "aside", "footer"):
            assert first.find(f".//{tag}") is not None, (seed.name, tag)
        assert first.xpath('//section[@id="comments"]//li[@class="comment"]')
        # Every capture differs from the one before, except the deliberate revisit.
        changed = sum(1 for a, b in itertools.pairwise(pages) if a != b)
        assert changed == (CAPTURES_PER_SEED - 2 if seed.language == "fr" else CAPTURES_PER_SEED - 1)
    assert {"en", "fr", "es"} <= langs


def test_generation_is_deterministic(tmp_path: Path, crawl: DemoCrawl) -> None:
    """Same pages, digests, times and events every run (record ids are fresh UUIDs)."""
    again = build_demo_warc(tmp_path / "again.warc.gz")
    assert again.path.name == "again.warc.gz" and again.events[2]["warc_filename"] == "again.warc.gz"
    assert [(r.url, r.time, r.digest, r.payload) for r in again.records] == [
        (r.url, r.time, r.digest, r.payload) for r in crawl.records
    ]
    strip = ("warc_filename", "warc_offset")
    assert [{k: v for k, v in e.items() if k not in strip} for e in again.events] == [
        {k: v for k, v in e.items() if k not in strip} for e in crawl.events
    ]
