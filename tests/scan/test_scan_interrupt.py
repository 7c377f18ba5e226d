"""Ctrl-C during `driftline scan -o FILE` keeps the histories already written, says so in one line, exits 130.

The real command in a subprocess, interrupted the way a terminal does it: SIGINT to its whole process group
(worker processes included), once the first histories have been flushed to the output.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures import textgen
from tests.fixtures.scancli import t
from tests.fixtures.scanwarcs import write_warc

REPO = Path(__file__).resolve().parents[2]


def _big_warc(path: Path, histories: int = 1500) -> Path:
    pages = [textgen.html(textgen.document(["river", "law", "music", "garden"], seed=s)) for s in range(4)]
    write_warc(path, [(f"http://site{i}.example.org/", t(k), pages[(i + k) % 4], {})
                      for i in range(histories) for k in range(2)])
    return path


@pytest.mark.parametrize(("fmt", "workers"), [("jsonl", "2"), ("json", "1")])
def test_ctrl_c_keeps_the_finished_histories(tmp_path: Path, fmt: str, workers: str) -> None:
    warc = _big_warc(tmp_path / "big.warc.gz")
    out = tmp_path / f"out.{fmt}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env = {k: v for k, v in env.items() if not k.startswith("DRIFTLINE")}
    proc = subprocess.Popen([sys.executable, "-m", "watcher.cli", "--log-level", "WARNING", "scan", str(warc),
                             "-f", fmt, "-o", str(out), "-j", workers, "--no-progress"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=env)
    try:
        deadline = time.monotonic() + 120
        while not any(p.stat().st_size > 20_000 for p in tmp_path.glob(f".out.{fmt}.*.tmp")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no output was flushed"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    m = re.fullmatch(rf"driftline: interrupted: (\d+) captures of (\d+) histories written to {re.escape(str(out))}",
                     lines[0])
    assert m, lines
    captures, histories = int(m.group(1)), int(m.group(2))
    assert 0 < histories < 1500 and captures == 2 * histories
    if fmt == "jsonl":
        recs = [json.loads(line) for line in out.read_text().splitlines()]  # every line whole
        assert len(recs) == captures and len({r["history"] for r in recs}) == histories
    else:
        data = json.loads(out.read_text())  # a closed JSON document
        assert len(data) == histories
        assert sum(len([k for k in v if not k.startswith("__")]) for v in data.values()) == captures
    assert not list(tmp_path.glob(".out.*.tmp"))
