"""What a history remembers of its verdicts (the collection profile's ``remember``), in batch and in the stream.

Two things the ``collection`` profile carries from one capture to the next, besides the baseline:

- a capture with no content of its own after one judged off topic stays off topic (nothing in it
  says the seed came back), with change ``empty`` (no alert of its own);
- a site judged on topic under a new name (a rename, its other language) keeps its identity under
  that name when its text later moves away from the baseline's.

Both are folds over the verdicts, so the stream rebuilds them for a late capture and corrects the
later verdicts they change.  Real engine, real SQLite store; documents made here (tests/fixtures/textgen.py).
"""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.fixtures import textgen
from watcher import profiles
from watcher.config import EngineConfig
from watcher.engine import Engine
from watcher.model import Capture, Verdict
from watcher.profiles.seedkind import Seed
from watcher.state import HistoryState
from watcher.store import SQLiteStore
from watcher.watch import Watcher

T0 = datetime(2012, 3, 1, tzinfo=UTC)
HOME = "http://www.riverside-rights.org/"
BASE = textgen.document(["river", "law", "music", "garden"], words=250)
PARKED = b"<html><head><title>This domain is for sale</title></head><body>Buy this domain</body></html>"
NEW_NAME = "Coalition for Water Justice"
# The site under its new name: half its old text, then none of it.
RENAMED = textgen.html([*BASE[:2], textgen.paragraph("space", 250, 1), textgen.paragraph("cooking", 250, 2)],
                       NEW_NAME)
RENAMED_NEW_TEXT = textgen.html(textgen.document(["space", "cooking"], words=250, seed=7), NEW_NAME)
ALERTS = frozenset({"drifted", "off-topic"})


def cap(i: int, content: bytes, url: str = HOME) -> Capture:
    return Capture(url=url, timestamp=T0 + timedelta(days=30 * i), content=content, content_type="text/html",
                   status=200, history="k")


def batch(caps: list[Capture]) -> list[Verdict]:
    return list(Engine(EngineConfig()).scan_history("k", caps).verdicts)


def stream(caps: list[Capture], db: Path) -> dict[str, Verdict]:
    """Every capture through the Watcher in the order given; the newest version of each verdict."""
    newest: dict[str, Verdict] = {}
    with SQLiteStore(db) as store:
        w = Watcher(Engine(EngineConfig()), store)
        for c in caps:
            out = w.score(c)
            newest[out.verdict.verdict_id] = out.verdict
            newest.update({v.verdict_id: v for v in out.corrections})
        stored = {v.verdict_id: v for v in store.recent_verdicts("k", 1000)}
    assert {k: (v.status, v.change, v.reason, v.version) for k, v in stored.items()} == \
           {k: (v.status, v.change, v.reason, v.version) for k, v in newest.items()}
    return newest


def test_no_content_after_an_off_topic_capture_keeps_its_own_status_without_an_alert(tmp_path: Path) -> None:
    """An empty capture says nothing about topic, whatever came before it: status ``empty``, no alert."""
    caps = [cap(0, textgen.html(BASE)), cap(1, PARKED), cap(2, b""), cap(3, textgen.html(BASE[:3])), cap(4, b"")]
    got = batch(caps)
    assert [(v.status, v.change) for v in got] == [
        ("on-topic", "baseline"), ("off-topic", "off-topic"), ("empty", "empty"), ("on-topic", "minor"),
        ("empty", "empty")]
    assert got[2].checks == () and got[2].drift_score == 0.0  # ranks with nothing: no evidence either way
    with SQLiteStore(tmp_path / "s.db") as store:
        w = Watcher(Engine(EngineConfig()), store)
        outs = [w.score(c, alert_on=ALERTS) for c in caps]
        assert [(o.verdict.status, o.verdict.reason) for o in outs] == [(v.status, v.reason) for v in got]
        assert store.alert_pending(outs[1].verdict.verdict_id)
        assert not store.alert_pending(outs[2].verdict.verdict_id)  # no content: no alert of its own


