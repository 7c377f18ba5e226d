"""``driftline run`` start-up: a taken metrics port, an unreachable broker, a clean start.

The real command runs in a subprocess against a real Tansu broker (started
by the test on a port where nothing listened before), and its /healthz and
/readyz are read over HTTP.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from consumers.publish.publisher import Publisher
from tests.conftest import free_port, http_status
from tests.fixtures.runenv import REPO, run_env
from watcher.broker import EmbeddedBroker
from watcher.config import KafkaConfig


def test_run_with_the_metrics_port_taken_says_which_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "watcher.cli", "run"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60, env=run_env(tmp_path, f"127.0.0.1:{free_port()}", port))
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert len(lines) == 1, lines
    assert f"cannot serve metrics on 127.0.0.1:{port}" in lines[0]
    assert "metrics.port" in lines[0] and "DRIFTLINE__METRICS__PORT" in lines[0]


async def test_run_stays_up_unready_until_kafka_answers_then_becomes_ready(tmp_path: Path) -> None:
    kafka_port, metrics_port = free_port(), free_port()
    base = f"http://127.0.0.1:{metrics_port}"
    err = (tmp_path / "stderr.txt").open("w+")
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "watcher.cli", "run"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=err, env=run_env(tmp_path, f"127.0.0.1:{kafka_port}", metrics_port))
    broker: EmbeddedBroker | None = None
    try:
        deadline = time.monotonic() + 30
        while http_status(f"{base}/healthz") != 200:
            assert proc.poll() is None, (tmp_path / "stderr.txt").read_text()
            assert time.monotonic() < deadline, "healthz never came up"
            time.sleep(0.2)
        assert http_status(f"{base}/readyz") == 503
        # Several attempts, and the process stays up through them (waited for, not slept: a loaded
        # machine makes fewer attempts in a given time, never more).
        deadline = time.monotonic() + 90
        while (tmp_path / "stderr.txt").read_text().count("does not answer (attempt") < 3:
            assert proc.poll() is None, (tmp_path / "stderr.txt").read_text()
            assert time.monotonic() < deadline, "fewer than 3 connection attempts in 90 s"
            time.sleep(0.2)
        assert proc.poll() is None
        assert http_status(f"{base}/healthz") == 200 and http_status(f"{base}/readyz") == 503
        attempts = (tmp_path / "stderr.txt").read_text().count("does not answer (attempt")
        # backoff 0.5, 1, 1, 1 ...: one line per attempt, not a flood (at most one per 0.5 s since the start)
        assert attempts <= 2 + (time.monotonic() - started) / 0.5, attempts

        broker = EmbeddedBroker(kafka_port, log_path=tmp_path / "tansu.log")
        await broker.start()
        deadline = time.monotonic() + 60
        while http_status(f"{base}/readyz") != 200:
            assert proc.poll() is None, (tmp_path / "stderr.txt").read_text()
            assert time.monotonic() < deadline, "never became ready after the broker came up"
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if broker is not None:
            await broker.stop()
    log = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in log
    # A normal start against Tansu logs no ERROR (aiokafka's InitProducerId error included).
    assert [line for line in log.splitlines() if " ERROR " in line or "ERROR " in line[:40]] == [], log


def test_run_stopped_while_waiting_for_kafka_exits_cleanly(tmp_path: Path) -> None:
    metrics_port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "watcher.cli", "run"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            env=run_env(tmp_path, f"127.0.0.1:{free_port()}", metrics_port))
    deadline = time.monotonic() + 30
    while http_status(f"http://127.0.0.1:{metrics_port}/healthz") != 200:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


async def test_producer_capability_probed_without_an_error_line(kafka_broker: EmbeddedBroker,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    """Tansu advertises InitProducerId but fails it: the probe says so, and nothing logs an ERROR.  (Here
    the broker is configured, as another Kafka would be: for one it does not know, the warning is owed.)"""
    boot = kafka_broker.bootstrap_servers
    publisher = Publisher(KafkaConfig(idempotent_producer=True, bootstrap_servers=boot), boot)
    with caplog.at_level(logging.DEBUG):
        assert await publisher.grants_producer_ids() is False
        await publisher.start()
        try:
            assert publisher.producer is not None and publisher.idempotent is False
        finally:
            await publisher.stop()
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert any("cannot give producer ids" in r.getMessage() for r in caplog.records)


async def test_the_embedded_broker_starts_a_publisher_without_a_warning(kafka_broker: EmbeddedBroker,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    """The embedded broker (kafka.bootstrap_servers unset) never grants aiokafka a producer id: known in
    advance, so it is no WARNING on every start (a user read it as trouble), and no probe is sent."""
    publisher = Publisher(KafkaConfig(idempotent_producer=True), kafka_broker.bootstrap_servers)
    with caplog.at_level(logging.DEBUG):
        await publisher.start()
        try:
            assert publisher.producer is not None and publisher.idempotent is False
        finally:
            await publisher.stop()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert not any("cannot give producer ids" in r.getMessage() for r in caplog.records)


def _demo_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRIFTLINE")}
    env.update({"PYTHONPATH": str(REPO), "TMPDIR": str(tmp), "DRIFTLINE__METRICS__PORT": str(free_port())})
    return env


@pytest.mark.kafka
def test_demo_removes_its_temp_folder_at_the_end_and_on_ctrl_c(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = subprocess.run([sys.executable, "-m", "watcher.cli", "--log-level", "WARNING", "demo", "--once"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=_demo_env(tmp))
    assert done.returncode == 0, done.stderr
    assert "WARC " + str(tmp) in done.stdout  # the work folder was made under TMPDIR ...
    assert list(tmp.iterdir()) == []  # ... and is gone

    proc = subprocess.Popen([sys.executable, "-m", "watcher.cli", "--log-level", "WARNING", "demo"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_demo_env(tmp))
    assert proc.stdout is not None
    first = proc.stdout.readline()  # "driftline demo: ... WARC <folder>/demo.warc.gz"
    assert str(tmp) in first and any(tmp.iterdir())
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode in (0, 1, 130), stderr
    assert "Traceback" not in stderr
    assert list(tmp.iterdir()) == []


def test_run_with_the_embedded_broker_port_taken_says_which_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = run_env(tmp_path, "", free_port())
        del env["DRIFTLINE__KAFKA__BOOTSTRAP_SERVERS"], env["DRIFTLINE__KAFKA__EMBEDDED_BROKER"]
        env["DRIFTLINE__KAFKA__EMBEDDED_PORT"] = str(port)
        done = subprocess.run([sys.executable, "-m", "watcher.cli", "run"], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60, env=env)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"cannot start the embedded broker on 127.0.0.1:{port} (port in use)" in errors[0]
    assert "DRIFTLINE__KAFKA__EMBEDDED_PORT" in errors[0]


def test_a_normal_start_on_the_embedded_broker_logs_no_error(tmp_path: Path) -> None:
    metrics_port = free_port()
    env = run_env(tmp_path, "", metrics_port)
    del env["DRIFTLINE__KAFKA__BOOTSTRAP_SERVERS"], env["DRIFTLINE__KAFKA__EMBEDDED_BROKER"]
    env["DRIFTLINE__KAFKA__EMBEDDED_PORT"] = str(free_port())
    err = (tmp_path / "stderr.txt").open("w+")
    proc = subprocess.Popen([sys.executable, "-m", "watcher.cli", "run"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=err, env=env)
    try:
        deadline = time.monotonic() + 90
        while http_status(f"http://127.0.0.1:{metrics_port}/readyz") != 200:
            assert proc.poll() is None, (tmp_path / "stderr.txt").read_text()
            assert time.monotonic() < deadline, (tmp_path / "stderr.txt").read_text()
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = (tmp_path / "stderr.txt").read_text()
    assert "driftline consumer app running" in log
    assert [line for line in log.splitlines() if " ERROR " in line or "Traceback" in line] == [], log
