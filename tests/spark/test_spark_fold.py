"""The fold of ``driftline spark`` (no JVM needed): constant memory over a history of any length,
and the same verdicts as ``scan``'s fold (:meth:`Engine.scan_history`)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.fixtures.wacz import OFF, ON, PARKED
from watcher.config import Config
from watcher.engine import Engine
from watcher.model import Capture, Fingerprint
from watcher.spark.fold import HistoryEnd, Scored, fold_partition
from watcher.spark.records import ErrorRow, Record, time_us

URL = "http://big.example/reports/page.html"
T0 = datetime(2000, 1, 1, tzinfo=UTC)
PAGES = (ON, ON, OFF, ON, PARKED, ON, ON)


def _captures(n: int) -> Iterator[Capture]:
    for i in range(n):
        yield Capture(URL, T0 + timedelta(hours=i), content=PAGES[i % len(PAGES)], content_type="text/html",
                      status=200)


def _rows(n: int, engine: Engine, fps: dict[bytes, Fingerprint]) -> Iterator[tuple[object, Record]]:
    """A sorted partition of one history, made as it is read (nothing held)."""
    for i, cap in enumerate(_captures(n)):
        assert cap.content is not None
        fp = fps[cap.content]
        rec = Record("big", time_us(cap.timestamp), i, "", Capture(cap.url, cap.timestamp, status=200), fp)
        yield rec.sort_key, rec


def _peak(n: int, engine: Engine, fps: dict[bytes, Fingerprint]) -> tuple[int, int, HistoryEnd]:
    tracemalloc.start()
    try:
        count, end = 0, None
        for item in fold_partition(_rows(n, engine, fps), engine):
            count += isinstance(item, Scored)
            end = item if isinstance(item, HistoryEnd) else end
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(end, HistoryEnd)
    return peak, count, end


def test_a_long_history_folds_in_constant_memory() -> None:
    """Ten times the captures, not ten times the memory: the fold keeps the state, never the history
    (a fold that held its verdicts would grow by about a kilobyte a capture)."""
    engine = Engine(Config().engine)
    fps = {p: engine.fingerprint(Capture(URL, T0, content=p, content_type="text/html", status=200), None, URL)
           for p in set(PAGES)}
    small, n_small, _ = _peak(200, engine, fps)
    big, n_big, end = _peak(2000, engine, fps)
    assert (n_small, n_big, end.captures) == (200, 2000, 2000)
    assert big < small * 1.5 + 64_000, (small, big)


def test_the_fold_gives_scans_verdicts() -> None:
    engine = Engine(Config().engine)
    caps = list(_captures(len(PAGES) * 2))
    expected = engine.scan_history("big", caps)
    fps = {p: engine.fingerprint(Capture(URL, T0, content=p, content_type="text/html", status=200), None, URL)
           for p in set(PAGES)}
    out = list(fold_partition(_rows(len(caps), engine, fps), engine))
    verdicts = [x.verdict for x in out if isinstance(x, Scored)]
    assert [(v.status, v.change) for v in verdicts] == [(v.status, v.change) for v in expected.verdicts]
    assert {"baseline", "off-topic"} <= {v.change for v in verdicts}
    end = out[-1]
    assert isinstance(end, HistoryEnd)
    assert (end.behaviour, end.first_drift, end.off_topic_share) == (
        expected.behaviour, expected.first_drift, expected.off_topic_share)
    assert end.last == verdicts[-1] and end.state.baseline is not None


def test_a_capture_the_step_fails_on_is_an_error_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug on one capture costs that capture (an error row with its reason), not the history or the job."""
    from watcher.spark import fold

    engine = Engine(Config().engine)
    fps = {p: engine.fingerprint(Capture(URL, T0, content=p, content_type="text/html", status=200), None, URL)
           for p in set(PAGES)}
    real = fold.score_step
    calls = {"n": 0}

    def failing(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise ValueError("a bug")
        return real(*args)

    monkeypatch.setattr(fold, "score_step", failing)
    out = list(fold_partition(_rows(6, engine, fps), engine))
    errors = [x for x in out if isinstance(x, ErrorRow)]
    assert [e.reason for e in errors] == ["score_failed"] and "ValueError: a bug" in errors[0].detail
    assert sum(isinstance(x, Scored) for x in out) == 5
    assert isinstance(out[-1], HistoryEnd) and out[-1].captures == 5


def test_session_settings_a_caller_names_win() -> None:
    """driftline's local session bounds the Python worker's memory (256m) unless spark-submit's
    arguments name it, or the caller's ``extra`` does: a caller who names a setting gets it."""
    from watcher.spark.job import PYTHON_WORKER_MEMORY_KEY, session_settings

    local = session_settings("local[2]", None)
    assert local[PYTHON_WORKER_MEMORY_KEY] == "256m" and local["spark.driver.bindAddress"] == "127.0.0.1"
    assert session_settings("local[2]", {PYTHON_WORKER_MEMORY_KEY: "1g"})[PYTHON_WORKER_MEMORY_KEY] == "1g"
    assert PYTHON_WORKER_MEMORY_KEY not in session_settings(
        "local[1]", None, f"--conf {PYTHON_WORKER_MEMORY_KEY}=512m pyspark-shell")
    cluster = session_settings("spark://head:7077", {"spark.eventLog.enabled": "true"})
    assert PYTHON_WORKER_MEMORY_KEY not in cluster and "spark.driver.host" not in cluster
    assert cluster["spark.eventLog.enabled"] == "true" and cluster["spark.ui.enabled"] == "false"
