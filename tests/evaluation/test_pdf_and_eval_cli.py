"""PDF captures (checksum + text) and the `driftline eval` command."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fixtures.pdfgen import assemble_pdf
from watcher.cli import main
from watcher.config import EngineConfig
from watcher.engine import Engine
from watcher.model import Capture


def make_pdf(text: str) -> bytes:
    """A minimal valid one-page PDF showing ``text`` (Helvetica)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return assemble_pdf(objs)


def test_pdf_text_and_checksum() -> None:
    eng = Engine(EngineConfig())
    t = datetime(2024, 1, 1, tzinfo=UTC)
    a = make_pdf("Rainfall and river discharge in the upper valley basin during spring floods")
    b = make_pdf("Casino bonus offers and online betting odds for this weekend only")
    fa = eng.fingerprint(Capture(url="https://doi.example/10.1/x", timestamp=t, content=a))
    assert fa.kind == "pdf" and "discharge" in fa.term_freqs and fa.digest.startswith("sha1:")
    r = eng.scan_history("h", [Capture(url="https://doi.example/10.1/x", timestamp=t, content=a),
                               Capture(url="https://doi.example/10.1/x", timestamp=t.replace(month=2), content=a),
                               Capture(url="https://doi.example/10.1/x", timestamp=t.replace(month=3), content=b)])
    assert [v.change for v in r.verdicts] == ["baseline", "unchanged", "off-topic"]
    broken = eng.fingerprint(Capture(url="https://doi.example/y", timestamp=t, content=b"%PDF-1.4 garbage \x00\x01"))
    assert broken.kind == "pdf" and broken.word_count == 0 and (broken.error or "").startswith("extract_failed")
    later = t.replace(month=2)
    bad = eng.scan_history("p", [Capture(url="https://doi.example/y", timestamp=t, content=a),
                                 Capture(url="https://doi.example/y", timestamp=later, content=b"%PDF-1.4 x")])
    assert [(v.status, v.change) for v in bad.verdicts] == [("on-topic", "baseline"), ("error", "error")]


def test_eval_command_on_labels_and_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = tmp_path / "gold"
    for _i, (date, body) in enumerate([("20200101000000", b"<p>River water flood bank bridge valley stream</p>"),
                                      ("20200201000000", b"<p>River water flood bank bridge valley stream</p>"),
                                      ("20200301000000", b"<title>Domain for sale</title><p>Buy this domain</p>")]):
        (gold / "html" / "7").mkdir(parents=True, exist_ok=True)
        (gold / "html" / "7" / f"{date}.html").write_bytes(body)
    rows = ["id\tdate\tURI\tlabel"] + [
        f"7\t{d}\thttp://wayback.archive-it.org/1/{d}/http://river.example/\t{lab}"
        for d, lab in [("20200101000000", 1), ("20200201000000", 1), ("20200301000000", 0)]]
    (gold / "labels.tsv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "r.json"
    assert main(["--log-level", "WARNING", "scan", str(gold), "-o", str(out), "--no-progress"]) == 0
    assert main(["--log-level", "WARNING", "eval", str(gold / "labels.tsv"), str(out)]) == 0
    report = capsys.readouterr().out
    overall = next(line for line in report.splitlines() if line.startswith("| overall"))
    cells = [c.strip() for c in overall.strip("|").split("|")]
    assert cells[4:8] == ["1", "0", "0", "2"]  # TP FP FN TN
    assert main(["--log-level", "WARNING", "eval", str(gold), "--no-progress"]) == 0
    assert "| overall" in capsys.readouterr().out
