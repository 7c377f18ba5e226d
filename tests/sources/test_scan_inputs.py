"""`driftline scan` inputs: a CDX(J) index whose WARCs are elsewhere (--warc-dir, acquire.warc_dirs), a directory
of WARCs, and non-documents (stylesheets, scripts) left out and counted, as the stream does."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.fixtures.scancli import BASE, PARKED, run, t
from tests.fixtures.scanwarcs import write_warc
from watcher.archive.index import index_archive
from watcher.config import Config

CSS = b"body { color: #333; }\n" + b"".join(b".rule-%d { margin: %dpx; padding: 0 }\n" % (i, i) for i in range(400))
JS = b"function go(x) { return x + 1; }\n" * 200


def _crawl(path: Path, host: str = "www.example.org") -> Path:
    write_warc(path, [(f"http://{host}/", t(0), BASE, {}),
                      (f"http://{host}/style.css", t(0), CSS, {"Content-Type": "text/css"}),
                      (f"http://{host}/", t(1), BASE, {}),
                      (f"http://{host}/app.js", t(1), JS, {"Content-Type": "application/javascript"}),
                      (f"http://{host}/style.css", t(2), CSS + b"/* v2 */", {"Content-Type": "text/css"}),
                      (f"http://{host}/", t(2), PARKED, {})])
    return path


def _cdxj(warc: Path, index: Path) -> Path:
    rows = []
    for e in index_archive(str(warc), Config()):
        stamp = e.time.strftime("%Y%m%d%H%M%S")
        rows.append(f"{e.key} {stamp} " + json.dumps({"url": e.url, "mime": e.mime, "status": str(e.status),
                                                      "offset": str(e.offset), "length": str(e.length),
                                                      "filename": warc.name}))
    index.write_text("\n".join(sorted(rows)) + "\n")
    return index


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_cdx_finds_its_warcs_under_warc_dir_and_acquire_warc_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    warcs, idx = tmp_path / "warcs", tmp_path / "indexes"
    warcs.mkdir()
    idx.mkdir()
    index = _cdxj(_crawl(warcs / "crawl-0001.warc.gz"), idx / "all.cdxj")
    out = tmp_path / "out.jsonl"
    assert run("scan", str(index), "-f", "jsonl", "-o", str(out), "--no-progress", "-j", "1") == 3  # not beside it
    assert run("scan", str(index), "--warc-dir", str(tmp_path / "elsewhere"), "--warc-dir", str(warcs),
               "-f", "jsonl", "-o", str(out), "--no-progress", "-j", "1") == 2  # a --warc-dir that does not exist
    assert "--warc-dir" in capsys.readouterr().err
    assert run("scan", str(index), "--warc-dir", str(warcs), "-f", "jsonl", "-o", str(out), "--no-progress",
               "-j", "1") == 0
    recs = _jsonl(out)
    assert [r["overall topic status"] for r in recs] == ["on-topic", "on-topic", "off-topic"]
    out.unlink()
    monkeypatch.setenv("DRIFTLINE__ACQUIRE__WARC_DIRS", json.dumps([str(warcs)]))
    assert run("scan", str(index), "-f", "jsonl", "-o", str(out), "--no-progress", "-j", "1") == 0
    assert [r["overall topic status"] for r in _jsonl(out)] == ["on-topic", "on-topic", "off-topic"]


def test_a_directory_of_warcs_is_scanned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crawl = tmp_path / "crawl"
    (crawl / "part2").mkdir(parents=True)
    _crawl(crawl / "a.warc.gz", "www.example.org")
    _crawl(crawl / "part2" / "b.warc.gz", "news.example.net")
    (crawl / "README.txt").write_text("notes about the crawl\n")
    _cdxj(crawl / "a.warc.gz", crawl / "a.cdxj")  # an index beside its WARC: the WARCs are read, not both
    out = tmp_path / "out.jsonl"
    assert run("scan", str(crawl), "-f", "jsonl", "-o", str(out), "--no-progress", "-j", "1") == 0
    recs = _jsonl(out)
    assert sorted({str(r["url"]) for r in recs}) == ["http://news.example.net/", "http://www.example.org/"]
    assert len(recs) == 6
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("scan", str(empty), "--no-progress") == 2
    err = capsys.readouterr().err
    assert "no WARC/ARC files" in err and "gold-standard directory" in err and len(err.strip().splitlines()) == 1


def test_non_documents_are_skipped_and_counted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    warc = _crawl(tmp_path / "crawl.warc.gz")
    out = tmp_path / "out.jsonl"
    with caplog.at_level(logging.INFO):
        assert main_scan(warc, out) == 0
    recs = _jsonl(out)
    assert {str(r["url"]) for r in recs} == {"http://www.example.org/"} and len(recs) == 3
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "skipped: 3 non-documents" in text
    assert "text/css 2" in text and "application/javascript 1" in text


def main_scan(warc: Path, out: Path) -> int:
    from watcher.cli import main

    return main(["scan", str(warc), "-f", "jsonl", "-o", str(out), "--no-progress", "-j", "1"])
