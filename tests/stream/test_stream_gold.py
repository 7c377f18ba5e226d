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

import logging
from pathlib import Path

import pytest

from tests.fixtures.kafka import KafkaNames
from tests.fixtures.streamcheck import stream_equals_batch
from watcher.broker import EmbeddedBroker
from watcher.evaluation.floors import load_floors
from watcher.sources.gold import read_labels

FLOORS = Path(__file__).resolve().parents[2] / "bench" / "floors.json"

pytestmark = [pytest.mark.kafka, pytest.mark.shared]


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
    f1_batch, f1_stream = await stream_equals_batch(caps, labels, kafka_broker, kafka_names, tmp_path, seed=1068)
    logging.getLogger(__name__).info("gold through the broker: F1 %.4f batch, %.4f stream", f1_batch, f1_stream)
    # The shared collection's pinned F1 floor (bench/floors.json, one standard error below the figure),
    # through the stream as well as batch: the default measures 0.793 here since an empty capture keeps
    # its own status (the rule that kept one off topic was fitted to one capture and lost on held-out data).
    floor = load_floors(FLOORS)["collections"]["gold-1068"]["overall.f1"]["floor"]
    assert f1_stream == f1_batch and f1_batch >= floor, (f1_batch, f1_stream, floor)
