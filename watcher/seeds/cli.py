"""``driftline seeds``: the per-seed crawl-guidance report, from a store or a scan result."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from ..config import Config
from ..errors import InputError
from ..model import Verdict
from .report import FIELDS, SeedReport, reports

_EXAMPLES = """examples:
  driftline seeds                                # the configured store (what 'driftline run' wrote)
  driftline seeds driftline.db --sort yield      # a SQLite store, lowest yield first
  driftline seeds postgresql://driftline@db/driftline -f json
  driftline seeds result.json -f csv -o seeds.csv   # a 'driftline scan' result (json or jsonl)
  driftline seeds result.jsonl --by surt         # one row per host (SURT prefix) instead of per seed

columns: yield = share of captures on topic with content; new_text_per_byte = bytes of new main text
per fetched byte; badness = function-word fit of the text (about 1 for prose, higher for lists and
chrome; n/a where the language has no profile); change_rate_per_day with its 95 % band (Cho and
Garcia-Molina's estimator over irregular intervals); recrawl_interval_days = when a revisit finds
changed text with probability seeds.recrawl_change_probability, clamped to the configured bounds.
"""
_SORTS = {
    "yield": lambda r: (r.yield_ is None, r.yield_ if r.yield_ is not None else 0.0),
    "change-rate": lambda r: (r.change_rate_per_day is None, -(r.change_rate_per_day or 0.0)),
    "badness": lambda r: (r.badness is None, -(r.badness or 0.0)),
    "seed": lambda r: (False, r.seed),
}


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def verdicts_of(source: str | None, cfg: Config) -> Iterator[Verdict]:
    """The verdicts of a store (the configured one when ``source`` is None, a SQLite file or a
    PostgreSQL DSN) or of a scan result file."""
    from ..store import open_store

    store_cfg = cfg.store
    if source is None:
        pass
    elif source.startswith(("postgresql://", "postgres://")):
        store_cfg = store_cfg.model_copy(update={"backend": "postgres", "dsn": source})
    else:
        path = Path(source)
        if not path.is_file():
            raise InputError(f"{source}: no such store or scan result", reason="missing_input")
        if not _is_sqlite(path):
            from ..output.readback import read_result

            yield from read_result(path)
            return
        store_cfg = store_cfg.model_copy(update={"backend": "sqlite", "path": str(path)})
    if store_cfg.backend == "sqlite" and not Path(store_cfg.path).is_file():
        raise InputError(f"no store at {store_cfg.path} (give a store or a scan result)", reason="missing_input")
    store = open_store(store_cfg)
    try:
        yield from store.all_verdicts()
    finally:
        store.close()


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def write(rows: list[SeedReport], fmt: str, out: TextIO) -> None:
    dicts = [r.to_dict() for r in rows]
    if fmt == "json":
        json.dump(dicts, out, indent=2, ensure_ascii=False)
        out.write("\n")
        return
    if fmt == "csv":
        w = csv.DictWriter(out, fieldnames=list(FIELDS), lineterminator="\n")
        w.writeheader()
        for d in dicts:
            w.writerow({k: "" if v is None else v for k, v in d.items()})
        return
    cols = ("seed", "captures", "yield", "new_text_per_byte", "badness", "boilerplate_share",
            "change_rate_per_day", "recrawl_interval_days", "blocked_share", "error_share")
    heads = ("seed", "caps", "yield", "new/byte", "badness", "boiler", "changes/day", "recrawl d", "blocked",
             "errors")
    table = [heads] + [tuple(_fmt(d[c]) for c in cols) for d in dicts]
    widths = [min(60, max(len(row[i]) for row in table)) for i in range(len(heads))]
    for row in table:
        cells = [row[0][: widths[0]].ljust(widths[0])] + [row[i].rjust(widths[i]) for i in range(1, len(row))]
        out.write("  ".join(cells).rstrip() + "\n")


def cmd_seeds(args: argparse.Namespace, cfg: Config) -> int:
    rows = reports(verdicts_of(args.input or args.store, cfg), cfg.seeds, by=args.by)
    rows.sort(key=_SORTS[args.sort])
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="") as fh:
            write(rows, args.format, fh)
        sys.stderr.write(f"{len(rows)} {'hosts' if args.by == 'surt' else 'seeds'} written to {args.output}\n")
    else:
        write(rows, args.format, sys.stdout)
    return 0


def register(sub: Any) -> None:
    """Add ``driftline seeds`` to the main parser's subparsers ``sub``."""
    help_text = "per-seed crawl guidance: yield, text quality, change rate and when to come back"
    s = sub.add_parser("seeds", help=help_text, description=help_text, epilog=_EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("input", nargs="?", metavar="INPUT",
                   help="a store (SQLite file or postgresql:// DSN) or a scan result (json/jsonl); "
                        "default: the configured store")
    s.add_argument("--store", metavar="PATH|DSN", help="the store to read (same as INPUT)")
    s.add_argument("-f", "--format", choices=["table", "csv", "json"], default="table",
                   help="table (default), csv, or json (a list of objects, watcher/schemas/seed-report.schema.json)")
    s.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    s.add_argument("--sort", choices=sorted(_SORTS), default="yield",
                   help="yield (lowest first, the default), change-rate (fastest first), badness (worst first), seed")
    s.add_argument("--by", choices=["seed", "surt"], default="seed",
                   help="one row per seed (default) or per host-level SURT prefix")
    s.set_defaults(func=cmd_seeds)
