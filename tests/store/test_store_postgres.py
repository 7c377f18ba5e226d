"""The PostgreSQL store against a real server (tests/fixtures/postgres.py).

The behaviour it shares with the other backends is tested in
tests/store/test_store.py (its ``store`` fixture covers postgres too); here:
what only a shared server has (several connections, several "machines",
concurrent duplicates, a dropped connection) and what is PostgreSQL's own
(schema, types, configuration, refusing a newer schema).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import TypedDict, Unpack

import pytest
from pydantic import SecretStr

from tests.fixtures.storecases import T0, make_fp, make_verdict
from watcher.config import StoreConfig
from watcher.errors import ConfigError, StoreError
from watcher.model import TopicStatus
from watcher.state import HistoryState, Reference
from watcher.store import SQLiteStore, open_store

psycopg = pytest.importorskip("psycopg", reason="needs psycopg (pip install -e '.[postgres]')")
from watcher.store.postgres import SCHEMA_VERSION, PostgresStore  # noqa: E402

pytestmark = pytest.mark.postgres


class StoreOptions(TypedDict, total=False):
    """PostgresStore's keyword options (typed as there)."""

    keep_text: bool
    keep_shingles: bool
    history_limit: int
    max_terms: int
    rescore_window_s: float


@pytest.fixture
def stores(postgres_dsn: str) -> Iterator[Callable[..., PostgresStore]]:
    """Opens PostgresStores on the test's schema (each its own connection) and closes them after."""
    opened: list[PostgresStore] = []

    def make(**kw: Unpack[StoreOptions]) -> PostgresStore:
        s = PostgresStore(postgres_dsn, **kw)
        opened.append(s)
        return s

    yield make
    for s in opened:
        s.close()


