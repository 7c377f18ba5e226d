"""driftline eval: metrics on hand-made label/result files with known answers."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from watcher.config import Config
from watcher.engine import Engine
from watcher.evaluation.evaluate import evaluate, format_report
from watcher.evaluation.metrics import best_threshold, roc_auc, sweep_thresholds
from watcher.output import write_results
from watcher.sources import iter_histories

AM = "http://wayback.archive-it.org/1068/{ts}/http://{host}/"
# name: (id, ts, host, label, overall status, drift score, cosine score, cosine status, simhash score)
CASES: dict[str, tuple[str, str, str, int, str, float | None, float | None, str, float | None]] = {
    "A": ("1", "20200101000000", "a.example", 0, "off-topic", 0.9, 0.01, "off-topic", 40),
    "B": ("1", "20200201000000", "a.example", 0, "off-topic", 0.8, 0.05, "off-topic", 30),
    "C": ("2", "20200101000000", "b.example", 0, "on-topic", 0.3, 0.5, "on-topic", 50),
    "D": ("2", "20200201000000", "b.example", 1, "off-topic", 0.7, 0.1, "off-topic", 45),
    "E": ("2", "20200301000000", "b.example", 1, "empty", None, None, "n/a", None),
    "F": ("3", "20200101000000", "c.example", 1, "on-topic", 0.1, 0.9, "on-topic", 10),
    "G": ("3", "20200201000000", "c.example", 1, "on-topic", 0.3, 0.6, "on-topic", 20),
}
NO_RESULT = ("3", "20200301000000", "c.example", 1)


def write_labels(path: Path) -> Path:
    rows = [(i, ts, AM.format(ts=ts, host=h), lab) for i, ts, h, lab, *_ in CASES.values()] + \
           [(NO_RESULT[0], NO_RESULT[1], AM.format(ts=NO_RESULT[1], host=NO_RESULT[2]), NO_RESULT[3])]
    rows.append(rows[0])  # a repeated row is read once
    path.write_text("id\tdate\tURI\tlabel\n" + "".join(f"{i}\t{d}\t{u}\t{lab}\n" for i, d, u, lab in rows))
    return path


def entry(case: str, *, driftline: bool = True) -> dict[str, Any]:
    _i, ts, host, _lab, status, drift, cos, cos_status, sim = CASES[case]
    measures: dict[str, Any] = {}
    if status != "empty":
        measures = {
            "cosine": {"comparison score": cos, "topic status": cos_status, "stemmed": False, "tokenized": True,
                       "removed boilerplate": False},
            "raw_simhash": {"comparison score": sim, "topic status": "on-topic", "stemmed": False,
                            "tokenized": False, "removed boilerplate": False},
        }
        if driftline:
            measures["cosine"]["threshold"] = 0.12
            measures["raw_simhash"]["threshold"] = 38
    e: dict[str, Any] = {"timemap measures": measures, "overall topic status": status}
    if driftline:
        e["driftline"] = {"drift score": drift, "url": f"http://{host}/", "capture time": ts}
    return e


def otmt_json(path: Path, *, driftline: bool = True, wrap: bool = False) -> Path:
    data: dict[str, Any] = {}
    for case, (i, ts, host, *_rest) in CASES.items():
        data.setdefault(f"gold:{i}", {})[AM.format(ts=ts, host=host)] = entry(case, driftline=driftline)
    for block in data.values():
        block["__driftline__"] = {"behaviour": "Oscillating"}
    path.write_text(json.dumps({"timemaps": data} if wrap else data))
    return path


def test_known_counts_precision_recall_auc(tmp_path: Path) -> None:
    rep = evaluate(str(write_labels(tmp_path / "labels.tsv")), str(otmt_json(tmp_path / "r.json")))
    assert rep.labelled == 8 and rep.positives == 3
    assert rep.matched == 7 and rep.without_result == 1 and rep.results_without_label == 0
    o = rep.overall
    assert (o.tp, o.fp, o.fn, o.tn) == (2, 1, 1, 3)
    assert o.precision == pytest.approx(2 / 3) and o.recall == pytest.approx(2 / 3) and o.f1 == pytest.approx(2 / 3)
    assert o.accuracy == pytest.approx(5 / 7)
    assert o.n == 7 and o.unscored == 1  # the empty capture counts, as not flagged
    assert o.auc == pytest.approx(10.5 / 12)  # C ties G at 0.3; E (no score) ranks lowest
    cos = rep.measures["cosine"]
    assert cos.direction == "below" and cos.kind == "fraction" and cos.threshold == 0.12
    assert (cos.tp, cos.fp, cos.fn) == (2, 1, 1) and cos.unscored == 1
    assert cos.auc == pytest.approx(11 / 12)  # oriented: lower cosine = more off topic
    assert cos.best_threshold == pytest.approx(0.51) and cos.best_f1 == pytest.approx(6 / 7)
    sim = rep.measures["raw_simhash"]
    assert sim.direction == "above" and sim.kind == "bits"
    assert sim.tp == 0 and sim.f1 == 0.0
    assert sim.best_threshold == 20.0 and sim.best_f1 == pytest.approx(6 / 7)
    md = format_report(rep)
    assert "| overall |" in md and "| cosine | below | 7 | 1 | 2 | 1 | 1 | 3 | 0.667 | 0.667 | 0.667 |" in md
    assert "without a result: 1" in md


def test_otmt_written_json_and_gold_dir(tmp_path: Path) -> None:
    """OTMT's own output (no driftline key, old "timemaps" wrapper): the
    overall AUC falls back to the binary verdict."""
    gold = tmp_path / "gold"
    gold.mkdir()
    write_labels(gold / "labels.tsv")
    rep = evaluate(str(gold), str(otmt_json(tmp_path / "otmt.json", driftline=False, wrap=True)))
    assert rep.matched == 7
    assert (rep.overall.tp, rep.overall.fp, rep.overall.fn) == (2, 1, 1)
    # binary scores: P(flagged pos > flagged neg) = (2*3 + 0.5*(2*1 + 1*3)) / 12
    assert rep.overall.auc == pytest.approx((2 * 3 + 0.5 * (2 * 1 + 1 * 3)) / 12)
    assert rep.measures["cosine"].threshold is None and rep.measures["cosine"].direction == "below"


def test_jsonl_with_synthetic_uri_ms_matches_by_url_and_time(tmp_path: Path) -> None:
    lines = []
    for case, (_i, ts, host, *_rest) in CASES.items():
        rec = {"history": host, "uri_t": f"history:{host}", "uri_m": f"http://www.{host}/@{ts}"}
        e = entry(case)
        del e["driftline"]["url"]  # force the URI-M parse path
        rec.update(e)
        lines.append(json.dumps(rec))
    res = tmp_path / "r.jsonl"
    res.write_text("\n".join(lines) + "\n")
    rep = evaluate(str(write_labels(tmp_path / "labels.tsv")), str(res))
    assert rep.matched == 7 and rep.without_result == 1
    assert (rep.overall.tp, rep.overall.fp, rep.overall.fn, rep.overall.tn) == (2, 1, 1, 3)


def test_otmt_warc_uri_ms_and_url_spelling_fallback(tmp_path: Path) -> None:
    """OTMT names WARC captures ``from-warc::<ts>::<url>``; a label URI spelled
    differently (``/??``) still matches on host and second when unambiguous."""
    labels = tmp_path / "labels.tsv"
    labels.write_text("id\tdate\tURI\tlabel\n"
                      f"1\t20200101000000\t{AM.format(ts='20200101000000', host='x.example')}\t1\n"
                      f"1\t20200201000000\t{AM.format(ts='20200201000000', host='x.example')}??\t0\n")
    data = {"from-warc::timemap::http://x.example/": {
        "from-warc::20200101000000::http://x.example/": {"timemap measures": {}, "overall topic status": "on-topic"},
        "from-warc::20200201000000::http://x.example/": {"timemap measures": {}, "overall topic status": "off-topic"},
    }}
    res = tmp_path / "otmt.json"
    res.write_text(json.dumps(data))
    rep = evaluate(labels, res)
    assert rep.matched == 2 and rep.results_without_label == 0
    assert (rep.overall.tp, rep.overall.tn) == (1, 1)


def test_metric_helpers() -> None:
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [False, False, True, True]) == pytest.approx(0.75)  # sklearn's example
    assert roc_auc([1, 1, 1], [True, False, False]) == pytest.approx(0.5)
    assert roc_auc([1, 2], [True, True]) is None
    assert roc_auc([-math.inf, 0.0], [True, False]) == 0.0
    ts = sweep_thresholds(-0.5, 0.2, "fraction")
    assert ts[0] == -0.51 and ts[-1] == 0.21 and ts[1] - ts[0] == pytest.approx(0.01)
    assert sweep_thresholds(3, 7.5, "bits") == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    bt, bf = best_threshold([0.1, 0.2, 0.9, None], [True, True, False, True], "below", "fraction")
    assert bt == pytest.approx(0.21) and bf == pytest.approx(0.8)


def test_end_to_end_gold_scan_then_eval(tmp_path: Path) -> None:
    """A real scan (sources -> engine -> JSONL writer) evaluated against its labels."""
    gold = tmp_path / "g"
    (gold / "html" / "1").mkdir(parents=True)
    text = "<html><head><title>Human rights report</title></head><body><h1>Human rights</h1>{}</body></html>"
    on = "<p>" + " ".join(f"report on freedom of expression and fair trials number {i}" for i in range(40)) + "</p>"
    pages = {"20200101000000": (text.format(on), 1), "20200201000000": (text.format(on + "<p>update</p>"), 1),
             "20200301000000": ("<html><body><h1>Domain for sale</h1><p>Buy this domain.</p></body></html>", 0)}
    rows = ["id\tdate\tURI\tlabel"]
    for ts, (html, lab) in pages.items():
        (gold / "html" / "1" / f"{ts}.html").write_text(html)
        rows.append(f"1\t{ts}\t{AM.format(ts=ts, host='rights.example')}\t{lab}")
    (gold / "labels.tsv").write_text("\n".join(rows) + "\n")
    cfg = Config()
    engine = Engine(cfg.engine)
    it = iter_histories([str(gold)], cfg)
    out = tmp_path / "out.jsonl"
    write_results((engine.scan_history(h, caps) for h, caps in it), str(out), "jsonl", cfg, it.uri_t)
    rep = evaluate(str(gold), str(out))
    assert rep.matched == 3 and rep.without_result == 0
    assert rep.overall.tp == 1 and rep.overall.fp == 0  # the parked page is flagged, the update is not
    assert rep.overall.auc == pytest.approx(1.0)
