"""``driftline run`` stopped by Ctrl-C (SIGINT) exits 130, after the same graceful stop as SIGTERM (which exits 0).

The real command in a subprocess: once on the embedded Tansu broker, once still waiting for a broker that is not up.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import free_port, http_status
from tests.fixtures.runenv import run_env


def _started(proc: subprocess.Popen[bytes], url: str, log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while http_status(url) != 200:
        assert proc.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.3)


def test_ctrl_c_on_a_running_app_exits_130_after_a_graceful_stop(tmp_path: Path) -> None:
    metrics_port = free_port()
    env = run_env(tmp_path, "", metrics_port)
    del env["DRIFTLINE__KAFKA__BOOTSTRAP_SERVERS"], env["DRIFTLINE__KAFKA__EMBEDDED_BROKER"]
    env["DRIFTLINE__KAFKA__EMBEDDED_PORT"] = str(free_port())
    log = tmp_path / "stderr.txt"
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "watcher.cli", "run"], cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=err, env=env)
    try:
        _started(proc, f"http://127.0.0.1:{metrics_port}/readyz", log, 90)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "shutting down: finishing in-flight work and committing" in text
    assert "Traceback" not in text


def test_ctrl_c_while_waiting_for_kafka_exits_130(tmp_path: Path) -> None:
    metrics_port = free_port()
    log = tmp_path / "stderr.txt"
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "watcher.cli", "run"], cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=err,
                                env=run_env(tmp_path, f"127.0.0.1:{free_port()}", metrics_port))
    try:
        _started(proc, f"http://127.0.0.1:{metrics_port}/healthz", log, 30)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in log.read_text()


def test_run_help_states_the_exit_status() -> None:
    done = subprocess.run([sys.executable, "-m", "watcher.cli", "run", "--help"], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert "130 after Ctrl-C (SIGINT)" in done.stdout and "0 after SIGTERM" in done.stdout


def test_ctrl_c_on_doi_run_exits_130(tmp_path: Path) -> None:
    status_port = free_port()
    env = run_env(tmp_path, "", free_port())
    del env["DRIFTLINE__KAFKA__BOOTSTRAP_SERVERS"], env["DRIFTLINE__KAFKA__EMBEDDED_BROKER"]
    env.update({"DRIFTLINE__KAFKA__EMBEDDED_PORT": str(free_port()), "DRIFTLINE__DOI__STATUS_PORT": str(status_port),
                "DRIFTLINE__DOI__WARC_DIR": str(tmp_path / "warcs")})
    log = tmp_path / "stderr.txt"
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "watcher.cli", "doi", "run"], cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=err, env=env)
    try:
        _started(proc, f"http://127.0.0.1:{status_port}/doi/status", log, 90)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in log.read_text()
