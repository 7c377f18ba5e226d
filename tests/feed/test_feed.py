"""`driftline feed`'s event builder (no broker): the messages Heritrix's feed would send.

Real inputs when the shared data is present (Heritrix's crawl.log, pywb's
CDXJ), inputs written here otherwise; every message must parse back to the
capture it announces, carry only the keys Heritrix's ``CrawlLogJsonBuilder``
writes, and name its WARC as Heritrix does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.fixtures.feedlines import LOG_LINES
from tests.fixtures.kafka import page_html, write_warc
from watcher.config import Config
from watcher.errors import InputError
from watcher.events import parse_crawl_log_line, parse_event
from watcher.feed import FeedBuilder, LogFollower, crawl_log_line, message_from_crawl_log

# Every key CrawlLogJsonBuilder.buildJson writes (Heritrix 3), and no other.
HERITRIX_KEYS = {"timestamp", "content_length", "size", "status_code", "url", "hop_path", "via", "mimetype", "thread",
                 "start_time_plus_duration", "content_digest", "seed", "host", "annotations", "warc_filename",
                 "warc_offset", "extra_info"}


def _cfg(*dirs: Path) -> Config:
    return Config.model_validate({"acquire": {"warc_dirs": [str(d) for d in dirs]}, "render": {"enabled": False}})


@pytest.fixture
def crawl_log(tmp_path: Path) -> Path:
    """The real Heritrix crawl.log of the shared data, else one written here."""
    real = Path(__file__).resolve().parents[3] / "shared" / "data" / "feeds" / "heritrix-crawl.log"
    if real.is_file():
        return real
    path = tmp_path / "crawl.log"
    path.write_text("\n".join(LOG_LINES) + "\n", encoding="utf-8")
    return path


def test_crawl_log_as_heritrix_kafka_messages(crawl_log: Path) -> None:
    lines = [ln for ln in crawl_log.read_text(encoding="utf-8").splitlines() if ln.strip()]
    builder = FeedBuilder(_cfg(), "heritrix-kafka", warn=lambda _: None)
    messages = list(builder.messages([str(crawl_log)]))
    assert len(messages) == len(lines) and builder.stats.sent == len(lines) and builder.stats.skipped_total == 0
    for msg, line in zip(messages, lines, strict=True):
        assert msg.key is None  # Heritrix's feed is unkeyed
        obj = json.loads(msg.value)
        assert set(obj) == HERITRIX_KEYS
        assert "warcFilename" not in obj["extra_info"] and "contentSize" not in obj["extra_info"]
        sent, logged = parse_event(msg.value), parse_crawl_log_line(line)
        assert sent.format == "heritrix-kafka"
        for name in ("url", "timestamp", "status_code", "digest", "seed", "via", "hop_path", "warc_filename",
                     "warc_offset", "warc_length", "annotations", "content_length"):
            assert getattr(sent, name) == getattr(logged, name), (name, line)
        assert sent.mimetype == (logged.mimetype or None)


def test_crawl_log_lines_sent_as_they_are(crawl_log: Path) -> None:
    lines = [ln for ln in crawl_log.read_text(encoding="utf-8").splitlines() if ln.strip()]
    messages = list(FeedBuilder(_cfg(), "crawl-log", warn=lambda _: None).messages([str(crawl_log)]))
    assert [m.value.decode() for m in messages] == [ln.strip() for ln in lines]
    assert all(parse_event(m.value).format == "crawl-log" for m in messages)


def test_crawl_log_line_round_trip() -> None:
    for line in LOG_LINES:
        again = parse_crawl_log_line(crawl_log_line(message_from_crawl_log(line)))
        first = parse_crawl_log_line(line)
        assert (again.url, again.timestamp, again.status_code, again.digest, again.warc_filename,
                again.warc_offset, again.annotations) == (first.url, first.timestamp, first.status_code, first.digest,
                                                          first.warc_filename, first.warc_offset, first.annotations)


def test_warc_named_as_heritrix_does_and_folder_warning(tmp_path: Path) -> None:
    warcs = tmp_path / "crawl"
    warcs.mkdir()
    refs = write_warc(warcs / "JOB-00001.warc.gz", [("http://example.org/", "20240101000000", page_html(1)),
                                                   ("http://example.org/b", "20240102000000", page_html(2))])
    warned: list[str] = []
    builder = FeedBuilder(_cfg(tmp_path / "elsewhere"), "heritrix-kafka", warn=warned.append)
    messages = [json.loads(m.value) for m in builder.messages([str(warcs / "JOB-00001.warc.gz")])]
    assert [(m["url"], m["warc_filename"], m["warc_offset"]) for m in messages] == [
        (r.url, "JOB-00001.warc.gz", r.offset) for r in refs]
    assert [m["extra_info"]["warcFileRecordLength"] for m in messages] == [r.length for r in refs]
    assert all(m["status_code"] == 200 and m["mimetype"] == "text/html" for m in messages)  # as Heritrix logs it
    assert all(m["content_digest"] == r.digest for m, r in zip(messages, refs, strict=True))
    assert len(warned) == 1 and str(warcs) in warned[0] and "acquire.warc_dirs" in warned[0]
    # In a configured folder (any spelling of it): no warning.
    quiet: list[str] = []
    list(FeedBuilder(_cfg(Path(os.path.relpath(warcs))), "driftline", warn=quiet.append).messages(
        [str(warcs / "JOB-00001.warc.gz")]))
    assert quiet == []


def test_driftline_format_is_valid_driftline_events(tmp_path: Path) -> None:
    write_warc(tmp_path / "A.warc.gz", [("http://example.org/", "20240101000000", page_html(1))])
    messages = list(FeedBuilder(_cfg(tmp_path), "driftline").messages([str(tmp_path / "A.warc.gz")]))
    event = parse_event(messages[0].value, "driftline")
    assert event.url == "http://example.org/" and event.warc_filename == "A.warc.gz" and event.warc_offset == 0


@pytest.mark.shared
def test_cdxj_rows_as_events(shared_data: Path) -> None:
    """pywb's example.cdxj: its revisit announced as Heritrix does (status, MIME type, duplicate:digest)."""
    builder = FeedBuilder(_cfg(shared_data / "warc"), "heritrix-kafka", warn=pytest.fail)
    messages = [json.loads(m.value) for m in builder.messages([str(shared_data / "warc" / "example.cdxj")])]
    assert len(messages) == 3
    revisits = [m for m in messages if m["annotations"] == "duplicate:digest"]
    assert len(revisits) == 1
    assert revisits[0]["status_code"] == 200 and revisits[0]["mimetype"] == "text/html"
    assert {m["warc_filename"] for m in messages} == {"example.warc.gz"}
    assert all(parse_event(json.dumps(m)).is_duplicate == (m in revisits) for m in messages)


