"""The demo crawl: six seeds captured five times each, written as a real WARC
plus the Heritrix ``KafkaCrawlLogFeed`` events a crawler would have emitted.

Why generate rather than ship files: ``driftline demo`` must work on a fresh
clone with nothing but the package; the project's own data
(``../shared/data``) is never part of the repository.  Generating also lets the
WARC and the events agree byte for byte (offsets, digests, times).

The seeds, each captured fortnightly from 2 September 2025:

* Riverwatch Alliance (English NGO): always on topic while ads, dates,
  comments, related links and the news sidebar change; one update paragraph.
* Solidarité Paysanne (French NGO): always on topic; capture 2 is
  byte-identical to the first, so the crawler wrote a revisit record.
* Red Agua Andina (Spanish NGO): oscillates: capture 3 is a database error
  page served with status 200, then the site is back.
* Harbourtown Public Library: the domain lapses and is parked ("for sale").
* City Jazz Festival: the hosting account is suspended.
* Millbrook Local History Society: the expired domain now hosts an affiliate
  blog: drifted, unrelated content.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from ..model import payload_digest, ts14, utc
from .content_en import jazz_page, library_page, millbrook_page, riverwatch_page
from .content_fr_es import red_agua_page, solidarite_page

JOB_NAME = "driftline-demo"
CRAWL_START = datetime(2025, 9, 2, 3, 0, tzinfo=UTC)
CRAWL_EVERY = timedelta(days=14)
CAPTURES_PER_SEED = 5
DEFAULT_WARC_NAME = "DRIFTLINE-DEMO-20250902030000000-00000-4242~demo-crawler~8443.warc.gz"

Expected = Literal["Always On", "Step Function On", "Oscillating"]


@dataclass(frozen=True, slots=True)
class DemoSeed:
    """One demo seed and what driftline is expected to say about it."""

    url: str
    name: str
    language: str
    behaviour: Expected
    off_topic: tuple[bool, ...]  # expected flag per capture (capture 0 is the baseline)
    recommend: bool  # a crawl-stop recommendation is expected
    story: str
    ip: str
    render: Callable[[int], str]


SEEDS: tuple[DemoSeed, ...] = (
    DemoSeed("https://www.riverwatch-alliance.org/our-work/floodplain/", "Riverwatch Alliance", "en", "Always On",
             (False,) * 5, False, "ads, dates, comments and links change; article kept", "192.0.2.11",
             riverwatch_page),
    DemoSeed("https://www.solidarite-paysanne.fr/notre-action/accompagnement/", "Solidarité Paysanne", "fr",
             "Always On", (False,) * 5, False, "French page; news and comments change; one revisit",
             "192.0.2.12", solidarite_page),
    DemoSeed("https://www.red-agua-andina.org/programas/monitoreo/", "Red Agua Andina", "es", "Oscillating",
             (False, False, True, False, False), False, "Spanish page; one database-error capture, then back",
             "192.0.2.13", red_agua_page),
    DemoSeed("http://www.harbourtown-library.org/visit-us/", "Harbourtown Public Library", "en", "Step Function On",
             (False, False, True, True, True), True, "domain lapsed: parked for-sale page", "198.51.100.21",
             library_page),
    DemoSeed("https://www.cityjazzfestival.net/programme/", "City Jazz Festival", "en", "Step Function On",
             (False, False, True, True, True), True, "hosting account suspended", "198.51.100.22", jazz_page),
    DemoSeed("https://www.millbrook-history.org.uk/history/mill-and-canal/", "Millbrook Local History Society", "en",
             "Step Function On", (False, False, True, True, True), True,
             "expired domain taken over by an affiliate blog", "198.51.100.23", millbrook_page),
)


@dataclass(frozen=True, slots=True)
class DemoRecord:
    """One WARC record of the demo crawl and the event that announces it."""

    url: str
    seed: str | None
    capture: int  # index of the capture of its seed (-1 for dns: and robots.txt)
    time: datetime
    record_type: str
    digest: str
    offset: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class DemoCrawl:
    path: Path
    seeds: tuple[DemoSeed, ...]
    events: tuple[dict[str, Any], ...]  # Heritrix KafkaCrawlLogFeed messages, in crawl order
    records: tuple[DemoRecord, ...]  # every record after warcinfo, in file order

    @property
    def scored_events(self) -> int:
        """Events the consumer scores (seed pages; not dns: or robots.txt)."""
        return sum(1 for e in self.events if e["hop_path"] == "")

    def events_jsonl(self) -> str:
        return "".join(json.dumps(e, sort_keys=True) + "\n" for e in self.events)


def _host(url: str) -> str:
    return url.split("/", 3)[2]


def _log17(dt: datetime) -> str:
    """Heritrix's ``timestamp`` form: ISO 8601 with milliseconds and ``Z``."""
    return utc(dt).strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc(dt).microsecond // 1000:03d}Z"


