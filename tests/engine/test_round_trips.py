"""Store round trips and parses per scored event, through the real consumer: one pass per event.

The scorer makes an event's Job once (``Watcher.job``: the verdict id checked first, then the
history's state and the same-digest reference) and scores through it (``Watcher.score``); an alert
recorded with its verdict is published without asking the store again.  Counted through the
watcher's store (every call the scoring path makes) while events go through the embedded broker one
at a time: a new capture costs the verdict check, the state read and the one transactional write;
an alert adds the mark that it was sent; a history's first baseline also reads what it may have to
re-score.  (Before this shape: 5, 6 and 7, the state read twice and the pending alert asked for
every verdict; before the Job, a re-delivered event read the state and fetched its payload before
its verdict was found.)  The seed report, throttled per history, is left out of the count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import consumers.router
import consumers.scorer
import watcher.engine
from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker

pytestmark = pytest.mark.kafka

URL = "http://rights.example.org/"


class CountingStore:
    """The real store, every public call counted (no behaviour of its own)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name.startswith("_") or not callable(attr):
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return attr(*args, **kwargs)

        fn: Callable[..., Any] = counted
        return fn


async def test_a_scored_event_costs_three_store_round_trips(kafka_broker: EmbeddedBroker, kafka_names: KafkaNames,
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    base = page_html(1)
    refs = write_warc(warcs / "RT-00001.warc.gz", [
        (URL, "20240101000000", base),  # the baseline
        (URL, "20240201000000", page_html(1, variant=3)),  # changed, on topic: no alert
        (URL, "20240301000000", base),  # the baseline's payload again: no fetch, no parse
        (URL, "20240401000000", page_html(1, off_topic=True)),  # off topic: an alert
    ])
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, partitions=1, warc_dirs=(str(warcs),))
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    per_event: list[dict[str, int]] = []
    # the real parsers, each call counted: the event's (router, scorer) and the page's (one fingerprint)
    parses: Counter[str] = Counter()
    for where, module, name in (("event", consumers.router, "parse_event"), ("event", consumers.scorer, "parse_event"),
                                ("page", watcher.engine, "fingerprint")):
        monkeypatch.setattr(module, name, _counted(parses, where, getattr(module, name)))
    per_parse: list[dict[str, int]] = []
    async with ConsumerApp(cfg) as app:
        assert app.scoring is not None
        counting = CountingStore(app.scoring.watcher.store)
        app.scoring.watcher.store = counting  # type: ignore[misc]  # a counting wrapper injected (read-only in the protocol)
        # The seed report reads a history's recent verdicts once per seeds.publish_interval_s, not per
        # event (watcher.seeds.stream): off here, so that what is counted is the scoring path.
        app.scoring.seeds = None
        acquirer = app.scoring.acquirer
        monkeypatch.setattr(acquirer, "get", _counted(parses, "acquire", acquirer.get))
        for n, ref in enumerate([*refs, refs[1]], 1):  # the second event re-delivered at the end
            before, parsed = Counter(counting.calls), Counter(parses)
            await produce(boot, next(iter(k.input_topics)), [heritrix_message(ref)])
            got = await read_topic(boot, k.results_topic, expect=n, timeout_s=60)
            assert len(got) == n
            assert await app.wait_caught_up(timeout_s=30)
            per_event.append(dict(counting.calls - before))
            per_parse.append(dict(parses - parsed))
    changes = [m["value"]["change"] for m in got]
    assert changes == ["baseline", "minor", "unchanged", "off-topic", "minor"], changes
    totals = [sum(c.values()) for c in per_event]
    # the re-delivered event: the verdict found before anything is acquired (its alert state asked, as
    # for any re-delivery: it may be owed); no state read, no fetch, no parse of the page
    assert totals == [5, 3, 3, 4, 2], per_event
    assert per_event[4] == {"get_verdict": 1, "alert_pending": 1}, per_event[4]
    per_event = per_event[:4]
    assert all(c.get("get_state", 0) == 1 for c in per_event), per_event  # the state read once per event
    assert per_event[3].get("mark_alert_sent") == 1 and not any(c.get("alert_pending") for c in per_event)
    # the event parsed by the router (to key it) and by the scorer (its re-keyed copy); the page once, and
    # not at all when its payload is the baseline's
    assert [p.get("event", 0) for p in per_parse] == [2, 2, 2, 2, 2], per_parse
    assert [p.get("page", 0) for p in per_parse] == [1, 1, 0, 1, 0], per_parse
    assert [p.get("acquire", 0) for p in per_parse] == [1, 1, 0, 1, 0], per_parse


def _counted(counter: Counter[str], key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        counter[key] += 1
        return fn(*args, **kwargs)

    return counted
