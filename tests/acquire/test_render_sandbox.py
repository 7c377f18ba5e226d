"""Chromium's sandbox (render.sandbox): real Chromium, checked in /proc.

As root (this test machine), ``auto`` and ``on`` must run every Chromium
process as ``render.sandbox_user`` without ``--no-sandbox``; ``off`` runs it
with ``--no-sandbox``.  The log names the choice.
"""

from __future__ import annotations

import logging
import os
import pwd
from pathlib import Path

import pytest

from tests.fixtures.browser import chromium_browser_pids
from tests.fixtures.webserver import serve
from watcher.acquire import RenderPool
from watcher.config import LiveFetchConfig, RenderConfig
from watcher.errors import RenderError

LIVE = LiveFetchConfig(timeout_s=10.0, per_host_delay_s=0.0)


def _proc_info(pid: int) -> tuple[int, str]:
    status = Path(f"/proc/{pid}/status").read_text()
    uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    return uid, cmd


async def _render_once(cfg: RenderConfig) -> tuple[RenderPool, list[tuple[int, str]]]:
    from aiohttp import web

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html><body><p>sandboxed page</p></body></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    others = set(chromium_browser_pids())  # browsers of session-wide pools in this process
    pool = RenderPool(cfg, ("127.0.0.1/32",), fetch=LIVE)
    async with serve(app) as base:
        html, _ = await pool.render(base + "/")
    assert b"sandboxed page" in html
    infos = [_proc_info(pid) for pid in chromium_browser_pids() if pid not in others]
    return pool, infos


@pytest.mark.parametrize("mode", ["auto", "on"])
async def test_sandbox_on_runs_chromium_unprivileged(render_config: RenderConfig, mode: str,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="watcher.acquire")
    cfg = render_config.model_copy(update={"sandbox": mode})
    pool, infos = await _render_once(cfg)
    try:
        assert pool.sandboxed is True
        assert infos, "no Chromium browser process found"
        expected_uid = pwd.getpwnam(cfg.sandbox_user).pw_uid if os.geteuid() == 0 else os.geteuid()
        for uid, cmd in infos:
            assert uid == expected_uid, cmd
            assert "--no-sandbox" not in cmd
        assert "Chromium sandbox ON" in caplog.text
    finally:
        await pool.close()


async def test_sandbox_off_is_explicit(render_config: RenderConfig, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="watcher.acquire")
    pool, infos = await _render_once(render_config.model_copy(update={"sandbox": "off"}))
    try:
        assert pool.sandboxed is False
        assert infos and all("--no-sandbox" in cmd for _, cmd in infos)
        assert "Chromium sandbox OFF (render.sandbox=off)" in caplog.text
    finally:
        await pool.close()


async def test_sandbox_on_without_a_usable_user_fails(render_config: RenderConfig) -> None:
    if os.geteuid() != 0:
        pytest.skip("as a non-root user Chromium is sandboxed without the wrapper")
    cfg = render_config.model_copy(update={"sandbox": "on", "sandbox_user": "no-such-user-xyz"})
    pool = RenderPool(cfg, (), fetch=LIVE)
    try:
        with pytest.raises(RenderError) as err:
            await pool.start()
        assert err.value.reason == "render_sandbox"
    finally:
        await pool.close()
    auto = RenderPool(cfg.model_copy(update={"sandbox": "auto"}), (), fetch=LIVE)
    try:
        await auto.start()  # falls back, and says so
        assert auto.sandboxed is False
    finally:
        await auto.close()


def test_the_wrapper_folders_of_gone_processes_are_swept(tmp_path: Path) -> None:
    """A consumer killed before its render pool closed leaves its wrapper folder; the next launch
    removes the folders whose owner is gone, and no other."""
    import subprocess
    import sys

    from watcher.acquire.sandbox import sweep_stale

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its number names no process now
    folders = {}
    for name, owner in (("gone", str(gone.pid)), ("alive", str(os.getpid())), ("unnamed", None),
                        ("garbled", "not a pid")):
        folder = tmp_path / f"driftline-chromium-{name}"
        (folder / "home").mkdir(parents=True)
        if owner is not None:
            (folder / "owner.pid").write_text(owner)
        folders[name] = folder
    (tmp_path / "other-folder").mkdir()
    (tmp_path / "other-folder" / "owner.pid").write_text(str(gone.pid))
    assert sweep_stale(str(tmp_path)) == 1
    assert not folders["gone"].exists()
    assert all(folders[n].exists() for n in ("alive", "unnamed", "garbled"))
    assert (tmp_path / "other-folder").exists()


def test_a_sweep_leaves_owners_it_cannot_tell_and_removes_a_number_given_to_another_process(tmp_path: Path) -> None:
    """The owner file names the process's number, PID namespace and start time: a folder of a
    process in another PID namespace (a container beside this one sharing the temporary folder)
    is never swept, and a folder whose number now names a later process is."""
    import subprocess
    import sys

    from watcher.acquire.sandbox import _pid_namespace, owner_line, sweep_stale

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    ours = _pid_namespace()
    assert ours.startswith("pid:[")
    owners = {
        "alive": owner_line(),
        "gone": owner_line(gone.pid),
        "elsewhere": f"{gone.pid} pid:[1] 12345",  # its number is free here, not where it runs
        "reused": f"{os.getpid()} {ours} 1",  # this number, a process started at another time
        "legacy-gone": str(gone.pid),
        "legacy-alive": str(os.getpid()),
    }
    for name, line in owners.items():
        (tmp_path / f"driftline-chromium-{name}" / "home").mkdir(parents=True)
        (tmp_path / f"driftline-chromium-{name}" / "owner.pid").write_text(line)
    assert sweep_stale(str(tmp_path)) == 3
    left = {p.name.removeprefix("driftline-chromium-") for p in tmp_path.iterdir()}
    assert left == {"alive", "elsewhere", "legacy-alive"}


def test_a_live_owner_in_another_pid_namespace_keeps_its_folder(tmp_path: Path) -> None:
    """A real second PID namespace (``unshare --pid``, as a container's): its process writes its owner
    file and runs on while this namespace sweeps; the folder stays, and stays after the owner is
    gone too, since a sweep here cannot tell that process's fate (a sweep in its namespace can)."""
    import shutil
    import subprocess
    import sys

    from watcher.acquire.sandbox import sweep_stale

    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is missing")
    folder = tmp_path / "driftline-chromium-elsewhere"
    (folder / "home").mkdir(parents=True)
    repo = Path(__file__).resolve().parents[2]
    code = ("import sys, time; sys.path.insert(0, sys.argv[1]); from watcher.acquire.sandbox import owner_line; "
            "open(sys.argv[2], 'w').write(owner_line()); print('ready', flush=True); sys.stdin.read()")
    child = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", code, str(repo),
                              str(folder / "owner.pid")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        ready = child.stdout.readline()
        if ready.strip() != "ready":
            child.wait()
            assert child.stderr is not None
            pytest.skip(f"no PID namespace here: {child.stderr.read().strip()[:200]}")
        pid = int((folder / "owner.pid").read_text().split()[0])
        assert pid == 1  # the first process of its namespace: a number that means another process here
        assert sweep_stale(str(tmp_path)) == 0
        assert folder.exists()
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
    assert sweep_stale(str(tmp_path)) == 0 and folder.exists()
