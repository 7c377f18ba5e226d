"""Script-aware normalisation and tokenisation of extracted text.

Why this exists: two captures of one page must produce the same terms even
when the same word is spelled in two ways that readers treat as one, or the
TF-IDF cosine, the shingle containment and the top-term overlap all fall for
no reason.  Each rule below is decided by the *characters* (Unicode script
and category), not by the language identifier, which is unreliable on mixed
pages.  All of it is light, well-known normalisation; nothing here is tuned
to a collection.

Every text:

- NFKC (presentation forms, full-width letters, ligatures become the plain
  letters) and case folding (``ß`` -> ``ss``, final sigma -> sigma); accents
  of Latin, Cyrillic and Greek are kept (``résumé`` is not ``resume``).
- Zero-width joiners/non-joiners and soft hyphens are removed, so a word
  typed with or without them is one token (Persian, Indic scripts).
- A word is a run of letters and digits *and the combining marks* (Unicode
  Mn/Mc/Me) attached to them: Bengali and Devanagari vowel signs are marks,
  and ``[^\\W_]+`` alone splits every such word at each vowel sign.

Arabic script (the normalisation of Larkey et al.'s "light10", as in Lucene's
``ArabicNormalizer``), applied to Arabic, Persian and Urdu text alike:

- harakat and other diacritics (U+064B-U+065F, U+0670, Quranic marks
  U+06D6-U+06ED) and tatweel (U+0640) are removed;
- alef forms ``أ إ آ ٱ`` -> ``ا``; taa marbuta ``ة`` -> ``ه``; alef maqsura
  ``ى`` -> ``ي``; hamza on waw/yaa ``ؤ ئ`` -> ``ء`` (so the regional spellings
  مسؤول / مسئول meet);
- Persian and Urdu letter variants become the Arabic letters: keheh ``ک``
  -> ``ك``, Farsi yeh ``ی`` -> ``ي``, heh goal/ae forms -> ``ه``.

Arabic light stemming (:func:`arabic_light_stem`, Larkey's light10, as in
Lucene's ``ArabicStemmer``) is applied to content terms of Arabic-script
tokens unless the page is Persian, Urdu, Pashto, Kurdish or Sindhi: strip one
prefix among ``ال وال بال كال فال لل و`` when at least two letters remain
(three for ``و``), then the suffixes ``ها ان ات ون ين يه ه ي`` (after
normalisation ``ية``/``ة`` are ``يه``/``ه``) when at least two letters remain.
Bare ``ب ك ف ل`` are only stripped together with the article: alone they are
too often the first letter of the root (بيت, كتاب, فيلم, لبنان).

Hebrew: niqqud and cantillation marks (U+0591-U+05C7, except the
punctuation maqaf, paseq, sof pasuq and nun hafukha) are removed.

Scripts written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar) become
bigrams of *clusters* (a base character with its combining marks, so a Thai
or Burmese vowel sign never stands alone); a run of one or two clusters is
one token.  Hangul has spaces and is tokenised as words.

Stop lists (:func:`normalise_stop_words`) go through the same normalisation
as the tokens, or Arabic stop words stop matching once alef forms are folded.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

# -- character classes ---------------------------------------------------------


def _ranges(pred_max: int, cats: frozenset[str], first: int = 0) -> str:
    """A regex character-class body of every code point in ``cats`` from ``first`` to ``pred_max``."""
    out: list[str] = []
    start = prev = -2
    for cp in range(first, pred_max):
        if unicodedata.category(chr(cp)) in cats:
            if cp != prev + 1:
                if start >= 0:
                    out.append(_span(start, prev))
                start = cp
            prev = cp
    if start >= 0:
        out.append(_span(start, prev))
    return "".join(out)


def _span(a: int, b: int) -> str:
    return f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}"


# Combining marks of the BMP and the SMP (Indic, Brahmic, Arabic, Hebrew...).
# (no mark range spans U+FFFF, a noncharacter: the BMP's ranges are a class of their own, below)
_MARKS_BMP = _ranges(0x10000, frozenset({"Mn", "Mc", "Me"}))
_MARKS = _MARKS_BMP + _ranges(0x20000, frozenset({"Mn", "Mc", "Me"}), 0x10000)
_MARK = re.compile(f"[{_MARKS}]")
# Underscores are word characters to ``\w``: tokens holding one are split
# afterwards (rare, and one character class is much faster than an alternation).
_WORD = re.compile(f"[\\w{_MARKS}]+(?:['’\\-][\\w{_MARKS}]+)*")
# The same for a text without characters beyond the BMP (all but a few pages): ``re`` tests a class
# that reaches past U+FFFF range by range (the marks' 300 ranges at every character, three times
# the cost of ``\w`` alone) and one within the BMP by a bitmap.
_BMP_WORD = re.compile(f"[\\w{_MARKS_BMP}]+(?:['’\\-][\\w{_MARKS_BMP}]+)*")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")

# Scripts written without spaces between words.  Hangul is not one of them.
_NO_SPACE_CHARS = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f\ua9e0-\ua9ff\uaa60-\uaa7f"  # Myanmar and its extensions
    "\u1780-\u17ff\u19e0-\u19ff"  # Khmer
    "\u3040-\u30ff\u31f0-\u31ff"  # kana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
    "\U00020000-\U0003134f"  # Han extensions B-G
)
_NO_SPACE = re.compile(f"[{_NO_SPACE_CHARS}]")
_NO_SPACE_SPLIT = re.compile(f"((?:[{_NO_SPACE_CHARS}][{_MARKS}]*)+)")
_CLUSTER = re.compile(f".[{_MARKS}]*", re.S)

_DIGITS = re.compile(r"^[\d\W_]+$")

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))

_ARABIC_MAP: dict[int, int | None] = {
    **dict.fromkeys(range(0x064B, 0x0660)),  # harakat, shadda, sukun, Quranic
    0x0670: None,  # superscript alef
    0x0640: None,  # tatweel
    **dict.fromkeys(range(0x06D6, 0x06EE)),  # Quranic annotation marks
    ord("أ"): ord("ا"), ord("إ"): ord("ا"), ord("آ"): ord("ا"), ord("ٱ"): ord("ا"),
    ord("ة"): ord("ه"), ord("ى"): ord("ي"),
    ord("ؤ"): ord("ء"), ord("ئ"): ord("ء"),
    # Persian / Urdu variants
    ord("ک"): ord("ك"), ord("ی"): ord("ي"), ord("ې"): ord("ي"), ord("ے"): ord("ي"),
    ord("ۀ"): ord("ه"), ord("ہ"): ord("ه"), ord("ە"): ord("ه"), ord("ھ"): ord("ه"), ord("ۃ"): ord("ه"),
}
_HEBREW_MAP: dict[int, int | None] = {
    cp: None for cp in range(0x0591, 0x05C8) if cp not in (0x05BE, 0x05C0, 0x05C3, 0x05C6)
}
_TABLE = {**_ZERO_WIDTH, **_ARABIC_MAP, **_HEBREW_MAP}
_NEEDS_TABLE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_TABLE)) + "]")
_REPLACEMENT = {chr(k): "" if v is None else chr(v) for k, v in _TABLE.items()}


def _fold_match(m: re.Match[str]) -> str:
    return _REPLACEMENT[m.group()]


def _apply_table(text: str) -> str:
    """``text.translate(_TABLE)``, as a substitution of the characters in the table only: a text
    that needs the table (Arabic, Persian, Hebrew) holds a few of them among many others, and
    ``translate`` looks every character up in Python's dict (four times slower here)."""
    return _NEEDS_TABLE.sub(_fold_match, text)

