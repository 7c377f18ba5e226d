"""The `text` profile on real pages, through the broker: the stream says what batch says.

The pairs are `bench/text_paragraph_eval.py`'s, built from the newspaper pages in shared/data: real
re-downloads of the same articles, the same with one word of the article replaced by another, and
one article paragraph replaced by one of the site's other article, or put inside the article.  The
bench measures all of them in batch; here a fifth of the fixture folders (every fifth, about 190 captures) go through
the broker as an unkeyed, shuffled Heritrix backlog with two consumer restarts, so the figures the
README gives for the text profile hold in the stream too, verdict by verdict.
"""

from __future__ import annotations

import tarfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.fixtures.bench import load_bench
from tests.fixtures.kafka import KafkaNames
from tests.fixtures.streamcheck import Batch, stream_equals_batch
from watcher.broker import EmbeddedBroker

pytestmark = [pytest.mark.kafka, pytest.mark.shared]

T0 = datetime(2015, 1, 1, tzinfo=UTC)



@pytest.mark.timeout(1200)
async def test_text_profile_on_real_pages_through_the_broker_equals_batch(
        shared_data: Path, kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    with tarfile.open(shared_data / "pages" / "newspaper-pages.tar.gz") as tf:
        tf.extractall(tmp_path / "src", filter="data")
    bench = load_bench("text_paragraph_eval")
    html = bench._html_dir(next(p.parent for p in (tmp_path / "src").rglob("html") if p.is_dir()))
    sample = {d.name for d in sorted(p for p in html.iterdir() if p.is_dir())[::5]}
    caps: list[tuple[str, str, bytes]] = []
    kinds: dict[str, tuple[str, str]] = {}  # URL -> (kind, URL of the re-download it was made from)
    last_download = ""
    for i, (kind, name, a, b) in enumerate(bench.pairs(html, seed=1)):
        if name not in sample:
            continue
        url = f"http://{name.rstrip('12')}.example.org/news/2015/{name}-{i}"  # each pair one history
        if kind == "re-download":
            last_download = url
        kinds[url] = (kind, last_download)
        for k, page in enumerate((a, b)):
            caps.append((url, (T0 + timedelta(days=30 * k)).strftime("%Y%m%d%H%M%S"), page))
    assert len(kinds) >= 60, len(kinds)

    batch: Batch = {}
    f1_batch, f1_stream = await stream_equals_batch(caps, [False] * len(caps), kafka_broker, kafka_names,
                                                    tmp_path, seed=19, profile="text", batch_out=batch)
    assert f1_stream == f1_batch
    change = {url: ch for _, ch, _, had_baseline, url, _ in batch.values() if had_baseline}
    by_kind: dict[str, Counter[str]] = {}
    for url, (kind, _) in kinds.items():
        by_kind.setdefault(kind, Counter())[change.get(url, "no baseline")] += 1
    downloads, paragraphs = by_kind["re-download"], by_kind["paragraph replaced"]
    inserted = by_kind["paragraph inserted"]
    # What the bench measures on every site (README): re-downloads mostly unchanged or minor (186 of
    # 269), a paragraph replaced drifted (42 of 52), a paragraph inserted drifted (49 of 52), one
    # word replaced in a re-download judged unchanged or minor drifted (106 of 116).
    assert downloads["drifted"] <= 0.25 * sum(downloads.values()), downloads
    assert paragraphs["drifted"] >= 0.7 * sum(paragraphs.values()), paragraphs
    assert inserted["drifted"] >= 0.8 * sum(inserted.values()), inserted
    kept = [change.get(url) for url, (kind, plain) in kinds.items()
            if kind == "re-download, one word replaced" and change.get(plain) in ("unchanged", "minor")]
    assert len(kept) >= 10 and kept.count("drifted") >= 0.75 * len(kept), Counter(kept)
