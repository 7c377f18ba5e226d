"""driftline tune: a change is recommended, and an overlay written, only where held-out folds
support it; too few labels are refused; eval --labels scores a scanned directory against
curator labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.fixtures.labelled import make_case, make_gold_dir
from watcher.cli import main
from watcher.config import PolicyConfig, load_config
from watcher.errors import InputError
from watcher.evaluation.crossval import Rule
from watcher.evaluation.evaluate import match_results
from watcher.evaluation.tune import Candidate, tune_labels

VOTING = {"tfintersection": 1.0}


@pytest.mark.parametrize(("gains", "supported"), [
    ([0.02] * 5, True),  # always a little better
    ([0.1, 0.1, -0.05], False),  # mean 0.05 below its sd 0.087
    ([0.05, 0.05, 0.0, 0.0], False),  # mean 0.025 below its sd 0.029
    ([0.06, 0.05, 0.04, 0.0, -0.01], False),  # mean 0.028 below its sd 0.030
    ([0.06, 0.05, 0.04, 0.05, -0.01], True),  # mean 0.038 above its sd 0.028, 4 of 5 gain
    ([0.0] * 5, False),
])
def test_support_needs_a_gain_above_its_spread_in_most_folds(gains: list[float], supported: bool) -> None:
    c = Candidate(Rule("x", "verdict"), "x", gain=gains)
    assert c.supported is supported


def test_a_voter_that_helps_in_every_fold_is_recommended(tmp_path: Path) -> None:
    labels, result = make_case(tmp_path, n_timemaps=40, helpful=True)
    rep = tune_labels(match_results(labels, result), VOTING, PolicyConfig(), k=5, seeds=(0, 1))
    assert rep.chosen is not None and rep.chosen.rule.name == "add voter cosine"
    assert rep.chosen.wins == 10 and rep.chosen.mean_gain > rep.chosen.sd_gain
    assert rep.overlay is not None
    measures = rep.overlay["engine"]["measures"]
    assert measures["tfintersection"] == 1.0 and 0.07 <= measures["cosine"] <= 0.15


def test_a_voter_that_only_adds_false_positives_is_dropped(tmp_path: Path) -> None:
    labels, result = make_case(tmp_path, n_timemaps=40, helpful=False, noisy_voter=True)
    voting = {"tfintersection": 1.0, "wordcount": -0.95}
    rep = tune_labels(match_results(labels, result), voting, PolicyConfig(), k=5, seeds=(0, 1))
    drop = next(c for c in rep.candidates if c.drop == "wordcount")
    assert drop.against == "checks OR voters at the current thresholds" and drop.thresholds == []
    assert rep.chosen is drop and drop.wins >= 8
    assert rep.overlay == {"engine": {"measures": {"tfintersection": 1.0}}}
    keep = next(c for c in rep.candidates if c.drop == "tfintersection")
    assert not keep.supported and keep.mean_gain < 0


def test_cli_writes_only_the_keys_that_change_and_the_overlay_loads(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    labels, result = make_case(tmp_path, n_timemaps=40, helpful=True)
    out = tmp_path / "tuned.yaml"
    assert main(["tune", str(labels), str(result), "-o", str(out), "--seeds", "0,1"]) == 0
    assert "Recommendation: **add cosine as a voter**" in capsys.readouterr().out
    text = out.read_text()
    assert text.startswith("# driftline tune: add cosine as a voter") and "held-out F1 gain" in text
    assert set(yaml.safe_load(text)) == {"engine"} and set(yaml.safe_load(text)["engine"]) == {"measures"}
    cfg = load_config(out)  # the configured voters kept (wordcount unscored in this result), cosine added
    assert set(cfg.engine.measures) == {"tfintersection", "wordcount", "cosine"}


def test_no_change_where_the_folds_do_not_support_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels, result = make_case(tmp_path, n_timemaps=40, helpful=False)
    out = tmp_path / "tuned.yaml"
    assert main(["tune", str(labels), str(result), "-o", str(out), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["recommended"] is None and rep["overlay"] is None and not out.exists()
    assert not any(c["supported"] for c in rep["candidates"])
    retuned = next(c for c in rep["candidates"] if c["name"].startswith("voting thresholds re-tuned"))
    assert retuned["folds"] == 15 and len(retuned["fold_thresholds"]) == 15
    # judged against the same rule at the current thresholds: a fold that keeps them gains nothing
    assert retuned["against"] == "checks OR voters at the current thresholds"
    labels_m = match_results(labels, result)
    full = tune_labels(labels_m, VOTING, k=5, seeds=(0, 1, 2))
    c = full.candidates[0]
    kept = [g for g, th in zip(c.gain, c.thresholds, strict=True) if th == {"tfintersection": 1.0}]
    assert kept and all(g == 0.0 for g in kept)
    assert main(["tune", str(labels), str(result), "-o", str(out)]) == 0
    assert "Recommendation: **no change**" in capsys.readouterr().out and not out.exists()


def test_too_few_labels_are_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels, result = make_case(tmp_path, n_timemaps=6, helpful=True)
    with pytest.raises(InputError, match=r"too few labels to tune: .* 5 folds need at least 20"):
        tune_labels(match_results(labels, result), VOTING, k=5)
    assert main(["tune", str(labels), str(result)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "too few labels to tune" in err


def test_eval_labels_scans_a_directory_and_scores_curator_labels(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The real engine scans the captures; the curator's labels, not the directory's, are the gold."""
    gold = make_gold_dir(tmp_path / "gold")
    rows = (gold / "labels.tsv").read_text().splitlines()
    curator = tmp_path / "curator.tsv"
    # the curator also calls TimeMap 1's last capture off topic (the engine keeps it on topic)
    curator.write_text("\n".join([rows[0], *(r.rsplit("\t", 1)[0] + "\t0" if r.startswith("1\t20200401")
                                             else r for r in rows[1:])]) + "\n")
    assert main(["eval", "--labels", str(curator), str(gold), "-j", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Labelled captures: 24 (5 off-topic = positive class). Matched to a result: 24." in out
    assert "| overall | - | 24 |" in out


def test_a_gold_directory_is_scanned_for_results_and_for_tune(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`eval DIR --results` and `tune DIR` scan the directory themselves (the real engine)."""
    gold = make_gold_dir(tmp_path / "gold")
    res = tmp_path / "res.json"
    assert main(["eval", str(gold), "--results", str(res), "--folds", "2", "--seeds", "0", "-j", "1",
                 "--no-progress"]) == 0
    block = json.loads(res.read_text())["collections"]["gold"]
    assert block["result"] == "scanned by this run" and block["matched"] == 24 and block["positives"] == 4
    assert block["overall"]["tp"] == 4 and block["cv"]["folds"] == 2
    capsys.readouterr()
    # 4 off-topic captures: too few for 2 folds (8 needed), said in one line after the scan
    assert main(["tune", str(gold), "--folds", "2", "-j", "1", "--no-progress"]) == 2
    assert "too few labels to tune: 4 off-topic" in capsys.readouterr().err