# Languages written in Arabic script whose morphology is not Arabic's.
_NOT_ARABIC_MORPHOLOGY = frozenset({"fa", "ur", "ps", "ku", "ckb", "sd", "ug", "pnb"})
_AR_PREFIXES = ("وال", "بال", "كال", "فال", "لل", "ال", "و")
_AR_SUFFIXES = ("ها", "ان", "ات", "ون", "ين", "يه", "ه", "ي")


# -- normalisation -------------------------------------------------------------


def normalise(text: str) -> str:
    """NFKC, case folding and the per-script letter rules of the module doc."""
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    text = text.casefold()
    return _apply_table(text) if _NEEDS_TABLE.search(text) else text


def fold_letters(text: str) -> str:
    """The per-script letter rules alone (Arabic letter forms, harakat and tatweel, Hebrew points,
    zero-width characters), without NFKC or case folding: safe on a regular expression's source,
    so phrase lists match "الصفحه غير موجوده" as "الصفحة غير موجودة"."""
    return _apply_table(text) if _NEEDS_TABLE.search(text) else text


@lru_cache(maxsize=1 << 16)
def arabic_light_stem(token: str) -> str:
    """Larkey's light10 on an already normalised Arabic token (see module doc).  Cached: a site's
    words recur on every page of it, and the prefix and suffix loops were a third of the terms'
    CPU on the gold (65,536 tokens kept, some 8 MB at most)."""
    n = len(token)
    for p in _AR_PREFIXES:
        if token.startswith(p) and n >= len(p) + (3 if p == "و" else 2):
            token = token[len(p):]
            break
    for s in _AR_SUFFIXES:
        if token.endswith(s) and len(token) >= len(s) + 2:
            token = token[: -len(s)]
    return token


