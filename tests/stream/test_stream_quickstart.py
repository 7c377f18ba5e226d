"""The streaming quick start, as a user types it: three commands, three processes.

``driftline run`` (the embedded broker, a test config: free ports, a
temporary store, no browser), then ``driftline feed crawl.warc.gz`` and
``driftline tail verdicts``, each a real subprocess of the installed CLI
code.  The verdicts tail prints must be the crawl's, in words a user reads.
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fixtures.kafka import page_html, write_warc

pytestmark = pytest.mark.kafka

REPO = Path(__file__).resolve().parents[2]
URL = "http://www.rights.example.org/report"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "watcher.cli", *args]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRIFTLINE__")}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _wait_for(path: Path, text: str, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if text in path.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            pytest.fail(f"driftline run exited with {proc.returncode}: {path.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)
    pytest.fail(f"no {text!r} in {timeout_s:.0f} s: {path.read_text(errors='replace')[-2000:]}")


def _lines(proc: subprocess.Popen[str], want: int, timeout_s: float, idle_s: float = 3.0) -> list[str]:
    """The lines ``proc`` prints: at least ``want``, then until ``idle_s`` passes without one (or ``timeout_s``)."""
    got: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            got.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    out: list[str] = []
    deadline = time.monotonic() + timeout_s
    last = time.monotonic()
    while time.monotonic() < deadline and (len(out) < want or time.monotonic() - last < idle_s):
        try:
            out.append(got.get(timeout=0.5))
            last = time.monotonic()
        except queue.Empty:
            continue
    return out


@pytest.mark.timeout(240)
def test_run_feed_tail_as_three_processes(tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    warc = warcs / "crawl.warc.gz"
    write_warc(warc, [(URL, "20240101000000", page_html(1)), (URL, "20240201000000", page_html(1, variant=1)),
                      (URL, "20240301000000", page_html(0, off_topic=True))])
    config = tmp_path / "driftline.yaml"
    config.write_text(f"""
kafka:
  embedded_port: {_free_port()}
  session_timeout_ms: 6000
  heartbeat_interval_ms: 300
  rebalance_timeout_ms: 6000
  metadata_max_age_ms: 1000
  commit_interval_ms: 200
store:
  backend: sqlite
  path: {tmp_path / "driftline.db"}
acquire:
  warc_dirs: [{warcs}]
render:
  enabled: false
metrics:
  port: {_free_port()}
""")
    env = _env()
    run_log = tmp_path / "run.log"
    with run_log.open("wb") as log:
        run = subprocess.Popen(_cli("-c", str(config), "run"), stdout=log, stderr=subprocess.STDOUT, env=env,
                               cwd=tmp_path)
    tail: subprocess.Popen[str] | None = None
    try:
        _wait_for(run_log, "driftline consumer app running", run, 90)

        fed = subprocess.run(_cli("-c", str(config), "feed", str(warc)), capture_output=True, text=True, env=env,
                             cwd=tmp_path, timeout=60)
        assert fed.returncode == 0, fed.stderr
        assert "driftline feed: 3 events sent to heritrix-crawl-log, 0 skipped" in fed.stderr
        assert "warning" not in fed.stderr  # the WARC's folder is in acquire.warc_dirs

        tail = subprocess.Popen(_cli("-c", str(config), "tail", "verdicts", "--follow", "--from-beginning"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
        lines = _lines(tail, 3, 90)
        tail.send_signal(signal.SIGINT)
        assert tail.wait(20) == 0
        assert len(lines) >= 3, (lines, run_log.read_text(errors="replace")[-3000:])
        # The feed is unkeyed: a capture that arrives late re-scores the later ones (a "re-scored" line); the
        # last line of each capture is its verdict.
        by_time = {ln.split()[0]: ln.split(maxsplit=4) for ln in lines}
        assert len(by_time) == 3
        assert by_time["2024-01-01T00:00:00Z"][1:4] == ["baseline", "on-topic", URL]
        assert by_time["2024-02-01T00:00:00Z"][2:4] == ["on-topic", URL]
        assert by_time["2024-03-01T00:00:00Z"][1:4] == ["off-topic", "off-topic", URL]
        assert by_time["2024-03-01T00:00:00Z"][4]  # the reason, in words

        # Without --follow, tail stops by itself once caught up, with the same lines.
        again = subprocess.run(_cli("-c", str(config), "tail", "verdicts"), capture_output=True, text=True, env=env,
                               cwd=tmp_path, timeout=60)
        assert again.returncode == 0 and sorted(again.stdout.splitlines()) == sorted(lines)
        dead = subprocess.run(_cli("-c", str(config), "tail", "dead-letters", "-f", "jsonl"), capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=60)
        assert dead.returncode == 0 and dead.stdout == ""
    finally:
        if tail is not None and tail.poll() is None:
            tail.kill()
        run.send_signal(signal.SIGINT)
        try:
            run.wait(60)
        except subprocess.TimeoutExpired:
            run.kill()
            run.wait()
    # With run gone (and its embedded broker with it), feed says so in one line.
    gone = subprocess.run(_cli("-c", str(config), "feed", str(warc)), capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=60)
    assert gone.returncode == 2
    assert gone.stderr.strip().count("\n") == 0 and "start 'driftline run' first" in gone.stderr
