"""``driftline run --crawl-log`` in process, on every store backend: what batch says, bad lines as dead
letters in the store, the position committed, and a second run that finds nothing left to do."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from consumers.crawllog import CrawlLogRunner
from tests.fixtures.crawllog import bad_lines, collection, follow_config, follow_settings, repeated, skipped_lines
from tests.fixtures.streamcheck import Batch, _batch
from watcher.canonical import url_key
from watcher.config import Config
from watcher.crawlfollow.follow import Position
from watcher.model import Verdict
from watcher.store import BaselineStore
from watcher.store.positions import positions_of


def newest_verdicts(store: BaselineStore, urls: set[str]) -> dict[str, Verdict]:
    return {v.verdict_id: v for url in urls for v in store.recent_verdicts(url_key(url), 1000)}


def same_as_batch(batch: Batch, got: dict[str, Verdict]) -> None:
    assert set(got) == set(batch), (len(got), len(batch))
    differ = [(vid, b[:4], (v.status, v.change, v.reason, v.baseline_time is not None))
              for vid, b in batch.items() for v in [got[vid]]
              if b[:4] != (v.status, v.change, v.reason, v.baseline_time is not None)]
    assert differ == [], differ[:3]


async def _follow(cfg: Config, log: Path, urls: set[str]) -> tuple[dict[str, Verdict], list[Any], str | None]:
    async with CrawlLogRunner(cfg, [str(log)]) as runner:
        await runner.run(asyncio.Event(), once=True)
        assert runner.store is not None
        positions = positions_of(runner.store)
        return (newest_verdicts(runner.store, urls), positions.input_dead_letters(),
                positions.get_position(str(log.resolve())))


@pytest.fixture(params=["sqlite", "memory", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_cfg(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    if request.param == "postgres":
        pytest.importorskip("psycopg", reason="needs psycopg (pip install -e '.[postgres]')")
        return {"backend": "postgres", "dsn": request.getfixturevalue("postgres_dsn")}
    if request.param == "memory":
        return {"backend": "memory"}
    return {"backend": "sqlite", "path": str(tmp_path / "driftline.db")}


async def test_a_crawl_log_is_scored_as_batch_scores_its_warc(tmp_path: Path, store_cfg: dict[str, Any]) -> None:
    warc, refs, lines = collection(tmp_path, seed=3)
    log = tmp_path / "crawl.log"
    bad = bad_lines(warc.name)
    log.write_text("".join([*lines[:5], *skipped_lines(), bad[0], *lines[5:], bad[1], "\n"]))
    cfg = follow_config(tmp_path, warc, store=store_cfg)
    urls = {ref.url for ref in refs}
    got, letters, position = await _follow(cfg, log, urls)
    same_as_batch(_batch(str(warc), cfg), got)
    assert any(v.version > 1 for v in got.values())  # the shuffle made late captures, and they were corrected
    assert sorted(d.offset for d in letters) == sorted(log.read_bytes().index(b.encode()) for b in bad)
    assert all(d.reason and d.reason != "internal" for d in letters), [d.reason for d in letters]
    assert json.loads(letters[0].body)["reason"] == letters[0].reason
    saved = Position.from_json(position)
    assert saved is not None and saved.offset == log.stat().st_size
    out = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert {m["value"]["verdict_id"] for m in out if m["kind"] == "verdict"} == set(got)
    assert {m["kind"] for m in out} >= {"verdict", "alert", "dead-letter", "seed-report"}
    if store_cfg["backend"] == "memory":
        return  # nothing survives the process: a second run starts afresh
    again, letters_again, _ = await _follow(cfg, log, urls)
    assert again == got and len(letters_again) == len(letters)
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == len(out)  # nothing read twice


async def test_an_alert_owed_when_the_process_died_is_written_at_the_next_start(tmp_path: Path) -> None:
    import sqlite3

    warc, refs, lines = collection(tmp_path, seed=5)
    log = tmp_path / "crawl.log"
    log.write_text("".join(lines))
    cfg = follow_config(tmp_path, warc)
    await _follow(cfg, log, {ref.url for ref in refs})
    out = tmp_path / "out.jsonl"
    alerts = {json.loads(x)["value"]["verdict_id"] for x in out.read_text().splitlines()
              if json.loads(x)["kind"] == "alert"}
    assert alerts  # off-topic captures alert under the collection profile
    with sqlite3.connect(tmp_path / "driftline.db") as db:  # as if killed after the records, before the write
        db.execute("UPDATE alerts SET state = 'pending'")
        db.execute("UPDATE published SET written = 0 WHERE kind = 'alert'")
    out.unlink()
    await _follow(cfg, log, {ref.url for ref in refs})
    again = [json.loads(x) for x in out.read_text().splitlines()]
    assert {m["value"]["verdict_id"] for m in again if m["kind"] == "alert"} == alerts
    assert all(m["kind"] == "alert" for m in again)  # nothing else was read again
    with sqlite3.connect(tmp_path / "driftline.db") as db:
        assert db.execute("SELECT COUNT(*) FROM alerts WHERE state = 'pending'").fetchone() == (0,)
        assert db.execute("SELECT COUNT(*) FROM published WHERE written = 0").fetchone() == (0,)


async def test_an_output_that_cannot_be_opened_is_refused_in_one_line(tmp_path: Path) -> None:
    from watcher.errors import ConfigError

    warc, _, _ = collection(tmp_path, histories=1, captures=1)
    cfg = follow_config(tmp_path, warc, output=str(tmp_path / "no" / "such" / "dir" / "out.jsonl"))
    with pytest.raises(ConfigError, match=r"^crawl_log\.output: cannot open"):
        await CrawlLogRunner(cfg, [str(tmp_path / "crawl.log")]).start()


async def test_a_half_written_last_output_line_is_cut_at_start(tmp_path: Path) -> None:
    warc, refs, lines = collection(tmp_path, histories=1, captures=2)
    log = tmp_path / "crawl.log"
    log.write_text("".join(lines))
    out = tmp_path / "out.jsonl"
    out.write_text('{"kind": "verdict", "value": {}}\n{"kind": "verdi')  # a process killed mid-write
    await _follow(follow_config(tmp_path, warc), log, {ref.url for ref in refs})
    got = [json.loads(x) for x in out.read_text().splitlines()]  # every line whole JSON again
    assert got[0] == {"kind": "verdict", "value": {}}
    assert sum(1 for m in got[1:] if m["kind"] == "verdict") == 2


async def test_a_store_that_fails_for_a_while_loses_no_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The position (and a dead letter with it) cannot be written for a while: the line is done
    again until it can, never skipped, and its dead letter is stored once."""
    from watcher.errors import StoreError
    from watcher.store.sqlbase import SQLStore

    warc, refs, lines = collection(tmp_path, histories=2, captures=2)
    log = tmp_path / "crawl.log"
    bad = bad_lines(warc.name)
    log.write_text("".join([lines[0], bad[0], *lines[1:]]))
    real = SQLStore.record_line
    # the first position move, the dead letter (with its position) three times, a line's messages twice
    failures = {"move": 1, "letter": 3, "messages": 2}

    def flaky(self: SQLStore, stream: str, position: str | None, messages: Any = (), **kw: Any) -> int:
        kind = "letter" if kw.get("dead_letter") is not None else "messages" if messages else "move"
        if failures[kind] and (kind != "move" or position is not None):
            failures[kind] -= 1
            raise StoreError("database is restarting", reason="store_write")
        return real(self, stream, position, messages, **kw)

    monkeypatch.setattr(SQLStore, "record_line", flaky)
    monkeypatch.setattr("consumers.crawllog.asyncio.sleep", _no_sleep)
    got, letters, position = await _follow(follow_config(tmp_path, warc), log, {ref.url for ref in refs})
    assert failures == {"move": 0, "letter": 0, "messages": 0}
    assert len(got) == len(refs)
    assert [(d.offset, d.reason) for d in letters] == [(len(lines[0].encode()), "unparseable")]
    saved = Position.from_json(position)
    assert saved is not None and saved.offset == log.stat().st_size
    out = _outputs(tmp_path / "out.jsonl")  # the lines done again wrote nothing twice, and lost nothing
    assert repeated(out) == []
    assert {m["value"]["verdict_id"] for m in out if m["kind"] == "verdict"} == set(got)


