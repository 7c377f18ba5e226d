"""``driftline run --crawl-log`` SIGKILLed at random moments while Heritrix writes and rotates its log.

The proof the durable path asks for, as tests/stream/test_stream_restart.py gives it for the broker path: a
writer appends crawl.log lines (some in two writes, so a partial line is often at the end), with bad
lines in each file; meanwhile the real CLI process is started and SIGKILLed again and again at random
moments, then run with ``--once`` to the end.  A third of the way, while the process is stopped, the
log is rotated twice with a whole file written between (renamed twice as Heritrix does at checkpoints,
or copied and truncated as logrotate's copytruncate does, then renamed), so the reader starts again two
rotations behind.  Then: every capture has exactly one stored verdict (a row per verdict id, and each
history's insert count equals its captures: nothing was stored twice), the newest versions equal
batch's verdicts on the same WARC, each bad line has exactly one dead letter and nothing else is
dead-lettered, the position is at the end of the current log, and the JSON-lines output holds every
verdict and no message twice (verdicts, alerts, advice, recommendations, dead letters).  On SQLite and
on PostgreSQL.
"""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fixtures.crawllog import bad_lines, collection, follow_settings, repeated, skipped_lines
from tests.fixtures.streamcheck import _batch
from watcher.canonical import url_key
from watcher.config import Config
from watcher.crawlfollow.follow import HEAD_BYTES, Position
from watcher.errors import StoreError
from watcher.store import open_store
from watcher.store.codec import decode_verdict
from watcher.store.positions import positions_of
from watcher.store.sqlbase import SQLStore

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Lag:
    """How the writer makes the reader lag two rotations: at the first rotation it asks for a pause
    (``wanted``), the test kills the reader and grants it (``granted``), the writer writes a burst, rotates
    twice with a whole file between, and says so (``rotated``); then the reader is started again."""

    wanted: threading.Event = field(default_factory=threading.Event)
    granted: threading.Event = field(default_factory=threading.Event)
    rotated: threading.Event = field(default_factory=threading.Event)


def _rotate(log: Path, how: str, stamp: str) -> None:
    if how == "rename":  # Heritrix at a checkpoint
        os.rename(log, log.with_name(f"crawl.log.cp0000{stamp[-1]}-{stamp}"))
        log.write_text("")
    else:  # logrotate's copytruncate
        shutil.copy2(log, log.with_name("crawl.log.1"))
        with log.open("r+") as fh:
            fh.truncate(0)


def _append(log: Path, line: str, rnd: random.Random, paced: bool) -> None:
    with log.open("a") as fh:
        if paced and rnd.random() < 0.3:
            cut = rnd.randrange(1, len(line))
            fh.write(line[:cut])
            fh.flush()
            time.sleep(rnd.uniform(0.01, 0.15))
            fh.write(line[cut:])
        else:
            fh.write(line)
    if paced:
        time.sleep(rnd.uniform(0.02, 0.25))  # a crawl's pace: the follower keeps up, so kills meet work


def _writer(log: Path, lines: list[str], seed: int, rotations: tuple[str, str], done: threading.Event,
            seen: Callable[[], None], lag: Lag) -> None:
    """Append ``lines`` as a crawler does (some in two writes), then, while the reader is stopped, a burst
    it has not read, a rotation, a whole file, a second rotation; then the rest as before."""
    rnd = random.Random(seed)
    first, second = len(lines) // 3, 2 * len(lines) // 3
    for line in lines[:first - 3]:
        _append(log, line, rnd, paced=True)
    seen()  # copytruncate is told from appending by the first bytes: driftline has stored them
    lag.wanted.set()
    lag.granted.wait(300)
    for line in lines[first - 3:first]:
        _append(log, line, rnd, paced=False)
    _rotate(log, rotations[0], "20240601000000")
    for line in lines[first:second]:
        _append(log, line, rnd, paced=False)
    _rotate(log, rotations[1], "20240602000000")
    lag.rotated.set()
    for line in lines[second:]:
        _append(log, line, rnd, paced=True)
    done.set()


