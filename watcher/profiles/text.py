"""The ``text`` profile: is the text that was there still there?

The content-drift question of scholarly citations.  A fixed typo or comments appended below are
``minor``; a replaced paragraph, a paragraph put inside the text or a word replaced by another
``drifted``; a completely different document ``off-topic`` ("text replaced").  It aligns the two
word sequences, which the collection profile never reads, so its fingerprints and its baselines
keep them (about 2 bytes a word of state); it shares the subject test and the "another text" lines
with the collection profile (:mod:`watcher.profiles.subject`).  Its fingerprints read the main
content under ``extract.main_content: auto`` (a citation points at the article, not at the menus
around it); its alerts: drifted and off-topic captures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ..config import EngineConfig
from ..fingerprint import terms_of
from ..lang import stop_words
from ..model import ChangeClass, Fingerprint, MeasureResult
from ..text import is_no_space
from ..verdict import Decision
from ..wording import fmt, fmt_below
from .base import BaseProfile, Case
from .seedkind import Seed
from .shared import measure_reasons, similarity
from .subject import SUBJECT_TITLE, TEXT_REPLACED, TEXT_REPLACED_COSINE, page_subject

TEXT_UNCHANGED = 0.98  # containment and resemblance at or above: the same text
TEXT_MINOR = 0.90  # containment at or above: a small edit, or text added around the original
# A run of this many of the baseline's words gone (more than a sentence: a paragraph replaced or cut)
# is drift whatever the page's length; the containment line alone is a share, and a paragraph under a
# tenth of a long page stayed "minor" (bench/text_paragraph_eval.py).
TEXT_RUN_WORDS = 25
# Text rewritten keeps what the text is about: at least this share of the content words the baseline
# uses once or twice (names, places, the terms of its subject).  Two long unrelated texts share the
# language's common words (cosine up to 0.47 between two runs of ten news articles, ~8,000 words a
# side) but few of each other's rare ones (0.17 to 0.28 of them in those 40 pairs); the same text in
# other sentences keeps all of them.
TEXT_RARE_KEPT = 0.50
RARE_MAX_COUNT = 2


# A typo: one edit (a letter added, dropped, changed, or two swapped: Damerau's four), two in a long
# word; words with digits are never typos ("2012" -> "2013" changes a fact), nor are the character
# pairs of scripts written without spaces (one character changed there is another word).  Three
# letters or more: "teh", "adn", "too" for "to" are typos; one edit turns any two-letter word
# into another ("in" -> "on").
TYPO_MIN_CHARS = 3
TYPO_LONG_CHARS = 8
# Function words, whose swap ("a" -> "the") is no rewording: the head of the language's stop list.  The
# lists are the most frequent words of each Wikipedia in order; their first 50 are articles,
# prepositions, pronouns and auxiliaries, while the next 150 already hold words a synonym replaces
# ("made", "new", "small", "released").
REWORD_FUNCTION_WORDS = 50
# Longer texts keep the sketch's containment: the alignment's memory grows with the product of the
# lengths (20,000 words a side: some 50 MB, a fraction of a second).
ALIGN_MAX_WORDS = 20_000


def rare_words_kept(base: Fingerprint, cur: Fingerprint, cfg: EngineConfig) -> float | None:
    """The share of the baseline's content words used at most :data:`RARE_MAX_COUNT` times that the
    capture still uses; ``None`` without both word sequences (a sketch-only baseline)."""
    if not base.tokens or not cur.tokens:
        return None
    tok = cfg.tokens

    def counts(fp: Fingerprint) -> Counter[str]:
        return Counter(terms_of(fp.tokens or (), fp.language, stop=tok.stop_words, stem=tok.stemming,
                                stop_max=tok.stop_words_max))

    b, c = counts(base), counts(cur)
    rare = [t for t, n in b.items() if n <= RARE_MAX_COUNT]
    return sum(1 for t in rare if t in c) / len(rare) if rare else None


def _is_typo(a: str, b: str) -> bool:
    from rapidfuzz.distance import OSA

    if max(len(a), len(b)) < TYPO_MIN_CHARS or any(ch.isdigit() for ch in a + b) or is_no_space(a) \
            or is_no_space(b):
        return False
    return OSA.distance(a, b) <= (2 if min(len(a), len(b)) >= TYPO_LONG_CHARS else 1)


def lost_run(base: Sequence[str], cur: Sequence[str], shingle_size: int) -> int:
    """The longest run of the baseline's words whose shingles are all gone from the capture, in
    words (L replaced words take L + size - 1 consecutive shingles with them).  The shingles are
    the fingerprint's, so numbers are left out (a changed date or count is no lost paragraph)."""
    import numpy as np

    from ..fingerprint import shingle_hashes, shingle_sequence

    k = max(1, shingle_size)
    seq = shingle_sequence(base, k)
    if not len(seq):
        return 0
    gone = ~np.isin(seq, shingle_hashes(cur, k), assume_unique=False)
    # the longest run of True: positions of the run breaks, then the largest gap between them
    breaks = np.flatnonzero(np.concatenate(([True], ~gone, [True])))
    best = int(np.diff(breaks).max()) - 1
    return max(1, best - k + 1) if best else 0