def _bigrams(run: str) -> list[str]:
    clusters = _CLUSTER.findall(run)
    if len(clusters) <= 2:
        return ["".join(clusters)]
    return [clusters[i] + clusters[i + 1] for i in range(len(clusters) - 1)]


def tokens(text: str) -> list[str]:
    """Normalised word tokens; runs of scripts without spaces become cluster
    bigrams (a run of one or two clusters stays whole)."""
    text = normalise(text)
    toks = (_WORD if _ASTRAL.search(text) else _BMP_WORD).findall(text)
    if "_" in text:
        toks = [p for t in toks for p in t.split("_") if p]
    if not _NO_SPACE.search(text):
        return toks
    out: list[str] = []
    for t in toks:
        if not _NO_SPACE.search(t):
            out.append(t)
            continue
        for run in _NO_SPACE_SPLIT.split(t):
            if not run:
                continue
            if _NO_SPACE.match(run):
                out.extend(_bigrams(run))
            else:
                out.append(run.strip("'’-"))
    return [t for t in out if t]


def _stem_arabic(language: str | None) -> bool:
    return language not in _NOT_ARABIC_MORPHOLOGY


def normalise_stop_words(words: Iterable[str]) -> frozenset[str]:
    """A stop list normalised the way tokens are (so it still matches them)."""
    out: set[str] = set()
    for w in words:
        out.update(tokens(w))
    return frozenset(out)


def content_terms(toks: Sequence[str], language: str | None, stops: frozenset[str]) -> list[str]:
    """Content terms of normalised tokens: no stop words (``stops`` must be
    normalised with :func:`normalise_stop_words`), no numbers (dates and
    counters churn without the content changing), no one-letter tokens
    outside scripts without spaces; Arabic-script tokens light-stemmed (and
    dropped when the stem is a stop word, e.g. وفي -> في)."""
    stem_ar = _stem_arabic(language)
    out: list[str] = []
    for t in toks:
        if t in stops or (not t.isalpha() and _DIGITS.match(t)):
            continue
        if len(t) < 2 and not _NO_SPACE.match(t):
            continue
        if stem_ar and "\u0600" <= t[0] <= "\u08ff":  # Arabic script (after NFKC)
            t = arabic_light_stem(t)
            if t in stops:
                continue
        out.append(t)
    return out


def is_no_space(token: str) -> bool:
    """True for a token of a script written without spaces (a bigram)."""
    return bool(_NO_SPACE.match(token))


# -- titles --------------------------------------------------------------------
_TITLE_SEP = re.compile(r"\s+[|\-–—:»«·•]+\s+|\s*[|»·•]\s*|\s+::\s+")
# Guillemets quote inside a headline as often as they separate a title's parts: Arabic, French and
# Russian headlines quote names and words («الإخوان» ترفض الحوار, Le « mariage pour tous »
# adopté), German ones the other way round (»Wir schaffen das«).  A balanced pair is a quotation.
_QUOTED = re.compile(r"«[^«»|]{1,120}»|(?<!\S)»(?=\S)[^«»|]{1,120}(?<=\S)«")


def title_segments(title: str) -> list[str]:
    """A title's parts between separators ("Headline | Section | Site"), quotations kept whole: what
    the subject rule compares (watcher.profiles) and where page-kind notices are read (watcher.pagekinds)."""
    masked = _QUOTED.sub(lambda m: "q" * len(m.group()), title)
    parts, start = [], 0
    for sep in _TITLE_SEP.finditer(masked):
        parts.append(title[start:sep.start()])
        start = sep.end()
    parts.append(title[start:])
    return [p.strip() for p in parts if p.strip()]
