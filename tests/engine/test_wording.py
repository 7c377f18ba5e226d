"""Reasons built from a head and a detail never repeat the head ("no content (no content)")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.fixtures import textgen
from watcher.config import EngineConfig
from watcher.engine import Engine
from watcher.model import Capture
from watcher.wording import headed

T0 = datetime(2021, 1, 1, tzinfo=UTC)


def _cap(i: int, content: bytes) -> Capture:
    return Capture(url="http://www.example.org/news/item", timestamp=T0 + timedelta(days=30 * i), content=content,
                   uri_m=f"urn:test:{i}")


def test_headed_drops_a_detail_that_repeats_its_head() -> None:
    assert headed("no content", "no content") == "no content"
    assert headed("no content", None, "empty") == "no content (empty)"
    assert headed("no content", "truncated") == "no content (truncated)"
    assert headed("no content", "No Content: 0 bytes") == "No Content: 0 bytes"
    assert headed("no content", "") == "no content"


def test_empty_captures_read_no_content_once() -> None:
    page = textgen.html(textgen.document(["river", "law", "music", "garden"]))
    for profile in ("collection", "text", "doi"):
        r = Engine(EngineConfig(profile=profile)).scan_history(
            "org,example)/news/item", [_cap(0, b""), _cap(1, page), _cap(2, b"")])
        reasons = [v.reason for v in r.verdicts]
        assert all("(no content)" not in x for x in reasons), (profile, reasons)
        assert any(x.startswith("no content") for x in reasons), (profile, reasons)
