"""Streaming scoring against a real SQLite baseline store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Unpack

from tests.fixtures import textgen
from tests.fixtures.captures import CaptureExtras
from watcher.canonical import url_key
from watcher.config import BaselineConfig, EngineConfig, StoreConfig
from watcher.engine import Engine
from watcher.errors import ExtractError
from watcher.model import Capture, Verdict, payload_digest
from watcher.store import open_store
from watcher.watch import Outcome, Watcher

T0 = datetime(2022, 3, 1, tzinfo=UTC)
BASE = textgen.html(textgen.document(["river", "law", "music", "garden"]))
SUSPENDED = (b"<html><head><title>Account Suspended</title></head><body><h1>Account Suspended</h1>"
             b"<p>This account has been suspended. Please contact the billing department.</p></body></html>")


def cap(i: int, content: bytes | None, **kw: Unpack[CaptureExtras]) -> Capture:
    return Capture(url="https://www.river-rights.org/", timestamp=T0 + timedelta(days=i), content=content, **kw)


def _pair(out: Outcome) -> tuple[Verdict, bool]:
    return out.verdict, out.stored_now


def _baseline_digest(w: Watcher, history: str) -> str | None:
    state = w.store.get_state(history)
    ref = state.pinned or state.baseline
    return ref.fingerprint.digest if ref else None


def watcher(tmp_path: Path, engine: EngineConfig | None = None) -> Watcher:
    store = open_store(StoreConfig(backend="sqlite", path=str(tmp_path / "w.db")))
    return Watcher(Engine(EngineConfig() if engine is None else engine), store)


def test_first_capture_becomes_baseline_then_later_ones_are_scored(tmp_path: Path) -> None:
    w = watcher(tmp_path)
    v0 = w.score(cap(0, BASE)).verdict
    assert (v0.status, v0.change) == ("on-topic", "baseline")
    key = url_key("http://river-rights.org")
    assert key == v0.history and _baseline_digest(w, key) == payload_digest(BASE)
    v1 = w.score(cap(1, SUSPENDED)).verdict
    assert (v1.status, v1.change, v1.page_kind) == ("off-topic", "off-topic", "suspended")
    assert v1.baseline_time == T0
    assert w.store.recent_verdicts(key, 10)[0].verdict_id == v1.verdict_id
    assert w.store.histories_off_topic() == 1


def test_same_digest_as_baseline_is_unchanged_without_content(tmp_path: Path) -> None:
    w = watcher(tmp_path)
    w.score(cap(0, BASE))
    v = w.score(cap(1, None, digest=payload_digest(BASE))).verdict
    assert (v.status, v.change) == ("on-topic", "unchanged")


def test_processing_twice_is_idempotent_and_survives_reopen(tmp_path: Path) -> None:
    w = watcher(tmp_path)
    w.score(cap(0, BASE))
    v1, new1 = _pair(w.score(cap(1, SUSPENDED)))
    v2, new2 = _pair(w.score(cap(1, SUSPENDED)))
    assert new1 and not new2 and v1.verdict_id == v2.verdict_id
    key = v1.history
    state = w.store.get_state(key)
    w.store.close()
    w2 = watcher(tmp_path)
    v3, new3 = _pair(w2.score(cap(1, SUSPENDED)))
    assert not new3 and v3.verdict_id == v1.verdict_id and v3.status == "off-topic"
    assert len(w2.store.recent_verdicts(key, 10)) == 2
    assert w2.store.get_state(key) == state


def test_streaming_agrees_with_batch_on_statuses(tmp_path: Path) -> None:
    caps = [cap(0, BASE), cap(1, BASE.replace(b"river", b"stream")), cap(2, SUSPENDED), cap(3, BASE)]
    batch = Engine(EngineConfig()).scan_history("k", caps)
    w = watcher(tmp_path)
    stream = [w.score(c).verdict for c in caps]
    assert [v.status for v in stream] == [v.status for v in batch.verdicts]
    assert [v.change for v in stream] == [v.change for v in batch.verdicts]


def test_first_valid_waits_for_a_usable_baseline(tmp_path: Path) -> None:
    w = watcher(tmp_path, EngineConfig(baseline=BaselineConfig(policy="first-valid")))
    v0 = w.score(cap(0, SUSPENDED)).verdict
    assert v0.status == "off-topic" and "no baseline yet" in v0.reason
    assert _baseline_digest(w, v0.history) is None
    assert w.score(cap(1, BASE)).verdict.change == "baseline"


def test_the_job_knows_the_reference_payload_by_digest_in_any_spelling(tmp_path: Path) -> None:
    """The one same-digest test (watcher.job.same_reference): a capture repeating the baseline's payload
    needs no fetch, whatever the spelling of its digest (WARC, CDX); another digest, or none, does."""
    w = watcher(tmp_path)
    w.score(cap(0, BASE))
    url, later = "http://river-rights.org", T0 + timedelta(days=9)
    digest = payload_digest(BASE)
    for spelling in (digest, digest.split(":", 1)[1].lower()):
        job = w.job(url, later, digest=spelling)
        assert job.same is not None and not job.needs_payload
    assert w.job(url, later, digest="sha1:" + "A" * 32).needs_payload
    assert w.job(url, later).needs_payload


def test_a_redelivered_capture_is_found_before_anything_is_read(tmp_path: Path) -> None:
    """The re-delivery check is the Job's: a stored capture's job holds its verdict and no state, so the
    caller acquires nothing and the score is the stored verdict."""
    w = watcher(tmp_path)
    first = w.score(cap(0, BASE)).verdict
    job = w.job("http://river-rights.org", T0, digest=payload_digest(BASE))
    assert job.done == first and not job.needs_payload and job.state.baseline is None
    again = w.score(cap(0, None, digest=payload_digest(BASE)), job)
    assert again.verdict == first and not again.stored_now


def test_an_unreadable_capture_leaves_the_state_alone_in_batch_and_stream(tmp_path: Path) -> None:
    """The one difference between batch and stream, by design (watcher.job.readable): a capture that
    cannot be read is an ``error`` row in a scan and a dead letter (ExtractError) in the stream; in both
    the state is untouched, so the captures after it get the same verdicts."""
    broken = Capture(url="https://www.river-rights.org/", timestamp=T0 + timedelta(days=1),
                     content=b"%PDF-1.4\n1 0 obj <</Length 99>> stream\nbroken", content_type="application/pdf")
    caps = [cap(0, BASE), broken, cap(2, BASE.replace(b"river", b"stream")), cap(3, SUSPENDED)]
    batch = Engine(EngineConfig()).scan_history(url_key("http://river-rights.org"), caps).verdicts
    assert batch[1].status == "error"
    w = watcher(tmp_path)
    streamed: list[Verdict | None] = []
    for c in caps:
        try:
            streamed.append(w.score(c).verdict)
        except ExtractError:
            streamed.append(None)
    assert streamed[1] is None
    assert [(v.verdict_id, v.change, v.reason) for v in streamed if v is not None] == \
        [(v.verdict_id, v.change, v.reason) for i, v in enumerate(batch) if i != 1]
