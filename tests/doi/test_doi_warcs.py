"""Rolling WARC files of the DOI monitor: request/response pairs, rendered
DOMs, offsets a reader can seek to, roll-over at the size limit."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from watcher.acquire.warc import parse_record, read_record_bytes
from watcher.doi.warcs import RENDERED_PROFILE, RollingWarcWriter


def test_records_are_readable_at_their_offsets_and_files_roll(tmp_path: Path) -> None:
    w = RollingWarcWriter(tmp_path, max_bytes=3000)
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    refs = []
    for i in range(6):
        body = (f"<html><title>page {i}</title>" + "x" * 2000 + "</html>").encode()
        refs.append((w.write_exchange(f"https://pub.example/a/{i}", when, status=200,
                                      headers={"Content-Type": "text/html"}, body=body,
                                      request_headers={"User-Agent": "driftline-doi/test"},
                                      rendered=b"<html>rendered</html>" if i == 5 else None), body))
    assert len({r.filename for r, _ in refs}) > 1  # rolled over
    for i, (ref, body) in enumerate(refs):
        raw = read_record_bytes(tmp_path / ref.filename, ref.offset, ref.length, 10_000_000)
        payload = parse_record(raw, 10_000_000)
        assert payload.status == 200 and payload.payload == (b"<html>rendered</html>" if i == 5 else body)
    # each exchange: response then request (then the rendered response), the request pointing at the response
    with open(tmp_path / refs[0][0].filename, "rb") as fh:
        recs = [(r.rec_type, r.rec_headers.get_header("WARC-Concurrent-To"), r.rec_headers.get_header("WARC-Date"))
                for r in ArchiveIterator(fh)]
    assert recs[0][0] == "response" and recs[1][0] == "request" and recs[1][1]
    assert recs[0][2] == "2026-01-02T03:04:05Z"
    with open(tmp_path / refs[5][0].filename, "rb") as fh:
        profiles = [r.rec_headers.get_header("WARC-Profile") for r in ArchiveIterator(fh)]
    assert RENDERED_PROFILE in profiles
