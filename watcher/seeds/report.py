"""Per-seed crawl guidance from the verdicts driftline already holds: what a revisit of a seed is
worth (yield, new text per fetched byte, text quality, boilerplate), how often its text really
changes (:mod:`.changerate`), when to come back, and how often it answers with a bot wall or an
error.  The same report is made from a store (``driftline run`` / ``driftline doi``) and from a
scan result, and streamed per seed by the Kafka app.

What counts as a change: a capture whose payload digest differs from the previous valid capture's
and whose text differs from it (term SimHash more than ``change_simhash_bits`` apart; without
SimHashes, a change class other than unchanged, minor or layout).  Chrome that changes while the
text stays, and minor edits, are not change.  Captures that are errors, empty or blocked are not
observations: the interval runs from the previous valid capture to the next.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..canonical import surt_prefix
from ..errors import InputError
from ..model import Verdict
from .changerate import estimate, recrawl_interval_days
from .settings import SeedsConfig

EVIDENCE_VERDICTS = 20  # the newest verdicts a report names as its evidence
BLOCKED_KINDS = frozenset({"bot-challenge", "login-wall"})
ERROR_KINDS = frozenset({"soft-404", "database-error"})
NOT_CHANGE = frozenset({"unchanged", "minor", "layout", "baseline"})
NOT_OBSERVED = frozenset({"error", "empty", "blocked"})
FIELDS = ("seed", "surt", "captures", "yield", "new_text_per_byte", "badness", "boilerplate_share",
          "change_rate_per_day", "change_rate_low", "change_rate_high", "recrawl_interval_days",
          "blocked_share", "error_share")


@dataclass(frozen=True, slots=True)
class SeedReport:
    """One seed's guidance; ``None`` where a value cannot be known (schema:
    ``watcher/schemas/seed-report.schema.json``)."""

    seed: str
    surt: str
    captures: int
    yield_: float | None
    new_text_per_byte: float | None
    badness: float | None
    boilerplate_share: float | None
    change_rate_per_day: float | None
    change_rate_low: float | None
    change_rate_high: float | None
    recrawl_interval_days: float | None
    blocked_share: float | None
    error_share: float | None
    # the newest verdicts behind the report (evidence for a recommendation; not in the schema)
    verdict_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["yield"] = d.pop("yield_")
        return {k: d[k] for k in FIELDS}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> SeedReport:
        """One object of ``driftline seeds -f json``; a malformed one is an :class:`InputError`
        naming ``where``."""
        try:
            values = {("yield_" if k == "yield" else k): (None if data.get(k) is None else float(data[k]))
                      for k in FIELDS[3:]}
            return cls(seed=str(data["seed"]), surt=str(data["surt"]), captures=int(data["captures"]),
                       verdict_ids=tuple(str(v) for v in data.get("verdict_ids") or ()), **values)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{where}: not a seed report object ({type(exc).__name__}: {exc})",
                             reason="bad_input") from None


def is_blocked(v: Verdict) -> bool:
    return v.change == "blocked" or v.page_kind in BLOCKED_KINDS


def is_error(v: Verdict) -> bool:
    return v.change in ("error", "gone") or "http_error" in v.checks or v.page_kind in ERROR_KINDS


def is_yield(v: Verdict) -> bool:
    """On topic with content: what the crawl is for."""
    return (v.status in ("on-topic", "baseline") and v.word_count > 0 and not is_blocked(v) and not is_error(v)
            and v.change not in NOT_OBSERVED)


def _bits(a: str, b: str) -> int | None:
    if not a or not b:
        return None
    return (int(a, 16) ^ int(b, 16)).bit_count()


def text_changed(prev: Verdict, cur: Verdict, bits: int) -> bool:
    """Whether ``cur``'s text differs from ``prev``'s (module doc)."""
    if cur.digest is not None and cur.digest == prev.digest:
        return False
    distance = _bits(prev.text_simhash, cur.text_simhash)
    if distance is not None:
        return distance > bits
    return cur.change not in NOT_CHANGE


def _median(xs: Sequence[float]) -> float | None:
    return round(statistics.median(xs), 4) if xs else None


def report(seed: str, verdicts: Sequence[Verdict], cfg: SeedsConfig) -> SeedReport:
    """The guidance for one seed from its verdicts (any order; the newest version of each)."""
    vs = sorted(verdicts, key=lambda v: (v.capture_time, v.verdict_id))
    n = len(vs)
    observed = [v for v in vs if v.change not in NOT_OBSERVED and not is_blocked(v) and not is_error(v)]
    intervals: list[float] = []
    changed: list[bool] = []
    new_text = 0
    if observed:
        new_text += observed[0].text_bytes
    for prev, cur in itertools.pairwise(observed):
        intervals.append((cur.capture_time - prev.capture_time).total_seconds() / 86400.0)
        c = text_changed(prev, cur, cfg.change_simhash_bits)
        changed.append(c)
        if c:
            new_text += cur.new_text_bytes
    rate = estimate(intervals, changed, cfg.confidence) if intervals else None
    fetched = sum(v.byte_count for v in vs)
    return SeedReport(
        seed=seed,
        surt=surt_prefix(seed),
        captures=n,
        yield_=round(sum(1 for v in vs if is_yield(v)) / n, 4) if n else None,
        new_text_per_byte=round(new_text / fetched, 6) if fetched else None,
        badness=_median([v.badness for v in observed if v.badness is not None]),
        boilerplate_share=_median([v.boilerplate_share for v in observed if v.boilerplate_share is not None]),
        change_rate_per_day=None if rate is None else round(rate.per_day, 6),
        change_rate_low=None if rate is None else round(rate.low, 6),
        change_rate_high=None if rate is None else round(rate.high, 6),
        recrawl_interval_days=None if rate is None else round(recrawl_interval_days(
            rate, cfg.recrawl_min_days, cfg.recrawl_max_days, cfg.recrawl_change_probability), 3),
        blocked_share=round(sum(1 for v in vs if is_blocked(v)) / n, 4) if n else None,
        error_share=round(sum(1 for v in vs if is_error(v)) / n, 4) if n else None,
        verdict_ids=tuple(v.verdict_id for v in vs[-EVIDENCE_VERDICTS:]),
    )


def seed_of(v: Verdict) -> str:
    """The seed a verdict belongs to: the crawler's seed where the event named one, else the
    history's (its first capture's address stands for it)."""
    return v.seed or v.history


def group(verdicts: Iterable[Verdict], by: str = "seed") -> Iterator[tuple[str, list[Verdict]]]:
    """Verdicts grouped per seed (``by="seed"``) or per host-level SURT prefix (``by="surt"``), with
    the address that names the group (the seed's URL: its earliest capture's)."""
    groups: dict[str, list[Verdict]] = {}
    for v in verdicts:
        key = seed_of(v)
        if by == "surt":
            key = surt_prefix(v.seed or v.url)
        groups.setdefault(key, []).append(v)
    for key, vs in groups.items():
        if by == "surt":
            yield key, vs
            continue
        first = min(vs, key=lambda v: v.capture_time)
        yield (first.seed or first.url), vs


def reports(verdicts: Iterable[Verdict], cfg: SeedsConfig, by: str = "seed") -> list[SeedReport]:
    out = []
    for name, vs in group(verdicts, by):
        r = report(name, vs, cfg)
        if by == "surt":
            r = SeedReport(**{**{f: getattr(r, f) for f in r.__dataclass_fields__}, "surt": name})
        out.append(r)
    return out
