"""Labels and the review queue in the store (SQLite, memory), the scan result's locators, export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.reviewdata import make_gold, scan_to
from watcher.review.ingest import open_input, open_store_spec
from watcher.review.labels import export_gold, export_labels
from watcher.store import MemoryStore
from watcher.store.labels import Query, review_data, seed_muted


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("review")
    return scan_to(make_gold(root), root / "result.json")


def test_scan_result_records_where_each_capture_is(result: Path, tmp_path: Path) -> None:
    doc = json.loads(result.read_text())
    entries = [e for block in doc.values() for k, e in block.items() if not k.startswith("__")]
    assert len(entries) == 8
    for e in entries:
        loc = e["driftline"]["source"]["locator"]
        assert loc.startswith("file:") and Path(loc[5:]).is_file()
    # JSONL carries the same
    out = scan_to(result.parent / "gold", tmp_path / "r.jsonl")
    assert out.exists()
    from watcher.cli import main

    assert main(["--log-level", "WARNING", "scan", str(result.parent / "gold"), "-o", str(tmp_path / "r.jsonl"),
                 "-f", "jsonl", "-j", "1", "--no-progress"]) == 0
    recs = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert all(r["driftline"]["source"]["locator"].startswith("file:") for r in recs)


def test_queue_sorts_filters_pages_and_labels_persist(result: Path, tmp_path: Path) -> None:
    store_path = tmp_path / "review.sqlite"
    store, review, where, _ = open_input(str(result), str(store_path))
    assert where == str(store_path)
    try:
        page = review.queue(Query())
        assert page.total == 8 and page.counts["off-topic"] == 2
        assert [i.change for i in page.items[:2]] == ["off-topic", "off-topic"]  # severity first
        assert review.queue(Query(change="off-topic")).total == 2
        assert review.queue(Query(where="http://site1.example.org/")).total == 4
        assert review.queue(Query(where="gold:2")).total == 4  # a history-key (SURT) prefix
        assert review.queue(Query(date_from="2012-01-01")).total == 4
        assert review.queue(Query(date_to="2010-12-31")).total == 2
        assert review.queue(Query(language="en")).total == 8
        assert review.queue(Query(profile="doi")).total == 0
        two = review.queue(Query(size=3, page=3))
        assert len(two.items) == 2 and two.total == 8
        off = page.items[0]
        on = next(i for i in page.items if i.change == "minor" and "site1" in i.url)
        review.set_label(off.verdict_id, off.version, "off-topic", "parked domain")
        review.set_label(on.verdict_id, on.version, "off-topic")  # the curator disagrees here
        assert review.queue(Query(reviewed="yes")).total == 2
        assert review.queue(Query(reviewed="no")).total == 6
        dis = review.queue(Query(disagree=True))
        assert [i.verdict_id for i in dis.items] == [on.verdict_id]
        agree = review.agreement()
        assert agree["off-topic"] == (1, 1) and agree["minor"] == (1, 0)
        review.mute(off.seed, True)
        assert seed_muted(store, off.seed) and not seed_muted(store, on.seed)
    finally:
        store.close()
    # reopened: the labels are still there, an import of the same result changes nothing
    store, review, _, _ = open_input(str(result), str(store_path))
    try:
        lab = review.get_label(off.verdict_id)
        assert lab is not None and lab.label == "off-topic" and lab.note == "parked domain"
        assert review.reviewed() == 2
    finally:
        store.close()
    n = export_gold(str(store_path), tmp_path / "labels.tsv")
    lines = (tmp_path / "labels.tsv").read_text().splitlines()
    assert n == 2 and lines[0] == "id\tdate\tURI\tlabel"
    row = next(r.split("\t") for r in lines[1:] if r.startswith("2\t"))
    assert row[1] == off.ts and len(row[1]) == 14 and row[2] == off.uri_m and row[3] == "0"
    # eval reads the exported gold file against the scan
    from watcher.evaluation.evaluate import evaluate

    rep = evaluate(tmp_path / "labels.tsv", result)
    assert rep is not None


def test_blocked_and_unsure_stay_out_of_gold_but_in_jsonl(result: Path, tmp_path: Path) -> None:
    store, review, _, _ = open_input(str(result), str(tmp_path / "r.sqlite"))
    try:
        items = review.queue(Query()).items
        for it, label in zip(items, ["on-topic", "off-topic", "drifted", "unchanged", "blocked", "unsure"],
                             strict=False):
            review.set_label(it.verdict_id, it.version, label)
    finally:
        store.close()
    assert export_gold(str(tmp_path / "r.sqlite"), tmp_path / "g.tsv") == 4
    rows = [r.split("\t") for r in (tmp_path / "g.tsv").read_text().splitlines()[1:]]
    assert sorted(r[3] for r in rows) == ["0", "1", "1", "1"]
    assert export_labels(str(tmp_path / "r.sqlite"), tmp_path / "l.jsonl", "jsonl") == 6
    recs = [json.loads(x) for x in (tmp_path / "l.jsonl").read_text().splitlines()]
    assert {r["label"] for r in recs} == {"on-topic", "off-topic", "drifted", "unchanged", "blocked", "unsure"}
    assert all(r["reviewer"] == "curator" and r["version"] >= 1 and r["at"] > 0 for r in recs)


def test_memory_backend_keeps_labels_and_mutes(result: Path) -> None:
    from watcher.review.ingest import iter_result

    store = MemoryStore()
    for v, _ in iter_result(result):
        store.put_verdict(v)
    review = review_data(store)
    assert review_data(store) is review
    assert review.sync() == 8
    it = review.queue(Query()).items[0]
    review.set_label(it.verdict_id, it.version, "unsure", "check later")
    label = review.get_label(it.verdict_id)
    assert label is not None and label.note == "check later"
    assert not seed_muted(store, it.seed)
    review.mute(it.seed, True)
    assert seed_muted(store, it.seed)


def test_a_store_never_reviewed_mutes_nothing(tmp_path: Path) -> None:
    store = open_store_spec(str(tmp_path / "plain.db"))
    try:
        assert not seed_muted(store, "http://example.org/")
    finally:
        store.close()


def test_labels_export_cli(result: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from watcher.cli import main

    store, review, _, _ = open_input(str(result), str(tmp_path / "c.sqlite"))
    it = review.queue(Query()).items[0]
    review.set_label(it.verdict_id, it.version, "off-topic")
    store.close()
    assert main(["labels", "export", "--store", str(tmp_path / "c.sqlite"), "-o", str(tmp_path / "x.tsv")]) == 0
    assert len((tmp_path / "x.tsv").read_text().splitlines()) == 2
    assert main(["labels", "export", "--store", str(tmp_path / "c.sqlite"), "-f", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["label"] == "off-topic"
    assert main(["labels", "export", "--store", str(tmp_path / "missing.sqlite")]) == 2
