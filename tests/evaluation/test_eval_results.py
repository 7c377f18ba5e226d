"""Evaluation as code: the results file, the floors and their one update command,
the documentation tables rendered from the checked-in results, and eval --labels."""

from __future__ import annotations

import copy
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.labelled import make_case
from watcher.cli import main
from watcher.errors import InputError
from watcher.evaluation.cli import resolve_labels
from watcher.evaluation.crossval import assign_folds
from watcher.evaluation.evaluate import evaluate
from watcher.evaluation.floors import check_floors, load_floors, proposed_floors, tolerance, update_floors
from watcher.evaluation.report import MARKER, on_page_markdown, render, replace_markers
from watcher.evaluation.results import SCHEMA, collection_results, load_results_file, write_results

REPO = Path(__file__).resolve().parents[2]


def _block(tmp: Path, *, helpful: bool) -> dict[str, Any]:
    labels, result = make_case(tmp, helpful=helpful)
    return collection_results(labels, result, voting=["tfintersection"], k=3, seeds=(0, 1))


def test_results_block_holds_every_view(tmp_path: Path) -> None:
    labels, result = make_case(tmp_path, helpful=True)
    b = collection_results(labels, result, voting=["tfintersection"], k=3, seeds=(0, 1))
    rep = evaluate(labels, result)
    assert b["overall"]["f1"] == round(rep.overall.f1, 4) and b["overall"]["tp"] == rep.overall.tp
    assert b["matched"] == 180 and b["timemaps"] == 30 and b["voting"] == ["tfintersection"]
    assert b["profiles"]["collection"]["captures"] == 180
    assert set(b["measures"]) == {"tfintersection", "cosine"}
    assert b["measures"]["tfintersection"]["voting"] and not b["measures"]["cosine"]["voting"]
    cos = b["measures"]["cosine"]
    assert cos["auc"] == 1.0 and cos["cv_fixed"]["auc"]["min"] == 1.0  # cosine separates the classes here
    assert set(b["cv"]["default"]["per_seed"]) == {"0", "1"}
    # pooled spread: every held-out fold of both seeds, the default verdict untouched by tuning
    t_groups = [ln.split("\t")[0] for ln in labels.read_text().splitlines()[1:]]
    t_pos = [ln.split("\t")[3] == "0" for ln in labels.read_text().splitlines()[1:]]
    f1s = []
    data = json.loads(result.read_text())
    flagged = [e["overall topic status"] == "off-topic" for tm in data.values() for e in tm.values()]
    for seed in (0, 1):
        fold_of = assign_folds(t_groups, t_pos, 3, seed)
        for f in range(3):
            rows = [i for i, g in enumerate(t_groups) if fold_of[g] == f]
            tp = sum(1 for i in rows if flagged[i] and t_pos[i])
            fp = sum(1 for i in rows if flagged[i] and not t_pos[i])
            fn = sum(1 for i in rows if not flagged[i] and t_pos[i])
            f1s.append(2 * tp / (2 * tp + fp + fn))
    assert b["cv"]["default"]["f1"]["mean"] == pytest.approx(sum(f1s) / 6, abs=1e-4)
    assert b["cv"]["default"]["f1"]["min"] == pytest.approx(min(f1s), abs=1e-4)