def _query(cfg: Config, sql: str) -> list[Any]:
    store = open_store(cfg.store)
    try:
        assert isinstance(store, SQLStore)
        with store.reading() as c:  # the test reads the tables themselves, not what the API makes of them
            return list(store.run(c, sql).fetchall())
    finally:
        store.close()


def _wait_for_position(cfg: Config, timeout_s: float = 60.0, head_len: int = 0) -> None:
    """Until a position is stored (whose hash covers at least ``head_len`` first bytes of the file)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            store = open_store(cfg.store)
        except StoreError:
            time.sleep(0.2)
            continue
        try:
            got = Position.from_json(positions_of(store).get_position(
                str(Path(cfg.crawl_log.output).with_name("crawl.log"))))
            if got is not None and got.head_len >= head_len:
                return
        except StoreError:
            pass
        finally:
            store.close()
        time.sleep(0.2)
    raise AssertionError("driftline never stored a position")


def _position_now(cfg: Config) -> str | None:
    try:
        rows = _query(cfg, "SELECT position FROM input_positions")
    except StoreError:  # not created yet
        return None
    return str(rows[0][0]) if rows else None


def _wait_for_progress(cfg: Config, before: str | None, log: Path, done: threading.Event,
                       timeout_s: float) -> None:
    """Until the stored position differs from ``before`` (the process consumed a line), the whole log
    is written and read (nothing left to do), or the timeout."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        now = _position_now(cfg)
        if now not in (before, None):
            return
        pos = Position.from_json(now)
        if done.is_set() and pos is not None and pos.ident == _ident(log) and pos.offset == log.stat().st_size:
            return
        time.sleep(0.1)


def _ident(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_dev, st.st_ino


def _start(config: Path, log: Path, *extra: str, level: str = "WARNING") -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "watcher.cli", "-c", str(config), "--log-level", level,
                             "run", "--crawl-log", str(log), *extra], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _watch_stderr(proc: subprocess.Popen[bytes]) -> threading.Event:
    """Drain ``proc``'s stderr; the event is set once it says it follows the log (started)."""
    following = threading.Event()

    def drain() -> None:
        assert proc.stderr is not None
        with proc.stderr:
            for line in proc.stderr:
                if b"consumers.crawllog: following " in line:
                    following.set()

    threading.Thread(target=drain, daemon=True).start()
    return following


