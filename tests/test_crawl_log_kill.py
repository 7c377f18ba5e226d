"""``driftline run --crawl-log`` SIGKILLed at random moments while Heritrix writes and rotates its log.

The proof the durable path asks for, as tests/test_stream_restart.py gives it for the broker path: a
writer appends crawl.log lines (some in two writes, so a partial line is often at the end), rotates the
log half way as Heritrix does at a checkpoint, and appends bad lines; meanwhile the real CLI process is
started and SIGKILLed again and again at random moments, then run with ``--once`` to the end.  Then:
every capture has exactly one stored verdict (a row per verdict id, and each history's insert count
equals its captures: nothing was stored twice), the newest versions equal batch's verdicts on the same
WARC, each bad line has exactly one dead letter, nothing is dead-lettered besides, the position is at the
end of the current log, and the JSON-lines output holds no message twice.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.fixtures.crawllog import bad_lines, collection, follow_config, skipped_lines
from tests.fixtures.streamcheck import _batch
from watcher.canonical import url_key
from watcher.crawlfollow.follow import Position
from watcher.store.codec import decode_verdict

REPO = Path(__file__).resolve().parent.parent


def _writer(log: Path, lines: list[str], seed: int, done: threading.Event) -> None:
    """Append ``lines`` as a crawler does (some in two writes), rotating the log half way."""
    rnd = random.Random(seed)
    half = len(lines) // 2
    for i, line in enumerate(lines):
        if i == half:
            os.rename(log, log.with_name("crawl.log.cp00001-20240601000000"))
        with log.open("a") as fh:
            if rnd.random() < 0.3:
                cut = rnd.randrange(1, len(line))
                fh.write(line[:cut])
                fh.flush()
                time.sleep(rnd.uniform(0.01, 0.15))
                fh.write(line[cut:])
            else:
                fh.write(line)
        time.sleep(rnd.uniform(0.0, 0.08))
    done.set()


def _wait_for_position(db: Path, timeout_s: float = 60.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            with sqlite3.connect(db) as conn:
                if conn.execute("SELECT 1 FROM input_positions").fetchone():
                    return
        except sqlite3.Error:
            pass
        time.sleep(0.1)
    raise AssertionError("driftline never stored a position")


def _start(config: Path, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "watcher.cli", "-c", str(config), "--log-level", "WARNING",
                             "run", "--crawl-log", str(log), *extra], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("seed", [11])
def test_sigkill_at_random_moments_loses_nothing_and_stores_nothing_twice(tmp_path: Path, seed: int) -> None:
    warc, refs, captures = collection(tmp_path, histories=10, captures=5, seed=seed)
    bad = bad_lines(warc.name)
    lines = [*captures[:20], bad[0], *skipped_lines(), *captures[20:], bad[1]]
    cfg = follow_config(tmp_path, warc)
    config = tmp_path / "driftline.yaml"
    config.write_text(yaml.safe_dump(json.loads(cfg.model_dump_json(include={"store", "acquire", "render", "metrics",
                                                                             "crawl_log"}))))
    log = tmp_path / "crawl.log"
    log.write_text("")
    done = threading.Event()
    writer = threading.Thread(target=_writer, args=(log, lines, seed, done), daemon=True)
    rnd = random.Random(seed)
    kills = 0
    while not done.is_set() or kills < 6:
        proc = _start(config, log)
        try:
            if not writer.is_alive() and not done.is_set():
                # The crawl goes on once driftline follows its log (a rotation before that is not followed).
                _wait_for_position(tmp_path / "driftline.db")
                writer.start()
            time.sleep(rnd.uniform(0.3, 3.0))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            assert proc.stderr is not None
            proc.stderr.close()
        kills += 1
    writer.join(60)
    final = _start(config, log, "--once")
    _, err = final.communicate(timeout=300)
    assert final.returncode == 0, err.decode()[-2000:]

    db = sqlite3.connect(tmp_path / "driftline.db")
    rows = db.execute("SELECT verdict_id, json FROM verdicts").fetchall()
    got = {vid: decode_verdict(text) for vid, text in rows}
    inserts = dict(db.execute("SELECT history, n FROM doc_count").fetchall())
    letters = db.execute("SELECT source, line_offset, reason FROM input_dead_letters").fetchall()
    (position,) = db.execute("SELECT position FROM input_positions").fetchone()
    db.close()

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
    sent = Counter((m["value"]["verdict_id"], m["value"]["version"]) for m in out if m["kind"] == "verdict")
    assert [k for k, n in sent.items() if n > 1] == []
    print(f"{kills} kills; {len(got)} verdicts; output holds {len(sent)} verdict messages")
