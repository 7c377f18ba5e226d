"""``driftline run --crawl-log`` in process, on every store backend: what batch says, bad lines as dead
letters in the store, the position committed, and a second run that finds nothing left to do."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from consumers.durable import CrawlLogRunner
from tests.fixtures.crawllog import bad_lines, collection, follow_config, skipped_lines
from tests.fixtures.streamcheck import _batch
from watcher.canonical import url_key
from watcher.config import Config
from watcher.crawlfollow.follow import Position
from watcher.model import Verdict
from watcher.store import BaselineStore
from watcher.store.positions import positions_of


def newest_verdicts(store: BaselineStore, urls: set[str]) -> dict[str, Verdict]:
    return {v.verdict_id: v for url in urls for v in store.recent_verdicts(url_key(url), 1000)}


def same_as_batch(batch: dict[str, tuple[str, str, str | None, bool, str]], got: dict[str, Verdict]) -> None:
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
    with sqlite3.connect(tmp_path / "driftline.db") as db:  # as if killed after the commit, before the write
        db.execute("UPDATE alerts SET state = 'pending'")
    out.unlink()
    await _follow(cfg, log, {ref.url for ref in refs})
    again = [json.loads(x) for x in out.read_text().splitlines()]
    assert {m["value"]["verdict_id"] for m in again if m["kind"] == "alert"} == alerts
    assert all(m["kind"] == "alert" for m in again)  # nothing else was read again
    with sqlite3.connect(tmp_path / "driftline.db") as db:
        assert db.execute("SELECT COUNT(*) FROM alerts WHERE state = 'pending'").fetchone() == (0,)


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
    real = SQLStore.set_position
    failures = {"move": 1, "letter": 3}  # the first position move, and the dead letter three times

    def flaky(self: SQLStore, stream: str, position: str, dead_letter: Any = None) -> None:
        kind = "move" if dead_letter is None else "letter"
        if failures[kind]:
            failures[kind] -= 1
            raise StoreError("database is restarting", reason="store_write")
        real(self, stream, position, dead_letter)

    monkeypatch.setattr(SQLStore, "set_position", flaky)
    monkeypatch.setattr("consumers.durable.asyncio.sleep", _no_sleep)
    got, letters, position = await _follow(follow_config(tmp_path, warc), log, {ref.url for ref in refs})
    assert failures == {"move": 0, "letter": 0}
    assert len(got) == len(refs)
    assert [(d.offset, d.reason) for d in letters] == [(len(lines[0].encode()), "unparseable")]
    saved = Position.from_json(position)
    assert saved is not None and saved.offset == log.stat().st_size


async def _no_sleep(_: float) -> None:
    return None