def _run_threads(targets: list[Callable[[], None]]) -> list[BaseException]:
    errors: list[BaseException] = []

    def guard(fn: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # surfaced by the caller's assertion
                errors.append(exc)

        return run

    threads = [threading.Thread(target=guard(fn)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a writer hung (deadlock?)"
    return errors


def test_same_verdict_from_three_connections_is_stored_once(stores: Callable[..., PostgresStore]) -> None:
    """Three connections race to store each of 30 verdicts at the same instant:
    exactly one insert wins each time, and terms and counts move once."""
    conns = [stores(history_limit=10_000) for _ in range(3)]
    verdicts = [make_verdict("shared", T0 + timedelta(minutes=i)) for i in range(30)]
    barrier = threading.Barrier(3)
    won: list[list[bool]] = [[], [], []]

    def writer(k: int) -> Callable[[], None]:
        def run() -> None:
            for v in verdicts:
                barrier.wait(timeout=30)
                base = HistoryState(Reference(v.capture_time, f"writer{k}", make_fp(title=f"w{k}")))
                won[k].append(conns[k].put_verdict(v, base))

        return run

    assert _run_threads([writer(k) for k in range(3)]) == []
    per_verdict = [sum(won[k][i] for k in range(3)) for i in range(len(verdicts))]
    assert per_verdict == [1] * len(verdicts)
    with psycopg.connect(conns[0]._conninfo) as raw:
        assert raw.execute("SELECT COUNT(*) FROM verdicts").fetchone() == (30,)
        assert raw.execute("SELECT n FROM doc_count WHERE history = 'shared'").fetchone() == (30,)
    # the baseline is the one written with the last verdict's winning insert
    last_winner = next(k for k in range(3) if won[k][-1])
    got = conns[2].get_state("shared").baseline
    assert got is not None and got.uri_m == f"writer{last_winner}"


def test_concurrent_writers_with_pruning_do_not_deadlock(stores: Callable[..., PostgresStore]) -> None:
    """Three connections write overlapping captures of two histories with a
    small history limit (so every insert prunes): no deadlock, no lost or
    double count, the limit holds."""
    conns = [stores(history_limit=10) for _ in range(3)]

    def writer(k: int) -> Callable[[], None]:
        def run() -> None:
            for i in range(60):
                at = T0 + timedelta(minutes=(i * 7 + k * 3) % 60)  # the same 60 captures, in different orders
                status: TopicStatus = "off-topic" if at == T0 + timedelta(minutes=59) else "on-topic"
                for h in ("a", "b"):
                    conns[k].put_verdict(make_verdict(h, at, status))

        return run

    assert _run_threads([writer(k) for k in range(3)]) == []
    for h in ("a", "b"):
        assert conns[0].verdict_count(h) == 10
        kept = conns[0].recent_verdicts(h, 100)
        assert [v.capture_time for v in kept] == [T0 + timedelta(minutes=m) for m in range(59, 49, -1)]
    assert conns[0].histories_off_topic() == 2  # the newest capture (minute 59) of both is off-topic


def test_two_machines_share_baselines_and_history(stores: Callable[..., PostgresStore]) -> None:
    """A history moved from machine A to machine B (a rebalance) keeps its
    baseline, verdicts and document frequencies; what B writes A sees."""
    a, b = stores(), stores()
    v1 = make_verdict("moved", T0)
    assert a.put_verdict(v1, HistoryState(Reference(T0, "urim-a", make_fp(title="A"))))
    got = b.get_state("moved").baseline
    assert got is not None and got.uri_m == "urim-a" and got.capture_time == T0
    assert got.fingerprint == make_fp(title="A")
    assert b.has_verdict(v1.verdict_id) and b.get_verdict(v1.verdict_id) == v1
    assert b.put_verdict(v1) is False  # a re-delivery after the move is still a duplicate
    v2 = make_verdict("moved", T0 + timedelta(days=1), "off-topic")
    later = T0 + timedelta(days=1)
    assert b.put_verdict(v2, HistoryState(Reference(later, "urim-b", make_fp(title="B"))))
    again = a.get_state("moved").baseline
    assert again is not None and again.uri_m == "urim-b" and again.fingerprint.title == "B"
    assert [v.verdict_id for v in a.recent_verdicts("moved", 5)] == [v2.verdict_id, v1.verdict_id]
    assert a.histories_off_topic() == b.histories_off_topic() == 1


def test_matches_sqlite_on_the_same_writes(stores: Callable[..., PostgresStore], tmp_path: Path) -> None:
    """Same writes, same answers: ties on capture time order by verdict id in
    both (PostgreSQL keys are COLLATE "C", as SQLite compares bytes)."""
    pg = stores(history_limit=4)
    lite = SQLiteStore(tmp_path / "same.db", history_limit=4)
    try:
        writes = [make_verdict("h", T0 + timedelta(hours=i % 3), digest=f"sha1:{c}") for i, c in enumerate("aBcDeFg")]
        for s in (pg, lite):
            for v in writes:
                s.put_verdict(v)
        assert [v.verdict_id for v in pg.recent_verdicts("h", 10)] == [
            v.verdict_id for v in lite.recent_verdicts("h", 10)
        ]
        assert pg.recent_verdicts("h", 10) == lite.recent_verdicts("h", 10)
        assert all(pg.put_verdict(v) is lite.put_verdict(v) is False for v in writes)  # pruned or stored: duplicates
    finally:
        lite.close()


def test_schema_types_and_reopen(stores: Callable[..., PostgresStore]) -> None:
    s = stores()
    v = make_verdict(status="off-topic")
    s.put_verdict(v)
    s.set_state(v.history, HistoryState(Reference(T0, None, make_fp())))
    assert s.schema_version == SCHEMA_VERSION
    here = "WHERE table_schema = current_schema()"
    with psycopg.connect(s._conninfo) as raw:
        tables = {r[0] for r in raw.execute(f"SELECT table_name FROM information_schema.tables {here}")}
        columns = f"SELECT column_name, data_type FROM information_schema.columns {here} AND table_name = 'baselines'"
        types = dict(raw.execute(columns).fetchall())
        stored_at = raw.execute("SELECT capture_time FROM verdicts").fetchone()
    assert {"meta", "baselines", "verdicts", "doc_count", "latest", "pruned"} <= tables
    assert types["capture_time"] == "timestamp with time zone" and types["fingerprint"] == "bytea"
    assert stored_at is not None and stored_at[0] == T0  # a real timestamp, queryable by operators
    s.close()
    s2 = stores()
    assert s2.get_verdict(v.verdict_id) == v
    assert s2.put_verdict(v) is False
    assert s2.histories_off_topic() == 1
    b = s2.get_state(v.history).baseline
    assert b is not None and b.fingerprint.minhash == make_fp().minhash


def test_refuses_newer_schema(stores: Callable[..., PostgresStore]) -> None:
    s = stores()
    with psycopg.connect(s._conninfo, autocommit=True) as raw:
        raw.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    with pytest.raises(StoreError) as e:
        stores()
    assert e.value.reason == "store_schema"


def test_reconnects_after_the_server_drops_the_connection(stores: Callable[..., PostgresStore]) -> None:
    s = stores()
    v = make_verdict()
    assert s.put_verdict(v)
    pid = s._connection().info.backend_pid
    with psycopg.connect(s._conninfo, autocommit=True) as raw:
        raw.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(StoreError) as e:  # the call that meets the dead connection fails cleanly...
        s.has_verdict(v.verdict_id)
    assert e.value.reason == "store_read"
    assert s.has_verdict(v.verdict_id)  # ...and the next one reconnects
    assert s._connection().info.backend_pid != pid
    assert s.put_verdict(make_verdict(at=T0 + timedelta(days=1)), fingerprint=make_fp())
    assert len(s.logged(v.history)) == 1


def test_nul_characters_and_huge_keys(stores: Callable[..., PostgresStore]) -> None:
    """What SQLite stores as is but PostgreSQL cannot (NUL in text; a btree
    entry over ~2.7 kB: a page's 10,000-letter "word", a URL key of any length)."""
    s = stores()
    assert s.put_verdict(make_verdict(), fingerprint=make_fp(term_freqs={"a\x00b": 1, "plain": 2}))
    assert s.logged("org,example)/")[0][1].term_freqs == {"a\x00b": 1, "plain": 2}
    noise = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(300))  # does not compress away
    long_a, long_b = noise + "a", noise + "b"  # same long prefix: still two terms
    history = f"org,example)/?x={noise}"
    v = make_verdict(history)
    assert s.put_verdict(v, HistoryState(Reference(T0, "u", make_fp())))
    assert s.put_verdict(make_verdict(history, T0 + timedelta(days=1)), fingerprint=make_fp(term_freqs={long_a: 2,
                                                                                                         long_b: 1}))
    assert s.put_verdict(v) is False
    assert s.logged(history)[0][1].term_freqs == {long_a: 2, long_b: 1}
    got = s.get_state(history).baseline
    assert got is not None and got.uri_m == "u"
    assert [x.history for x in s.recent_verdicts(history, 5)] == [history, history]
    assert s.verdict_count(history) == 2 and s.get_state(history[:-1]).baseline is None


def test_open_store_postgres_config(postgres_dsn: str) -> None:
    tf = {f"t{i}": i + 1 for i in range(50)}
    s = open_store(StoreConfig(backend="postgres", dsn=SecretStr(postgres_dsn), history_limit=2))
    try:
        assert isinstance(s, PostgresStore)
        s.set_state("h", HistoryState(Reference(T0, None, make_fp(term_freqs=tf))))
        got = s.get_state("h").baseline
        assert got is not None and len(got.fingerprint.term_freqs) == 50 and got.fingerprint.text is not None
        for d in range(3):
            s.put_verdict(make_verdict("h", T0 + timedelta(days=d)))
        assert s.verdict_count("h") == 2
    finally:
        s.close()


def test_open_store_postgres_needs_a_dsn() -> None:
    with pytest.raises(ConfigError) as e:
        open_store(StoreConfig(backend="postgres"))
    assert e.value.reason == "store_dsn"
    with pytest.raises(ConfigError) as e:
        open_store(StoreConfig(backend="postgres", dsn=SecretStr("host=x port")))
    assert e.value.reason == "store_dsn"


def test_unreachable_server_is_a_store_error_without_the_password() -> None:
    dsn = f"postgresql://driftline:s3cret-pw@127.0.0.1:{_closed_port()}/driftline?connect_timeout=3"
    with pytest.raises(StoreError) as e:
        PostgresStore(dsn)
    assert e.value.reason == "store_open"
    assert "s3cret-pw" not in str(e.value) and "127.0.0.1" in str(e.value)


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when this returns: connections are refused
