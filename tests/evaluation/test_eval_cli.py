"""``driftline eval``: labels whose ``uri`` column holds the original URL (not the URI-M) are matched by (URL, date),
with a warning, instead of every label of a URL meeting its first capture; ``eval --help`` states the format."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from tests.fixtures import textgen
from watcher.cli import main

URL = "http://www.riverside-rights.org/"
DATES = ["20200101000000", "20200201000000", "20200301000000", "20200401000000"]


def _gold(root: Path) -> Path:
    on = textgen.html(textgen.document(["river", "law", "music", "garden"]))
    off = textgen.html(textgen.document(["space", "cooking", "space", "cooking"], seed=9), "Rocket Kitchen")
    pages, labels = [on, on, off, off], [1, 1, 0, 0]
    (root / "html" / "1").mkdir(parents=True)
    for date, page in zip(DATES, pages, strict=True):
        (root / "html" / "1" / f"{date}.html").write_bytes(page)
    (root / "labels.tsv").write_text("id\tdate\tURI\tlabel\n" + "".join(
        f"1\t{d}\t{URL}\t{lab}\n" for d, lab in zip(DATES, labels, strict=True)))
    return root


def _overall(report: str) -> list[str]:
    row = next(line for line in report.splitlines() if line.startswith("| overall"))
    return [c.strip() for c in row.strip("|").split("|")]


def test_labels_naming_original_urls_match_by_url_and_date(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           caplog: pytest.LogCaptureFixture) -> None:
    gold = _gold(tmp_path / "gold")
    with caplog.at_level(logging.INFO):
        assert main(["eval", str(gold), "-j", "1", "--no-progress"]) == 0
    cells = _overall(capsys.readouterr().out)
    # name, dir, n, unscored, TP, FP, FN, TN, precision, recall, F1
    assert cells[2] == "4" and cells[4:8] == ["2", "0", "0", "2"], cells
    assert cells[10] == "1.000"
    # Dates to the second name one capture each (as in the labels driftline exports): said, not warned.
    said = [r.getMessage() for r in caplog.records if r.name == "watcher.evaluation.evaluate"]
    assert any(re.search(r"4 of 4 labels name an original URL and a 14-digit date; matched by \(URL, date\)", w)
               for w in said), said
    assert not any("original URL" in r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)


def test_eval_help_states_the_label_format_and_polarity(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--help"]) == 0
    out = capsys.readouterr().out
    assert "id, date, uri, label" in out
    assert "1 = on topic, 0 = off topic" in out and "off topic is the positive class" in out
