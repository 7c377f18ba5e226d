"""The scoring pipeline, wired once: watcher, renderer, acquirer, recommender, seed reports, dead letters, scorer.

The Kafka app (:mod:`consumers.app`) and the crawl.log runner (:mod:`consumers.crawllog`) score events the
same way and differ only in where events come from and where messages go (a broker or a local
publisher).  Built here, in one place, so the two cannot drift apart (they had: the DOI monitor's WARC
folder, the seed distribution metric).
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

from watcher.acquire import Acquirer, RenderPool
from watcher.actuators import make_actuator
from watcher.config import Config
from watcher.engine import Engine
from watcher.metrics import Metrics
from watcher.recommend import Recommender
from watcher.seeds.stream import SeedDistribution, SeedReporter
from watcher.store import BaselineStore
from watcher.store.positions import MemoryPositions, SQLPositions
from watcher.watch import Watcher

from .publish.deadletter import DeadLetters
from .publish.publisher import Publisher
from .scorer import Scorer


@dataclasses.dataclass(slots=True)
class Pipeline:
    """The parts the caller closes (the acquirer's HTTP clients, the renderer's browser) and the scorer."""

    scorer: Scorer
    acquirer: Acquirer
    renderer: RenderPool | None
    recommender: Recommender
    seeds: SeedReporter


def acquire_config(cfg: Config) -> Config:
    """``cfg`` with the DOI monitor's WARC folder among ``acquire.warc_dirs`` when its events are read (its
    events name WARC files it wrote under ``doi.warc_dir``)."""
    if cfg.doi.events_topic in cfg.kafka.input_topics and cfg.doi.warc_dir not in cfg.acquire.warc_dirs:
        acq = cfg.acquire.model_copy(update={"warc_dirs": (*cfg.acquire.warc_dirs, cfg.doi.warc_dir)})
        return cfg.model_copy(update={"acquire": acq})
    return cfg


def scoring_pipeline(cfg: Config, store: BaselineStore, publisher: Publisher, metrics: Metrics,
                     executor: ThreadPoolExecutor | None) -> Pipeline:
    """The one scoring pipeline over ``store``, publishing through ``publisher`` (started by the caller)."""
    watcher = Watcher(Engine(cfg.engine), store)
    watcher.on_stage = metrics.observe_stage
    renderer = None
    if cfg.render.enabled:
        # Chromium starts on the first page that needs rendering (live, or archived with render.archived).
        renderer = RenderPool(cfg.render, cfg.acquire.allow_addresses, fetch=cfg.acquire.live,
                              max_decompress_ratio=cfg.engine.extract.max_decompress_ratio)
    acquirer = Acquirer(acquire_config(cfg), on_fetch=metrics.observe_fetch, renderer=renderer,
                        on_render_error=metrics.observe_render_error)
    seeds = SeedReporter(cfg.seeds)
    metrics.registry.register(SeedDistribution(seeds))
    recommender = Recommender(cfg.recommend, store, actuator=cfg.actuator, canonical=cfg.engine.canonical)
    scorer = Scorer(
        cfg, watcher=watcher, acquirer=acquirer, publisher=publisher,
        dead_letters=DeadLetters(cfg.kafka, publisher, metrics), metrics=metrics, recommender=recommender,
        executor=executor, actuator=make_actuator(cfg.actuator), seeds=seeds,
    )
    return Pipeline(scorer, acquirer, renderer, recommender, seeds)


def keep_advice(pipeline: Pipeline, store: BaselineStore) -> None:
    """Keep the last crawl-guidance advice per history in ``store``'s advice ledger, for the Kafka path.

    Why: a seed's advice (``recrawl-interval``, ``deprioritise-seed``) is published when it changes, and
    what it was lived in this process's memory, so every restart published each seed's standing advice
    again.  The advice is recorded once the broker acknowledged it (a kill between the two repeats it at
    most once, as an alert is); a store without a ledger keeps the memory-only behaviour."""
    if not isinstance(store, SQLPositions | MemoryPositions):
        return
    ledger = store
    pipeline.seeds.advice_of = ledger.last_advice
    pipeline.scorer.advice_published = lambda history, advice_id: ledger.record("kafka", advice=[(history, advice_id)])
