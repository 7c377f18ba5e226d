"""The per-capture record every writer shares, in OTMT's vocabulary.

OTMT (the Off-Topic Memento Toolkit) writes ``{URI-T: {URI-M: {"timemap
measures": {name: {...}}, "overall topic status": ...}}}``; its readers
iterate the URI-M keys of a URI-T and read the measure blocks by name.  So
driftline keeps that layout exactly and adds:

- per URI-M, one extra key ``"driftline"`` (change class, reason, page kind,
  baseline, capture time, digest, language, title, drift score, verdict id),
  read by name, invisible to OTMT readers;
- per URI-T, one extra key :data:`SUMMARY_KEY` (``"__driftline__"``) with the
  history's behaviour, first drift and off-topic share.  It is not a URI (no
  scheme), so readers that must skip it can: every key starting with ``"__"``
  is driftline metadata, never a URI-M.  (OTMT itself puts a non-URI-M key,
  ``"access error"``, at that level.)
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .. import profiles
from ..config import Config
from ..measures import REGISTRY
from ..model import CHANGE_CLASSES as ONE_LIST
from ..model import HistoryResult, MeasureResult, Verdict, ts14, utc
from ..profiles.seedkind import Seed

SUMMARY_KEY = "__driftline__"
DRIFTLINE_KEY = "driftline"
MEASURES_KEY = "timemap measures"
CHANGE_CLASSES = ONE_LIST  # the one list (watcher.model.ChangeClass)


def iso(dt: datetime | None) -> str | None:
    """ISO 8601 UTC with a ``Z`` (what JSON readers and OTMT users expect)."""
    if dt is None:
        return None
    return utc(dt).strftime("%Y-%m-%dT%H:%M:%SZ")


def uri_t_of(result: HistoryResult, uri_t: Mapping[str, str] | None = None) -> str:
    """The TimeMap URI of a history when known, else ``history:<key>``
    (gold histories are already named ``gold:<id>``)."""
    if uri_t and result.history in uri_t:
        return uri_t[result.history]
    if result.history.startswith("gold:"):
        return result.history
    return f"history:{result.history}"


def uri_m_of(v: Verdict) -> str:
    """The memento URI, or ``<url>@<ts14>`` for captures that have none (WARC records)."""
    return v.uri_m or f"{v.url}@{ts14(v.capture_time)}"


def baseline_of(v: Verdict) -> str | None:
    if v.baseline_uri_m:
        return v.baseline_uri_m
    if v.baseline_time is not None:
        return f"{v.url}@{ts14(v.baseline_time)}"
    return None


def measure_block(m: MeasureResult, cfg: Config, removed: bool) -> dict[str, Any]:
    """One OTMT measure block (``removed``: the text was the page's main content); ``threshold`` is
    a driftline addition."""
    spec = REGISTRY.get(m.name)
    tokenized: bool | None = spec.uses_tokens if spec is not None else None
    stemmed: bool | None = (spec.uses_tokens and cfg.engine.tokens.stemming) if spec is not None else None
    return {
        "comparison score": m.score,
        "topic status": m.status,
        "stemmed": stemmed,
        "tokenized": tokenized,
        "removed boilerplate": removed,
        "threshold": m.threshold,
    }


def driftline_block(v: Verdict) -> dict[str, Any]:
    """driftline's part of an OTMT capture entry: the verdict as
    :func:`watcher.store.codec.verdict_to_dict` gives it everywhere (store,
    Kafka messages, JSONL), less the measures (already in the OTMT blocks),
    plus ``baseline`` (the baseline's URI-M or synthetic id)."""
    from ..store.codec import verdict_to_dict

    block = verdict_to_dict(v)
    del block["measures"]
    block["baseline"] = baseline_of(v)
    if v.label is None:
        del block["label"]
    return block


def capture_entry(v: Verdict, cfg: Config, locator: str | None = None) -> dict[str, Any]:
    """The JSON value stored under one URI-M (``locator``: where the capture's payload can be read
    again, written as ``driftline.source.locator`` for ``driftline review``)."""
    # as Engine.fingerprint read it: by the profile and the kind of page the history stands for (a
    # stored verdict of a profile no longer registered: read as the default profile reads)
    prof = profiles.get(v.profile if v.profile in profiles.names() else None)
    removed = cfg.engine.extract.main_content_for(prof.main_content(Seed.of(v.url)))
    entry: dict[str, Any] = {
        MEASURES_KEY: {name: measure_block(m, cfg, removed) for name, m in v.measures.items()},
        "overall topic status": v.status,
        "content length": v.byte_count,
    }
    if v.change == "error":
        entry["access error"] = v.reason
    entry[DRIFTLINE_KEY] = driftline_block(v)
    if locator:
        entry[DRIFTLINE_KEY]["source"] = {"locator": locator}
    return entry


# Where each capture of a scan can be read again: (history, 14-digit time, URL) -> locator.
Locators = Mapping[tuple[str, str, str], str]


def locator_of(v: Verdict, sources: Locators | None) -> str | None:
    return sources.get((v.history, ts14(v.capture_time), v.url)) if sources else None


def change_counts(result: HistoryResult) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(CHANGE_CLASSES, 0)
    for v in result.verdicts:
        counts[v.change] = counts.get(v.change, 0) + 1
    return counts


def summary_block(result: HistoryResult) -> dict[str, Any]:
    return {
        "history": result.history,
        "url": result.url,
        "captures": len(result.verdicts),
        "behaviour": result.behaviour,
        "first drift": iso(result.first_drift),
        "off-topic share": result.off_topic_share,
        "changes": change_counts(result),
    }


def unique_key(key: str, used: set[str]) -> str:
    """``key``, or ``key#2``, ``key#3``... when it is already taken (two
    captures of one URL in the same second would otherwise overwrite)."""
    if key not in used:
        used.add(key)
        return key
    n = 2
    while f"{key}#{n}" in used:
        n += 1
    used.add(f"{key}#{n}")
    return f"{key}#{n}"
