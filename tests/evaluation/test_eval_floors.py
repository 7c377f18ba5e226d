"""The floors gate: the figures of the shared gold (from the session's default scan) and of the
deep-page collection built from the shared newspaper pages must stay at or above the floors pinned
in bench/floors.json (moved only by ``driftline eval --update-floors``, which refuses to lower a
floor without a reason); and the checked-in results files the docs' tables come from must hold
the figures the code gives now."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.bench import load_bench
from watcher.config import Config, load_config
from watcher.evaluation.floors import check_floors, load_floors
from watcher.evaluation.results import collection_results

FLOORS = Path(__file__).resolve().parents[2] / "bench" / "floors.json"
COLLECTION = "gold-1068"
DEEP = "deep-pages"
HOW = "'driftline eval COLLECTION --collection NAME --update-floors bench/floors.json [--reason ...]'"


RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
REGENERATE = {
    COLLECTION: "driftline eval GOLD_DIR --collection gold-1068 --results docs/results/gold-1068.json",
    DEEP: "python bench/deep_pages_eval.py --keep deep/ --seeds 0 && "
          "driftline eval deep/ --collection deep-pages --results docs/results/deep-pages.json",
}


def _fresh(name: str, block: dict[str, Any]) -> None:
    """The docs' tables come from the checked-in results file: it must say what the code does now."""
    checked_in = json.loads((RESULTS / f"{name}.json").read_text())["collections"][name]
    for key in ("overall", "timemap", "macro_f1"):
        assert checked_in[key] == block[key], (
            f"docs/results/{name}.json is stale ({key}: {checked_in[key]} in the file, {block[key]} now); "
            f"regenerate it: {REGENERATE[name]}")


def _gate(name: str, block: dict[str, Any]) -> None:
    floors = load_floors(FLOORS)
    pinned = floors["collections"][name]
    assert "overall.f1" in pinned and "cv.default.f1.mean" in pinned
    for key, f in pinned.items():  # a floor equal to its figure would fail on noise: each sits below it
        assert f["floor"] < f["measured"] and f["tolerance"] >= 0.01, key
    checked, failures = check_floors({"collections": {name: block}}, floors)
    assert checked == len(pinned)
    assert not failures, f"figures below their floors in bench/floors.json (raise or, with a reason, lower " \
                         f"them with {HOW}):\n" + "\n".join(failures)


@pytest.mark.shared
@pytest.mark.timeout(900)
def test_gold_figures_stay_above_their_floors(gold_dir: Path, gold_scan: Path) -> None:
    cfg = load_config()
    block = collection_results(gold_dir / "labels.tsv", gold_scan, voting=list(cfg.engine.measures),
                               policy=cfg.engine.policy)
    _gate(COLLECTION, block)
    _fresh(COLLECTION, block)


@pytest.mark.shared
@pytest.mark.timeout(900)
def test_deep_page_figures_stay_above_their_floors(shared_data: Path, tmp_path: Path) -> None:
    """The collection bench/deep_pages_eval.py builds (real titles), scanned as `driftline scan` does."""
    from watcher.output import write_results
    from watcher.scan import score_histories
    from watcher.sources import iter_histories

    src = tmp_path / "src"
    with tarfile.open(shared_data / "pages" / "newspaper-pages.tar.gz") as tf:
        tf.extractall(src, filter="data")
    pages = next(p.parent for p in src.rglob("html") if p.is_dir())
    coll = tmp_path / "coll"
    coll.mkdir()
    load_bench("deep_pages_eval").build(pages, coll)
    cfg = Config()
    it = iter_histories([str(coll)], cfg)
    out = tmp_path / "out.jsonl"
    write_results(score_histories(it, cfg, workers=2), str(out), "jsonl", cfg, it.uri_t)
    block = collection_results(coll / "labels.tsv", out, voting=list(cfg.engine.measures), policy=cfg.engine.policy)
    _gate(DEEP, block)
    _fresh(DEEP, block)