def test_results_file_keeps_other_collections_and_refuses_foreign_files(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    write_results(out, "a", {"overall": {"f1": 0.5}})
    data = write_results(out, "b", {"overall": {"f1": 0.6}}, {"policy": "any"})
    assert data["schema"] == SCHEMA and set(data["collections"]) == {"a", "b"}
    assert load_results_file(out)["collections"]["b"]["config"] == {"policy": "any"}
    (tmp_path / "other.json").write_text('{"timemaps": {}}')
    with pytest.raises(InputError, match="not a results file"):
        load_results_file(tmp_path / "other.json")


def test_tolerance_is_one_standard_error_of_the_fold_spread() -> None:
    assert tolerance(0.0783, 5) == 0.036  # 0.0783 / sqrt(5) = 0.0350.., rounded up to 0.001
    assert tolerance(0.0, 5) == 0.01  # never equal to the figure


def test_gate_fails_on_a_drop_beyond_the_tolerance_only(tmp_path: Path) -> None:
    block = _block(tmp_path, helpful=False)
    floors = {"collections": {"c": proposed_floors(block)}}
    f1 = floors["collections"]["c"]["overall.f1"]
    assert f1["floor"] < f1["measured"] == block["overall"]["f1"]
    results = {"collections": {"c": block}}
    checked, failures = check_floors(results, floors)
    assert checked >= 6 and failures == []
    within = copy.deepcopy(results)
    within["collections"]["c"]["overall"]["f1"] = f1["floor"]
    assert check_floors(within, floors)[1] == []
    below = copy.deepcopy(results)
    below["collections"]["c"]["overall"]["f1"] = f1["floor"] - 0.001
    (line,) = check_floors(below, floors)[1]
    assert line.startswith("c overall.f1: ") and "< floor" in line
    gone = copy.deepcopy(results)
    del gone["collections"]["c"]["macro_f1"]
    assert any("macro_f1: no such figure" in x for x in check_floors(gone, floors)[1])


def test_update_raises_freely_and_lowers_only_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "floors.json"
    block = _block(tmp_path, helpful=False)
    lines = update_floors(path, {"collections": {"c": block}}, "first floors")
    assert lines and all(" added " in x for x in lines)
    first = load_floors(path)
    assert first["log"][0]["reason"] == "first floors" and "sd / sqrt(folds)" in first["rule"]
    better = copy.deepcopy(block)
    better["overall"]["f1"] += 0.05
    (raised,) = update_floors(path, {"collections": {"c": better}})  # no reason needed to raise
    assert raised.startswith("c overall.f1: raised")
    assert load_floors(path)["log"][-1]["reason"] == "figure rose"
    worse = copy.deepcopy(block)
    worse["overall"]["f1"] -= 0.02
    before = path.read_text()
    with pytest.raises(InputError, match=r"refusing to lower 1 floor\(s\) without --reason: c overall.f1"):
        update_floors(path, {"collections": {"c": worse}})
    with pytest.raises(InputError):
        update_floors(path, {"collections": {"c": worse}}, "   ")
    assert path.read_text() == before  # nothing written
    # a rise is written even while another floor's fall is refused
    mixed = copy.deepcopy(worse)
    mixed["overall"]["precision"] += 0.05
    with pytest.raises(InputError, match=r"refusing to lower 1 floor\(s\) without --reason \(1 other change"):
        update_floors(path, {"collections": {"c": mixed}})
    after = load_floors(path)["collections"]["c"]
    assert after["overall.precision"]["floor"] > json.loads(before)["collections"]["c"]["overall.precision"]["floor"]
    assert after["overall.f1"] == json.loads(before)["collections"]["c"]["overall.f1"]
    (lowered,) = update_floors(path, {"collections": {"c": mixed}}, "profile rule removed (issue 30)")
    assert lowered.startswith("c overall.f1: lowered")
    entry = load_floors(path)["log"][-1]
    assert entry["figure"] == "overall.f1" and entry["reason"] == "profile rule removed (issue 30)"
    assert entry["to"] < entry["from"]


def test_cli_writes_results_checks_and_refuses_to_lower(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels, result = make_case(tmp_path, helpful=False)
    res, floors = tmp_path / "res.json", tmp_path / "floors.json"
    args = ["eval", str(labels), str(result), "--folds", "3", "--seeds", "0,1", "--collection", "made"]
    assert main([*args, "--results", str(res), "--update-floors", str(floors), "--reason", "first"]) == 0
    assert "made" in load_results_file(res)["collections"]
    assert main([*args, "--check-floors", str(floors)]) == 0
    assert " figures at or above their floors" in capsys.readouterr().out
    # a worse verdict: relabel two caught captures as on topic
    lines = labels.read_text().splitlines()
    data = json.loads(result.read_text())
    caught = [u for tm in data.values() for u, e in tm.items() if e["overall topic status"] == "off-topic"][:3]
    labels.write_text("\n".join(ln.replace("\t0", "\t1") if ln.split("\t")[2] in caught else ln
                                for ln in lines) + "\n")
    assert main([*args, "--check-floors", str(floors)]) == 1
    assert main([*args, "--update-floors", str(floors)]) == 2
    assert "refusing to lower" in capsys.readouterr().err
    assert main([*args, "--reason", "x"]) == 2  # --reason alone


@pytest.mark.parametrize("name", ["gold-1068", "deep-pages"])
def test_checked_in_results_render_into_the_docs(name: str) -> None:
    data = json.loads((REPO / "docs" / "results" / f"{name}.json").read_text())
    c = data["collections"][name]
    text = render(data)
    assert f"| default verdict, whole collection | **{c['overall']['f1']:.3f}** |" in text
    for measure in c["measures"]:
        assert f"\n| {measure} | " in text
    page = (REPO / "docs" / "evaluation.md").read_text()
    assert f"<!-- results:{name} -->" in page
    out = on_page_markdown(page, config={"docs_dir": str(REPO / "docs")})
    assert not MARKER.search(out) and text in out
    with pytest.raises(ValueError, match="no-such"):
        replace_markers("text\n<!-- results:no-such -->\n", REPO / "docs" / "results")
    quoted = "the marker `<!-- results:NAME -->` in a sentence\n"
    assert replace_markers(quoted, REPO / "docs" / "results") == quoted


def test_labels_from_a_store_go_through_the_review_contract(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_labels("curator.tsv", tmp_path) == Path("curator.tsv")
    monkeypatch.setitem(sys.modules, "watcher.review.labels", None)  # the review feature absent
    with pytest.raises(InputError, match="driftline labels export -f gold"):
        resolve_labels("review.sqlite", tmp_path)
    calls: list[tuple[str, str]] = []

    def export_gold(source: str, out: str) -> int:
        calls.append((source, out))
        Path(out).write_text("id\tdate\tURI\tlabel\n1\t20200101000000\thttp://x/\t1\n")
        return 1

    monkeypatch.setitem(sys.modules, "watcher.review.labels", types.SimpleNamespace(export_gold=export_gold))
    got = resolve_labels("postgresql://u@db/driftline", tmp_path)
    assert calls == [("postgresql://u@db/driftline", str(tmp_path / "labels.tsv"))] and got.is_file()


def test_eval_labels_scores_the_result_against_curator_labels(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    labels, result = make_case(tmp_path, helpful=False)
    assert main(["eval", str(labels), str(result)]) == 0
    own = capsys.readouterr().out
    curator = tmp_path / "curator.tsv"
    rows = labels.read_text().splitlines()
    # the curator disagrees: every capture of TimeMap 0 after its baseline is off topic
    curator.write_text("\n".join([rows[0], *(r if not r.startswith("0\t") or r.split("\t")[1].startswith("202001")
                                             else r.rsplit("\t", 1)[0] + "\t0" for r in rows[1:])]) + "\n")
    assert main(["eval", "--labels", str(curator), str(result)]) == 0
    theirs = capsys.readouterr().out
    assert f"`{curator}`" in theirs and theirs != own
    assert main(["eval", "--labels", str(curator), str(result), str(result)]) == 2
    res = tmp_path / "res.json"
    assert main(["eval", "--labels", str(curator), str(result), "--results", str(res), "--folds", "3"]) == 0
    block = load_results_file(res)["collections"]["curator"]  # named after the curator's labels
    assert block["result"].endswith("/result.json")
    assert block["positives"] == sum(1 for r in curator.read_text().splitlines()[1:] if r.endswith("\t0"))


def test_eval_labels_reads_a_review_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Labels given on the review page, read straight from its SQLite store (the review feature's
    export_gold), score the scan the curator reviewed."""
    from tests.fixtures.reviewdata import make_gold, scan_to
    from watcher.review.ingest import open_input
    from watcher.store.labels import Query

    result = scan_to(make_gold(tmp_path), tmp_path / "result.json")
    store_path = tmp_path / "review.sqlite"
    store, review, _, _ = open_input(str(result), str(store_path))
    try:
        items = review.queue(Query()).items
        off = [i for i in items if i.change == "off-topic"]
        on = [i for i in items if i.change != "off-topic" and i.change != "baseline"][:3]
        for i in off:
            review.set_label(i.verdict_id, i.version, "off-topic")
        for i in on:
            review.set_label(i.verdict_id, i.version, "on-topic")
    finally:
        store.close()
    assert len(off) == 2 and len(on) == 3
    assert main(["eval", "--labels", str(store_path), str(result)]) == 0
    out = capsys.readouterr().out
    assert "Labelled captures: 5 (2 off-topic = positive class). Matched to a result: 5." in out
    assert "| overall | - | 5 | 0 | 2 | 0 | 0 | 3 |" in out  # the curator agrees with every verdict
