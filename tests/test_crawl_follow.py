"""Following one growing crawl.log: partial lines, rotation, copytruncate, a replaced file, restarts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from watcher.crawlfollow.follow import Line, Position, Tail
from watcher.crawlfollow.settings import CrawlLogConfig

CFG = CrawlLogConfig(max_line_bytes=2048)


def _drain(tail: Tail, rounds: int = 6) -> list[Line]:
    """Everything the tail gives over a few polls (a rotation needs one poll of grace)."""
    out: list[Line] = []
    for _ in range(rounds):
        out += tail.read(100)
    return out


def _texts(lines: list[Line]) -> list[str]:
    return [line.data.decode() for line in lines if line.data is not None]


def _append(path: Path, text: str) -> None:
    with path.open("a") as fh:
        fh.write(text)


def test_a_partial_line_waits_for_its_newline(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    log.write_text("one\ntw")
    tail = Tail(str(log), CFG, None)
    assert _texts(_drain(tail)) == ["one"]
    assert tail.at_end
    _append(log, "o\nthree")
    got = _drain(tail)
    assert _texts(got) == ["two"]
    assert got[-1].position.offset == len("one\ntwo\n")
    _append(log, "\n")
    assert _texts(_drain(tail)) == ["three"]


def test_rotation_finishes_the_old_file_then_reads_the_new_one(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    log.write_text("a1\na2\n")
    tail = Tail(str(log), CFG, None)
    assert _texts(_drain(tail)) == ["a1", "a2"]
    _append(log, "a3\n")  # written, then rotated before the tail saw it
    os.rename(log, tmp_path / "crawl.log.cp00001-20240101000000")
    log.write_text("b1\n")
    got = _drain(tail)
    assert _texts(got) == ["a3", "b1"]
    moves = [line for line in got if line.data is None]
    assert len(moves) == 1 and moves[0].position.ident == (os.stat(log).st_dev, os.stat(log).st_ino)


def test_a_restart_resumes_in_the_rotated_file(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    log.write_text("a1\na2\n")
    first = Tail(str(log), CFG, None)
    assert first.read(1)[0].data is None  # the path is known (and its position stored) before any line
    got = first.read(1)
    saved = Position.from_json(got[-1].position.to_json())
    first.close()
    os.rename(log, tmp_path / "crawl.log.20240101")
    log.write_text("b1\nb2\n")
    again = Tail(str(log), CFG, saved)
    assert _texts(_drain(again)) == ["a2", "b1", "b2"]


def test_copytruncate_reads_the_rest_from_the_copy(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    log.write_text("2024-01-01 first line of the log, long enough to be its head\na2\n")
    tail = Tail(str(log), CFG, None)
    assert len(_texts(_drain(tail))) == 2
    _append(log, "a3\n")
    shutil.copy(log, tmp_path / "crawl.log.1")  # logrotate's copytruncate: copy, then truncate in place
    with log.open("r+") as fh:
        fh.truncate(0)
    _append(log, "2024-01-02 b1, a new head\n")
    assert _texts(_drain(tail)) == ["a3", "2024-01-02 b1, a new head"]


def test_a_file_replaced_under_the_path_while_stopped(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    log.write_text("old1\nold2\n")
    tail = Tail(str(log), CFG, None)
    saved = _drain(tail)[-1].position
    tail.close()
    fresh = tmp_path / "new.log"
    fresh.write_text("new1\n")
    os.replace(fresh, log)  # the old file is gone: nothing to finish
    again = Tail(str(log), CFG, saved)
    assert _texts(_drain(again)) == ["new1"]


def test_an_over_long_line_is_cut_and_measured(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    log.write_text("short\n" + "x" * 10_000 + "\nafter\n")
    got = [line for line in _drain(Tail(str(log), CFG, None)) if line.data is not None]
    assert _texts(got)[0] == "short" and _texts(got)[2] == "after"
    long = got[1]
    assert long.length == 10_001 and long.data is not None and len(long.data) <= 4096


def test_from_end_starts_after_the_last_whole_line(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    log.write_text("old\nhalf")
    tail = Tail(str(log), CrawlLogConfig(from_start=False), None)
    assert _texts(_drain(tail)) == []
    _append(log, "-done\nnew\n")
    assert _texts(_drain(tail)) == ["half-done", "new"]