def _setup(tmp_path: Path, store: dict[str, Any] | None, **kw: Any) -> tuple[Any, Config, Path, Path]:
    warc, refs, captures = collection(tmp_path, **kw)
    settings = follow_settings(tmp_path, warc, store=store)
    settings["seeds"] = {"publish_interval_s": 0}  # a seed report after every verdict, and advice from two captures:
    settings["actuator"] = {"guidance_min_captures": 2}  # what a restart used to repeat
    config = tmp_path / "driftline.yaml"
    config.write_text(yaml.safe_dump(settings))
    return (warc, refs, captures), Config.model_validate(settings), config, tmp_path / "crawl.log"


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> dict[str, Any] | None:
    if request.param == "postgres":
        pytest.importorskip("psycopg", reason="needs psycopg (pip install -e '.[postgres]')")
        return {"backend": "postgres", "dsn": request.getfixturevalue("postgres_dsn")}
    return None


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("rotations", "seed"), [(("rename", "rename"), 11), (("copytruncate", "rename"), 12)])
def test_sigkill_at_random_moments_loses_nothing_and_stores_nothing_twice(
        tmp_path: Path, backend: dict[str, Any] | None, rotations: tuple[str, str], seed: int) -> None:
    if backend is not None and rotations[0] != "rename":
        pytest.skip("one rotation style on PostgreSQL is enough: the follower is the same")
    (warc, refs, captures), cfg, config, log = _setup(tmp_path, backend, histories=20, captures=5, seed=seed)
    bad = bad_lines(warc.name)
    # bad lines in every file (the middle one's is the one a reader a rotation behind used to skip)
    lines = [*captures[:30], bad[0], *skipped_lines(), *captures[30:60], bad[1], *captures[60:]]
    log.write_text("")
    done, lag = threading.Event(), Lag()
    seen = functools.partial(_wait_for_position, cfg, 120.0, HEAD_BYTES)
    writer = threading.Thread(target=_writer, args=(log, lines, seed, rotations, done, seen, lag), daemon=True)
    rnd = random.Random(seed)
    kills = working = 0  # working: kills of a process that had moved the position (killed mid-work)
    while (not done.is_set() or kills < 8) and kills < 40:
        before = _position_now(cfg)
        proc = _start(config, log, level="INFO")
        following = _watch_stderr(proc)
        try:
            if not writer.is_alive() and not done.is_set():
                # The crawl goes on once driftline follows its log (a rotation before that is not followed).
                _wait_for_position(cfg)
                writer.start()
            # Most kills land while it works (a start takes seconds on a loaded machine, and the first
            # capture scored warms the engine up), some while it starts.
            if rnd.random() < 0.75:
                following.wait(60)
                _wait_for_progress(cfg, before, log, done, timeout_s=10.0)
                time.sleep(rnd.uniform(0.0, 1.5))
            else:
                time.sleep(rnd.uniform(0.0, 3.0))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        kills += 1
        working += _position_now(cfg) not in (before, None)
        if lag.wanted.is_set() and not lag.granted.is_set():  # two rotations while it is stopped
            lag.granted.set()
            assert lag.rotated.wait(300)
    writer.join(60)
    assert working >= 3, (kills, working)
    final = _start(config, log, "--once")
    _, err = final.communicate(timeout=300)
    assert final.returncode == 0, err.decode()[-2000:]

    got = {vid: decode_verdict(text) for vid, text in _query(cfg, "SELECT verdict_id, json FROM verdicts")}
    inserts = {h: int(n) for h, n in _query(cfg, "SELECT history, n FROM doc_count")}
    letters = _query(cfg, "SELECT source, line_offset, reason FROM input_dead_letters")
    (position,) = _query(cfg, "SELECT position FROM input_positions")[0]

    batch = _batch(str(warc), cfg)
    assert set(got) == set(batch), (len(got), len(batch))  # every capture scored, none lost
    assert inserts == dict(Counter(url_key(ref.url) for ref in refs))  # no verdict stored twice
    differ = [(vid, b[:4]) for vid, b in batch.items() for v in [got[vid]]
              if b[:4] != (v.status, v.change, v.reason, v.baseline_time is not None)]
    assert differ == [], differ[:3]
    assert sorted(r[2] for r in letters) == ["unparseable", "warc_missing"], letters
    saved = Position.from_json(position)
    assert saved is not None and saved.ident == (log.stat().st_dev, log.stat().st_ino)
    assert saved.offset == log.stat().st_size
    out = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert repeated(out) == []  # no message written twice: verdicts, alerts, advice, dead letters
    sent = {(m["value"]["verdict_id"], m["value"]["version"]) for m in out if m["kind"] == "verdict"}
    assert {vid for vid, _ in sent} == set(got)  # and every verdict reached the output
    assert sum(1 for m in out if m["kind"] == "recommendation") >= 10  # advice was given all along
    assert sorted(m["value"]["reason"] for m in out if m["kind"] == "dead-letter") == ["unparseable", "warc_missing"]
    print(f"{rotations}: {kills} kills, {working} of them mid-work; {len(got)} verdicts; output holds {len(out)} "
          "messages")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_sigterm_and_sigint_stop_it_with_their_exit_codes(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    (_, _, captures), cfg, config, log = _setup(tmp_path, None, histories=2, captures=2)
    log.write_text("".join(captures))
    proc = _start(config, log)
    try:
        _wait_for_position(cfg)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == code, err.decode()[-1000:]