async def _no_sleep(_: float) -> None:
    return None


def _outputs(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in out.read_text().splitlines()]


def advice_settings(tmp_path: Path, warc: Path) -> Config:
    """Seed reports after every verdict, and advice from two captures on: every restart would repeat it."""
    settings = follow_settings(tmp_path, warc)
    settings["seeds"] = {"publish_interval_s": 0}
    settings["actuator"] = {"guidance_min_captures": 2}
    return Config.model_validate(settings)


async def test_advice_and_recommendations_are_not_repeated_by_a_restart(tmp_path: Path) -> None:
    """The last advice per seed is in the store's ledger, not only in memory: a process that starts again
    does not publish the advice that stands again (before: once per seed and restart)."""
    warc, refs, lines = collection(tmp_path, histories=6, captures=8, seed=7)
    log = tmp_path / "crawl.log"
    cfg = advice_settings(tmp_path, warc)
    third = len(lines) // 3
    for part in (lines[:third], lines[third:2 * third], lines[2 * third:]):  # three processes, one after another
        with log.open("a") as fh:
            fh.write("".join(part))
        await _follow(cfg, log, {ref.url for ref in refs})
    out = _outputs(tmp_path / "out.jsonl")
    advice = [m for m in out if m["kind"] == "recommendation" and m["value"]["action"] != "stop-seed"]
    assert len({m["value"]["history"] for m in advice}) >= 4, advice  # most seeds were advised
    assert repeated(out) == []
    assert [m["seq"] for m in out] == sorted(m["seq"] for m in out)


