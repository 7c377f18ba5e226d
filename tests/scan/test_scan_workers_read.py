"""A scan's workers read the archive records they score: only index entries leave the main process.

Why it matters: the main process used to read every record and send its payload to a worker, at about
a fifth of a worker's CPU per capture, so it could feed four or five workers and no more.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from tests.fixtures.scancli import run
from tests.fixtures.scanwarcs import write_warc
from tests.fixtures.wacz import collection_warc, when
from watcher.archive.warc import ArchiveHistory
from watcher.config import load_config
from watcher.engine import Engine
from watcher.scan import _scored
from watcher.sources import iter_histories

BIG = b"<html><head><title>River law</title></head><body>" + b"<p>river law music garden</p>" * 40_000 + \
    b"</body></html>"


def test_archive_histories_travel_as_index_entries(tmp_path: Path) -> None:
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    collection_warc(crawl)
    write_warc(crawl / "big.warc.gz", [("http://big.example/", when(i), BIG, {}) for i in range(3)])
    cfg = load_config()
    items = list(iter_histories([str(crawl)], cfg, 2).items())
    loaded = list(iter_histories([str(crawl)], cfg, 2))
    assert [h for h, _ in items] == [h for h, _ in loaded] and len(items) >= 6
    assert all(isinstance(item, ArchiveHistory) for _, item in items)
    assert sum(len(c.content or b"") for h, caps in loaded if h.startswith("example,big") for c in caps) > 3_000_000
    engine = Engine(cfg.engine)
    for (history, item), (_, captures) in zip(items, loaded, strict=True):
        assert isinstance(item, ArchiveHistory)
        assert [(c.url, c.timestamp, c.content, c.is_revisit, c.locator) for c in item.load()] == \
            [(c.url, c.timestamp, c.content, c.is_revisit, c.locator) for c in captures]
        # what a worker gets: the entries (a few hundred bytes a record), not the payloads
        assert len(pickle.dumps(item)) < 500 * (len(captures) + 1)
        result, located = _scored(engine, history, item)
        assert result == engine.scan_history(history, captures)
        assert located == {(history, c.timestamp.strftime("%Y%m%d%H%M%S"), c.url): c.locator
                           for c in captures if c.locator}


def test_a_scan_with_workers_writes_what_one_process_writes(tmp_path: Path) -> None:
    """Verdicts and each capture's locator (``driftline review`` reads it) the same with the records
    read by two workers as by the one process."""
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    collection_warc(crawl)
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    assert run("scan", str(crawl), "-o", str(one), "-j", "1", "--no-progress") == 0
    assert run("scan", str(crawl), "-o", str(two), "-j", "2", "--no-progress") == 0
    assert one.read_text() == two.read_text()
    data = json.loads(two.read_text())
    locators = [e["driftline"]["source"]["locator"] for block in data.values() for k, e in block.items()
                if not k.startswith("__") and "source" in e["driftline"]]
    assert locators and all(loc.startswith("warc:") and "#" in loc for loc in locators)
