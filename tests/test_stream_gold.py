"""The shared gold collection through the broker: the stream says exactly what batch says.

Every labelled capture is written to a WARC (every capture of a TimeMap under
the URL of its first capture, as ``shared/tools/gold2warc.py`` does), announced
as an unkeyed Heritrix feed message, in a shuffled order, all at once (a
backlog), and consumed by the real router and scorer with two consumer
restarts.  Late captures re-score the later ones and re-publish them as new
versions; the newest version of every verdict must equal the batch scan of the
same WARC, and so must the F1 against the labels.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures.kafka import KafkaNames, heritrix_message, stream_config, write_warc
from watcher.broker import EmbeddedBroker
from watcher.canonical import url_key
from watcher.model import verdict_id
from watcher.scan import score_histories
from watcher.sources import iter_histories
from watcher.sources.gold import read_labels

pytestmark = [pytest.mark.kafka, pytest.mark.shared]


def _f1(pred: dict[str, bool], truth: dict[str, bool]) -> float:
    tp = sum(1 for k, y in truth.items() if y and pred.get(k))
    fp = sum(1 for k, y in truth.items() if not y and pred.get(k))
    fn = sum(1 for k, y in truth.items() if y and not pred.get(k))
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


@pytest.mark.timeout(1800)
async def test_gold_shuffled_unkeyed_with_restarts_equals_batch(
        gold_dir: Path, kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    rows = read_labels(gold_dir / "labels.tsv")
    seen: set[tuple[str, str]] = set()
    caps: list[tuple[str, str, bytes]] = []
    labels: list[bool] = []
    for r in sorted(rows, key=lambda r: (r.id, r.date)):
        path = gold_dir / "html" / r.id / f"{r.date}.html"
        if (r.id, r.date) in seen or not path.exists():
            continue
        seen.add((r.id, r.date))
        # every capture of one TimeMap under one URL: one history, as in the gold directory
        caps.append((f"http://gold-{r.id}.example.org/", r.date, path.read_bytes()))
        labels.append(r.label == 0)
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    warc = warcs / "GOLD-00001.warc.gz"
    refs = write_warc(warc, caps)
    truth = {verdict_id(url_key(url), _ts(ts), ref.digest): y
             for (url, ts, _), ref, y in zip(caps, refs, labels, strict=True)}

    # Batch: the same WARC through `driftline scan`'s path.
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, warc_dirs=(str(warcs),))
    batch_cfg = cfg.model_copy(update={"scan": cfg.scan.model_copy(update={"workers": 1, "progress": False})})
    batch = {v.verdict_id: v for h in score_histories(iter_histories([str(warc)], batch_cfg), batch_cfg, workers=1)
             for v in h.verdicts}
    assert len(batch) == len(caps), (len(batch), len(caps))

    # Stream: unkeyed, shuffled backlog, two consumer restarts.
    messages = [heritrix_message(ref) for ref in refs]
    random.Random(1068).shuffle(messages)
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    await produce(boot, crawl, messages)
    for stop_after in (len(caps) // 3, 2 * len(caps) // 3, None):
        async with ConsumerApp(cfg) as app:
            if stop_after is not None:
                await read_topic(boot, k.results_topic, expect=stop_after, timeout_s=600)
            else:
                assert await app.wait_caught_up(timeout_s=900)
    out = await read_topic(boot, k.results_topic, timeout_s=120, idle_s=3.0)
    dead = await read_topic(boot, k.dead_letter_topic, timeout_s=5, idle_s=0.5)
    assert not dead, [d["value"]["reason"] for d in dead][:5]
    newest: dict[str, dict[str, Any]] = {}
    for m in out:
        v = m["value"]
        if v["verdict_id"] not in newest or v["version"] >= newest[v["verdict_id"]]["version"]:
            newest[v["verdict_id"]] = v
    missing, extra = set(batch) - set(newest), set(newest) - set(batch)
    assert not missing and not extra, (len(missing), len(extra), sorted(missing)[:3], sorted(extra)[:3])
    late = sum(1 for v in newest.values() if v["version"] > 1)
    assert late > 0  # the shuffle made late captures, and they were corrected
    differ = [(vid, (b.status, b.change, b.reason), (s["status"], s["change"], s["reason"]))
              for vid, b in batch.items() for s in [newest[vid]]
              if (b.status, b.change, b.reason) != (s["status"], s["change"], s["reason"])
              or (b.baseline_time is None) != (s["baseline_time"] is None)]
    assert differ == [], differ[:5]
    f1_batch = _f1({vid: v.status == "off-topic" for vid, v in batch.items()}, truth)
    f1_stream = _f1({vid: v["status"] == "off-topic" for vid, v in newest.items()}, truth)
    assert f1_stream == f1_batch and f1_batch > 0.6


def _ts(ts14: str) -> Any:
    from datetime import UTC, datetime

    return datetime.strptime(ts14, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
