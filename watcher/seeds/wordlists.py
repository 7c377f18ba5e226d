"""Regenerate ``watcher/data/function_words.json``: the ten most frequent words of each language
and their relative frequencies, which :func:`watcher.quality.badness` compares a page against.

Why a generated file and not the stop lists: justext's stop lists (``watcher.lang``) give the words
in frequency order but not their frequencies, and Badness needs how often each word is expected.
wordfreq (Robyn Speer et al.; data CC BY-SA 4.0, drawn from Wikipedia, subtitles, news, books, web
text and more) has them; driftline ships the 10 x 42 numbers it needs rather than 58 MB of lists.

Run ``python -m watcher.seeds.wordlists`` with ``wordfreq`` installed (the test extra has it; a
test checks the shipped file against it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

TOP_N = 10
DATA = Path(__file__).resolve().parent.parent / "data" / "function_words.json"
# wordfreq needs jieba / MeCab for Chinese and Japanese; driftline tokenises those scripts into
# character pairs anyway, so no word profile applies to them.
SKIP = frozenset({"zh", "ja", "ko"})


def build() -> dict[str, Any]:
    """The file's content, from wordfreq's "best" lists."""
    import wordfreq

    from ..text import normalise

    langs: dict[str, dict[str, float]] = {}
    for code in sorted(wordfreq.available_languages()):
        if code in SKIP or len(code) != 2:
            continue
        words: dict[str, float] = {}
        for w in wordfreq.top_n_list(code, TOP_N * 2):
            key = normalise(w)
            if not key:
                continue
            if key not in words and len(words) == TOP_N:
                break
            # two spellings that tokens fold together (Arabic alef forms) are one word
            words[key] = words.get(key, 0.0) + float(wordfreq.word_frequency(w, code))
        langs[code] = {k: round(v, 6) for k, v in words.items()}
    return {
        "source": "wordfreq (https://github.com/rspeer/wordfreq), data CC BY-SA 4.0",
        "top_n": TOP_N,
        "languages": langs,
    }


def main() -> int:
    DATA.write_text(json.dumps(build(), ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    sys.stderr.write(f"wrote {DATA}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
