"""Streaming scoring against a real SQLite baseline store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.fixtures import textgen
from watcher.config import BaselineConfig, EngineConfig, StoreConfig
from watcher.engine import Engine
from watcher.model import Capture, payload_digest
from watcher.store import open_store
from watcher.watch import Watcher

T0 = datetime(2022, 3, 1, tzinfo=UTC)
BASE = textgen.html(textgen.document(["river", "law", "music", "garden"]))
SUSPENDED = (b"<html><head><title>Account Suspended</title></head><body><h1>Account Suspended</h1>"
             b"<p>This account has been suspended. Please contact the billing department.</p></body></html>")


def cap(i: int, content: bytes | None, **kw: object) -> Capture:
    return Capture(url="https://www.river-rights.org/", timestamp=T0 + timedelta(days=i), content=content,
                   **kw)  # type: ignore[arg-type]


def watcher(tmp_path: Path, **engine: object) -> Watcher:
    store = open_store(StoreConfig(backend="sqlite", path=str(tmp_path / "w.db")))
    return Watcher(Engine(EngineConfig(**engine)), store)  # type: ignore[arg-type]


def test_first_capture_becomes_baseline_then_later_ones_are_scored(tmp_path: Path) -> None:
    w = watcher(tmp_path)
    v0 = w.process(cap(0, BASE))
    assert (v0.status, v0.change) == ("on-topic", "baseline")
    key = w.history_key("http://river-rights.org")
    assert key == v0.history and w.baseline_digest(key) == payload_digest(BASE)
    v1 = w.process(cap(1, SUSPENDED))
    assert (v1.status, v1.change, v1.page_kind) == ("off-topic", "off-topic", "suspended")
    assert v1.baseline_time == T0
    assert w.store.recent_verdicts(key, 10)[0].verdict_id == v1.verdict_id
    assert w.store.histories_off_topic() == 1


def test_same_digest_as_baseline_is_unchanged_without_content(tmp_path: Path) -> None:
    w = watcher(tmp_path)
    w.process(cap(0, BASE))
    v = w.process(cap(1, None, digest=payload_digest(BASE)))
    assert (v.status, v.change) == ("on-topic", "unchanged")


def test_processing_twice_is_idempotent_and_survives_reopen(tmp_path: Path) -> None:
    w = watcher(tmp_path)
    w.process(cap(0, BASE))
    v1, new1 = w.process_new(cap(1, SUSPENDED))
    v2, new2 = w.process_new(cap(1, SUSPENDED))
    assert new1 and not new2 and v1.verdict_id == v2.verdict_id
    key = v1.history
    state = w.store.get_state(key)
    w.store.close()
    w2 = watcher(tmp_path)
    v3, new3 = w2.process_new(cap(1, SUSPENDED))
    assert not new3 and v3.verdict_id == v1.verdict_id and v3.status == "off-topic"
    assert len(w2.store.recent_verdicts(key, 10)) == 2
    assert w2.store.get_state(key) == state


def test_streaming_agrees_with_batch_on_statuses(tmp_path: Path) -> None:
    caps = [cap(0, BASE), cap(1, BASE.replace(b"river", b"stream")), cap(2, SUSPENDED), cap(3, BASE)]
    batch = Engine(EngineConfig()).scan_history("k", caps)
    w = watcher(tmp_path)
    stream = [w.process(c) for c in caps]
    assert [v.status for v in stream] == [v.status for v in batch.verdicts]
    assert [v.change for v in stream] == [v.change for v in batch.verdicts]


def test_first_valid_waits_for_a_usable_baseline(tmp_path: Path) -> None:
    w = watcher(tmp_path, baseline=BaselineConfig(policy="first-valid"))
    v0 = w.process(cap(0, SUSPENDED))
    assert v0.status == "off-topic" and "no baseline yet" in v0.reason
    assert w.baseline_digest(v0.history) is None
    assert w.process(cap(1, BASE)).change == "baseline"