class Aligned(NamedTuple):
    """What aligning the two word sequences found (:func:`align_words`)."""

    typos: int
    containment: float  # exact, after putting the baseline's words back where a typo replaced them
    resemblance: float
    reworded: tuple[tuple[str, str], ...]  # (baseline's word, capture's word): one word for another
    inserted: int = 0  # the most words added in one place inside the baseline's text (not before or after it)


def _reworded(base: Sequence[str], cur: Sequence[str], i: int, j: int, base_set: set[str],
              cur_set: set[str], stops: frozenset[str]) -> bool:
    """One word replaced by another in place, and neither a typo nor a count nor a move.

    A typo is an edit inside the word (two edits or fewer: a synonym is another word).  Function
    words ("a" -> "the") carry no wording of their own.  Words with digits, and the word after a
    number ("3 hours" -> "1 day", "2 comments"), change with the count and say nothing of the
    wording.  A word the capture still has elsewhere, replaced by one the baseline already had
    elsewhere, is a list that rotated, not a sentence reworded."""
    from rapidfuzz.distance import OSA

    a, b = base[i], cur[j]
    if a in stops or b in stops or any(ch.isdigit() for ch in a + b) or OSA.distance(a, b) <= 2:
        return False
    if (i and base[i - 1].isdigit()) or (j and cur[j - 1].isdigit()):
        return False
    return not (b in base_set and a in cur_set)


def align_words(base: Sequence[str], cur: Sequence[str], shingle_size: int,
                   stops: frozenset[str] = frozenset()) -> Aligned:
    """Align the two word sequences and put back the baseline's word where
    the capture has a typo of it (or the baseline had the typo and the
    capture fixed it); the count of such words, then the exact containment
    and resemblance of the word shingles after that, and the words replaced
    one for one by another word.  Why: shingles count a fixed typo like a
    replaced word (one word touches ``shingle_size`` shingles), so typos and
    rewording of the same density look alike; a typo is an edit inside a
    word, rewording puts another word.  One synonym in a long text moves the
    shingles by less than the lines do, yet the sentence no longer says what
    was cited: the text profile reads it from ``reworded``."""
    from rapidfuzz.distance import Levenshtein

    from ..fingerprint import shingle_hashes

    fixed = list(cur)
    typos = 0
    reworded: list[tuple[str, str]] = []
    base_set: set[str] | None = None
    cur_set: set[str] = set()
    inserted = 0
    for op in Levenshtein.opcodes(base, cur):
        grew = (op.dest_end - op.dest_start) - (op.src_end - op.src_start)
        if grew > 0 and op.src_start > 0 and op.src_end < len(base):
            inserted = max(inserted, grew)
        if op.tag != "replace" or op.src_end - op.src_start != op.dest_end - op.dest_start:
            continue
        single = op.src_end - op.src_start == 1
        for i, j in zip(range(op.src_start, op.src_end), range(op.dest_start, op.dest_end), strict=True):
            if _is_typo(base[i], cur[j]):
                fixed[j] = base[i]
                typos += 1
            elif single:
                if base_set is None:
                    base_set, cur_set = set(base), set(cur)
                if _reworded(base, cur, i, j, base_set, cur_set, stops):
                    reworded.append((base[i], cur[j]))
    bs = set(shingle_hashes(base, shingle_size).tolist())
    cs = set(shingle_hashes(fixed, shingle_size).tolist())
    if not bs:
        return Aligned(typos, 1.0 if not cs else 0.0, 1.0 if not cs else 0.0, tuple(reworded), inserted)
    inter = len(bs & cs)
    return Aligned(typos, inter / len(bs), inter / len(bs | cs), tuple(reworded), inserted)


