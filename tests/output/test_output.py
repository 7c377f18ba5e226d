"""Result writers: OTMT-compatible JSON, CSV, streamed JSONL, summary."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.outputcases import CFG, results
from watcher.config import Config
from watcher.errors import ConfigError
from watcher.model import HistoryResult
from watcher.output import (
    CSV_FIELDS,
    SUMMARY_KEY,
    write_csv,
    write_json,
    write_jsonl,
    write_results,
    write_summary,
)


def test_json_is_otmt_schema_plus_driftline() -> None:
    out = io.StringIO()
    n = write_json(results(), out, CFG, {"org,example)/": "http://tm.example/timemap/link/http://example.org/"})
    assert n == 5
    data = json.loads(out.getvalue())
    assert list(data) == ["gold:1", "http://tm.example/timemap/link/http://example.org/"]
    g = data["gold:1"]
    urim = "http://wayback.archive-it.org/1068/20200201000000/http://acda.co/"
    entry = g[urim]
    cos = entry["timemap measures"]["cosine"]
    assert cos["comparison score"] == 0.05 and cos["topic status"] == "off-topic"
    assert cos["tokenized"] is True and cos["stemmed"] is False and cos["removed boilerplate"] is False
    byte = entry["timemap measures"]["bytecount"]
    assert byte["tokenized"] is False and byte["stemmed"] is False
    assert entry["overall topic status"] == "off-topic"
    dl = entry["driftline"]
    assert dl["change"] == "off-topic" and dl["drift_score"] == 0.9 and dl["page_kind"] == "soft-404"
    assert dl["capture_time"] == "2020-02-01T00:00:00Z" and dl["verdict_id"] == "id-gold:1-20200201000000"
    assert dl["baseline"] == "http://acda.co/@20200101000000"
    assert g[SUMMARY_KEY]["behaviour"] == "Step Function On"
    assert g[SUMMARY_KEY]["first drift"] == "2020-02-01T00:00:00Z"
    assert g[SUMMARY_KEY]["changes"]["off-topic"] == 1
    w = data["http://tm.example/timemap/link/http://example.org/"]
    # synthetic URI-Ms for WARC captures; two captures in one second do not overwrite each other
    assert sorted(k for k in w if k != SUMMARY_KEY) == ["http://example.org/@20200101000000",
                                                        "http://example.org/@20200101000000#2"]


def test_json_readable_the_way_otmt_readers_read_it() -> None:
    """OTMT's own gold-data export walks URI-T -> URI-M -> "overall topic
    status"; skipping "__" keys is all a reader needs."""
    out = io.StringIO()
    write_json(results(), out, CFG)
    data = json.loads(out.getvalue())
    labels = {}
    for block in data.values():
        for urim, entry in block.items():
            if urim.startswith("__"):
                continue
            labels[urim] = 0 if entry["overall topic status"] == "off-topic" else 1
    assert sum(1 for v in labels.values() if v == 0) == 1 and len(labels) == 5
    assert "history:org,example)/" in data  # no TimeMap known: history:<key>


def test_stemming_flag_follows_config() -> None:
    cfg = Config.model_validate({"engine": {"tokens": {"stemming": True}, "extract": {"main_content": True}}})
    out = io.StringIO()
    write_json(results()[:1], out, cfg)
    entry = next(v for k, v in json.loads(out.getvalue())["gold:1"].items() if "20200201" in k)
    assert entry["timemap measures"]["cosine"]["stemmed"] is True
    assert entry["timemap measures"]["bytecount"]["stemmed"] is False
    assert entry["timemap measures"]["cosine"]["removed boilerplate"] is True


def test_csv_rows_per_capture_and_measure() -> None:
    out = io.StringIO()
    write_csv(results(), out, CFG)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert tuple(rows[0].keys()) == CSV_FIELDS
    assert len(rows) == 2 + 2 + 1 + 1 + 1  # measures per capture; the empty capture still has a row
    off = [r for r in rows if r["status"] == "off-topic"]
    assert {r["measure"] for r in off} == {"cosine", "bytecount"}
    assert all(r["overall_status"] == "off-topic" and r["change"] == "off-topic" for r in off)
    empty = [r for r in rows if r["overall_status"] == "empty"]
    assert len(empty) == 1 and empty[0]["measure"] == "" and empty[0]["score"] == ""


def _streamed(out: io.StringIO, seen: list[str]) -> Iterator[HistoryResult]:
    first, second = results()
    yield first
    seen.append(out.getvalue())  # what was written before the second history was even produced
    yield second


def test_jsonl_and_json_stream() -> None:
    out = io.StringIO()
    seen: list[str] = []
    write_jsonl(_streamed(out, seen), out, CFG, {})
    assert seen[0].count("\n") == 3  # the first history's three captures were already written
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) == 5
    assert lines[1]["history"] == "gold:1" and lines[1]["uri_t"] == "gold:1"
    assert lines[1]["uri_m"].endswith("/20200201000000/http://acda.co/")
    assert lines[1]["timemap measures"]["cosine"]["comparison score"] == 0.05
    assert lines[1]["driftline"]["change"] == "off-topic"
    assert lines[3]["uri_t"] == "history:org,example)/"
    out2 = io.StringIO()
    seen2: list[str] = []
    write_json(_streamed(out2, seen2), out2, CFG)
    assert '"gold:1"' in seen2[0] and "example.org" not in seen2[0]


