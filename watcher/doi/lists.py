"""DOI lists from text or CSV: what ``driftline doi add FILE`` reads.

Formats, recognised by content:

* plain text: one DOI per line (any form :func:`~watcher.doi.ident.normalise_doi`
  accepts); ``#`` starts a comment; blank lines are skipped;
* CSV or TSV (comma, semicolon or tab, sniffed from the first data line):
  ``doi, title, landing_url, interval, tags`` by position, or any order under
  a header row naming those columns (``expected_title``, ``url``,
  ``interval_s`` are accepted too).  ``interval`` is seconds or ``30m``,
  ``12h``, ``1d``, ``2w``, ``hourly``, ``daily``, ``weekly``; ``tags`` are
  separated by ``;``, ``|`` or spaces.

Why keep going on a bad line: a publisher's export of 50,000 DOIs with three
broken rows should load 49,997 and say which three (line number and why),
not fail as a whole.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import DoiError
from .ident import normalise_doi

_INTERVAL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$", re.I)
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_NAMED = {"hourly": 3600, "daily": 86_400, "weekly": 604_800, "monthly": 30 * 86_400}
_COLUMNS = {
    "doi": "doi", "title": "title", "expected_title": "title", "landing_url": "landing_url", "url": "landing_url",
    "interval": "interval", "interval_s": "interval", "tags": "tags", "tag": "tags", "group": "tags",
}
_POSITIONAL = ("doi", "title", "landing_url", "interval", "tags")
MIN_INTERVAL_S = 60


@dataclass(frozen=True, slots=True)
class DoiEntry:
    """One watched DOI as a list or an import gives it."""

    doi: str
    title: str | None = None
    landing_url: str | None = None
    interval_s: int | None = None
    tags: tuple[str, ...] = ()
    source: str = "list"


@dataclass(frozen=True, slots=True)
class ListProblem:
    line: int
    text: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}: {self.text[:120]!r}"


@dataclass(slots=True)
class ParsedList:
    entries: list[DoiEntry] = field(default_factory=list)
    problems: list[ListProblem] = field(default_factory=list)


def parse_interval(text: str) -> int | None:
    """Seconds of ``text`` (``None`` for an empty cell); raises :class:`DoiError`."""
    t = (text or "").strip().lower()
    if not t:
        return None
    if t in _NAMED:
        return _NAMED[t]
    m = _INTERVAL.match(t)
    if not m:
        raise DoiError(f"interval {text!r} is not seconds or N[smhdw]", reason="invalid_interval")
    seconds = int(float(m.group(1)) * _UNIT_S[m.group(2).lower()])
    if seconds < MIN_INTERVAL_S:
        raise DoiError(f"interval {text!r} is under {MIN_INTERVAL_S} s", reason="invalid_interval")
    return seconds


def parse_tags(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for t in re.split(r"[;|\s]+", text or "") if t))


def _entry(cells: dict[str, str], source: str) -> DoiEntry:
    url = (cells.get("landing_url") or "").strip() or None
    if url is not None and not re.match(r"^https?://", url, re.I):
        raise DoiError(f"landing URL {url!r} is not http(s)", reason="invalid_url")
    return DoiEntry(
        doi=normalise_doi(cells.get("doi", "")),
        title=(cells.get("title") or "").strip() or None,
        landing_url=url,
        interval_s=parse_interval(cells.get("interval", "")),
        tags=parse_tags(cells.get("tags", "")),
        source=source,
    )


def _is_tabular(line: str) -> bool:
    return any(sep in line for sep in ("\t", ",", ";"))


def parse_list(text: str, source: str = "list") -> ParsedList:
    """Entries of a text or CSV DOI list, plus the lines that were skipped and why.

    A DOI listed twice keeps its last line (a later correction wins)."""
    out = ParsedList()
    lines = [(n, ln) for n, ln in enumerate(text.splitlines(), 1) if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        return out
    by_doi: dict[str, DoiEntry] = {}

    def add(n: int, ln: str, cells: dict[str, str]) -> None:
        """Keep the line's entry (a later line for the same DOI wins), or report why it is skipped."""
        try:
            e = _entry(cells, source)
        except DoiError as exc:
            out.problems.append(ListProblem(n, ln, str(exc)))
            return
        by_doi[e.doi] = e

    if not any(_is_tabular(ln) for _, ln in lines[:20]):
        for n, ln in lines:
            add(n, ln, {"doi": ln})
        out.entries = list(by_doi.values())
        return out
    first = lines[0][1]
    delim = "\t" if "\t" in first else (";" if first.count(";") > first.count(",") else ",")
    header: tuple[str, ...] = _POSITIONAL
    rows = list(csv.reader(io.StringIO("\n".join(ln for _, ln in lines)), delimiter=delim))
    start = 0
    names = [c.strip().lower() for c in rows[0]] if rows else []
    if "doi" in names:
        unknown = [c for c in names if c and c not in _COLUMNS]
        if unknown:
            out.problems.append(ListProblem(lines[0][0], first, f"unknown columns ignored: {', '.join(unknown)}"))
        header = tuple(_COLUMNS.get(c, "") for c in names)
        start = 1
    for (n, ln), row in zip(lines[start:], rows[start:], strict=False):
        cells = {name: value for name, value in zip(header, row, strict=False) if name}
        if len(row) > len(header) and any(c.strip() for c in row[len(header):]):
            out.problems.append(ListProblem(n, ln, f"{len(row)} columns, expected at most {len(header)}"))
            continue
        add(n, ln, cells)
    out.entries = list(by_doi.values())
    return out


def parse_dois(lines: Iterable[str], source: str = "cli") -> ParsedList:
    """DOIs given one by one (command-line arguments)."""
    return parse_list("\n".join(lines), source)
