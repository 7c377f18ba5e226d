"""Shared fixtures.  Component fixtures live in tests/fixtures/ (one module per
real component: Kafka broker, browser, PostgreSQL) and are registered here."""

from __future__ import annotations

import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["tests.fixtures.kafka", "tests.fixtures.browser", "tests.fixtures.postgres"]

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data, present in the project's own workspace and CI only."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"needs the project's shared data at {SHARED_DATA} (absent on a user's clone)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def gold_dir(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The gold standard, extracted once per session into a temporary folder."""
    import tarfile

    out = tmp_path_factory.mktemp("gold")
    with tarfile.open(shared_data / "goldstandard-1068.tar.gz") as tar:
        tar.extractall(out, filter="data")
    return out / "goldstandard-1068"


@pytest.fixture(scope="session")
def gold_scan(gold_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``driftline scan`` of the gold standard at defaults, run once per session: the end-to-end
    F1 test and the shared cross-validation read the same result file rather than scanning twice."""
    from watcher.cli import main

    out = tmp_path_factory.mktemp("gold-scan") / "gold.json"
    assert main(["--log-level", "WARNING", "scan", str(gold_dir), "-o", str(out), "--no-progress"]) == 0
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process(proc: subprocess.Popen[Any], timeout_s: float = 5.0) -> None:
    """Terminate ``proc`` and wait for it; kill it when it does not exit within ``timeout_s``."""
    proc.terminate()
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def http_status(url: str) -> int | None:
    """The HTTP status ``url`` answers with, or ``None`` when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return None


@pytest.fixture
def port() -> int:
    return free_port()
