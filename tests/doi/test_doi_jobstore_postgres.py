"""The DOI schedule in PostgreSQL (the baseline store's database, ``store.dsn``
as the store uses it): jobs survive a stop, checks that fell due while the
scheduler was down run once on restart (coalesced), and none is lost or run
twice.  Real scheduler, real PostgreSQL, real HTTP (tests/fixtures/doi_server.py)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures import doi_pages as dp
from tests.fixtures.doi_server import Page, doi_config, landscape
from watcher.config import load_config
from watcher.doi.lists import DoiEntry
from watcher.doi.registry import open_registry
from watcher.doi.schedule import PG_JOBSTORE, DoiScheduler, jobstore_url, open_monitor

pytestmark = pytest.mark.postgres

INTERVAL_S = 6
DOIS = [f"10.5555/pg{i}" for i in range(4)]


def _counts(cfg: Any) -> dict[str, int]:
    with open_registry(cfg.store) as reg:
        return {d: len(reg.checks(d, 1000)) for d in DOIS}


def _stored_jobs(dsn: str) -> dict[str, datetime]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT id, next_run_time FROM doi_jobs").fetchall()
    return {r[0]: datetime.fromtimestamp(r[1], UTC) for r in rows}


async def _sleep_until(t: datetime) -> None:
    await asyncio.sleep(max(0.0, (t - datetime.now(UTC)).total_seconds()))


async def _wait_for(cond: Any, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not await asyncio.to_thread(cond):
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.1)


async def test_postgres_job_store_restart_neither_loses_nor_duplicates(tmp_path: Path, postgres_dsn: str) -> None:
    pytest.importorskip("psycopg")
    async with landscape() as land:
        for i, d in enumerate(DOIS):
            land.pages[d] = Page(dp.highwire(replace(dp.article(90 + i), doi=d), 0))
        overlay = doi_config(land, tmp_path)
        overlay["store"] = {"backend": "postgres", "dsn": postgres_dsn}
        cfg = load_config(overrides=overlay)
        assert jobstore_url(cfg.store) == PG_JOBSTORE
        with open_registry(cfg.store) as reg:
            reg.add([DoiEntry(d, interval_s=INTERVAL_S) for d in DOIS])

        # -- run: every DOI checked once (the first run ~1 s after start), then stop before the next --------
        async with open_monitor(cfg) as mon:
            sched = DoiScheduler(cfg, mon)
            sched.start()
            try:
                await _wait_for(lambda: all(n >= 1 for n in _counts(cfg).values()), 30)
            finally:
                sched.shutdown()
        await asyncio.sleep(0.3)
        assert _counts(cfg) == {d: 1 for d in DOIS}
        stored = _stored_jobs(postgres_dsn)  # the job rows are in PostgreSQL, with their next run times
        assert set(stored) == {f"doi:{d}" for d in DOIS}
        assert not Path(str(tmp_path / "doi.db") + ".jobs").exists()
        due = max(stored.values())
        assert due > datetime.now(UTC)  # stopped before the second run fell due

        # -- down for two intervals: two runs of every DOI fall due while nothing runs -----------------------
        await _sleep_until(due + timedelta(seconds=INTERVAL_S + 2))
        assert _counts(cfg) == {d: 1 for d in DOIS}

        # -- restart: the same jobs and next run times; the missed runs run once (coalesced), on start -------
        async with open_monitor(cfg) as mon:
            sched = DoiScheduler(cfg, mon)
            sched.scheduler.start(paused=True)  # loaded from PostgreSQL: the same jobs, the same next run times
            assert {f"doi:{d}": t for d, t in sched.next_runs().items()} == stored
            sched.scheduler.shutdown(wait=False)
            sched = DoiScheduler(cfg, mon)
            sched.start(paused=True)  # as `doi run` starts, with its sync: nothing to add or reschedule
            assert {f"doi:{d}": t for d, t in sched.next_runs().items()} == stored
            sched.resume()
            try:
                await _wait_for(lambda: all(n >= 2 for n in _counts(cfg).values()), 10)
                after_missed = _stored_jobs(postgres_dsn)
                nxt = min(after_missed.values())
                assert nxt > datetime.now(UTC) and all(t > due for t in after_missed.values())
                await _sleep_until(nxt - timedelta(seconds=0.5))
                assert _counts(cfg) == {d: 2 for d in DOIS}  # two missed runs, one check each: no duplicate
                # -- and the schedule goes on: the next run of every DOI, once ---------------------------
                await _wait_for(lambda: all(n >= 3 for n in _counts(cfg).values()), INTERVAL_S + 10)
                await asyncio.sleep(1.0)
                assert _counts(cfg) == {d: 3 for d in DOIS}
            finally:
                sched.shutdown()
        with open_registry(cfg.store) as reg:
            for d in DOIS:
                times = sorted(c["checked_at"] for c in reg.checks(d, 1000))
                assert len(times) == len(set(times)) == 3
