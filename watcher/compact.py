"""The compact forms of a fingerprint: what a baseline keeps (:func:`watcher.state.state_form`) and
what a store can write (:func:`watcher.store.codec.encode_fingerprint`) are one reduction, so the
two can never disagree on what a measure finds missing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from .model import Fingerprint

MAX_STORED_TERMS = 20_000


def _cap_terms(term_freqs: Mapping[str, int], max_terms: int) -> dict[str, int]:
    """The ``max_terms`` most frequent terms (ties broken by term, so the
    result does not depend on the mapping's order); ``max_terms <= 0``: all."""
    items = list(term_freqs.items())
    if 0 < max_terms < len(items):
        items.sort(key=lambda kv: (-kv[1], kv[0]))
        items = items[:max_terms]
    return dict(items)


def reduce_fingerprint(
    fp: Fingerprint, *, keep_text: bool, keep_shingles: bool, max_terms: int = MAX_STORED_TERMS
) -> Fingerprint:
    """The form of ``fp`` that a store keeps (and a decode returns).

    ``keep_text`` keeps ``text`` and ``tokens`` (Levenshtein against the
    baseline needs the word sequence); ``keep_shingles`` keeps the exact
    shingle set (exact containment).  Without them only sketches remain.
    """
    dropped = ({"text", "tokens"} if not keep_text else set()) | ({"shingles"} if not keep_shingles else set())
    record = fp.record
    if record is not None and record.main_shingles is not None and not keep_shingles:
        record = dataclasses.replace(record, main_shingles=None)
    return dataclasses.replace(
        fp,
        record=record,
        text=fp.text if keep_text else None,
        tokens=(tuple(fp.tokens) if fp.tokens is not None else None) if keep_text else None,
        shingles=(frozenset(fp.shingles) if fp.shingles is not None else None) if keep_shingles else None,
        term_freqs=_cap_terms(fp.term_freqs, max_terms),
        features=fp.features - dropped,  # what is dropped is recorded: measures needing it are n/a
    )
