"""One history through every door of the scoring step, under a non-default configuration: the same verdicts.

Batch (``scan``'s reader and pool), the stream (the real consumer app on the Tansu broker), ``compare``,
the DOI monitor's path (a fingerprint made apart, then ``Watcher.score`` under profile ``doi``) and
review's re-score all score through a :class:`watcher.job.Job` whose profile parameters and history key
come from the engine configuration.  The configuration is chosen so that a door that fell back to the
defaults gives another verdict: the ``doi`` profile's abstract threshold (``engine.doi``) is lowered, so
an edited abstract is not "drifted"; the canonical rules (``engine.canonical``) drop a ``rev`` query
parameter, so the three captures are one history (under the default rules they are three).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.fixtures import doi_pages as dp
from tests.fixtures.kafka import KafkaNames, heritrix_message, stream_config, write_warc
from watcher.broker import EmbeddedBroker
from watcher.canonical import url_key
from watcher.compare import compare_files
from watcher.config import Config, EngineConfig
from watcher.doi.monitor import fingerprint_capture
from watcher.engine import Engine
from watcher.model import Capture
from watcher.review.rescore import pinned_config
from watcher.scan import score_histories
from watcher.sources import iter_histories
from watcher.store import open_store
from watcher.watch import Watcher

pytestmark = pytest.mark.kafka

URL = "https://pub.example/doi/10.5000/x"
STAMPS = ("20240101000000", "20240201000000", "20240301000000")
ENGINE: dict[str, Any] = {
    "profile": "doi",
    "doi": {"abstract_min_containment": 0.05},  # default 0.95: an edited abstract would be drifted
    "canonical": {"drop_query_params": ["rev"]},  # default: ?rev=N are three histories
}


def _when(ts14: str) -> datetime:
    return datetime.strptime(ts14, "%Y%m%d%H%M%S").replace(tzinfo=UTC)


def _pages() -> list[bytes]:
    a = dp.article(9, full_text=True)
    return [dp.highwire(a, 0).encode(), dp.highwire(dp.edit_abstract(a), 0).encode(),
            dp.highwire(dp.replace_paragraph(a, 3), 0).encode()]


def _captures() -> list[tuple[str, str, bytes]]:
    return [(f"{URL}?rev={i}", ts, page) for i, (ts, page) in enumerate(zip(STAMPS, _pages(), strict=True))]


def _batch(cfg: Config, warc: Path) -> list[tuple[str, str]]:
    results = list(score_histories(iter_histories([str(warc)], cfg), cfg, workers=1))
    assert len(results) == 1, [r.history for r in results]  # one history, by the configured rules
    return [(v.verdict_id, v.change) for v in results[0].verdicts]


async def test_batch_stream_compare_doi_monitor_and_review_judge_alike(
        kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    caps = _captures()
    refs = write_warc(warcs / "JOB-00001.warc.gz", caps)
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, partitions=1,
                        warc_dirs=(str(warcs),), extra={"engine": ENGINE})

    batch = _batch(cfg, warcs / "JOB-00001.warc.gz")
    changes = [c for _, c in batch]
    assert changes[0] == "baseline" and changes[1] != "drifted", changes  # the configured threshold held
    # ...and the defaults would judge otherwise: a door that forgot the configuration is seen
    default_cfg = cfg.model_copy(update={"engine": EngineConfig(profile="doi", canonical=cfg.engine.canonical)})
    assert [c for _, c in _batch(default_cfg, warcs / "JOB-00001.warc.gz")][1] == "drifted"

    # the stream: router (keys by the configured rules) and scorer, on the real broker
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    async with ConsumerApp(cfg) as app:
        await produce(boot, next(iter(k.input_topics)), [heritrix_message(r) for r in refs])
        got = await read_topic(boot, k.results_topic, expect=len(refs), timeout_s=60)
        assert await app.wait_caught_up(timeout_s=30)
    stream = sorted(((m["value"]["verdict_id"], m["value"]["change"]) for m in got),
                    key=lambda p: [i for i, _ in batch].index(p[0]))
    assert stream == batch

    # compare: each later capture against the baseline, a two-capture history
    files = []
    for i, (_, _, page) in enumerate(caps):
        f = tmp_path / f"page{i}.html"
        f.write_bytes(page)
        files.append(str(f))
    for i in (1, 2):
        got_cmp = compare_files(files[0], files[i], cfg.engine, url=f"{URL}?rev=0")
        assert got_cmp["change"] == changes[i], (i, got_cmp["reason"])

    # the DOI monitor's path: fingerprinted apart, scored by Watcher.score with the doi profile
    history = url_key(URL, cfg.engine.canonical)
    store = open_store(cfg.store.model_copy(update={"path": str(tmp_path / "monitor.db")}))
    try:
        monitor = Watcher(Engine(cfg.engine), store, profile="doi")
        by_monitor = []
        for (url, _, page), ref in zip(caps, refs, strict=True):
            cap = Capture(url=url, timestamp=_when(ref.timestamp), content=page, content_type="text/html",
                          status=200, history=history)
            fp = fingerprint_capture(cap, monitor.engine.config)
            out = monitor.score(cap, monitor.job_for(cap, "doi"), fingerprint=fp)
            by_monitor.append((out.verdict.verdict_id, out.verdict.change))
        assert by_monitor == batch

        # review's re-score ("make this the baseline" on the first capture, under the pinned configuration
        # review builds): the later captures keep their verdicts
        first = Capture(url=caps[0][0], timestamp=_when(STAMPS[0]), digest=refs[0].digest, status=200,
                        history=history)
        kept = {v.verdict_id: fp for v, fp in store.logged(history)}
        review = Watcher(Engine(pinned_config(cfg, {history: STAMPS[0]}).engine), store, profile="doi")
        again = review.rescore(first, kept[batch[0][0]])
        assert again.verdict.change == "baseline" and again.corrections == ()
    finally:
        store.close()
