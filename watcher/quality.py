"""Per-capture evidence of what a crawl got: text quality (Badness), the boilerplate share, and the
bytes of new main text.  The crawl-guidance report (:mod:`watcher.seeds`) adds them up per seed.

Badness follows Schäfer and Bildhauer's texrex: connected prose uses a language's most frequent
function words at about the language's own rates, while link lists, menus, error pages and
machine text lack them.  For each of the language's ten most frequent words, a page that uses it
less often (``f``) than the language does (``mu``) is short by ``(mu - f) / sigma`` expected
spreads; Badness is the mean shortfall over the ten: near 0 for ordinary prose, up to about 2 for
text with no function words at all.  Only a shortfall counts: a page that says "the" more often
than average is still text; what marks a list, a menu or a notice is the function words it lacks.

``sigma`` has two parts: the spread between genres of real documents (a coefficient of variation
:data:`GENRE_CV` of ``mu``, chosen and not fitted: function-word rates differ by about that much
between registers such as news and conversation) and the sampling noise of a short page
(binomial, ``mu (1 - mu) / n``), so a ten-word page is not judged as harshly as a long one.  It is
reported only where the language's frequencies are known (38 languages; not the scripts written
without spaces, whose tokens are character pairs).  On the article-extraction benchmark's real
pages, article bodies read 0.40 (median of 177) and the same pages' link texts 1.04; 96 % of the
pages read worse in their links than in their body (tests/seeds/test_seeds_report.py).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

GENRE_CV = 0.5
_DATA = Path(__file__).resolve().parent / "data" / "function_words.json"
# py3langid's codes where wordfreq names the language otherwise
_ALIASES = {"no": "nb", "nn": "nb", "hr": "sh", "sr": "sh", "bs": "sh"}


@lru_cache(maxsize=1)
def _profiles() -> Mapping[str, Mapping[str, float]]:
    data = json.loads(_DATA.read_text(encoding="utf-8"))
    return {code: dict(words) for code, words in data["languages"].items()}


def function_words(language: str | None) -> Mapping[str, float] | None:
    """The language's ten most frequent words and their expected relative frequencies, or ``None``."""
    if not language:
        return None
    return _profiles().get(_ALIASES.get(language, language))


def badness(tokens: Sequence[str], language: str | None) -> float | None:
    """Mean shortfall of the page's function-word rates under its language's, in expected spreads;
    ``None`` where the language has no profile or the page has no words."""
    profile = function_words(language)
    n = len(tokens)
    if profile is None or n == 0:
        return None
    counts = Counter(filter(profile.__contains__, tokens))  # C-level: every token of the page
    total = 0.0
    for word, mu in profile.items():
        sigma = math.sqrt((GENRE_CV * mu) ** 2 + mu * (1.0 - mu) / n)
        total += max(0.0, mu - counts.get(word, 0) / n) / sigma
    return round(total / len(profile), 4)


def new_text_bytes(text_bytes: int, shingles: int, base_shingles: int | None, containment: float | None) -> int:
    """The bytes of a capture's main text that its reference did not have.

    ``containment`` is the share of the reference's shingles found in the capture, so the capture
    shares ``containment * base_shingles`` of its own ``shingles``; the rest is new.  With no
    reference (a first capture) all of it is new; with no containment score, none can be said to
    be, and the whole text counts (the crawl got it)."""
    if text_bytes <= 0:
        return 0
    if base_shingles is None or containment is None or shingles <= 0:
        return text_bytes
    shared = min(1.0, containment * base_shingles / shingles)
    return round(text_bytes * (1.0 - shared))