def test_a_renamed_site_keeps_its_identity_under_its_new_name(tmp_path: Path) -> None:
    alone = batch([cap(0, textgen.html(BASE)), cap(2, RENAMED_NEW_TEXT)])[1]
    assert alone.status == "off-topic" and "site identity lost" in alone.reason  # the baseline's name only
    caps = [cap(0, textgen.html(BASE)), cap(1, RENAMED), cap(2, RENAMED_NEW_TEXT)]
    got = batch(caps)
    title = got[1].measures["title"].score
    assert got[1].status == "on-topic" and title is not None and title < 0.5  # judged on topic by its text
    assert got[2].status == "on-topic" and "under a name it took since the baseline" in got[2].reason, got[2].reason
    cosine = got[2].measures["cosine"].score
    assert cosine is not None and cosine < 0.10  # the text alone would have lost the identity
    s = stream(caps, tmp_path / "s.db")
    assert [(s[v.verdict_id].status, s[v.verdict_id].reason) for v in got] == [(v.status, v.reason) for v in got]


def test_a_name_is_remembered_only_for_a_site_and_only_while_on_topic() -> None:
    eng = Engine(EngineConfig())
    state = HistoryState()
    for c in (cap(0, textgen.html(BASE)), cap(1, RENAMED)):
        _, state = eng.score_next("k", state, c, eng.fingerprint(c), HOME)
    assert state.names == (NEW_NAME.lower(),)
    v, after = eng.score_next("k", state, cap(2, PARKED), eng.fingerprint(cap(2, PARKED)), HOME)
    assert v.status == "off-topic" and after.names == state.names  # an off-topic title is never a name
    deep = dataclasses.replace(v, status="on-topic", change="drifted", title="Another article entirely")
    deep_seed, home = Seed.of("http://example.org/news/2013/01/live-blog-protests.html"), Seed.of(HOME)
    assert deep_seed.kind == "page" and home.site
    assert profiles.get("collection").remember(HistoryState(state.baseline), deep, deep_seed).names == ()
    assert profiles.get("text").remember(HistoryState(state.baseline), deep, home) == HistoryState(state.baseline)


def test_a_late_off_topic_capture_leaves_the_empty_one_after_it_as_it_is(tmp_path: Path) -> None:
    base, empty, parked = cap(0, textgen.html(BASE)), cap(2, b""), cap(1, PARKED)
    with SQLiteStore(tmp_path / "s.db") as store:
        w = Watcher(Engine(EngineConfig()), store)
        w.score(base)
        first = w.score(empty)
        assert first.verdict.status == "empty"
        late = w.score(parked)
        assert late.verdict.status == "off-topic"
        assert late.corrections == ()  # an empty capture keeps its own status, whatever came before it
        stored = store.get_verdict(first.verdict.verdict_id)
        assert stored is not None and (stored.status, stored.version) == ("empty", 1)


@pytest.mark.parametrize("seed", range(1, 13))
def test_the_stream_in_any_order_ends_where_batch_ends(seed: int, tmp_path: Path) -> None:
    """A history that renames its site, goes off topic, returns nothing, comes back and goes quiet:
    fed in twelve shuffled orders, every newest verdict equals batch."""
    caps = [cap(0, textgen.html(BASE)), cap(1, RENAMED), cap(2, b""), cap(3, RENAMED_NEW_TEXT), cap(4, PARKED),
            cap(5, b""), cap(6, b""), cap(7, RENAMED_NEW_TEXT), cap(8, PARKED), cap(9, textgen.html(BASE[1:])),
            cap(10, b"")]
    want = batch(caps)
    assert {v.status for v in want} == {"on-topic", "off-topic", "empty"}
    order = list(caps)
    random.Random(seed).shuffle(order)
    got = stream(order, tmp_path / "s.db")
    assert [(got[v.verdict_id].status, got[v.verdict_id].change, got[v.verdict_id].reason) for v in want] == \
           [(v.status, v.change, v.reason) for v in want]
