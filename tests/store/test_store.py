"""Baseline stores and their codec, against a real SQLite file and a real
PostgreSQL server (PostgreSQL specifics: tests/store/test_store_postgres.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
import struct
import threading
import time
import zlib
from datetime import timedelta
from pathlib import Path

import pytest

from tests.fixtures.storecases import T0, make_fp, make_verdict
from watcher.compact import MAX_STORED_TERMS
from watcher.config import StoreConfig
from watcher.errors import ConfigError, StoreError
from watcher.model import Fingerprint, MeasureResult, Verdict
from watcher.state import HistoryState, Reference, state_form
from watcher.store import (
    BaselineStore,
    MemoryStore,
    SQLiteStore,
    decode_fingerprint,
    decode_verdict,
    encode_fingerprint,
    encode_verdict,
    open_store,
    reduce_fingerprint,
)
from watcher.store.codec import encode_state
from watcher.store.sqlite import SCHEMA_VERSION

# -- codec ------------------------------------------------------------------


@pytest.mark.parametrize("keep_text", [False, True])
@pytest.mark.parametrize("keep_shingles", [False, True])
def test_fingerprint_round_trip_equals_reduced_form(keep_text: bool, keep_shingles: bool) -> None:
    fp = make_fp()
    blob = encode_fingerprint(fp, keep_text=keep_text, keep_shingles=keep_shingles)
    back = decode_fingerprint(blob)
    # zlib JSON of the small fields, then the raw sketches (and the shingle set, where one is kept)
    assert blob[0] == (4 if back.shingles is not None else 3)
    assert back == reduce_fingerprint(fp, keep_text=keep_text, keep_shingles=keep_shingles)
    assert (back.text is not None) is keep_text
    assert (back.tokens is not None) is keep_text
    assert (back.shingles is not None) is keep_shingles
    assert isinstance(back.dois, frozenset)
    assert isinstance(back.headings, tuple)
    assert back.citation["citation_author"] == ("Doe, J.", "Roe, R.")
    # the title key is derived, never stored: a decoded baseline derives the same one
    assert back.title_key == fp.title_key == back.title.casefold() != ""
    (n,) = struct.unpack_from("<I", blob, 1)
    assert "title_key" not in json.loads(zlib.decompress(blob[5:5 + n]))
    if keep_shingles:
        assert back.shingles == fp.shingles


def test_sketch_form_is_smaller_and_keeps_sketches() -> None:
    words = [f"w{i % 3000}" for i in range(20_000)]
    fp = make_fp(tokens=tuple(words), text=" ".join(words), shingles=frozenset(range(0, 1 << 40, (1 << 40) // 20_000)))
    full = encode_fingerprint(fp, keep_text=True, keep_shingles=True)
    sketch = encode_fingerprint(fp, keep_text=False, keep_shingles=False)
    assert len(sketch) * 5 < len(full)
    back = decode_fingerprint(sketch)
    assert back.minhash == fp.minhash and back.simhash_raw == fp.simhash_raw


def test_negative_and_huge_shingles_round_trip() -> None:
    for shingles in (frozenset({-5, 3, -(1 << 63)}), frozenset({1 << 70, -1}), frozenset()):
        fp = make_fp(shingles=shingles)
        assert decode_fingerprint(encode_fingerprint(fp, keep_text=False, keep_shingles=True)).shingles == shingles


def test_term_freqs_capped_to_most_frequent() -> None:
    tf = {f"t{i:05d}": i + 1 for i in range(MAX_STORED_TERMS + 500)}
    back = decode_fingerprint(encode_fingerprint(make_fp(term_freqs=tf), keep_text=False, keep_shingles=False))
    assert len(back.term_freqs) == MAX_STORED_TERMS
    assert min(back.term_freqs.values()) == 501  # the 500 rarest were dropped
    small = decode_fingerprint(
        encode_fingerprint(make_fp(term_freqs=tf), keep_text=False, keep_shingles=False, max_terms=100)
    )
    assert set(small.term_freqs) == {f"t{i:05d}" for i in range(MAX_STORED_TERMS + 400, MAX_STORED_TERMS + 500)}
    assert (
        decode_fingerprint(
            encode_fingerprint(make_fp(term_freqs=tf), keep_text=False, keep_shingles=False, max_terms=0)
        ).term_freqs
        == tf
    )


def test_store_max_terms_is_applied(tmp_path: Path) -> None:
    tf = {f"t{i}": i + 1 for i in range(50)}
    for s in (SQLiteStore(tmp_path / "m.db", max_terms=10), MemoryStore(max_terms=10)):
        try:
            s.set_state("h", HistoryState(Reference(T0, None, make_fp(term_freqs=tf))))
            got = s.get_state("h").baseline
            assert got is not None and len(got.fingerprint.term_freqs) == 10
        finally:
            s.close()


def test_empty_fingerprint_round_trip() -> None:
    fp = Fingerprint(
        kind="empty", digest="sha1:X", byte_count=0, word_count=0, language=None, title="", headings=(),
        term_freqs={}, shingle_count=0, minhash=b"", simhash_raw=0, simhash_tf=0, dois=frozenset(),
        citation={}, page_kind=None,
    )  # fmt: skip
    assert decode_fingerprint(encode_fingerprint(fp, keep_text=True, keep_shingles=True)) == fp


def test_older_blob_without_new_fields_decodes_with_defaults() -> None:
    import base64
    import struct
    import zlib

    blob = encode_fingerprint(make_fp(), keep_text=False, keep_shingles=False)
    (n,) = struct.unpack_from("<I", blob, 1)
    doc = json.loads(zlib.decompress(blob[5:5 + n]))  # as a format-1 blob held it: every field in the JSON
    doc["minhash"] = {"$b": base64.b64encode(make_fp().minhash).decode()}
    del doc["page_kind_evidence"]  # an optional field an older writer did not know
    doc["field_from_the_future"] = 1  # a field this model does not know
    back = decode_fingerprint(bytes([1]) + zlib.compress(json.dumps(doc).encode()))
    assert back.page_kind_evidence is None and back.title == make_fp().title
    del doc["title"]  # a required field
    with pytest.raises(StoreError):
        decode_fingerprint(bytes([1]) + zlib.compress(json.dumps(doc).encode()))


def test_decode_rejects_unknown_version_and_garbage() -> None:
    blob = encode_fingerprint(make_fp(), keep_text=False, keep_shingles=False)
    with pytest.raises(StoreError) as e:
        decode_fingerprint(bytes([99]) + blob[1:])
    assert e.value.reason == "store_codec"
    with pytest.raises(StoreError):
        decode_fingerprint(blob[:20])
    with pytest.raises(StoreError):
        decode_verdict("{not json")


def test_verdict_round_trip_and_strict_json() -> None:
    v = make_verdict(status="off-topic")
    text = encode_verdict(v)
    assert '"capture_time":"2008-04-30T20:48:25Z"' in text
    assert decode_verdict(text) == v
    if "drift_score" in {f.name for f in dataclasses.fields(Verdict)}:
        scored = dataclasses.replace(v, drift_score=0.42)
        assert decode_verdict(encode_verdict(scored)) == scored
    nan = dataclasses.replace(v, measures={"x": MeasureResult("x", float("nan"), "error", float("inf"))})
    text = encode_verdict(nan)
    assert "NaN" not in text.replace('"nan"', "")  # strict JSON: no bare NaN token
    back = decode_verdict(text).measures["x"]
    assert back.score is not None and back.score != back.score and back.threshold == float("inf")
    d = json.loads(encode_verdict(v))
    d["from_the_future"] = True
    for optional in ("seed", "job", "label", "title"):
        del d[optional]
    older = decode_verdict(json.dumps(d))
    assert older.verdict_id == v.verdict_id and older.seed is None and older.title == ""
    naive = dataclasses.replace(v, capture_time=T0.replace(tzinfo=None))
    assert decode_verdict(encode_verdict(naive)).capture_time == T0


# -- both backends ----------------------------------------------------------


@pytest.fixture(params=["sqlite", "memory", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> BaselineStore:
    # postgres: a real server (tests/fixtures/postgres.py), a fresh schema per test
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else None
    cfg = StoreConfig(backend=request.param, path=str(tmp_path / "sub" / "d.db"), dsn=dsn, history_limit=5)
    s = open_store(cfg)
    request.addfinalizer(s.close)
    return s


def test_open_store_backends(store: BaselineStore, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    backend = request.node.callspec.params["store"]
    expected = {"sqlite": "SQLiteStore", "memory": "MemoryStore", "postgres": "PostgresStore"}[backend]
    assert type(store).__name__ == expected
    assert isinstance(store, SQLiteStore | MemoryStore) or backend == "postgres"
    if isinstance(store, SQLiteStore):
        assert (tmp_path / "sub" / "d.db").exists()


def test_baseline_round_trip(store: BaselineStore) -> None:
    assert store.get_state("h").baseline is None
    fp = make_fp()
    store.set_state("h", HistoryState(Reference(T0, "urim", fp)))
    got = store.get_state("h").baseline
    assert got is not None
    assert got.capture_time == T0 and got.uri_m == "urim"
    assert got.fingerprint == fp  # the store keeps what the fingerprint holds (engine.tokens decides)
    store.set_state("h", HistoryState(Reference(T0 + timedelta(days=1), None, make_fp(title="new"))))
    got2 = store.get_state("h").baseline
    assert got2 is not None and got2.fingerprint.title == "new" and got2.uri_m is None


def test_put_verdict_is_idempotent(store: BaselineStore) -> None:
    v = make_verdict()
    assert not store.has_verdict(v.verdict_id)
    assert store.put_verdict(v, fingerprint=make_fp()) is True
    assert store.put_verdict(v, fingerprint=make_fp(title="other")) is False
    assert [(x.verdict_id, f.title) for x, f in store.logged(v.history)] == [(v.verdict_id, make_fp().title)]
    assert store.has_verdict(v.verdict_id)
    assert store.get_verdict(v.verdict_id) == v
    assert store.get_verdict("nope") is None
    v2 = make_verdict(at=T0 + timedelta(days=1))
    assert store.put_verdict(v2)
    assert [x.verdict_id for x, _ in store.logged(v.history)] == [v.verdict_id]  # v2 came without a fingerprint
    assert store.logged("other") == []


def test_state_keeps_what_the_history_remembers_and_reads_the_newest_capture_time(store: BaselineStore) -> None:
    """Every backend keeps the names with the references, and answers ``latest``
    (the newest capture time scored, which the stream reads to tell a late capture) from its own
    record, never from the state blob."""
    v = make_verdict(at=T0 + timedelta(days=3), status="off-topic")
    state = HistoryState(Reference(T0, "b", make_fp()), None,
                         names=("riverside rights", "حقوق النهر"), latest=T0 + timedelta(days=99))
    assert store.put_verdict(v, state, make_fp())
    got = store.get_state(v.history)
    assert got.names == ("riverside rights", "حقوق النهر")
    assert got == state and got.latest == T0 + timedelta(days=3)  # the store's, not the one written
    assert store.put_verdict(make_verdict(at=T0 + timedelta(days=1)))  # an earlier capture: latest stays
    assert store.get_state(v.history).latest == T0 + timedelta(days=3)
    assert store.get_state("unknown").latest is None


def test_corrections_replace_stored_verdicts_in_the_same_transaction(store: BaselineStore) -> None:
    old = make_verdict(at=T0 + timedelta(days=2), status="off-topic")
    assert store.put_verdict(old, fingerprint=make_fp())
    assert store.histories_off_topic() == 1
    late = make_verdict(at=T0)
    fixed = dataclasses.replace(old, status="on-topic", change="minor", version=2)
    state = HistoryState(Reference(T0, "late", make_fp(title="late baseline")))
    assert store.put_verdict(late, state, make_fp(), [fixed])
    assert store.get_verdict(old.verdict_id) == fixed
    assert store.histories_off_topic() == 0
    assert store.get_state(old.history) == state
    # a duplicate of the late capture changes nothing, its corrections included
    assert not store.put_verdict(late, HistoryState(), None, [dataclasses.replace(fixed, version=3)])
    got = store.get_verdict(old.verdict_id)
    assert got is not None and got.version == 2


def test_fingerprints_leave_the_log_after_the_rescore_window(tmp_path: Path) -> None:
    for s in (SQLiteStore(tmp_path / "w.db", rescore_window_s=0.0), MemoryStore(rescore_window_s=0.0)):
        with s:
            assert s.put_verdict(make_verdict(at=T0), fingerprint=make_fp())
            time.sleep(0.01)
            assert s.put_verdict(make_verdict(at=T0 + timedelta(days=1)), fingerprint=make_fp())
            assert [v.capture_time for v, _ in s.logged("org,example)/")] == [T0 + timedelta(days=1)]


def test_put_verdict_sets_baseline_in_same_transaction(store: BaselineStore) -> None:
    v = make_verdict()
    assert store.put_verdict(v, HistoryState(Reference(T0, "first", make_fp(title="one"))))
    got = store.get_state(v.history).baseline
    assert got is not None and got.uri_m == "first" and got.fingerprint.title == "one"
    # a duplicate verdict changes nothing, its baseline included
    assert not store.put_verdict(v, HistoryState(Reference(T0, "second", make_fp(title="two"))))
    again = store.get_state(v.history).baseline
    assert again is not None and again.uri_m == "first" and again.fingerprint.title == "one"


def test_recent_verdicts_newest_first(store: BaselineStore) -> None:
    days = [3, 0, 4, 1, 2]
    for d in days:
        store.put_verdict(make_verdict(at=T0 + timedelta(days=d)))
    store.put_verdict(make_verdict(history="other", at=T0 + timedelta(days=10)))
    got = store.recent_verdicts("org,example)/", 3)
    assert [v.capture_time for v in got] == [T0 + timedelta(days=d) for d in (4, 3, 2)]
    assert len(store.recent_verdicts("org,example)/", 100)) == 5
    assert store.recent_verdicts("org,example)/", 0) == []


def test_history_limit_prunes_oldest(store: BaselineStore) -> None:
    vs = [make_verdict(at=T0 + timedelta(days=d)) for d in range(8)]
    for v in reversed(vs):  # arrive newest first: pruning must still drop the oldest
        store.put_verdict(v, fingerprint=make_fp())
    kept = store.recent_verdicts("org,example)/", 100)
    assert [v.capture_time for v in kept] == [T0 + timedelta(days=d) for d in range(7, 2, -1)]
    assert not store.has_verdict(vs[0].verdict_id) and store.has_verdict(vs[3].verdict_id)
    assert store.put_verdict(vs[0]) is False  # a pruned capture re-delivered is still a duplicate
    assert len(store.logged("org,example)/")) == 5  # pruned verdicts take their fingerprints along
    assert len(store.recent_verdicts("org,example)/", 100)) == 5


def test_off_topic_gauge_tracks_newest_verdict(store: BaselineStore) -> None:
    assert store.histories_off_topic() == 0
    store.put_verdict(make_verdict("a", T0, "on-topic"))
    store.put_verdict(make_verdict("a", T0 + timedelta(days=2), "off-topic"))
    store.put_verdict(make_verdict("b", T0, "off-topic"))
    assert store.histories_off_topic() == 2
    store.put_verdict(make_verdict("a", T0 + timedelta(days=1), "on-topic"))  # older, arrives late
    assert store.histories_off_topic() == 2
    store.put_verdict(make_verdict("b", T0 + timedelta(days=1), "on-topic"))
    assert store.histories_off_topic() == 1
    store.put_verdict(make_verdict("b", T0 + timedelta(days=1), "on-topic"))  # duplicate: no change
    assert store.histories_off_topic() == 1


def test_closed_store_refuses(store: BaselineStore) -> None:
    store.close()
    with pytest.raises(StoreError) as e:
        store.has_verdict("x")
    assert e.value.reason == "store_closed"
    store.close()  # idempotent


async def test_usable_from_asyncio_to_thread(store: BaselineStore) -> None:
    vs = [make_verdict(at=T0 + timedelta(hours=i)) for i in range(20)]
    results = await asyncio.gather(*(asyncio.to_thread(store.put_verdict, v) for v in vs + vs))
    assert sum(results) == 20
    assert len(store.recent_verdicts("org,example)/", 100)) == min(20, 5)


# -- SQLite specifics -------------------------------------------------------


def test_sqlite_wal_schema_and_reopen(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    s = SQLiteStore(db)
    v = make_verdict(status="off-topic")
    s.put_verdict(v)
    s.set_state("org,example)/", HistoryState(Reference(T0, None, make_fp())))
    assert Path(str(db) + "-wal").exists()
    # another connection (another process would do the same) sees committed data and WAL mode
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
        assert raw.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0] == 1
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"meta", "baselines", "verdicts", "doc_count", "latest"} <= tables
    s.close()
    s2 = SQLiteStore(db)
    try:
        assert s2.schema_version == SCHEMA_VERSION
        assert s2.get_verdict(v.verdict_id) == v
        assert s2.put_verdict(v) is False
        assert s2.histories_off_topic() == 1
        b = s2.get_state("org,example)/").baseline
        assert b is not None and b.fingerprint.minhash == make_fp().minhash
    finally:
        s2.close()


def test_sqlite_refuses_newer_schema(tmp_path: Path) -> None:
    db = tmp_path / "n.db"
    SQLiteStore(db).close()
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    with pytest.raises(StoreError) as e:
        SQLiteStore(db)
    assert e.value.reason == "store_schema"


def test_sqlite_concurrent_writers(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    store = SQLiteStore(db, history_limit=10_000)
    other = SQLiteStore(db, history_limit=10_000)  # a second connection on the same file, like a second process
    errors: list[BaseException] = []

    def writer(s: SQLiteStore, offset: int) -> None:
        try:
            for i in range(150):
                at = T0 + timedelta(minutes=i)
                # both threads write the same 150 captures of history "shared" (duplicates)
                s.put_verdict(make_verdict("shared", at), fingerprint=make_fp())
                s.put_verdict(make_verdict(f"own{offset}", at, "off-topic" if i % 2 else "on-topic"))
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [
        threading.Thread(target=writer, args=(store, 0)),
        threading.Thread(target=writer, args=(store, 1)),
        threading.Thread(target=writer, args=(other, 2)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.verdict_count("shared") == 150
    assert len(store.logged("shared")) == 150
    for k in range(3):
        assert store.verdict_count(f"own{k}") == 150
    assert store.histories_off_topic() == 3  # i = 149 is odd: newest verdicts are off-topic
    store.close()
    other.close()
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_unknown_backend_is_config_error() -> None:
    cfg = StoreConfig.model_construct(backend="redis", path="x", keep_text=False, keep_shingles=False, history_limit=1)
    with pytest.raises(ConfigError):
        open_store(cfg)


# -- real fingerprints ------------------------------------------------------


@pytest.mark.shared
def test_real_engine_fingerprints_round_trip(gold_dir: Path, tmp_path: Path) -> None:
    """Fingerprints the engine makes of real gold pages survive the SQLite store exactly
    (in reduced form), and the sketch form stays small."""
    engine_mod = pytest.importorskip("watcher.engine")
    from watcher.config import EngineConfig
    from watcher.model import Capture

    engine = engine_mod.Engine(EngineConfig())
    pages = sorted((gold_dir / "html").glob("*/*.html"))[:12]
    assert pages
    sizes: list[int] = []
    state_sizes: list[int] = []
    with SQLiteStore(tmp_path / "real.db") as s:
        for i, page in enumerate(pages):
            cap = Capture(
                url=f"http://example.org/{i}", timestamp=T0, content=page.read_bytes(), content_type="text/html"
            )
            fp = engine.fingerprint(cap)
            blob = encode_fingerprint(fp, keep_text=False, keep_shingles=False)
            sizes.append(len(blob))
            assert decode_fingerprint(blob) == reduce_fingerprint(fp, keep_text=False, keep_shingles=False)
            kept = state_form(fp)  # what a baseline keeps (the engine's step does the same)
            s.set_state(f"h{i}", HistoryState(Reference(T0, None, kept)))
            got = s.get_state(f"h{i}").baseline
            assert got is not None
            assert got.fingerprint == kept
            state_sizes.append(len(encode_state(s.get_state(f"h{i}"))))
    # The state a URL needs for scoring stays within 2 kB with the default engine settings.
    assert max(state_sizes) <= 2048, state_sizes


def test_a_state_written_before_the_history_remembered_anything_still_reads() -> None:
    """A format-2 state (the references alone, written by an earlier version) decodes with nothing
    remembered; format 3 round-trips what is."""
    from watcher.store.codec import decode_state

    state = HistoryState(Reference(T0, "b", make_fp()), names=("amnesty togo",))
    blob = encode_state(state)
    assert blob[0] == 3 and decode_state(blob) == state
    old = bytes([2]) + blob[1:-len(b"\x00\x01\x0c\x00amnesty togo")]
    got = decode_state(old)
    assert got.baseline == state.baseline and got.names == ()
    flagged = blob[:-len(b"\x00\x01\x0c\x00amnesty togo")] + b"\x01\x01\x0c\x00amnesty togo"
    assert decode_state(flagged) == state  # the reserved byte (a flag written by earlier versions) is not read
    with pytest.raises(StoreError):
        decode_state(blob[:-3])  # a name cut short is a damaged blob, never a wrong name


def test_owed_alerts_are_recorded_with_their_verdict(store: BaselineStore) -> None:
    v = make_verdict(status="off-topic")
    assert not store.alert_pending(v.verdict_id)
    assert store.put_verdict(v, alerts=[v.verdict_id])
    assert store.alert_pending(v.verdict_id)  # a crash now: the re-delivered event finds the alert still owed
    assert not store.put_verdict(v, alerts=[v.verdict_id])
    store.mark_alert_sent(v.verdict_id)
    assert not store.alert_pending(v.verdict_id)
    assert not store.put_verdict(v, alerts=[v.verdict_id])  # a duplicate never owes it again
    assert not store.alert_pending(v.verdict_id)
    other = make_verdict(at=T0 + timedelta(days=1))
    store.put_verdict(other)  # no alert owed
    assert not store.alert_pending(other.verdict_id)


def test_a_shingle_set_travels_raw_after_the_sketches_and_format_3_still_reads() -> None:
    """Format 4 keeps the shingle set as raw sorted u64 after the sketches (base64 in the JSON cost
    zlib half of the encoding's time); a fingerprint without one stays format 3 byte for byte,
    and a format-3 blob with its set in the JSON decodes to the same fingerprint."""
    import base64

    fp = make_fp(shingles=frozenset({5, 1, 2**64 - 1, 77}))
    blob = encode_fingerprint(fp, keep_text=True, keep_shingles=True)
    assert blob[0] == 4
    back = decode_fingerprint(blob)
    assert back == reduce_fingerprint(fp, keep_text=True, keep_shingles=True)
    assert back.shingles == frozenset({5, 1, 2**64 - 1, 77})
    assert struct.pack("<4Q", 1, 5, 77, 2**64 - 1) in blob  # raw and sorted, not in the compressed JSON
    sketch = encode_fingerprint(fp, keep_text=False, keep_shingles=False)
    assert sketch[0] == 3 and decode_fingerprint(sketch).shingles is None
    # the same fingerprint as format 3 wrote it: the set packed in the JSON, no blob after the sketches
    (n,) = struct.unpack_from("<I", blob, 1)
    doc = json.loads(zlib.decompress(blob[5:5 + n]))
    doc["shingles"] = {"u64": base64.b64encode(struct.pack("<4Q", 1, 5, 77, 2**64 - 1)).decode("ascii")}
    body = zlib.compress(json.dumps(doc).encode("utf-8"))
    sketches = blob[5 + n:-(4 + 32)]
    assert decode_fingerprint(bytes([3]) + struct.pack("<I", len(body)) + body + sketches) == back
    empty = encode_fingerprint(make_fp(shingles=frozenset()), keep_text=True, keep_shingles=True)
    assert decode_fingerprint(empty).shingles == frozenset()
    with pytest.raises(StoreError):
        decode_fingerprint(blob[:-8])  # a set cut short is a damaged blob, never a smaller set
