"""Following one growing crawl.log: partial lines, rotation, copytruncate, a replaced file, restarts."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

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
    assert moves[-1].position.ident == (os.stat(log).st_dev, os.stat(log).st_ino)  # the switch is stored


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


@pytest.mark.parametrize("size", [10_000, 300_000])  # within one read, and over several
def test_an_over_long_line_is_cut_and_measured(tmp_path: Path, size: int) -> None:
    log = tmp_path / "crawl.log"
    log.write_text("short\n" + "x" * size)
    tail = Tail(str(log), CFG, None)
    assert _texts(_drain(tail)) == ["short"]  # its newline has not arrived: it waits, and is not held
    _append(log, "\nafter\n")
    got = [line for line in _drain(tail) if line.data is not None]
    assert _texts(got)[1] == "after"
    long = got[0]
    assert long.length == size + 1 and long.data is not None and len(long.data) <= 4096
    assert got[1].start == len("short\n") + size + 1


def test_from_end_starts_after_the_last_whole_line(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    log.write_text("old\nhalf")
    tail = Tail(str(log), CrawlLogConfig(from_start=False), None)
    assert _texts(_drain(tail)) == []
    _append(log, "-done\nnew\n")
    assert _texts(_drain(tail)) == ["half-done", "new"]


def test_copytruncate_while_behind_never_reads_the_new_content_at_the_old_offset(tmp_path: Path) -> None:
    """The follower lags the crawler: the log is copied, truncated and written past the follower's
    offset before it reads again.  Reading on at that offset would return the middle of new lines."""
    log = tmp_path / "crawl.log"
    old = [f"2024-01-01T00:00:{i:02d} old line {i}" for i in range(6)]
    log.write_text("".join(f"{x}\n" for x in old))
    tail = Tail(str(log), CFG, None)
    assert tail.read(3)[0].data is None  # the first read stores where the path stands
    assert _texts(tail.read(3)) == old[:3]
    shutil.copy(log, tmp_path / "crawl.log.1")
    with log.open("r+") as fh:
        fh.truncate(0)
    new = [f"2024-01-02T00:00:{i:02d} a new line, longer than the old ones were {i}" for i in range(6)]
    _append(log, "".join(f"{x}\n" for x in new))
    assert _texts(_drain(tail)) == old[3:] + new


def test_an_unknown_file_is_never_taken_for_the_copy(tmp_path: Path) -> None:
    """A position that knows no first bytes (the file was empty) whose file is gone: another log in
    the directory is not read in its place."""
    log = tmp_path / "crawl.log"
    log.write_text("")
    tail = Tail(str(log), CFG, None)
    saved = _drain(tail)[-1].position
    tail.close()
    assert saved.head_len == 0
    (tmp_path / "progress-statistics.log").write_text("not a crawl.log line\n")
    log.unlink()
    log.write_text("fresh1\n")
    assert _texts(_drain(Tail(str(log), CFG, saved))) == ["fresh1"]


def _lines_of(tag: str, n: int) -> list[str]:
    return [f"2024-01-01T00:00:{i:02d}Z {tag} line {i}, long enough that the first bytes of each file differ"
            for i in range(n)]


def _rename(log: Path, stamp: str) -> None:
    """Heritrix's rotation: the log renamed to crawl.log.<14 digits>, a new one opened."""
    os.rename(log, log.with_name(f"crawl.log.{stamp}"))
    log.write_text("")


def _copytruncate(log: Path) -> None:
    """logrotate's copytruncate (rotate N): the numbered copies shift up, the log is copied to .1 and truncated."""
    olds = sorted((p for p in log.parent.glob("crawl.log.[0-9]") if p.suffix[1:].isdigit()),
                  key=lambda p: -int(p.suffix[1:]))
    for p in olds:
        os.rename(p, p.with_name(f"crawl.log.{int(p.suffix[1:]) + 1}"))
    shutil.copy2(log, log.with_name("crawl.log.1"))
    with log.open("r+") as fh:
        fh.truncate(0)


def _write(log: Path, lines: list[str]) -> None:
    _append(log, "".join(f"{x}\n" for x in lines))


@pytest.mark.parametrize("second", ["rename", "copytruncate"])
@pytest.mark.parametrize("first", ["rename", "copytruncate"])
def test_a_reader_two_rotations_behind_reads_every_file_in_order(tmp_path: Path, first: str, second: str) -> None:
    """The reader is still in the first file when the log is rotated twice: it finishes that file, then
    the one rotated in between, then the current one (before: the middle file was skipped)."""
    log = tmp_path / "crawl.log"
    a, b, c = _lines_of("a", 6), _lines_of("b", 5), _lines_of("c", 4)
    _write(log, a)
    tail = Tail(str(log), CFG, None)
    assert tail.read(2)[0].data is None
    got = _texts(tail.read(2))
    for how, stamp, lines in ((first, "20240101000000", b), (second, "20240102000000", c)):
        if how == "rename":
            _rename(log, stamp)
        else:
            _copytruncate(log)
        (tmp_path / "crawl.log.lck").write_text("")  # Heritrix's log handler makes its lock file anew
        _write(log, lines)
    got += _texts(_drain(tail, 12))
    assert got == a + b + c


