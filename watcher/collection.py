"""Collection-level measures: aboutness to the collection's topic, and LSI cosine.

Why: every other measure compares a capture with its own TimeMap's baseline,
so a TimeMap whose *first* capture is already off topic ("Always Off", "Step
Function Off") looks on topic throughout.  AlNoamany et al. and the Off-Topic
Memento Toolkit (OTMT) proposed measuring how far a capture is from the
collection's own topic; neither shipped it.

- :func:`collection_centroid` / :func:`aboutness`: TF-IDF cosine of a capture
  to the centroid of the collection's baselines (the first valid capture of
  each TimeMap), IDF over those baselines.  The centroid is the mean of the
  baselines' L2-normalised TF-IDF vectors, so a long page does not outweigh
  a short one; a capture can be scored with its own TimeMap's baseline left
  out of the centroid (the score a new seed of that collection would get).
- :func:`lsi_cosines`: OTMT's ``gensim_lsi`` (10 topics over one TimeMap's
  documents, cosine of each document to the first in topic space), computed
  by an exact truncated SVD (numpy), so it is reproducible; OTMT's gensim
  model was not.  Weights follow gensim's TfidfModel defaults: raw term
  frequency times log2(N / df), L2-normalised.  Matrices too large for an
  exact SVD use a randomised one with a fixed seed.

Pure functions over :class:`watcher.model.Fingerprint` (``term_freqs``); no
state, no I/O.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .model import Fingerprint

LSI_TOPICS = 10
EXACT_SVD_MAX_CELLS = 20_000_000  # dense doc x term cells above which the randomised SVD is used


def is_collection_baseline(fp: Fingerprint) -> bool:
    """A capture fit to stand for its TimeMap's topic: text that was read
    and extracted, and no error, parked or other off-topic page kind."""
    return bool(fp.term_freqs) and fp.kind not in ("empty", "binary") and fp.error is None and fp.page_kind is None


def first_valid(fps: Sequence[Fingerprint]) -> int | None:
    """Index of a TimeMap's first capture fit to be its collection baseline."""
    return next((i for i, fp in enumerate(fps) if is_collection_baseline(fp)), None)


@dataclass(frozen=True)
class Centroid:
    """The collection's topic: the sum of its baselines' unit TF-IDF vectors."""

    idf: Mapping[str, float]
    default_idf: float
    total: Mapping[str, float]  # sum of unit vectors (the centroid up to scale)
    count: int
    norm2: float = 0.0  # |total|^2

    def unit(self, fp: Fingerprint) -> dict[str, float]:
        """``fp``'s L2-normalised TF-IDF vector under this collection's IDF."""
        return _unit({t: n * self.idf.get(t, self.default_idf) for t, n in fp.term_freqs.items()})