def text(base: Fingerprint, cur: Fingerprint, results: Mapping[str, MeasureResult], cfg: EngineConfig,
         seed_url: str) -> Decision:
    """Is the text that was there still there?"""
    cont = similarity(results, "containment", base, cur)
    res = similarity(results, "resemblance", base, cur)
    cos = similarity(results, "cosine", base, cur)
    typos = 0
    reworded: tuple[tuple[str, str], ...] = ()
    inserted = 0
    exact = 1.0  # the exact containment, set where the words are aligned (the only place rewording is found)
    if base.tokens and cur.tokens and cont is not None and base.tokens != cur.tokens \
            and max(len(base.tokens), len(cur.tokens)) <= ALIGN_MAX_WORDS:
        # Both word sequences are here (the profile keeps them): a fixed typo is not rewording, and
        # a word replaced by another is, however long the text around it.
        stops = stop_words(base.language, REWORD_FUNCTION_WORDS) | stop_words(cur.language, REWORD_FUNCTION_WORDS)
        aligned = align_words(base.tokens, cur.tokens, cfg.tokens.shingle_size, stops)
        reworded, inserted, exact = aligned.reworded, aligned.inserted, aligned.containment
        if aligned.typos and cont < TEXT_UNCHANGED:
            typos, cont, res = aligned.typos, aligned.containment, aligned.resemblance
    off_policy, m_reasons = measure_reasons(results, cfg)
    if off_policy:
        return Decision("off-topic", "off-topic", "text gone: " + "; ".join(m_reasons), 0.9, ("replaced",))
    if cont is None:
        return Decision("on-topic", "minor", "text changed; no shingles to compare (n/a)", 0.2)
    subj: float | None = None
    if cont < TEXT_REPLACED:
        # Most of the text gone: another text, unless its words are still there in another order
        # (the cosine) under the same subject line.  Another article of the same site keeps the
        # site's words (cosine 0.34 to 0.47 on the newspaper pages' pairs of two articles), but
        # its title or headline names another subject, or it declares another address.
        named_by, subj = page_subject(base, cur, base.host or cur.host, seed_url)
        other = subj is not None and subj < SUBJECT_TITLE
        rare = rare_words_kept(base, cur, cfg) if cos is not None and cos >= TEXT_REPLACED_COSINE else None
        if cos is None or cos < TEXT_REPLACED_COSINE or other or (rare is not None and rare < TEXT_RARE_KEPT):
            why = f"text replaced: containment {fmt_below(cont, TEXT_REPLACED)}"
            if cos is not None:
                why += f", cosine {fmt(cos)}"
            if rare is not None and rare < TEXT_RARE_KEPT:
                why += (f", {rare:.0%} of the words the baseline uses once or twice are still there "
                        f"(< {TEXT_RARE_KEPT:.0%}: the common words alone are shared)")
            if other and named_by == "address":
                why += f", another page (it declares {cur.address}; the baseline {base.address})"
            elif other:
                why += f", another subject ({named_by} words kept {fmt_below(subj or 0.0, SUBJECT_TITLE)})"
            return Decision("off-topic", "off-topic", "; ".join([why, *m_reasons]), 0.9, ("replaced",))
    fixed = f"{typos} word{'s differ' if typos > 1 else ' differs'} by a typo, " if typos else ""
    # A paragraph gone matters only where the containment line would call the text kept.
    run = lost_run(base.tokens, cur.tokens, cfg.tokens.shingle_size) \
        if cont >= TEXT_MINOR and base.tokens and cur.tokens else 0
    if run >= TEXT_RUN_WORDS:
        return Decision("on-topic", "drifted", f"text drifted: {run} words of the baseline in a row are gone "
                        f"({fixed}a paragraph replaced or cut; containment {fmt(cont)})", 0.5)
    if inserted >= TEXT_RUN_WORDS and cont >= TEXT_MINOR:
        # Text added around the original (comments below, a header above) leaves it whole; a paragraph
        # put inside it changes what it says, as a paragraph replaced does.
        return Decision("on-topic", "drifted", f"text drifted: {inserted} words inserted inside the baseline's "
                        f"text ({fixed}a paragraph added within it; containment {fmt(exact)})", 0.5)
    if reworded and cont >= TEXT_MINOR:
        shown = ", ".join(f"'{a}' -> '{b}'" for a, b in reworded[:3]) + (", ..." if len(reworded) > 3 else "")
        n = len(reworded)
        what = "1 word replaced by another" if n == 1 else f"{n} words replaced by others"
        return Decision("on-topic", "drifted", f"text reworded: {shown} ({fixed}{what} in place; "
                        f"containment {fmt(exact)})", 0.5)
    if cont >= TEXT_UNCHANGED and (res is None or res >= TEXT_UNCHANGED):
        if typos:
            return Decision("on-topic", "minor", f"text kept ({fixed}containment {fmt(cont)} without them)", 0.1)
        return Decision("on-topic", "unchanged", f"same text (containment {fmt(cont)})", 0.0)
    if cont >= TEXT_MINOR:
        # Text added when the capture grew; a page that shrank or kept its length had words changed.
        grown = cur.word_count > base.word_count and (cont >= TEXT_UNCHANGED or (res is not None and res < TEXT_MINOR))
        extra = "text added around it" if grown else "small edits"
        return Decision("on-topic", "minor", f"text kept ({fixed}{extra}; containment {fmt(cont)})", 0.1)
    if cont < TEXT_REPLACED:  # kept from "replaced" by its cosine: the words are there, the sentences not
        return Decision("on-topic", "drifted", f"text rewritten: containment {fmt_below(cont, TEXT_REPLACED)}, "
                        f"cosine {fmt(cos or 0.0)} ({fixed}the same words in other sentences"
                        + (", under the same subject line)" if subj is not None else ")"), 0.5)
    return Decision("on-topic", "drifted", f"text drifted: containment {fmt_below(cont, TEXT_MINOR)} "
                    f"({fixed}part of the text was replaced or reworded)", 0.5)


class TextProfile(BaseProfile):
    """Is the text that was there still there?"""

    name = "text"
    alert_classes: tuple[ChangeClass, ...] = ("drifted", "off-topic")
    words_kept = True

    def main_content(self, seed: Seed) -> bool:
        return True

    def decide(self, case: Case) -> Decision:
        return text(case.base, case.cur, case.results, case.cfg, case.seed.url)


PROFILE = TextProfile()
