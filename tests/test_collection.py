"""Collection aboutness and the seeded LSI cosine, on fingerprints of real
pages made by the engine from hand-made documents."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest

from tests.fixtures import textgen
from watcher import collection
from watcher.collection import aboutness, collection_centroid, first_valid, lsi_cosines
from watcher.config import Config
from watcher.engine import Engine
from watcher.model import Capture, Fingerprint

ENGINE = Engine(Config().engine)


def fp(topics: list[str], seed: int = 0, title: str = "Riverside Rights Project") -> Fingerprint:
    page = textgen.html(textgen.document(topics, seed=seed), title)
    return ENGINE.fingerprint(Capture(url="http://x.example/", timestamp=datetime(2020, 1, 1, tzinfo=UTC),
                                      content=page, content_type="text/html"))


def test_aboutness_ranks_on_and_off_collection_topic() -> None:
    """A collection about courts and detention: a page on that subject is
    near its centroid, a rocket page is not, even from a seed of its own."""
    baselines = [fp(["law", "law"], seed=s) for s in range(4)] + [fp(["law", "river"], seed=9)]
    c = collection_centroid(baselines)
    assert c.count == 5
    on = aboutness(fp(["law", "law"], seed=42), c)
    off = aboutness(fp(["space", "space"], seed=42), c)
    assert on is not None and off is not None
    assert on > 0.5 > 0.1 > off
    # leaving its own baseline out lowers a baseline's own score, never raises it
    own = aboutness(baselines[-1], c)
    loo = aboutness(baselines[-1], c, exclude=baselines[-1])
    assert own is not None and loo is not None and loo < own
    # the closed form equals recomputing the centroid without it (same IDF)
    u = c.unit(baselines[-1])
    rest = {t: w - u.get(t, 0.0) for t, w in c.total.items()}
    manual = collection.Centroid(c.idf, c.default_idf, rest, c.count - 1, sum(w * w for w in rest.values()))
    x = fp(["law", "space"], seed=7)
    assert aboutness(x, c, exclude=baselines[-1]) == pytest.approx(aboutness(x, manual), abs=1e-9)
    one = collection_centroid(baselines[:1])
    assert aboutness(baselines[0], one, exclude=baselines[0]) is None  # nothing left
    empty = ENGINE.fingerprint(Capture(url="http://x.example/", timestamp=datetime(2020, 1, 1, tzinfo=UTC),
                                       content=b""))
    assert aboutness(empty, c) is None and not collection.is_collection_baseline(empty)
    parked = ENGINE.fingerprint(Capture(
        url="http://x.example/", timestamp=datetime(2020, 1, 1, tzinfo=UTC), content_type="text/html",
        content=b"<html><head><title>Domain for sale</title></head><body>Buy this domain.</body></html>"))
    assert first_valid([empty, parked, baselines[0]]) == 2


def _gensim_tfidf_cosine(a: Fingerprint, b: Fingerprint, docs: list[Fingerprint]) -> float:
    n = len(docs)
    df: dict[str, int] = {}
    for d in docs:
        for t in d.term_freqs:
            df[t] = df.get(t, 0) + 1

    def vec(d: Fingerprint) -> dict[str, float]:
        return {t: c * math.log2(n / df[t]) for t, c in d.term_freqs.items()}

    va, vb = vec(a), vec(b)
    dot = sum(w * vb.get(t, 0.0) for t, w in va.items())
    return dot / (math.sqrt(sum(w * w for w in va.values())) * math.sqrt(sum(w * w for w in vb.values())))


def test_lsi_cosine_exact_reproducible_and_seeded_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no more documents than topics the LSI space keeps every inner
    product, so the LSI cosine equals the TF-IDF cosine (gensim weights)
    computed by hand; it is the same on every call; and the randomised SVD
    used for large matrices agrees with the exact one."""
    docs = [fp(["law", "river"], seed=1), fp(["law", "river"], seed=2), fp(["law", "music"], seed=3),
            fp(["space", "cooking"], seed=4)]
    got = lsi_cosines(docs, base=0)
    assert got[0] == pytest.approx(1.0)
    for i in range(1, 4):
        assert got[i] == pytest.approx(_gensim_tfidf_cosine(docs[0], docs[i], docs), abs=1e-9)
    v1, v2, v3 = (g or 0.0 for g in got[1:])
    assert v1 > v2 > v3
    assert lsi_cosines(docs, base=0) == got
    monkeypatch.setattr(collection, "EXACT_SVD_MAX_CELLS", 0)
    rnd = lsi_cosines(docs, base=0, seed=5)
    assert np.allclose(np.array(rnd, dtype=float), np.array(got, dtype=float), atol=1e-6)
    assert lsi_cosines(docs, base=0, seed=5) == rnd


def test_lsi_reduces_to_ten_topics_and_skips_empty_documents() -> None:
    topics = list(textgen.TOPICS)
    docs = [fp([topics[i % 6], topics[(i + 1) % 6]], seed=i) for i in range(14)]
    empty = ENGINE.fingerprint(Capture(url="http://x.example/", timestamp=datetime(2020, 1, 1, tzinfo=UTC),
                                       content=b""))
    got = lsi_cosines([*docs, empty], base=0)
    assert got[-1] is None and got[0] == pytest.approx(1.0)
    # 14 documents, 10 topics: no longer the plain TF-IDF cosine for every pair
    exact = [_gensim_tfidf_cosine(docs[0], d, docs) for d in docs]
    assert any(abs((g or 0.0) - e) > 1e-3 for g, e in zip(got[:14], exact, strict=True))
    assert lsi_cosines([empty, *docs], base=0) == [None] * 15  # no baseline text, nothing to compare
