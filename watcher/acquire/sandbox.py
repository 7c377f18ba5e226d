"""How Chromium is launched: with its sandbox, as an unprivileged user where possible.

Why: the render pool opens untrusted pages (live pages an event names,
archived captures of hostile sites).  Chromium's sandbox is what confines a
renderer exploit; ``--no-sandbox`` as root would hand such an exploit the
whole machine.  Chromium refuses to sandbox itself as root, so as root
driftline launches it through a small wrapper that drops to
``render.sandbox_user`` (``setpriv``) and keeps the sandbox on; as any other
user it simply keeps the sandbox on.

``render.sandbox``: ``on`` (sandboxed or fail), ``off`` (``--no-sandbox``,
for platforms without user namespaces or setuid helper), ``auto`` (sandboxed
when this platform allows it, otherwise ``--no-sandbox`` with a warning).
The choice is logged once per launch.
"""

from __future__ import annotations

import logging
import os
import pwd
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..config import RenderConfig
from ..errors import RenderError

log = logging.getLogger(__name__)

NO_SANDBOX = "--no-sandbox"


@dataclass
class LaunchPlan:
    """What to start: ``executable`` (Chromium or the wrapper), extra ``args``, and a description for the log."""

    executable: str
    args: list[str]
    sandboxed: bool
    user: str
    description: str
    _tmp: list[str] = field(default_factory=list)

    def cleanup(self) -> None:
        for path in self._tmp:
            shutil.rmtree(path, ignore_errors=True)
        self._tmp.clear()


def unsandboxed(cfg: RenderConfig, why: str) -> LaunchPlan:
    user = _current_user()
    return LaunchPlan(cfg.executable_path, [NO_SANDBOX], False, user,
                      f"Chromium sandbox OFF ({why}); running as {user}")


def plan_launch(cfg: RenderConfig) -> LaunchPlan:
    """The launch for ``cfg.sandbox``; raises :class:`RenderError` when ``on`` cannot be met."""
    if cfg.sandbox == "off":
        return unsandboxed(cfg, "render.sandbox=off")
    if os.geteuid() != 0:
        user = _current_user()
        return LaunchPlan(cfg.executable_path, [], True, user, f"Chromium sandbox ON, running as {user}")
    problem = _wrapper_problem(cfg)
    if problem is not None:
        if cfg.sandbox == "on":
            raise RenderError(f"render.sandbox=on but Chromium cannot be sandboxed here: {problem}",
                              reason="render_sandbox")
        return unsandboxed(cfg, f"running as root and {problem}")
    return _wrapped(cfg)


def _current_user() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def _wrapper_problem(cfg: RenderConfig) -> str | None:
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is missing"
    try:
        pwd.getpwnam(cfg.sandbox_user)
    except KeyError:
        return f"render.sandbox_user {cfg.sandbox_user!r} does not exist"
    if not os.access(cfg.executable_path, os.X_OK):
        return f"{cfg.executable_path} is not executable"
    return None


_PREFIX = "driftline-chromium-"
_OWNER = "owner.pid"


def _pid_namespace() -> str:
    """This process's PID namespace (``pid:[4026531836]``), or "" where the system does not say."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _started(pid: int) -> str:
    """When process ``pid`` started, in clock ticks since boot (``/proc/PID/stat``, field 22), or ""."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat[stat.rfind(")") + 2:].split()  # the command name, in parentheses, may hold spaces
    return fields[19] if len(fields) > 19 else ""


def owner_line(pid: int | None = None) -> str:
    """What a wrapper folder's ``owner.pid`` holds: the owner's number, its PID namespace and its
    start time, so that a sweep can tell the owner (see :func:`sweep_stale`)."""
    pid = os.getpid() if pid is None else pid
    return f"{pid} {_pid_namespace()} {_started(pid)}".rstrip()


def _owner_gone(text: str) -> bool | None:
    """Whether the process an ``owner.pid`` names is gone; ``None`` when that cannot be told: a
    garbled file, an owner in another PID namespace (a container beside this one, sharing the
    temporary folder: its numbers are not this namespace's), or a process this one may not see."""
    fields = text.split()
    try:
        pid = int(fields[0])
    except (IndexError, ValueError):
        return None
    if len(fields) > 1 and fields[1] != _pid_namespace():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return None
    # a process holds the number: the owner, or a later process given its number (a start time
    # recorded and not this process's)
    return len(fields) > 2 and _started(pid) not in ("", fields[2])


def sweep_stale(tmpdir: str | None = None) -> int:
    """Remove the wrapper folders of driftline processes that are gone (killed before their render
    pool closed: a SIGKILL, an OOM kill), each named by the ``owner.pid`` it holds; return how many.
    A folder whose owner runs, or that names none, or whose owner cannot be told (another PID
    namespace) is left alone."""
    removed = 0
    for path in Path(tmpdir or tempfile.gettempdir()).glob(f"{_PREFIX}*"):
        try:
            text = (path / _OWNER).read_text()
        except OSError:
            continue
        if _owner_gone(text):
            shutil.rmtree(path, ignore_errors=True)
            removed += not path.exists()
    return removed


def _wrapped(cfg: RenderConfig) -> LaunchPlan:
    """A wrapper script that hands Playwright's profile directory to the user, then drops to it."""
    entry = pwd.getpwnam(cfg.sandbox_user)
    if swept := sweep_stale():
        log.info("removed %d Chromium wrapper folders of driftline processes that are gone", swept)
    tmp = tempfile.mkdtemp(prefix=_PREFIX)
    (Path(tmp) / _OWNER).write_text(owner_line())
    home = Path(tmp) / "home"
    home.mkdir()
    os.chown(home, entry.pw_uid, entry.pw_gid)
    os.chmod(tmp, 0o755)
    wrapper = Path(tmp) / "chromium"
    uid, gid = entry.pw_uid, entry.pw_gid
    wrapper.write_text(
        "#!/bin/sh\n"
        "# written by driftline (watcher/acquire/sandbox.py): Chromium as an unprivileged user, sandbox on\n"
        'for a in "$@"; do case "$a" in --user-data-dir=*) '
        f'chown -R {uid}:{gid} "${{a#--user-data-dir=}}";; esac; done\n'
        f"exec setpriv --reuid={uid} --regid={gid} --clear-groups --reset-env "
        f"env HOME={shlex.quote(str(home))} {shlex.quote(cfg.executable_path)} \"$@\"\n"
    )
    wrapper.chmod(0o700)
    return LaunchPlan(str(wrapper), [], True, cfg.sandbox_user,
                      f"Chromium sandbox ON, running as {cfg.sandbox_user} (uid {uid}) through {wrapper}",
                      [tmp])