def _unit(v: Mapping[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(w * w for w in v.values()))
    return {t: w / norm for t, w in v.items()} if norm else {}


def collection_centroid(baselines: Iterable[Fingerprint]) -> Centroid:
    """Centroid of ``baselines``; IDF (smoothed, as scikit-learn's and the
    engine's) over those baselines only."""
    docs = [fp for fp in baselines if fp.term_freqs]
    df: Counter[str] = Counter()
    for fp in docs:
        df.update(fp.term_freqs.keys())
    n = len(docs)
    idf = {t: math.log((1 + n) / (1 + d)) + 1.0 for t, d in df.items()}
    c = Centroid(idf, math.log(1 + n) + 1.0, {}, 0)
    total: Counter[str] = Counter()
    for fp in docs:
        total.update(c.unit(fp))
    return Centroid(idf, c.default_idf, dict(total), n, sum(w * w for w in total.values()))


def aboutness(fp: Fingerprint, centroid: Centroid, exclude: Fingerprint | None = None) -> float | None:
    """Cosine of ``fp`` to the collection centroid, 0..1 (None: no terms, or
    an empty centroid).  ``exclude``: a baseline that is part of the centroid
    and must not count (the capture's own TimeMap's); its unit vector u is
    taken out without copying the centroid: v.(S-u) / |S-u|, with
    |S-u|^2 = |S|^2 - 2 S.u + 1."""
    if not fp.term_freqs or centroid.count == 0:
        return None
    total = centroid.total
    v = centroid.unit(fp)
    if not v:
        return None
    dot = sum(w * total.get(t, 0.0) for t, w in v.items())
    norm2 = centroid.norm2
    if exclude is not None and exclude.term_freqs:
        if centroid.count <= 1:
            return None
        u = centroid.unit(exclude)
        dot -= sum(w * u.get(t, 0.0) for t, w in v.items())
        norm2 += -2.0 * sum(w * total.get(t, 0.0) for t, w in u.items()) + sum(w * w for w in u.values())
    if norm2 <= 1e-12:
        return None
    return max(0.0, min(1.0, dot / math.sqrt(norm2)))


# -- LSI (OTMT's gensim_lsi) ----------------------------------------------------

def _tfidf_matrix(fps: Sequence[Fingerprint]) -> npt.NDArray[np.float64]:
    """Documents x terms, gensim TfidfModel weights (tf * log2(N/df), L2 rows)."""
    vocab: dict[str, int] = {}
    df: Counter[str] = Counter()
    for fp in fps:
        df.update(fp.term_freqs.keys())
        for t in sorted(fp.term_freqs):
            vocab.setdefault(t, len(vocab))
    n = len(fps)
    m = np.zeros((n, len(vocab)), dtype=np.float64)
    for i, fp in enumerate(fps):
        for t, c in fp.term_freqs.items():
            m[i, vocab[t]] = c * math.log2(n / df[t])
    norms = np.linalg.norm(m, axis=1)
    np.divide(m, norms[:, None], out=m, where=norms[:, None] > 0)
    return m


def _svd_rows(m: npt.NDArray[np.float64], k: int, seed: int) -> npt.NDArray[np.float64]:
    """Rows of ``m`` in the space of its top ``k`` singular directions (U_k S_k)."""
    if m.size <= EXACT_SVD_MAX_CELLS:
        u, s, _ = np.linalg.svd(m, full_matrices=False)
        return np.asarray(u[:, :k] * s[:k], dtype=np.float64)
    # randomised range finder (Halko et al.), seeded
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(m @ rng.standard_normal((m.shape[1], k + 10)))
    for _ in range(4):
        q, _ = np.linalg.qr(m @ (m.T @ q))
    ub, s, _ = np.linalg.svd(q.T @ m, full_matrices=False)
    return np.asarray((q @ ub)[:, :k] * s[:k], dtype=np.float64)


def lsi_cosines(fps: Sequence[Fingerprint], base: int, topics: int = LSI_TOPICS,
                seed: int = 0) -> list[float | None]:
    """Cosine of each document of one TimeMap to document ``base`` in a
    ``topics``-dimensional LSI space built over that TimeMap's documents
    (None for a document without terms)."""
    have = [i for i, fp in enumerate(fps) if fp.term_freqs]
    out: list[float | None] = [None] * len(fps)
    if base not in have:
        return out
    m = _tfidf_matrix([fps[i] for i in have])
    k = max(1, min(topics, *m.shape))
    rows = _svd_rows(m, k, seed)
    norms = np.linalg.norm(rows, axis=1)
    b = have.index(base)
    for j, i in enumerate(have):
        if norms[j] <= 1e-12 or norms[b] <= 1e-12:
            # a document made only of terms that every document has weighs
            # nothing: alike if both are such documents, unrelated otherwise
            out[i] = 1.0 if norms[j] <= 1e-12 and norms[b] <= 1e-12 else 0.0
        else:
            out[i] = float(np.clip(rows[j] @ rows[b] / (norms[j] * norms[b]), -1.0, 1.0))
    return out
