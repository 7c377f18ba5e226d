"""Bad events go to the dead-letter topic with their original bytes, and the
partition goes on: the good event after each bad one is still scored."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, WarcRef, heritrix_message, page_html, stream_config, write_warc
from watcher.broker import EmbeddedBroker

pytestmark = pytest.mark.kafka


async def test_each_bad_event_kind_is_dead_lettered(kafka_broker: EmbeddedBroker, kafka_names: KafkaNames,
                                                    tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    goods = [(f"http://good{i}.example.org/", "20240101000000", page_html(10 + i)) for i in range(5)]
    big = ("http://big.example.org/", "20240101000000", page_html(1, words=30_000))  # ~250 kB > the 100 kB cap
    pdf = ("http://pdf.example.org/paper.pdf", "20240101000000", b"%PDF-1.7\n" + b"\x00garbage\xff" * 500)
    refs = write_warc(warcs / "BAD-00001.warc.gz", [*goods, big])
    (pdf_ref,) = write_warc(warcs / "PDF-00001.warc.gz", [pdf], mime="application/pdf")
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, partitions=1,
                        warc_dirs=(str(warcs),), extra={"acquire": {"live": {"max_bytes": 100_000}}})
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    bad = {
        "bad_json": b'{"url": "http://x.example.org/", "timestamp": ',
        "missing_field": heritrix_message(refs[0], url=None),
        "warc_missing": heritrix_message(WarcRef("http://gone.example.org/", "20240101000000", "GONE-1.warc.gz",
                                                 0, 0, "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")),
        "too_large": heritrix_message(refs[5]),
    }
    values: list[bytes] = []
    for i, value in enumerate(bad.values()):
        values += [value, heritrix_message(refs[i])]
    values += [heritrix_message(pdf_ref, mimetype="application/pdf"), heritrix_message(refs[4])]
    async with ConsumerApp(cfg) as app:
        positions = await produce(boot, crawl, values)
        assert await app.wait_caught_up(timeout_s=90)
        verdicts = await read_topic(boot, k.results_topic, timeout_s=20, idle_s=1.0)
        dead = await read_topic(boot, k.dead_letter_topic, timeout_s=20, idle_s=1.0)
        dead_metric = {r: app.metrics.dead_letter.labels(reason=r)._value.get() for r in bad}

    scored = {v["value"]["url"] for v in verdicts}
    assert {g[0] for g in goods} <= scored, "a good event after a bad one was not scored"
    by_reason = {d["value"]["reason"]: d["value"] for d in dead}
    for n, (reason, value) in enumerate(bad.items()):
        assert reason in by_reason, f"no dead letter for {reason}: {sorted(by_reason)}"
        msg = by_reason[reason]
        assert base64.b64decode(msg["value_b64"]) == value
        assert msg["key_b64"] is None  # Heritrix sends no key
        assert (msg["topic"], msg["partition"], msg["offset"]) == (crawl, *positions[2 * n])
        assert msg["message"]
        assert dead_metric[reason] == 1
    # An extractor failure (a corrupt PDF) never stops the partition (the good
    # event after it is scored, above): it is dead-lettered with its reason and
    # the original message, and gets no verdict.
    pdf_verdicts = [v["value"] for v in verdicts if v["value"]["url"] == pdf[0]]
    pdf_dead = [d["value"] for d in dead if d["value"]["reason"] not in bad]
    assert pdf_verdicts == []
    assert len(pdf_dead) == 1 and pdf_dead[0]["reason"] == "extract"
    assert "unreadable PDF" in pdf_dead[0]["message"]
    assert base64.b64decode(pdf_dead[0]["value_b64"]) == values[-2]


class _BuggyWatcher:
    """The real Watcher with a bug injected for one URL (not a stand-in engine)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def job(self, url: str, timestamp: Any, **how: Any) -> Any:
        return self.inner.job(url, timestamp, **how)

    @property
    def store(self) -> Any:
        return self.inner.store

    def score(self, capture: Any, job: Any = None, *, alert_on: frozenset[str] = frozenset(),
              fingerprint: Any = None) -> Any:
        if "bug" in capture.url:
            raise ZeroDivisionError("injected bug")
        return self.inner.score(capture, job, alert_on=alert_on, fingerprint=fingerprint)


async def test_internal_error_is_dead_lettered_and_the_partition_goes_on(
    kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path
) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    bug, good = write_warc(warcs / "BUG-00001.warc.gz", [("http://bug.example.org/", "20240101000000", page_html(1)),
                                                          ("http://fine.example.org/", "20240101000000", page_html(2))])
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, partitions=1, warc_dirs=(str(warcs),))
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    async with ConsumerApp(cfg) as app:
        assert app.scoring is not None
        app.scoring.watcher = _BuggyWatcher(app.scoring.watcher)
        await produce(boot, next(iter(k.input_topics)), [heritrix_message(bug), heritrix_message(good)])
        verdicts = await read_topic(boot, k.results_topic, expect=1, timeout_s=60)
        dead = await read_topic(boot, k.dead_letter_topic, expect=1, timeout_s=30)
        assert await app.wait_caught_up(timeout_s=30)
    assert [v["value"]["url"] for v in verdicts] == ["http://fine.example.org/"]
    assert dead[0]["value"]["reason"] == "internal"
    assert "ZeroDivisionError" in dead[0]["value"]["message"]
