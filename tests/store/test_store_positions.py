"""Read positions and dead letters in every store backend: a carried position commits with the
verdict's transaction or not at all; a dead letter commits with its position."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.storecases import T0, make_fp, make_verdict
from watcher.config import StoreConfig
from watcher.errors import StoreError
from watcher.store import BaselineStore, open_store
from watcher.store.ledger import Message
from watcher.store.positions import DeadLetterRow, PositionStore, positions_of
from watcher.store.sqlbase import SQLStore


@pytest.fixture(params=["sqlite", "memory", pytest.param("postgres", marks=pytest.mark.postgres)])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[BaselineStore, PositionStore]:
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else None
    s = open_store(StoreConfig(backend=request.param, path=str(tmp_path / "d.db"), dsn=dsn, history_limit=1))
    request.addfinalizer(s.close)
    return s, positions_of(s)


def test_a_carried_position_is_written_with_a_new_verdict_only(stores: tuple[BaselineStore, PositionStore]) -> None:
    store, pos = stores
    assert pos.get_position("log") is None
    pos.carry_position("log", "p1")
    assert pos.get_position("log") is None  # carried, not written
    assert store.put_verdict(make_verdict(), fingerprint=make_fp())
    assert pos.get_position("log") == "p1"
    pos.drop_carried()
    pos.carry_position("log", "p2")
    assert not store.put_verdict(make_verdict())  # already stored: nothing is written, the position neither
    assert pos.get_position("log") == "p1"
    pos.drop_carried()
    assert store.put_verdict(make_verdict(at=T0 + timedelta(days=1)))
    assert pos.get_position("log") == "p1"  # dropped: the next verdict carries nothing


def test_a_failed_verdict_transaction_leaves_the_position(stores: tuple[BaselineStore, PositionStore],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    store, pos = stores
    if not isinstance(store, SQLStore):
        pytest.skip("the memory store has no transaction to fail")
    assert store.put_verdict(make_verdict())

    def boom(*_: Any) -> None:
        raise store.DB_ERRORS[0]("disk full")

    monkeypatch.setattr(store, "_prune", boom)  # fails after the carried position was written in the transaction
    pos.carry_position("log", "p2")
    later = make_verdict(at=T0 + timedelta(days=2))
    with pytest.raises(StoreError):
        store.put_verdict(later)
    assert pos.get_position("log") is None and not store.has_verdict(later.verdict_id)
    monkeypatch.undo()
    assert store.put_verdict(later)  # the retry (the scorer retries store errors) writes the carried position
    assert pos.get_position("log") == "p2"


def test_a_dead_letter_is_stored_once_with_its_position(stores: tuple[BaselineStore, PositionStore]) -> None:
    _, pos = stores
    row = DeadLetterRow("/x/crawl.log#1:2", 40, "unparseable", '{"reason": "unparseable"}')
    pos.set_position("/x/crawl.log", "after-40", row)
    pos.set_position("/x/crawl.log", "after-40", row)  # a line done again stores no second letter
    assert pos.get_position("/x/crawl.log") == "after-40"
    got = pos.input_dead_letters()
    assert [(d.source, d.offset, d.reason) for d in got] == [("/x/crawl.log#1:2", 40, "unparseable")]
    assert got[0].at > 0


def test_the_ledger_records_each_message_once_in_order(stores: tuple[BaselineStore, PositionStore]) -> None:
    """A message is recorded once by its key (a restart making it again adds nothing), numbered in
    order, written once; the last advice per history and the replay reads survive as the store does."""
    store, pos = stores
    built: list[str] = []

    def build(verdicts: Any) -> list[Message]:
        built.extend(v.verdict_id for v in verdicts)
        return [Message(f"verdict:{v.verdict_id}:{v.version}", "verdict", '{"v": 1}') for v in verdicts]

    pos.carry_ledger("log", build)
    first = make_verdict()
    assert store.put_verdict(first, fingerprint=make_fp())
    assert not store.put_verdict(first)  # already stored: its message is not built again
    pos.drop_carried()
    assert built == [first.verdict_id]
    alert = Message(f"alert:{first.verdict_id}", "alert", '{"a": 1}')
    assert pos.record_line("log", None, [alert], advice=[("h1", "advice-1")]) == 1
    assert pos.record_line("log", None, [alert, Message("verdict:other:1", "verdict", "{}")]) == 1
    got = pos.unwritten(["log"])
    assert [p.kind for p in got] == ["verdict", "alert", "verdict"]
    assert got[0].seq < got[1].seq < got[2].seq  # rising (PostgreSQL's sequence may skip numbers)
    assert pos.unwritten(["another log"]) == []
    assert pos.record_line("log", "p9", written=[p.seq for p in got[:2]]) == 0
    assert [p.key for p in pos.unwritten(["log"])] == ["verdict:other:1"] and pos.get_position("log") == "p9"
    assert pos.last_advice("h1") == "advice-1" and pos.last_advice("h2") is None
    assert [p.key for p in pos.published_since(got[0].seq)] == [alert.key, "verdict:other:1"]
    assert pos.seq_of(f"verdict:{first.verdict_id}:") == got[0].seq and pos.seq_of("verdict:none:") is None