def _ts17(dt: datetime) -> str:
    return utc(dt).strftime("%Y%m%d%H%M%S") + f"{utc(dt).microsecond // 1000:03d}"


def _event(
    *, url: str, seed: str, hop: str, via: str, status: int, mime: str, start: datetime, duration_ms: int,
    content_length: int | None, size: int, digest: str, thread: int, warc: str, offset: int,
    annotations: str = "",
) -> dict[str, Any]:
    """One message exactly as Heritrix 3's contrib ``KafkaCrawlLogFeed`` writes it
    (with Archive-It's extra fields ``job_name`` and friends configured)."""
    return {
        "timestamp": _log17(start + timedelta(milliseconds=duration_ms + 3)),
        "content_length": content_length,
        "size": size,
        "status_code": status,
        "url": url,
        "hop_path": hop,
        "via": via,
        "mimetype": mime,
        "thread": thread,
        "start_time_plus_duration": f"{_ts17(start)}+{duration_ms}",
        "content_digest": digest,
        "seed": seed,
        "host": _host(url) if not url.startswith("dns:") else url[4:],
        "annotations": annotations,
        "warc_filename": warc,
        "warc_offset": offset,
        "extra_info": {},
        "job_name": JOB_NAME,
        "account_id": 1042,
        "collection_id": 20250902,
        "is_test_crawl": False,
    }


def _warc_date(dt: datetime) -> str:
    """WARC 1.1 date with milliseconds (the feed's start time has them too)."""
    return utc(dt).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _http_headers(status: str, mime: str, body: bytes, when: datetime, server: str) -> StatusAndHeaders:
    return StatusAndHeaders(status, [
        ("Date", when.strftime("%a, %d %b %Y %H:%M:%S GMT")),
        ("Server", server),
        ("Content-Type", mime),
        ("Content-Length", str(len(body))),
        ("Cache-Control", "max-age=600"),
        ("Connection", "close"),
    ], protocol="HTTP/1.1")


