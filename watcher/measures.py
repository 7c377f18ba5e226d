"""Similarity measures: small pure functions over two fingerprints, one table.

Each measure is registered in :data:`REGISTRY` with its direction, range and
default threshold (the published OTMT defaults where one exists: AlNoamany et
al., "Detecting off-topic pages within TimeMaps in web archives", 2016).  Names match OTMT's ``-tm`` keywords where they
overlap, so ``cosine=0.12,wordcount=-0.70`` means the same in both tools.
An unknown name fails loudly (:class:`UnknownMeasureError`).

Thresholds are strict: "below" means off topic when ``score < threshold``,
"above" when ``score > threshold``.  A measure returns ``None`` when it does
not apply (no title on either page, no DOI in the baseline...): it then
neither flags nor clears the capture.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.fuzz import token_set_ratio

from .errors import UnknownMeasureError
from .model import Fingerprint

Direction = Literal["below", "above"]
Kind = Literal["fraction", "bits", "count"]


@dataclass(frozen=True, slots=True)
class Context:
    """What a measure may know beyond the two fingerprints.

    Empty today on purpose: a measure that read the history (an IDF table, a
    count of captures) would give batch, streaming and ``compare`` different
    numbers for the same pair, and a threshold whose meaning depended on how
    often a seed was crawled.  Kept as the place for collection-level inputs.
    """


MeasureFn = Callable[[Fingerprint, Fingerprint, Context], float | None]


@dataclass(frozen=True, slots=True)
class MeasureSpec:
    name: str
    fn: MeasureFn
    direction: Direction
    kind: Kind
    lo: float
    hi: float
    threshold: float
    uses_tokens: bool
    description: str
    needs: tuple[str, ...] = ()  # features both fingerprints must hold (watcher.features)

    def off_topic(self, score: float, threshold: float | None = None) -> bool:
        t = self.threshold if threshold is None else threshold
        return score < t if self.direction == "below" else score > t

    def oriented(self, score: float) -> float:
        """Score oriented so that larger means "more off topic" (for ROC AUC)."""
        return -score if self.direction == "below" else score


def _count_change(base: int, cur: int) -> float | None:
    if base <= 0:
        return None
    return cur / base - 1.0 if cur < base else 0.0


def bytecount(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    return _count_change(b.byte_count, c.byte_count)


def wordcount(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    return _count_change(b.word_count, c.word_count)


def _sets(b: Fingerprint, c: Fingerprint) -> tuple[set[str], set[str]] | None:
    """Term sets, or None when the baseline has no terms (nothing to compare
    with).  A capture without terms against a baseline with terms is a real
    result: everything is gone."""
    if not b.term_freqs:
        return None
    return set(b.term_freqs), set(c.term_freqs)


def jaccard(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    s = _sets(b, c)
    if s is None:
        return None
    inter = len(s[0] & s[1])
    return 1.0 - inter / len(s[0] | s[1])


def sorensen(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    s = _sets(b, c)
    if s is None:
        return None
    return 1.0 - 2.0 * len(s[0] & s[1]) / (len(s[0]) + len(s[1]))


def cosine(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    """Cosine of the content-term frequency vectors (stop words removed, the
    ``tokens.max_terms`` most frequent terms of each capture).

    No IDF, on purpose.  An IDF over the URL's history makes the score depend
    on how many captures the history has and how much they churn: on a news
    site crawled daily every story word is rare, so on-topic captures of the
    same site score 0.06-0.2 and no threshold separates anything, while the
    same pages crawled five times score far higher.  It also cannot be causal
    and order-independent without keeping a table per URL.  Measured on the
    shared gold data with grouped cross-validation, the TF cosine ranks
    captures as well as the history TF-IDF (ROC AUC 0.941 against 0.941) and
    needs no state; stop-word removal does what IDF was for.
    """
    if not b.term_freqs:
        return None
    if not c.term_freqs:
        return 0.0
    vb, vc = b.term_freqs, c.term_freqs
    small, large = (vb, vc) if len(vb) < len(vc) else (vc, vb)
    dot = float(sum(w * large.get(t, 0) for t, w in small.items()))
    nb = math.sqrt(sum(w * w for w in vb.values()))
    nc = math.sqrt(sum(w * w for w in vc.values()))
    if nb == 0 or nc == 0:
        return None
    return min(1.0, dot / (nb * nc))


def _hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def raw_simhash(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    if not b.simhash_raw or not c.simhash_raw:
        return None
    return float(_hamming(b.simhash_raw, c.simhash_raw))


def tf_simhash(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    if not b.term_freqs or not c.term_freqs:
        return None
    return float(_hamming(b.simhash_tf, c.simhash_tf))


def _top(tf: Mapping[str, int], n: int = 20) -> set[str]:
    return {t for t, _ in sorted(tf.items(), key=lambda kv: (-kv[1], kv[0]))[:n]}


def tfintersection(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    """How many of the 20 most frequent terms the two captures share (20 =
    same topic words, 0 = none).  OTMT compared this the wrong way round; here
    a capture is off topic when the count is *below* the threshold."""
    if not b.term_freqs:
        return None
    return float(len(_top(b.term_freqs) & _top(c.term_freqs)))


def levenshtein(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    """Normalised Levenshtein similarity of the word sequences (edit-sensitive,
    unlike token-set ratios that return 100 whenever one vocabulary contains
    the other)."""
    if b.tokens is None or c.tokens is None or not b.tokens:
        return None
    if not c.tokens:
        return 0.0
    return float(Levenshtein.normalized_similarity(list(b.tokens[:20000]), list(c.tokens[:20000])))


def _minhash_jaccard(b: Fingerprint, c: Fingerprint) -> float | None:
    if not b.minhash or not c.minhash or len(b.minhash) != len(c.minhash):
        return None
    hb = np.frombuffer(b.minhash, dtype=np.uint32)
    hc = np.frombuffer(c.minhash, dtype=np.uint32)
    return float(np.count_nonzero(hb == hc)) / len(hb)


def containment(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    """Share of the baseline's word shingles still present in the capture.

    Exact when both fingerprints hold their shingle sets.  A baseline keeps a
    bottom-k sample of its shingle hashes (48): the share of that sample found
    in the capture's whole set is an unbiased estimate whatever the sizes
    (standard deviation sqrt(c(1-c)/48), 0.06 at c = 0.8).  Only when neither
    is there, it is estimated from MinHash resemblance and the set sizes
    (|A∩B| = J(|A|+|B|)/(1+J)), which is noisy when the sizes differ a lot.
    """
    if b.shingle_count == 0:
        return None
    if c.shingle_count == 0:
        return 0.0
    if b.shingles is not None and c.shingles is not None:
        return len(b.shingles & c.shingles) / len(b.shingles)
    if b.shingle_sample and c.shingles is not None:
        sample = np.frombuffer(b.shingle_sample, dtype="<u8")
        return float(sum(1 for h in sample.tolist() if h in c.shingles)) / len(sample)
    j = _minhash_jaccard(b, c)
    if j is None:
        return None
    inter = j * (b.shingle_count + c.shingle_count) / (1.0 + j)
    return max(0.0, min(1.0, inter / b.shingle_count))


def resemblance(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    """Jaccard of the shingle sets, estimated by MinHash."""
    if b.shingle_count == 0:
        return None
    if c.shingle_count == 0:
        return 0.0
    return _minhash_jaccard(b, c)


def title_similarity(base_key: str, cur_key: str) -> float | None:
    """How much of the reference title ``base_key`` the title ``cur_key`` keeps: the token-set
    similarity of two normalised titles, 0..1.  The one title comparison of the project, with one
    answer for a missing title: ``None`` when the reference has none (nothing to keep, no evidence),
    0.0 when only the other has none (the name is gone)."""
    if not base_key.strip():
        return None
    if not cur_key.strip():
        return 0.0
    return float(token_set_ratio(base_key, cur_key)) / 100.0


def title(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    """Is the baseline's title kept?  Token-set similarity of the titles, 0..1.

    Site identity: the same organisation keeps its name in the title through
    redesigns; a parked domain or another owner's page does not.
    """
    # Script-aware, as the text is (title_key): "الأهرام" and "الاهرام", "Ｎｅｗｓ" and "News" are one title.
    return title_similarity(b.title_key, c.title_key)


def doi(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    """Share of the baseline's DOIs still on the page (None if it had none)."""
    if not b.dois:
        return None
    return len(b.dois & c.dois) / len(b.dois)


