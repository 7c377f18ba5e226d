"""Resident memory from Linux ``/proc``, for the benchmarks that report it: the process itself, a
process tree, or the part of a tree whose command line names something (the PySpark workers).

One walk of ``/proc`` per sample: a tree's processes come and go (workers forked and reaped), so
each sample reads the table afresh."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def rss_mb() -> float:
    """This process's resident set, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass(frozen=True, slots=True)
class Proc:
    ppid: int
    rss_bytes: int
    cmdline: bytes


def processes(with_cmdline: bool = False) -> dict[int, Proc]:
    """Every process readable now: its parent, resident bytes and (when asked) command line."""
    page = os.sysconf("SC_PAGE_SIZE")
    out: dict[int, Proc] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/statm") as fh:
                pages = int(fh.read().split()[1])
            cmdline = b""
            if with_cmdline:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    cmdline = fh.read()
        except (OSError, IndexError, ValueError):
            continue  # gone while read
        out[int(entry)] = Proc(ppid, pages * page, cmdline)
    return out


def tree(root: int, procs: dict[int, Proc]) -> set[int]:
    """``root`` and its descendants among ``procs``."""
    found, changed = {root}, True
    while changed:
        changed = False
        for pid, p in procs.items():
            if p.ppid in found and pid not in found:
                found.add(pid)
                changed = True
    return found


def tree_rss_bytes(root: int, cmdline_has: bytes | None = None) -> int:
    """Resident bytes of ``root``'s tree; with ``cmdline_has``, of its processes whose command line
    holds it only."""
    procs = processes(with_cmdline=cmdline_has is not None)
    return sum(procs[p].rss_bytes for p in tree(root, procs)
               if p in procs and (cmdline_has is None or cmdline_has in procs[p].cmdline))


def tree_rss_max_bytes(root: int, cmdline_has: bytes) -> int:
    """The largest resident set of one process of ``root``'s tree whose command line holds
    ``cmdline_has``: a forked worker's own figure (pages it shares with its parent counted in it,
    as ``ps`` counts them), which the per-worker memory target reads."""
    procs = processes(with_cmdline=True)
    return max((procs[p].rss_bytes for p in tree(root, procs) if p in procs and cmdline_has in procs[p].cmdline),
               default=0)