async def test_a_rotated_file_deleted_before_it_was_read_is_a_gap_never_silent(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Stopped in the first file; the log is renamed twice and the first rotated file deleted: an ERROR
    naming the file and the bytes, the gap counters, and a crawl_log_gap dead letter (store and output);
    the files after it are read."""
    warc, refs, lines = collection(tmp_path, histories=4, captures=3, seed=2)
    log = tmp_path / "crawl.log"
    a, b, c = lines[:4], lines[4:8], lines[8:]
    log.write_text("".join(a))
    settings = follow_settings(tmp_path, warc)
    settings["crawl_log"]["batch_lines"] = 2
    cfg = Config.model_validate(settings)
    async with CrawlLogRunner(cfg, [str(log)]) as runner:
        while runner.lines < 2:  # two lines of a (the file's opening is not a line): stopped half way through it
            await runner.poll()
        assert runner.positions is not None
        saved = Position.from_json(runner.positions.get_position(str(log)))
    assert saved is not None and 0 < saved.offset < log.stat().st_size
    first = tmp_path / "crawl.log.20240101000000"
    os.rename(log, first)
    log.write_text("".join(b))
    os.rename(log, tmp_path / "crawl.log.20240102000000")
    log.write_text("".join(c))
    size = first.stat().st_size
    first.unlink()
    with caplog.at_level("ERROR"):
        async with CrawlLogRunner(cfg, [str(log)]) as runner:
            await runner.run(asyncio.Event(), once=True)
            assert runner.store is not None
            letters = positions_of(runner.store).input_dead_letters()
            stored = newest_verdicts(runner.store, {ref.url for ref in refs})
            gaps = runner.metrics.crawl_log_gaps._value.get()
            lost = runner.metrics.crawl_log_gap_bytes._value.get()
    assert [(d.reason, d.offset) for d in letters] == [("crawl_log_gap", saved.offset)]
    assert str(log) in letters[0].source
    body = json.loads(letters[0].body)
    assert (body["from_byte"], body["to_byte"], body["file"]) == (saved.offset, size, str(log))
    assert (gaps, lost) == (1, size - saved.offset)
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any(str(log) in e and str(saved.offset) in e and str(size) in e for e in errors), errors
    out = _outputs(tmp_path / "out.jsonl")
    assert [m["value"]["reason"] for m in out if m["kind"] == "dead-letter"] == ["crawl_log_gap"]
    assert len(stored) == 2 + len(b) + len(c)  # a up to the stored position, then every line of b and c


async def test_replay_prints_what_a_kill_kept_from_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every message is in the store's ledger with its seq: ``run --replay-since`` prints them again, after
    a seq or from a verdict on, as the output has them."""
    from consumers.crawllog import run_replay

    warc, refs, lines = collection(tmp_path, histories=3, captures=3)
    log = tmp_path / "crawl.log"
    log.write_text("".join(lines))
    cfg = follow_config(tmp_path, warc)
    await _follow(cfg, log, {ref.url for ref in refs})
    out = _outputs(tmp_path / "out.jsonl")
    capsys.readouterr()
    assert await asyncio.to_thread(run_replay, cfg, "0") == 0
    assert [json.loads(x) for x in capsys.readouterr().out.splitlines()] == out
    middle = next(m for m in out[len(out) // 2:] if m["kind"] == "verdict" and m["value"]["version"] == 1)
    assert await asyncio.to_thread(run_replay, cfg, middle["value"]["verdict_id"]) == 0
    assert [json.loads(x) for x in capsys.readouterr().out.splitlines()] == [m for m in out
                                                                            if m["seq"] >= middle["seq"]]