def language(b: Fingerprint, c: Fingerprint, ctx: Context) -> float | None:
    """1 when both captures are in the same language, 0 when it changed."""
    if not b.language or not c.language or min(b.word_count, c.word_count) < 30:
        return None
    return 1.0 if b.language == c.language else 0.0


_NEEDS: dict[str, tuple[str, ...]] = {
    "jaccard": ("terms",), "sorensen": ("terms",), "cosine": ("terms",), "tfintersection": ("terms",),
    "raw_simhash": ("raw_simhash",), "tf_simhash": ("tf_simhash",), "levenshtein": ("tokens",),
    "containment": ("minhash",), "resemblance": ("minhash",),  # exact, sampled or estimated: see containment()
}
# The measures that read a capture's topic words (its most frequent terms): what a news page renews
# every day.  Where the page's name is kept, their change is the news, not another page
# (profiles.collection).
TOPIC_WORD_MEASURES = frozenset(n for n, needs in _NEEDS.items() if "terms" in needs or "tf_simhash" in needs)


def _spec(name: str, fn: MeasureFn, direction: Direction, kind: Kind, lo: float, hi: float, threshold: float,
          uses_tokens: bool, description: str) -> MeasureSpec:
    return MeasureSpec(name, fn, direction, kind, lo, hi, threshold, uses_tokens, description, _NEEDS.get(name, ()))