def build_demo_warc(path: str | Path) -> DemoCrawl:
    """Write the demo WARC (gzip, one member per record) and return the crawl.

    ``path`` is the WARC file to write, or a directory to write
    :data:`DEFAULT_WARC_NAME` into.  Deterministic: the same bytes every time.
    """
    target = Path(path)
    if target.is_dir() or str(path).endswith(("/", "\\")):
        target.mkdir(parents=True, exist_ok=True)
        target = target / DEFAULT_WARC_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    name = target.name
    events: list[dict[str, Any]] = []
    records: list[DemoRecord] = []
    with open(target, "wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="1.1")
        info = writer.create_warcinfo_record(name, {
            "software": "driftline demo generator (Heritrix-style records)",
            "format": "WARC File Format 1.1",
            "isPartOf": JOB_NAME,
            "description": "Synthetic demo crawl written by driftline; every page was written for the demo.",
            "operator": "driftline",
        })
        writer.write_record(info)
        first_payload: dict[str, tuple[str, datetime]] = {}
        for crawl in range(CAPTURES_PER_SEED):
            base = CRAWL_START + crawl * CRAWL_EVERY
            for s_idx, seed in enumerate(SEEDS):
                start = base + timedelta(seconds=37 * s_idx + 11 * crawl, milliseconds=123 + 41 * s_idx)
                thread = (s_idx * 7 + crawl) % 25
                if crawl == 0 and s_idx == 0:
                    _prerequisites(writer, fh, seed, start - timedelta(seconds=2), name, events, records)
                body = seed.render(crawl).encode("utf-8")
                digest = payload_digest(body)
                mime = "text/html; charset=UTF-8"
                server = "nginx" if s_idx % 2 else "Apache"
                http = _http_headers("200 OK", mime, body, start, server)
                warc_date = _warc_date(start)
                previous = first_payload.get(digest)
                offset = fh.tell()
                if previous is not None:
                    ref_uri, ref_date = previous
                    rec = writer.create_revisit_record(
                        seed.url, digest, ref_uri, _warc_date(ref_date),
                        http_headers=http, warc_headers_dict={"WARC-Date": warc_date, "WARC-IP-Address": seed.ip},
                    )
                    rtype, annotations = "revisit", "duplicate:digest"
                else:
                    rec = writer.create_warc_record(
                        seed.url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http,
                        warc_headers_dict={"WARC-Date": warc_date, "WARC-IP-Address": seed.ip},
                    )
                    rtype, annotations = "response", ""
                    first_payload[digest] = (seed.url, utc(start))
                writer.write_record(rec)
                duration = 180 + (len(body) % 400)
                events.append(_event(
                    url=seed.url, seed=seed.url, hop="", via="", status=200, mime=mime, start=start,
                    duration_ms=duration, content_length=len(body), size=len(body) + len(http.to_str()),
                    digest=digest, thread=thread, warc=name, offset=offset, annotations=annotations,
                ))
                records.append(DemoRecord(seed.url, seed.url, crawl, utc(start), rtype, digest, offset, body))
    return DemoCrawl(path=target, seeds=SEEDS, events=tuple(events), records=tuple(records))


def _prerequisites(
    writer: WARCWriter, fh: Any, seed: DemoSeed, when: datetime, name: str,
    events: list[dict[str, Any]], records: list[DemoRecord],
) -> None:
    """The dns: lookup and robots.txt fetch Heritrix makes before a host's
    first URL (hop path ``P``): logged on the feed, never scored."""
    host = _host(seed.url)
    dns_body = f"{ts14(when)}\n{host}.\t3600\tIN\tA\t{seed.ip}\n".encode("ascii")
    dns_digest = payload_digest(dns_body)
    offset = fh.tell()
    rec = writer.create_warc_record(
        f"dns:{host}", "response", payload=io.BytesIO(dns_body), length=len(dns_body), warc_content_type="text/dns",
        warc_headers_dict={"WARC-Date": _warc_date(when), "WARC-IP-Address": "192.0.2.53"},
    )
    writer.write_record(rec)
    events.append(_event(
        url=f"dns:{host}", seed=seed.url, hop="P", via=seed.url, status=1, mime="text/dns", start=when,
        duration_ms=14, content_length=None, size=len(dns_body), digest=dns_digest, thread=3, warc=name,
        offset=offset,
    ))
    records.append(DemoRecord(f"dns:{host}", seed.url, -1, utc(when), "response", dns_digest, offset, dns_body))
    robots_url = seed.url.split("/", 3)
    robots = f"{robots_url[0]}//{host}/robots.txt"
    robots_body = b"User-agent: *\nDisallow: /admin/\nDisallow: /search\n\nSitemap: /sitemap.xml\n"
    at = when + timedelta(milliseconds=900)
    http = _http_headers("200 OK", "text/plain", robots_body, at, "Apache")
    offset = fh.tell()
    rec = writer.create_warc_record(
        robots, "response", payload=io.BytesIO(robots_body), length=len(robots_body), http_headers=http,
        warc_headers_dict={"WARC-Date": _warc_date(at), "WARC-IP-Address": seed.ip},
    )
    writer.write_record(rec)
    digest = payload_digest(robots_body)
    events.append(_event(
        url=robots, seed=seed.url, hop="P", via=seed.url, status=200, mime="text/plain", start=at, duration_ms=61,
        content_length=len(robots_body), size=len(robots_body) + len(http.to_str()), digest=digest, thread=3,
        warc=name, offset=offset,
    ))
    records.append(DemoRecord(robots, seed.url, -1, utc(at), "response", digest, offset, robots_body))
