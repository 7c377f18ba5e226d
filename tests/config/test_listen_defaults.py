"""What listens where by default: ``driftline run`` with the shipped config
opens its metrics endpoint and the embedded broker on loopback only.

Why: driftline runs next to production crawlers; a /metrics, /healthz or an
unauthenticated Kafka listener on every interface is a way in that nobody
asked for.  The deployment assets widen it on purpose (a container's
loopback is unreachable from Prometheus), and say so; the defaults must not.
The sockets are read from /proc (every listening TCP socket and every bound
UDP socket of the process tree), not taken from the config.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import free_port, http_status
from watcher.config import DEFAULT_CONFIG, DoiConfig, MetricsConfig

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="needs Linux /proc")


def _tree(root: int) -> set[int]:
    """``root`` and all its descendants."""
    parents: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        parents[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, todo = {root}, [root]
    while todo:
        pid = todo.pop()
        kids = [c for c, p in parents.items() if p == pid and c not in out]
        out.update(kids)
        todo += kids
    return out


def _socket_inodes(pids: set[int]) -> set[int]:
    out: set[int] = set()
    for pid in pids:
        fd_dir = Path(f"/proc/{pid}/fd")
        try:
            fds = list(fd_dir.iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                out.add(int(target[8:-1]))
    return out


def _address(hex_addr: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    host, port = hex_addr.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        return ipaddress.IPv4Address(raw[::-1]), int(port, 16)
    # /proc prints IPv6 as four host-order 32-bit words
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    return ipaddress.IPv6Address(words), int(port, 16)


def listening(pids: set[int]) -> list[tuple[str, str, int]]:
    """(protocol, address, port) of every listening TCP and bound UDP socket of ``pids``."""
    inodes = _socket_inodes(pids)
    out: list[tuple[str, str, int]] = []
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        path = Path(f"/proc/net/{proto}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            f = line.split()
            local, state, inode = f[1], f[3], int(f[9])
            if inode not in inodes or (proto.startswith("tcp") and state != "0A"):  # 0A = LISTEN
                continue
            addr, port = _address(local)
            out.append((proto, str(addr), port))
    return out


def _is_loopback(addr: str) -> bool:
    ip = ipaddress.ip_address(addr)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def test_shipped_defaults_name_loopback() -> None:
    shipped = yaml.safe_load(DEFAULT_CONFIG.read_text())
    assert MetricsConfig().host == shipped["metrics"]["host"] == "127.0.0.1"
    assert DoiConfig().status_host == shipped["doi"]["status_host"] == "127.0.0.1"
    assert shipped["kafka"]["bootstrap_servers"] is None and shipped["kafka"]["embedded_broker"] is True


@pytest.mark.kafka  # starts the embedded Tansu broker
def test_run_with_the_shipped_config_listens_on_loopback_only(tmp_path: Path) -> None:
    metrics_port, broker_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRIFTLINE")}
    env.update({
        "PYTHONPATH": str(REPO),
        # only ports and paths differ from the shipped config.yaml: hosts are its own
        "DRIFTLINE__METRICS__PORT": str(metrics_port),
        "DRIFTLINE__KAFKA__EMBEDDED_PORT": str(broker_port),
        "DRIFTLINE__STORE__PATH": str(tmp_path / "driftline.db"),
        "DRIFTLINE__RENDER__ENABLED": "false",
    })
    err = (tmp_path / "stderr.txt").open("w+")
    proc = subprocess.Popen([sys.executable, "-m", "watcher.cli", "run"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=err, env=env)
    try:
        deadline = time.monotonic() + 60
        while http_status(f"http://127.0.0.1:{metrics_port}/readyz") != 200:  # broker up, consumers joined
            assert proc.poll() is None, (tmp_path / "stderr.txt").read_text()[-3000:]
            assert time.monotonic() < deadline, "never ready"
            time.sleep(0.3)
        socks = listening(_tree(proc.pid))
        ports = {port for _, _, port in socks}
        assert {metrics_port, broker_port} <= ports, socks  # the broker is a child process: the tree is seen
        wide = [s for s in socks if not _is_loopback(s[1])]
        assert not wide, f"listening beyond loopback: {wide}"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        err.close()