REGISTRY: dict[str, MeasureSpec] = {
    s.name: s
    for s in (
        _spec("bytecount", bytecount, "below", "fraction", -1, 0, -0.43, False, "relative loss of raw bytes"),
        _spec("wordcount", wordcount, "below", "fraction", -1, 0, -0.70, True, "relative loss of words"),
        _spec("jaccard", jaccard, "above", "fraction", 0, 1, 0.96, True, "Jaccard distance of term sets"),
        _spec("sorensen", sorensen, "above", "fraction", 0, 1, 0.93, True, "Sørensen-Dice distance of term sets"),
        _spec("cosine", cosine, "below", "fraction", 0, 1, 0.10, True, "cosine of content-term frequencies"),
        _spec("raw_simhash", raw_simhash, "above", "bits", 0, 64, 38, False, "simhash of raw content, Hamming bits"),
        _spec("tf_simhash", tf_simhash, "above", "bits", 0, 64, 34, True, "simhash of term frequencies, bits"),
        _spec("tfintersection", tfintersection, "below", "count", 0, 20, 1, True, "shared top-20 terms"),
        _spec("levenshtein", levenshtein, "below", "fraction", 0, 1, 0.10, True, "word-level edit similarity"),
        _spec("containment", containment, "below", "fraction", 0, 1, 0.30, True,
              "baseline shingles kept in the capture"),
        _spec("resemblance", resemblance, "below", "fraction", 0, 1, 0.05, True, "MinHash shingle resemblance"),
        _spec("title", title, "below", "fraction", 0, 1, 0.40, False, "baseline title kept"),
        _spec("doi", doi, "below", "fraction", 0, 1, 1.0, False, "baseline DOIs kept"),
        _spec("language", language, "below", "fraction", 0, 1, 0.5, False, "same language as the baseline"),
    )
}
ALIASES = {"simhash": "raw_simhash", "tfsimhash": "tf_simhash", "raw-simhash": "raw_simhash",
           "tf-simhash": "tf_simhash", "tf_intersection": "tfintersection", "jaccard_containment": "containment",
           "minhash": "resemblance", "dice": "sorensen"}


def applicable(spec: MeasureSpec, b: Fingerprint, c: Fingerprint) -> bool:
    """Both fingerprints hold what ``spec`` needs (else the score is n/a)."""
    return b.has(*spec.needs) and c.has(*spec.needs)


def get(name: str) -> MeasureSpec:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    try:
        return REGISTRY[key]
    except KeyError:
        raise UnknownMeasureError(
            f"unknown measure {name!r}; known: {', '.join(sorted(REGISTRY))}"
        ) from None


def parse_measures(spec: str) -> dict[str, float | None]:
    """Parse OTMT-style ``cosine=0.12,wordcount=-0.70`` (threshold optional)."""
    out: dict[str, float | None] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        name, _, value = part.partition("=")
        m = get(name)
        try:
            out[m.name] = float(value) if value.strip() else None
        except ValueError:
            raise UnknownMeasureError(f"threshold of {name!r} is not a number: {value!r}") from None
    return out
