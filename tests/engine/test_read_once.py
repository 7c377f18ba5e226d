"""A scan reads a payload its history repeats once: the same verdicts, fewer parses.

The memo is exact by construction (``fingerprint()`` sees only the headers ``reading_key`` keys on);
these tests hold the verdicts equal to a scan that reads every capture, count the reads, and show
that each thing a fingerprint reads (address, status, type, the headers it reads, the payload and
the reading) keeps two captures apart.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import watcher.engine as engine_mod
from tests.fixtures import textgen
from watcher.config import EngineConfig
from watcher.engine import Engine
from watcher.fingerprint import HEADERS_READ, fingerprint, reading_key
from watcher.model import Capture, HistoryResult

T0 = datetime(2021, 1, 1, tzinfo=UTC)
URL = "http://www.riverside-rights.org/"
A = textgen.html(textgen.document(["river", "law", "music", "garden"]))
B = textgen.html(textgen.document(["space", "cooking", "space", "cooking"], seed=9), "Rocket Kitchen")
ARGS = {"record": False, "words_kept": False, "main_content": False}


def cap(i: int, content: bytes | None, **kw: Any) -> Capture:
    return Capture(url=kw.pop("url", URL), timestamp=T0 + timedelta(days=30 * i), content=content,
                   uri_m=f"urn:test:{i}", **kw)


class Reads:
    """How many captures were read (parsed) while it is installed; ``memo=False`` makes every key a new
    one, so every capture is read, as before the memo."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, memo: bool = True) -> None:
        self.count = 0

        def counted(*a: Any, **k: Any) -> Any:
            self.count += 1
            return fingerprint(*a, **k)

        monkeypatch.setattr(engine_mod, "fingerprint", counted)
        if not memo:
            monkeypatch.setattr(engine_mod, "reading_key", lambda c, **k: None)


def scan_counting(monkeypatch: pytest.MonkeyPatch, caps: list[Capture], *,
                  memo: bool = True) -> tuple[HistoryResult, int]:
    """The scan of ``caps`` and how many captures it read."""
    reads = Reads(monkeypatch, memo=memo)
    try:
        return Engine(EngineConfig()).scan_history("org,riverside-rights)/", caps), reads.count
    finally:
        monkeypatch.undo()


def fields(r: HistoryResult) -> list[tuple[Any, ...]]:
    return [(v.status, v.change, v.reason, v.verdict_id, tuple(sorted((k, m.score) for k, m in v.measures.items())))
            for v in r.verdicts]


def test_a_payload_repeated_after_a_change_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # A is the baseline (its repeats need no read: the same-digest test); B after the change repeats
    # three times and A comes back: B is read once, A once
    caps = [cap(0, A), cap(1, A), cap(2, B), cap(3, B), cap(4, B), cap(5, A), cap(6, B)]
    r, reads = scan_counting(monkeypatch, caps)
    every, reads_all = scan_counting(monkeypatch, caps, memo=False)
    assert fields(r) == fields(every)
    assert [v.status for v in r.verdicts] == ["on-topic", "on-topic", "off-topic", "off-topic", "off-topic",
                                              "on-topic", "off-topic"]
    assert (reads, reads_all) == (2, 5)


def test_a_repeat_under_another_status_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # the status is read (page kinds, redirects): a 404 of the same bytes is another reading
    caps = [cap(0, A), cap(1, B), cap(2, B, status=404), cap(3, B)]
    r, reads = scan_counting(monkeypatch, caps)
    every, _ = scan_counting(monkeypatch, caps, memo=False)
    assert fields(r) == fields(every)
    assert reads == 3
    assert r.verdicts[2].reason != r.verdicts[1].reason


def test_the_key_keeps_apart_what_a_fingerprint_reads() -> None:
    base = cap(0, B, headers={"Content-Type": "text/html", "Date": "Mon, 01 Jan 2021 00:00:00 GMT"})
    key = reading_key(base, **ARGS)
    assert key is not None
    # what a fingerprint does not read: the time, other headers, where the capture came from
    same = [dataclasses.replace(base, timestamp=T0 + timedelta(days=9), uri_m="urn:other", locator="warc:x#1"),
            dataclasses.replace(base, headers={"Date": "Tue, 02 Feb 2021 00:00:00 GMT", "Server": "nginx"})]
    assert all(reading_key(c, **ARGS) == key for c in same)
    other = [dataclasses.replace(base, url="http://www.riverside-rights.org/about"),
             dataclasses.replace(base, status=301),
             dataclasses.replace(base, content_type="text/plain"),
             dataclasses.replace(base, headers={"Location": "http://elsewhere.example/"}),
             dataclasses.replace(base, headers={"Content-Encoding": "gzip"}),
             dataclasses.replace(base, content=B + b" "),
             dataclasses.replace(base, digest="sha1:OTHER")]
    assert len({reading_key(c, **ARGS) for c in other} | {key}) == len(other) + 1
    assert len({reading_key(base, **{**ARGS, k: True}) for k in ARGS} | {key}) == len(ARGS) + 1
    assert reading_key(cap(0, None), **ARGS) is None


def test_headers_a_fingerprint_does_not_read_cannot_change_it() -> None:
    cfg = EngineConfig()
    plain = fingerprint(cap(0, B), cfg)
    noisy = fingerprint(cap(0, B, headers={"Date": "x", "Content-Language": "fr", "Link": "<http://a/>; rel=canonical",
                                           "Refresh": "0; url=http://elsewhere.example/"}), cfg)
    assert noisy == plain
    # the ones it reads still count: a redirect's target, and an undone coding
    moved = fingerprint(cap(0, b"", status=301, headers={"Location": "http://elsewhere.example/"}), cfg)
    assert moved.redirect == "http://elsewhere.example/"
    assert {h.lower() for h in HEADERS_READ} == {"content-encoding", "location"}


def test_spark_reads_a_repeated_payload_of_a_file_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Spark's reading stage (no Spark needed: it is a plain function over one file) keeps the payloads
    read last per file: a repeat is not parsed again, and its fingerprint is the one a read gives."""
    from collections import Counter

    from tests.fixtures.scanwarcs import write_warc
    from watcher.config import load_config
    from watcher.spark.records import ErrorRow, archive_records

    warc = tmp_path / "crawl.warc.gz"
    # each record's own Date header: a header no fingerprint reads does not make a payload another one
    write_warc(warc, [(URL, T0 + timedelta(days=i), body, {"Date": f"Mon, 0{i + 1} Feb 2021 00:00:00 GMT"})
                      for i, body in enumerate([A, B, B, A, B])])
    cfg = load_config()
    engine = Engine(cfg.engine)

    def fps(memo: bool) -> tuple[list[Any], int]:
        reads = Reads(monkeypatch, memo=memo)
        errors: list[ErrorRow] = []
        try:
            got = [r.fp for r in archive_records(str(warc), cfg, engine, Counter(), errors)]
        finally:
            monkeypatch.undo()
        assert errors == []
        return got, reads.count

    (once, reads), (every, reads_all) = fps(True), fps(False)
    assert once == every and len(once) == 5
    assert (reads, reads_all) == (2, 5)
