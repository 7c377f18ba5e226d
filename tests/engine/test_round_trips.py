"""Store round trips per scored event, through the real consumer: one pass per event.

The scorer resolves an event's history, its state and the same-digest shortcut once (``Watcher.begin``)
and hands them to ``Watcher.handle``; an alert recorded with its verdict is published without asking
the store again.  Counted through the watcher's store (every call the scoring path makes) while
events go through the embedded broker one at a time: a new capture costs the verdict check, the
state read and the one transactional write; an alert adds the mark that it was sent; a history's first
baseline also reads what it may have to re-score.  (Before this shape: 5, 6 and 7, the state read
twice and the pending alert asked for every verdict.)  The seed report, throttled per history, is
left out of the count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

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
                                                            tmp_path: Path) -> None:
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
    async with ConsumerApp(cfg) as app:
        assert app.scoring is not None
        counting = CountingStore(app.scoring.watcher.store)
        app.scoring.watcher.store = counting  # type: ignore[misc]
        # The seed report reads a history's recent verdicts once per seeds.publish_interval_s, not per
        # event (watcher.seeds.stream): off here, so that what is counted is the scoring path.
        app.scoring.seeds = None
        for n, ref in enumerate(refs, 1):
            before = Counter(counting.calls)
            await produce(boot, next(iter(k.input_topics)), [heritrix_message(ref)])
            got = await read_topic(boot, k.results_topic, expect=n, timeout_s=60)
            assert len(got) == n
            assert await app.wait_caught_up(timeout_s=30)
            per_event.append(dict(counting.calls - before))
    changes = [m["value"]["change"] for m in got]
    assert changes == ["baseline", "minor", "unchanged", "off-topic"], changes
    totals = [sum(c.values()) for c in per_event]
    assert totals == [5, 3, 3, 4], per_event
    assert all(c.get("get_state", 0) == 1 for c in per_event), per_event  # the state read once per event
    assert per_event[3].get("mark_alert_sent") == 1 and not any(c.get("alert_pending") for c in per_event)
