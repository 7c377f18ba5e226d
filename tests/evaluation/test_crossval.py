"""driftline eval --folds: grouped cross-validation on hand-computed cases, on a
gold directory scanned by the real engine, and on the shared gold standard."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.fixtures import textgen
from watcher.cli import main
from watcher.errors import InputError
from watcher.evaluation.crossval import Rule, assign_folds, build_table, checks_of, cross_validate, format_cv
from watcher.evaluation.evaluate import match_results
from watcher.evaluation.metrics import best_threshold

AM = "http://wayback.archive-it.org/1068/{ts}/http://{host}/"

# TimeMap id -> captures (ts, label, overall status, change, cosine, reason)
TINY: dict[str, list[tuple[str, int, str, str, float, str]]] = {
    "1": [("20200101000000", 1, "on-topic", "baseline", 1.0, "baseline capture"),
          ("20200201000000", 0, "off-topic", "off-topic", 0.30, "cosine 0.30 < 0.35"),
          ("20200301000000", 1, "on-topic", "minor", 0.50, "content changed")],
    "2": [("20200101000000", 1, "on-topic", "baseline", 1.0, "baseline capture"),
          ("20200201000000", 0, "off-topic", "off-topic", 0.10, "cosine 0.10 < 0.35"),
          ("20200301000000", 1, "on-topic", "minor", 0.20, "content changed")],
}


def write_case(tmp: Path, case: dict[str, list[tuple[str, int, str, str, float, str]]]) -> tuple[Path, Path]:
    rows = ["id\tdate\tURI\tlabel"]
    data: dict[str, Any] = {}
    for tid, caps in case.items():
        host = f"tm{tid}.example"
        for ts, label, status, change, cos, reason in caps:
            rows.append(f"{tid}\t{ts}\t{AM.format(ts=ts, host=host)}\t{label}")
            data.setdefault(f"gold:{tid}", {})[AM.format(ts=ts, host=host)] = {
                "timemap measures": {"cosine": {"comparison score": cos, "topic status": "n/a", "threshold": 0.12}},
                "overall topic status": status,
                "driftline": {"change": change, "reason": reason, "url": f"http://{host}/", "capture time": ts},
            }
    labels = tmp / "labels.tsv"
    labels.write_text("\n".join(rows) + "\n")
    result = tmp / "result.json"
    result.write_text(json.dumps(data))
    return labels, result


def test_hand_computed_figures_and_no_leak(tmp_path: Path) -> None:
    """Two TimeMaps, two folds, cosine alone.  Trained on TimeMap 2 the best
    thresholds are 0.11..0.20 (ties go to the one nearest 0.12, the threshold
    in use): 0.12, which flags nothing in TimeMap 1.  Trained on TimeMap 1 they
    are 0.31..0.50 (nearest 0.12: 0.31), which flags both captures of
    TimeMap 2.  Tuned on everything the best would be 0.31 (F1 0.8): the fold
    holding TimeMap 1 out never saw it."""
    labels, result = write_case(tmp_path, TINY)
    m = match_results(labels, result)
    rep = cross_validate(m, 2, seed=0, rules=[Rule("cosine", "measure", ("cosine",)), Rule("default", "default")])
    fold_of = assign_folds([g.id for g, _ in m.pairs], [g.label == 0 for g, _ in m.pairs], 2, 0)
    assert sorted(fold_of.values()) == [0, 1]
    cos = rep.results[0]
    by_tm = {("1" if fold_of["1"] == f["fold"] else "2"): f for f in cos.folds}
    assert by_tm["1"]["thresholds"] == {"cosine": 0.12}  # trained on TimeMap 2 only
    assert by_tm["2"]["thresholds"] == {"cosine": 0.31}  # trained on TimeMap 1 only
    # the threshold tuned on all data, which a leaking fold would have used
    scores = [0.30, 0.50, 0.10, 0.20]
    pos = [True, False, True, False]
    assert best_threshold(scores, pos, "below", "fraction") == pytest.approx((0.31, 0.8))
    assert (by_tm["1"]["tp"], by_tm["1"]["fp"], by_tm["1"]["fn"], by_tm["1"]["f1"]) == (0, 0, 1, 0.0)
    assert (by_tm["2"]["tp"], by_tm["2"]["fp"], by_tm["2"]["fn"]) == (1, 1, 0)
    assert by_tm["2"]["f1"] == pytest.approx(2 / 3)
    assert cos.stats["f1"]["mean"] == pytest.approx(1 / 3)
    assert cos.stats["f1"]["sd"] == pytest.approx(statistics.stdev([0.0, 2 / 3]))
    assert cos.stats["f1"]["min"] == 0.0 and cos.stats["f1"]["max"] == pytest.approx(2 / 3)
    # pooled: TimeMap 1 flags nothing, TimeMap 2 both non-baseline captures
    assert (cos.micro["tp"], cos.micro["fp"], cos.micro["fn"], cos.micro["tn"]) == (1, 1, 1, 3)
    assert cos.micro["f1"] == pytest.approx(0.5)
    assert cos.macro_f1 == pytest.approx((0.0 + 2 / 3) / 2)
    assert (cos.timemap["tp"], cos.timemap["fn"]) == (1, 1) and cos.timemap["f1"] == pytest.approx(2 / 3)
    assert cos.errors["errors"] == 2 and cos.errors["largest_share"] == 0.5 and cos.errors["worst_share"] == 0.5
    dflt = rep.results[1]
    assert dflt.micro["f1"] == 1.0 and dflt.stats["f1"]["sd"] == 0.0 and dflt.timemap["f1"] == 1.0
    text = format_cv(rep)
    assert "| cosine | 0.333 ± 0.471 [0.000, 0.667] |" in text


def test_checks_or_measures_and_pairs(tmp_path: Path) -> None:
    """A capture flagged by a fixed check stays flagged under the re-tuned
    verdict whatever the thresholds; an OR-pair finds what neither measure
    finds alone."""
    case: dict[str, list[tuple[str, int, str, str, float, str]]] = {}
    for i in range(4):
        case[str(i)] = [("20200101000000", 1, "on-topic", "baseline", 1.0, "baseline capture"),
                        ("20200201000000", 0, "off-topic", "off-topic", 0.9,
                         "same digest as 20200101000000: page kind parked (title: domain for sale)"),
                        ("20200301000000", 0, "off-topic", "off-topic", 0.05, "cosine 0.05 < 0.12"),
                        ("20200401000000", 1, "on-topic", "minor", 0.6, "content changed")]
    labels, result = write_case(tmp_path, case)
    m = match_results(labels, result)
    t = build_table(m)
    assert int(t.checks.sum()) == 4 and not t.eligible[0]
    rep = cross_validate(m, 2, seed=3, voting=["cosine"])
    verdict = next(r for r in rep.results if r.rule.kind == "verdict")
    assert verdict.micro["f1"] == 1.0  # checks find the parked pages, cosine < ~0.06..0.6 the rest
    alone = next(r for r in rep.results if r.rule.name == "cosine")
    # alone, cosine must flag everything below 0.91 to reach the parked pages (0.9): F1 8/10
    assert (alone.micro["tp"], alone.micro["fp"], alone.micro["fn"]) == (8, 4, 0)
    assert checks_of({"driftline": {"reason": "x", "checks": ["identity"]}}) == {"identity"}
    assert checks_of({"driftline": {"reason": "redirects to another site: http://x/"}}) == {"redirect"}
    assert checks_of({"overall topic status": "off-topic"}) == frozenset()


def test_fold_assignment_groups_balances_and_is_seeded() -> None:
    groups, pos = [], []
    for g in range(30):
        n_pos = g % 4
        for i in range(5 + g % 7):
            groups.append(f"t{g}")
            pos.append(i < n_pos)
    a = assign_folds(groups, pos, 5, seed=1)
    assert a == assign_folds(groups, pos, 5, seed=1)
    assert a != assign_folds(groups, pos, 5, seed=2)
    per_fold = [sum(p for g, p in zip(groups, pos, strict=True) if a[g] == f) for f in range(5)]
    assert max(per_fold) - min(per_fold) <= 1  # 43 positives in groups of 1..3
    with pytest.raises(InputError):
        assign_folds(groups, pos, 31, seed=0)
    with pytest.raises(InputError):
        assign_folds(groups, pos, 1, seed=0)


PARKED = b"<html><head><title>Domain for sale</title></head><body>Buy this domain.</body></html>"


def make_gold(root: Path, n_timemaps: int = 8) -> Path:
    """A gold directory: TimeMaps about their own topics, some going off topic
    (an unrelated document, a parked domain)."""
    topics = list(textgen.TOPICS)
    rows = ["id\tdate\tURI\tlabel"]
    for tid in range(1, n_timemaps + 1):
        topic = topics[tid % len(topics)]
        other = topics[(tid + 3) % len(topics)]
        d = root / "html" / str(tid)
        d.mkdir(parents=True)
        for j in range(5):
            ts = f"2020{j + 1:02d}01000000"
            label = 1
            if tid % 3 == 0 and j >= 3:
                page, label = textgen.html(textgen.document([other, other], seed=tid * 10 + j), "Elsewhere"), 0
            elif tid % 4 == 1 and j == 4:
                page, label = PARKED, 0
            else:
                page = textgen.html([*textgen.document([topic, topic, topic], seed=tid), f"update {j}"],
                                    f"{topic.title()} Project {tid}")
            (d / f"{ts}.html").write_bytes(page)
            rows.append(f"{tid}\t{ts}\t{AM.format(ts=ts, host=f'site{tid}.example')}\t{label}")
    (root / "labels.tsv").write_text("\n".join(rows) + "\n")
    return root


def test_eval_folds_end_to_end_on_a_scanned_gold_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI scans the directory once (every measure scored), then
    cross-validates; every fold holds whole TimeMaps."""
    gold = make_gold(tmp_path / "gold")
    assert main(["eval", str(gold), "--folds", "4", "--seed", "7", "--json", "-j", "1", "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["folds"] == 4 and out["captures"] == 40 and out["timemaps"] == 8
    assert sum(f["timemaps"] for f in out["fold_sizes"]) == 8
    assert sum(f["captures"] for f in out["fold_sizes"]) == 40
    assert all(f["captures"] % 5 == 0 for f in out["fold_sizes"])  # 5 captures per TimeMap: none split
    names = {r["name"] for r in out["rules"]}
    assert {"default", "cosine", "levenshtein", "raw_simhash", "cosine OR wordcount"} <= names
    default = next(r for r in out["rules"] if r["name"] == "default")
    assert default["micro"]["tp"] >= 4  # the parked pages and replaced documents
    assert set(default["stats"]) >= {"f1", "precision", "recall", "macro_f1", "timemap_f1"}
    labels = gold / "labels.tsv"
    groups = [line.split("\t")[0] for line in labels.read_text().splitlines()[1:]]
    pos = [line.split("\t")[3] == "0" for line in labels.read_text().splitlines()[1:]]
    fold_of = assign_folds(groups, pos, 4, 7)
    assert [sum(1 for g in fold_of.values() if g == f) for f in range(4)] == \
        [f["timemaps"] for f in out["fold_sizes"]]


@pytest.mark.shared
@pytest.mark.timeout(900)
def test_shared_gold_five_folds(gold_dir: Path, gold_scan: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The shared collection's default scan (the session's, shared with the end-to-end F1 test),
    then 5-fold grouped CV of it. `eval DIR --folds`, which scans first, is tested on a made
    collection above."""
    labels = str(gold_dir / "labels.tsv")
    assert main(["eval", labels, str(gold_scan), "--folds", "5", "--json", "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["captures"] == 2302 and out["timemaps"] == 199 and out["positives"] == 94
    pos = [f["positives"] for f in out["fold_sizes"]]
    assert max(pos) - min(pos) <= 2
    default = next(r for r in out["rules"] if r["name"] == "default")
    assert default["micro"]["f1"] > 0.7 and default["stats"]["f1"]["sd"] > 0
    verdict = next(r for r in out["rules"] if r["kind"] == "verdict")
    assert 0.5 < verdict["micro"]["f1"] <= 1.0
    assert all(np.isfinite(r["stats"]["f1"]["mean"]) for r in out["rules"])


def test_fold_columns_see_only_their_fold_and_default_or_voter(tmp_path: Path) -> None:
    """Per-fold score columns (as the collection centroid is built) are asked
    for with that fold's held-out mask, and are what that fold tunes and
    predicts with; a voter OR-ed onto the default verdict never flags less."""
    labels, result = write_case(tmp_path, TINY)
    m = match_results(labels, result)
    groups = [g.id for g, _ in m.pairs]
    seen: list[tuple[int, list[str]]] = []

    def cols(fold: int, test: np.ndarray) -> dict[str, tuple[np.ndarray, str, str]]:
        held = sorted({groups[i] for i in np.flatnonzero(test)})
        seen.append((fold, held))
        # a score that is informative only about the held-out TimeMap's own rows
        s = np.array([0.0 if groups[i] in held else 0.5 for i in range(len(groups))])
        return {"extra": (s, "below", "fraction")}

    rules = [Rule("extra", "measure", ("extra",)), Rule("default OR extra", "verdict", ("extra",), with_default=True)]
    rep = cross_validate(m, 2, seed=0, rules=rules, fold_columns=cols)
    assert sorted(f for f, _ in seen) == [0, 1] and sorted(h for _, hs in seen for h in hs) == ["1", "2"]
    alone = rep.results[0]
    # Training rows all score 0.5, so the candidates are 0.49..0.51 (had the
    # held-out 0.0s been seen, -0.01 would be one); only 0.51 flags anything
    # (tp 1, fp 1 in training): it is chosen, and flags both held-out rows.
    assert [f["thresholds"] for f in alone.folds] == [{"extra": 0.51}, {"extra": 0.51}]
    assert (alone.micro["tp"], alone.micro["fp"], alone.micro["fn"]) == (2, 2, 0)
    # On top of the default (already F1 1 in training) extra cannot help: 0.49
    # and 0.50 tie and the least-flagging one is kept, yet held-out 0.0s fall below it.
    with_default = rep.results[1]
    assert [f["thresholds"] for f in with_default.folds] == [{"extra": 0.49}, {"extra": 0.49}]
    assert (with_default.micro["tp"], with_default.micro["fp"], with_default.micro["fn"]) == (2, 2, 0)
