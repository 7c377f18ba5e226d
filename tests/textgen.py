"""Deterministic hand-made documents for measure tests.

Four topical paragraphs (each from its own vocabulary) make the baseline; the
variants replace one paragraph, grow the page around the original, insert
typos, or swap in an unrelated document.
"""

from __future__ import annotations

import random

TOPICS = {
    "river": "river water flood bank bridge current fish salmon valley stream delta estuary tide mud reeds "
             "heron otter boat ferry harbour meadow willow rain spring source basin canal lock weir dam",
    "law": "court judge trial appeal verdict lawyer prosecutor witness evidence statute ruling justice defendant "
           "tribunal sentence hearing counsel jury petition detention rights torture prisoner amnesty asylum",
    "music": "jazz saxophone trumpet drummer melody rhythm concert album record studio swing blues chord tempo "
             "band singer stage festival improvisation bassist pianist harmony solo quartet",
    "garden": "garden tomato seed soil compost spade hedge rose tulip orchard apple pear greenhouse harvest weed "
              "watering mulch pruning shrub lawn bulb blossom vegetable herb basil",
    "space": "rocket orbit satellite launch astronaut planet moon telescope galaxy comet asteroid gravity capsule "
             "mission station module thruster payload lander crater nebula spectrum booster",
    "cooking": "kitchen recipe oven flour butter sugar knife onion garlic sauce simmer roast bake dough pastry "
               "pepper salt broth stew grill whisk skillet ladle spice",
}
GLUE = [
    "the", "a", "of", "and", "in", "to", "with", "for", "on", "at", "by", "from", "about", "this", "that", "these",
    "its", "their", "our",
]


def paragraph(topic: str, words: int, seed: int) -> str:
    rng = random.Random(f"{topic}-{seed}")
    vocab = TOPICS[topic].split()
    out = []
    for i in range(words):
        out.append(rng.choice(GLUE) if i % 3 == 2 else rng.choice(vocab))
    return " ".join(out).capitalize() + "."


def document(topics: list[str], words: int = 200, seed: int = 0) -> list[str]:
    return [paragraph(t, words, seed + i) for i, t in enumerate(topics)]


def html(paragraphs: list[str], title: str = "Riverside Rights Project") -> bytes:
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{title}</title></head>"
            f"<body><h1>{title}</h1>{body}</body></html>").encode()


def typos(text: str, every: int = 25, seed: int = 1) -> str:
    rng = random.Random(seed)
    words = text.split()
    for i in range(0, len(words), every):
        w = words[i]
        if len(w) > 3:
            j = rng.randrange(1, len(w) - 1)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)