@pytest.mark.parametrize("compress", [False, True])
def test_a_restart_two_rotations_later_reads_the_files_between(tmp_path: Path, compress: bool) -> None:
    """Stopped in the first file; meanwhile the log was renamed twice (and the rotated files gzipped by
    the real gzip, as logrotate's compress does): every line after the stored position is read, once."""
    log = tmp_path / "crawl.log"
    a, b, c = _lines_of("a", 6), _lines_of("b", 5), _lines_of("c", 4)
    _write(log, a)
    first = Tail(str(log), CFG, None)
    first.read(1)
    saved = first.read(2)[-1].position
    first.close()
    _rename(log, "20240101000000")
    _write(log, b)
    _rename(log, "20240102000000")
    _write(log, c)
    if compress:
        subprocess.run(["gzip", str(tmp_path / "crawl.log.20240101000000"),
                        str(tmp_path / "crawl.log.20240102000000")], check=True)
    again = Tail(str(log), CFG, Position.from_json(saved.to_json()))
    got = _drain(again, 12)
    assert _texts(got) == a[2:] + b + c
    assert [line for line in got if line.gap is not None] == []


def test_a_deleted_file_is_a_gap_naming_the_file_and_bytes(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log = tmp_path / "crawl.log"
    a, b, c = _lines_of("a", 6), _lines_of("b", 5), _lines_of("c", 4)
    _write(log, a)
    first = Tail(str(log), CFG, None)
    first.read(1)
    saved = first.read(2)[-1].position
    first.close()
    _rename(log, "20240101000000")
    _write(log, b)
    _rename(log, "20240102000000")
    _write(log, c)
    (tmp_path / "crawl.log.20240101000000").unlink()  # removed (logrotate's rotate N) before it was read
    with caplog.at_level("ERROR", logger="watcher.crawlfollow.follow"):
        got = _drain(Tail(str(log), CFG, saved), 12)
    gaps = [line.gap for line in got if line.gap is not None]
    assert len(gaps) == 1 and gaps[0].start == saved.offset and gaps[0].end == len("".join(f"{x}\n" for x in a))
    assert gaps[0].name == str(log)
    assert _texts(got) == b + c  # the files after the gap are still read
    assert any(str(saved.offset) in r.getMessage() and r.levelname == "ERROR" for r in caplog.records)


def test_a_file_rotated_and_deleted_while_the_reader_was_behind_is_a_gap(tmp_path: Path) -> None:
    """The reader is in the first rotated file when it sees the path name a second file; that one is
    rotated and deleted before the reader gets to it: its loss is reported, naming its inode."""
    log = tmp_path / "crawl.log"
    a, b, c = _lines_of("a", 6), _lines_of("b", 5), _lines_of("c", 4)
    _write(log, a)
    tail = Tail(str(log), CFG, None)
    tail.read(2)
    got = _texts(tail.read(2))
    _rename(log, "20240101000000")
    _write(log, b)
    second = os.stat(log)
    got += _texts(tail.read(2))  # behind, in the first file: it sees the path name the second
    _rename(log, "20240102000000")
    _write(log, c)
    (tmp_path / "crawl.log.20240102000000").unlink()
    lines = _drain(tail, 12)
    got += _texts(lines)
    assert got == a + c
    gaps = [line.gap for line in lines if line.gap is not None]
    assert [(g.ino, g.start, g.end) for g in gaps] == [(second.st_ino, 0, second.st_size)]


def test_a_compressed_rotated_file_is_no_gap(tmp_path: Path) -> None:
    """The same, but the second file was compressed (gzip), not deleted: it is read, and no gap."""
    log = tmp_path / "crawl.log"
    a, b, c = _lines_of("a", 6), _lines_of("b", 5), _lines_of("c", 4)
    _write(log, a)
    tail = Tail(str(log), CFG, None)
    tail.read(2)
    got = _texts(tail.read(2))
    _rename(log, "20240101000000")
    _write(log, b[:1])
    got += _texts(tail.read(2))  # sees the second file while it holds one line
    _write(log, b[1:])
    _rename(log, "20240102000000")
    _write(log, c)
    subprocess.run(["gzip", str(tmp_path / "crawl.log.20240102000000")], check=True)
    lines = _drain(tail, 12)
    assert got + _texts(lines) == a + b + c
    assert [line.gap for line in lines if line.gap is not None] == []


def test_a_truncation_whose_copy_is_gone_is_a_gap_and_reading_goes_on(tmp_path: Path) -> None:
    log = tmp_path / "crawl.log"
    a, b = _lines_of("a", 6), _lines_of("b", 3)
    _write(log, a)
    tail = Tail(str(log), CFG, None)
    tail.read(2)
    got = _texts(tail.read(2))
    at = tail.position().offset
    _copytruncate(log)
    (tmp_path / "crawl.log.1").unlink()  # the copy removed before the reader got to it
    _write(log, b)
    lines = _drain(tail)
    gaps = [line.gap for line in lines if line.gap is not None]
    assert [(g.start, g.end) for g in gaps] == [(at, len("".join(f"{x}\n" for x in a)))]
    assert got + _texts(lines) == a[:2] + b