def test_inputs_refused_in_one_line(tmp_path: Path) -> None:
    builder = FeedBuilder(_cfg())
    with pytest.raises(InputError, match=r"a directory; pass its files \(e.g. .*/\*\.warc\.gz\)"):
        builder.kind(str(tmp_path))
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(InputError, match="not a WARC/ARC file, a CDX"):
        builder.kind(str(tmp_path / "notes.txt"))


def test_bad_lines_counted_not_sent(tmp_path: Path) -> None:
    path = tmp_path / "crawl.log"
    path.write_text(LOG_LINES[0] + "\nnot a crawl log line at all\n" + LOG_LINES[1] + "\n")
    builder = FeedBuilder(_cfg(), "heritrix-kafka", warn=lambda _: None)
    assert len(list(builder.messages([str(path)]))) == 2
    assert builder.stats.skipped_total == 1


def test_follower_reads_appended_lines_across_rotation_and_truncation(tmp_path: Path) -> None:
    path = tmp_path / "crawl.log"
    path.write_text("old line\n")
    follower = LogFollower(str(path), from_start=False)
    try:
        assert follower.read() == []
        with path.open("a") as fh:
            fh.write("one\ntw")  # "tw" is still being written
        assert follower.read() == ["one"]
        with path.open("a") as fh:
            fh.write("o\nthree\n")
        assert follower.read() == ["two", "three"]
        # Rotation: Heritrix renames the log and starts a new one; the old one's last lines are read first.
        with path.open("a") as fh:
            fh.write("last of old\n")
        path.rename(tmp_path / "crawl.log.1")
        path.write_text("first of new\n")
        assert follower.read() == ["last of old", "first of new"]
        path.write_text("")  # truncated in place
        assert follower.read() == []
        path.write_text("after truncation\n")
        assert follower.read() == ["after truncation"]
    finally:
        follower.close()
