"""WACZ input in ``driftline scan``: the package's WARCs read in place, judged as the WARCs are."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from tests.fixtures.scancli import run
from tests.fixtures.wacz import collection_warc, write_wacz
from watcher.archive.detect import archive_dir_files, detect_input
from watcher.archive.wacz import archive_members, open_archive


def verdicts(path: Path) -> dict[tuple[str, str, str], tuple[str, str]]:
    out: dict[tuple[str, str, str], tuple[str, str]] = {}
    for line in path.read_text().splitlines():
        d: dict[str, Any] = json.loads(line)["driftline"]
        out[(d["history"], d["capture_time"], d["url"])] = (d["status"], d["change"])
    return out


def test_wacz_scanned_as_its_warcs(tmp_path: Path) -> None:
    warcs = collection_warc(tmp_path)
    pkg = write_wacz(tmp_path / "crawl.wacz", sorted(warcs.glob("*.warc.gz")), pages=["http://site0.example/"])
    assert detect_input(str(pkg)) == "wacz"
    members = archive_members(str(pkg))
    assert [m.rsplit("/", 1)[-1] for m in members] == ["crawl-1.warc.gz", "crawl-2.warc.gz"]
    assert detect_input(members[0]) == "warc"
    with open_archive(members[1]) as fh, (warcs / "crawl-2.warc.gz").open("rb") as orig:
        fh.seek(100)
        orig.seek(100)
        assert fh.read(5000) == orig.read(5000)  # a member is its WARC, byte for byte, seekable

    assert run("scan", str(warcs / "crawl-1.warc.gz"), str(warcs / "crawl-2.warc.gz"), "-f", "jsonl",
               "-o", str(tmp_path / "warc.jsonl"), "--no-progress") == 0
    assert run("scan", str(pkg), "-f", "jsonl", "-o", str(tmp_path / "wacz.jsonl"), "--no-progress") == 0
    from_warcs, from_wacz = verdicts(tmp_path / "warc.jsonl"), verdicts(tmp_path / "wacz.jsonl")
    assert from_wacz == from_warcs
    statuses = {v for v in from_wacz.values()}
    # the collection has what a judgment must tell apart: baselines, on topic, off topic
    assert {("on-topic", "baseline"), ("off-topic", "off-topic")} <= statuses
    assert len(from_wacz) == 3 * 2 * 5  # stylesheets left out; every revisit judged
    # a review locator names the member, so the capture can be read again from the package
    line = json.loads((tmp_path / "wacz.jsonl").read_text().splitlines()[0])
    assert "crawl.wacz!/archive/" in line["driftline"]["source"]["locator"]


def test_wacz_deflated_member_and_directory(tmp_path: Path) -> None:
    warcs = collection_warc(tmp_path, sites=1, captures=3)
    pkg = tmp_path / "pkgs" / "small.wacz"
    pkg.parent.mkdir()
    with zipfile.ZipFile(pkg, "w") as zf:  # a writer that deflates its WARCs too
        for w in sorted(warcs.glob("*.warc.gz")):
            zf.write(w, f"archive/{w.name}", compress_type=zipfile.ZIP_DEFLATED)
        zf.writestr("datapackage.json", "{}")
    assert archive_dir_files(pkg.parent) == [str(pkg)]
    assert run("scan", str(pkg.parent), "-f", "jsonl", "-o", str(tmp_path / "d.jsonl"), "--no-progress") == 0
    assert len(verdicts(tmp_path / "d.jsonl")) == 2 * 3


def test_zip_that_is_not_a_wacz(tmp_path: Path) -> None:
    z = tmp_path / "notes.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("readme.txt", "hello")
    assert detect_input(str(z)) == "unknown"