def test_summary_table_and_tsv() -> None:
    out = io.StringIO()
    write_summary(results(), out, CFG, table=False)
    rows = [line.split("\t") for line in out.getvalue().splitlines()]
    assert rows[0][:6] == ["history", "url", "captures", "behaviour", "first drift", "off-topic share"]
    assert rows[1][:6] == ["gold:1", "http://acda.co/", "3", "Step Function On", "2020-02-01T00:00:00Z", "0.50"]
    header = rows[0]
    assert rows[1][header.index("off-topic")] == "1" and rows[2][header.index("unchanged")] == "1"
    table = io.StringIO()
    write_summary(results(), table, CFG, table=True)
    lines = table.getvalue().splitlines()
    assert set(lines[1]) <= {"-", " "}  # a rule under the header
    assert len({line.index("behaviour") for line in lines[:1]} | {lines[2].index("Step Function On")}) == 1


def test_write_results_to_file_and_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "sub" / "out.json"
    write_results(results(), str(target), "json", CFG)
    assert json.loads(target.read_text())["gold:1"][SUMMARY_KEY]["captures"] == 3
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]  # no temporary file left behind
    write_results(results(), None, "jsonl", CFG)
    assert len(capsys.readouterr().out.splitlines()) == 5
    with pytest.raises(ConfigError):
        write_results(results(), None, "xml", CFG)


def test_failed_write_keeps_previous_file(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("previous\n")

    def broken() -> Iterator[HistoryResult]:
        yield results()[0]
        raise RuntimeError("engine crashed")

    with pytest.raises(RuntimeError):
        write_results(broken(), str(target), "csv", CFG)
    assert target.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_writing_to_a_device_or_pipe_writes_into_it(tmp_path: Path) -> None:
    """``-o /dev/null`` (or a FIFO) must stay what it is: no temp file renamed over it."""
    import os
    import stat
    import threading

    from watcher.config import Config
    from watcher.output import write_results

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_results([], str(fifo), "jsonl", Config())
    reader.join(timeout=10)
    assert stat.S_ISFIFO(fifo.stat().st_mode) and got == [b""]
    write_results([], os.devnull, "json", Config())
    assert stat.S_ISCHR(Path(os.devnull).stat().st_mode)


def test_every_list_of_change_classes_is_the_one_list() -> None:
    """ChangeClass is written out once (watcher.model); the lists that order or group it (the review
    queue, metrics series, seed reports, output columns) name exactly its classes."""
    from watcher.metrics import VERDICT_PAIRS
    from watcher.model import CHANGE_CLASSES
    from watcher.output.common import CHANGE_CLASSES as COLUMNS
    from watcher.seeds.report import NOT_CHANGE, NOT_OBSERVED
    from watcher.store.labels import SEVERITY

    assert COLUMNS == CHANGE_CLASSES
    assert sorted(SEVERITY) == sorted(CHANGE_CLASSES)
    assert {c for _, c in VERDICT_PAIRS} == set(CHANGE_CLASSES)
    assert set(CHANGE_CLASSES) >= NOT_CHANGE | NOT_OBSERVED


def test_json_stays_json_with_line_separators_in_its_strings() -> None:
    """A page's words in a reason (a page-kind phrase, a title) can hold U+2028, U+2029 or NEL, which
    JSON leaves unescaped: indenting the written block by lines split the string there and wrote a raw
    newline into it (invalid JSON)."""
    import dataclasses

    odd = "soft-404 in title: \u201cNot\u2028found\u2029 here\x85\u201d"
    rs = [dataclasses.replace(r, verdicts=tuple(dataclasses.replace(v, reason=odd) for v in r.verdicts))
          for r in results()]
    out = io.StringIO()
    write_json(rs, out, CFG)
    data = json.loads(out.getvalue())
    reasons = {e["driftline"]["reason"] for block in data.values() for k, e in block.items() if k != SUMMARY_KEY}
    assert reasons == {odd}


def test_jsonl_results_with_line_separators_read_back(tmp_path: Path) -> None:
    """JSONL keeps U+2028, U+2029 and NEL raw in its strings: ``eval`` and ``review`` read it by "\\n",
    not by ``str.splitlines`` (which split a record there and refused the file)."""
    import dataclasses

    from watcher.evaluation.evaluate import load_results

    odd = "text changed\u2028under\u2029a kept title\x85"
    rs = [dataclasses.replace(r, verdicts=tuple(dataclasses.replace(v, reason=odd) for v in r.verdicts))
          for r in results()]
    out = io.StringIO()
    n = write_jsonl(rs, out, CFG, {})
    path = tmp_path / "r.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    rows = load_results(str(path))
    assert len(rows) == n == 5
    assert {r.entry["driftline"]["reason"] for r in rows} == {odd}
