"""The floors gate: the shared gold's figures, computed from the session's default scan, must
stay at or above the floors pinned in bench/floors.json (moved only by
``driftline eval --update-floors``, which refuses to lower a floor without a reason)."""

from __future__ import annotations

from pathlib import Path

import pytest

from watcher.config import load_config
from watcher.evalfloors import check_floors, load_floors
from watcher.evalresults import collection_results

FLOORS = Path(__file__).resolve().parent.parent / "bench" / "floors.json"
COLLECTION = "gold-1068"


@pytest.mark.shared
@pytest.mark.timeout(900)
def test_gold_figures_stay_above_their_floors(gold_dir: Path, gold_scan: Path) -> None:
    floors = load_floors(FLOORS)
    pinned = floors["collections"][COLLECTION]
    assert "overall.f1" in pinned and "cv.default.f1.mean" in pinned
    for key, f in pinned.items():  # a floor equal to its figure would fail on noise: each sits below it
        assert f["floor"] < f["measured"] and f["tolerance"] >= 0.01, key
    cfg = load_config()
    block = collection_results(gold_dir / "labels.tsv", gold_scan, voting=list(cfg.engine.measures),
                               policy=cfg.engine.policy)
    checked, failures = check_floors({"collections": {COLLECTION: block}}, floors)
    assert checked == len(pinned)
    assert not failures, "figures below their floors (bench/floors.json; raise or, with a reason, lower them " \
                         "with 'driftline eval GOLD --collection gold-1068 --update-floors bench/floors.json " \
                         "--reason ...'):\n" + "\n".join(failures)
