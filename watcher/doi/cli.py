"""``driftline doi ...``: the DOI monitor's subcommands.

    driftline doi add FILE|DOI...       a text/CSV list, or DOIs as arguments
    driftline doi remove DOI...|FILE|-  exit 1 when a DOI given was not watched
    driftline doi list [--tag T] [-f table|csv|json]
    driftline doi import crossref|datacite --prefix P | --member M | --client-id C [--since DATE|last]
    driftline doi status [-f table|csv|json] [-o FILE]
    driftline doi run [--once]          the scheduler: check every DOI on its interval

Each command that opens the DOI store names it in one line on stderr; the
read-only ones (list, status, remove) never create it.  ``register`` adds
them to the main parser (watcher/cli.py calls it once).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import logging
import re
import sys
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config, StoreConfig
from ..errors import DoiError
from .lists import ParsedList, parse_dois, parse_list, parse_tags

if TYPE_CHECKING:
    from .registry import DoiRegistry

log = logging.getLogger(__name__)

Handler = Callable[[argparse.Namespace, Config], int]


_BINARY = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
_LIST_SUFFIXES = (".csv", ".tsv", ".txt", ".lst", ".list")


def _looks_like_path(item: str) -> bool:
    """An argument meant as a list file: a path spelt as one, or a list file's suffix.  A DOI starts
    with ``10.``, ``doi:`` or a resolver URL and never with ``/``, ``./``, ``~``."""
    return item.startswith(("/", "./", "../", "~")) or item.lower().endswith(_LIST_SUFFIXES)


def _read_list_file(p: Path) -> ParsedList:
    """One list file, or one line saying why it cannot be a list (a binary file printed one
    'skipped' line per line of garbage before)."""
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise DoiError(f"{p}: cannot read the list: {exc.strerror or exc}", reason="usage") from None
    if _BINARY.search(data[:65536]):  # text never holds C0 control bytes but tab, newlines and form feed
        raise DoiError(f"{p}: not a DOI list (binary content); a list is text, one DOI a line, or CSV/TSV",
                       reason="usage")
    return parse_list(data.decode("utf-8-sig", errors="replace"), source=f"file:{p.name}")


def _read_source(items: list[str]) -> ParsedList:
    """A list file when the single argument is an existing file, else DOIs given inline."""
    if len(items) == 1 and Path(items[0]).is_file():
        return _read_list_file(Path(items[0]))
    if len(items) == 1 and _looks_like_path(items[0]):
        what = "is a directory, not a list file" if Path(items[0]).is_dir() else "no such file"
        raise DoiError(f"{items[0]}: {what} (a list file, '-' for stdin, or DOIs as arguments)", reason="usage")
    if items == ["-"]:
        return parse_list(sys.stdin.read(), source="stdin")
    return parse_dois(items)


def _report_problems(parsed: ParsedList, where: str) -> None:
    for p in parsed.problems:
        print(f"{where}: skipped {p}", file=sys.stderr)


def store_name(cfg: StoreConfig) -> str:
    """Which store a command uses, for the one line it prints (a PostgreSQL store without its password)."""
    if cfg.backend == "memory":
        return "memory (kept only while the command runs)"
    if cfg.backend == "postgres":
        from ..store.postgres import describe_dsn

        return f"PostgreSQL {describe_dsn(cfg.dsn.get_secret_value())}" if cfg.dsn else "PostgreSQL (store.dsn unset)"
    return f"SQLite {Path(cfg.path).resolve()}"


def _registry(cfg: Config, *, create: bool) -> DoiRegistry:
    """The registry, after one line on stderr naming the store.

    Why the line: ``store.path`` is relative to the current folder, so the same
    command run elsewhere reads another store; the line says which.  A
    command that only reads (``create`` false: list, status, remove) never
    creates a SQLite file: where there is none it says so and fails, instead
    of answering from an empty store it has just made.
    """
    from .registry import open_registry

    print(f"doi store: {store_name(cfg.store)}", file=sys.stderr)
    path = cfg.store.path
    if not create and cfg.store.backend == "sqlite" and path != ":memory:" and not Path(path).exists():
        raise DoiError(f"no DOI store at {Path(path).resolve()} (store.path, or -c CONFIG; 'driftline doi add' "
                       "creates it)", reason="no_store")
    return open_registry(cfg.store)


def cmd_add(args: argparse.Namespace, cfg: Config) -> int:
    from dataclasses import replace

    parsed = _read_source(args.items)
    _report_problems(parsed, args.items[0] if len(args.items) == 1 else "arguments")
    extra = parse_tags(args.tags or "")
    entries = [replace(e, tags=tuple(dict.fromkeys((*e.tags, *extra)))) if extra else e for e in parsed.entries]
    with _registry(cfg, create=True) as reg:
        added, updated = reg.add(entries)
    print(f"{added} added, {updated} updated, {len(parsed.problems)} skipped")
    return 1 if parsed.problems and not entries else 0


def cmd_remove(args: argparse.Namespace, cfg: Config) -> int:
    """Exit 1 when a DOI given was not watched (a typo must not pass for a removal)."""
    parsed = _read_source(args.items)
    _report_problems(parsed, "remove")
    unknown: list[str] = []
    n = 0
    with _registry(cfg, create=False) as reg:
        for e in parsed.entries:
            removed = reg.remove([e.doi])
            n += removed
            if not removed:
                unknown.append(e.doi)
    for doi in unknown:
        print(f"not watched: {doi}", file=sys.stderr)
    print(f"{n} removed")
    return 1 if unknown or (parsed.problems and not parsed.entries) else 0


def cmd_list(args: argparse.Namespace, cfg: Config) -> int:
    with _registry(cfg, create=False) as reg:
        entries = reg.entries(tag=args.tag)
    rows = [{"doi": e.doi, "title": e.title or "", "landing_url": e.landing_url or "",
             "interval_s": e.interval_s or cfg.doi.default_interval_s, "tags": ";".join(e.tags), "source": e.source}
            for e in entries]
    _write_rows(rows, args.format, None, ("doi", "title", "landing_url", "interval_s", "tags", "source"))
    return 0


def _parse_since(text: str | None, last: datetime | None) -> datetime | None:
    if text is None:
        return None
    if text == "last":
        if last is None:
            raise DoiError("--since last: this source was never imported; give a date", reason="usage")
        return last
    try:
        dt = datetime.fromisoformat(text)
    except ValueError as exc:
        raise DoiError(f"--since {text!r} is not an ISO date (YYYY-MM-DD) or 'last'", reason="usage") from exc
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


async def _import(args: argparse.Namespace, cfg: Config) -> tuple[int, int, int]:
    from .importers import ImportPage, crossref_pages, datacite_pages

    tags = parse_tags(args.tags or "")
    key = f"{args.registry}:{args.member or args.client_id or args.prefix or args.query}"
    added = updated = skipped = 0
    started = datetime.now(UTC)
    with _registry(cfg, create=True) as reg:
        since = _parse_since(args.since, reg.last_import(key))
        pages: AsyncIterator[ImportPage]
        if args.registry == "crossref":
            pages = crossref_pages(cfg.doi, prefix=args.prefix, member=args.member, since=since, tags=tags)
        else:
            pages = datacite_pages(cfg.doi, prefix=args.prefix, client_id=args.client_id, query=args.query,
                                   since=since, tags=tags)
        async for page in pages:
            for p in page.problems:
                print(f"{args.registry}: skipped {p.message}", file=sys.stderr)
            a, u = await asyncio.to_thread(reg.add, page.entries)
            added, updated, skipped = added + a, updated + u, skipped + len(page.problems)
            log.info("%s page %d: %d added, %d updated, %d skipped", args.registry, page.number, a, u,
                     len(page.problems))
        reg.set_last_import(key, started, added + updated)
    return added, updated, skipped


def cmd_import(args: argparse.Namespace, cfg: Config) -> int:
    added, updated, skipped = asyncio.run(_import(args, cfg))
    print(f"{added} added, {updated} updated, {skipped} skipped")
    return 0


def status_rows(cfg: Config) -> list[dict[str, Any]]:
    from .status import status_rows as rows_of

    with _registry(cfg, create=False) as reg:
        return rows_of(reg)


def _write_rows(rows: list[dict[str, Any]], fmt: str, output: str | None, columns: tuple[str, ...]) -> None:
    if fmt == "json":
        text = json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    elif fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        text = buf.getvalue()
    else:
        text = _table(rows, columns)
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


_CELL_MAX = 60
_NEVER_CUT = ("reason", "title")  # the words a user reads the table for: last, and whole


def _table(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    """A terminal table: a cell over 60 characters is cut with '…' (a URL), except the reason and the
    title, which go last and whole (a reason cut at 60 characters hid why a check failed)."""
    order = [c for c in columns if c not in _NEVER_CUT] + [c for c in columns if c in _NEVER_CUT]

    def cell(r: dict[str, Any], c: str) -> str:
        v = str(r.get(c, ""))
        return v if c in _NEVER_CUT or len(v) <= _CELL_MAX else v[: _CELL_MAX - 1] + "…"

    cells = [[cell(r, c) for c in order] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(order)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(order, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def cmd_status(args: argparse.Namespace, cfg: Config) -> int:
    from .status import STATUS_COLUMNS

    _write_rows(status_rows(cfg), args.format, args.output, STATUS_COLUMNS)
    return 0


MonitorRunner = Callable[..., int]  # (cfg, once=...) -> exit code: the Kafka glue, consumers.doi.run_monitor


def cmd_run(args: argparse.Namespace, cfg: Config) -> int:
    runner: MonitorRunner = args.run_monitor  # given by the command-line wiring: watcher/doi never imports Kafka
    return runner(cfg, once=args.once)


_DOI_EXAMPLES = """examples:
  driftline doi add dois.csv --tags thesis     watch the DOIs of a list (text or CSV)
  driftline doi import crossref --prefix 10.5555 --since last
  driftline doi run --once                     check every watched DOI once
  driftline doi status -f csv -o status.csv
'driftline doi DOI_COMMAND --help' shows each command's options and examples.
"""
_ADD_EXAMPLES = """examples:
  driftline doi add 10.5555/12345678 https://doi.org/10.5555/abc   DOIs as arguments (any usual form)
  driftline doi add dois.txt                  one DOI a line; '#' starts a comment
  driftline doi add export.csv --tags "press;2024"
                                              CSV/TSV columns: doi, title, landing_url, interval, tags
  cut -f1 export.tsv | driftline doi add -    read the list from stdin
"""
_REMOVE_EXAMPLES = """examples:
  driftline doi remove 10.5555/12345678
  driftline doi remove retired.txt            every DOI of a list file
"""
_LIST_EXAMPLES = """examples:
  driftline doi list
  driftline doi list --tag thesis -f csv > thesis.csv
"""
_IMPORT_EXAMPLES = """examples:
  driftline doi import crossref --prefix 10.5555
  driftline doi import crossref --member 98 --since 2024-01-01 --tags publisher-98
  driftline doi import datacite --client-id cern.zenodo --since last
  driftline doi import datacite --query 'titles.title:drift'
"""
_STATUS_EXAMPLES = """examples:
  driftline doi status                        a table on the terminal
  driftline doi status -f json -o status.json
"""
_RUN_EXAMPLES = """examples:
  driftline doi run                           the scheduler: check each DOI on its interval until Ctrl-C
  driftline doi run --once                    check every DOI once, then exit
  DRIFTLINE__KAFKA__BOOTSTRAP_SERVERS=kafka:9092 driftline doi run
"""


def register(sub: Any, run_monitor: MonitorRunner) -> None:
    """Add ``driftline doi ...`` to the main parser's subparsers ``sub``; ``run_monitor`` runs
    ``doi run`` (the Kafka glue, which only the command-line wiring may import).

    Every parser gets a description, an ``examples:`` epilog and help on
    every argument, as the other commands do (a test walks them all).
    """
    raw = argparse.RawDescriptionHelpFormatter
    doi_help = "the DOI landing-page monitor: lists, imports, checks, status"
    d = sub.add_parser("doi", help=doi_help, description=doi_help, epilog=_DOI_EXAMPLES, formatter_class=raw)
    dsub = d.add_subparsers(dest="doi_command", required=True, metavar="DOI_COMMAND",
                            help="add, remove, list, import, status or run")

    def add(name: str, help_text: str, epilog: str) -> argparse.ArgumentParser:
        sp: argparse.ArgumentParser = dsub.add_parser(name, help=help_text, description=help_text, epilog=epilog,
                                                      formatter_class=raw)
        return sp

    a = add("add", "watch DOIs: a text/CSV list file, '-' for stdin, or DOIs as arguments", _ADD_EXAMPLES)
    a.add_argument("items", nargs="+", metavar="DOI|FILE",
                   help="DOIs (10.x/..., doi:..., https://doi.org/...), one list file, or '-' for stdin")
    a.add_argument("--tags", help="tags added to every DOI (separated by ; | or spaces)")
    a.set_defaults(func=cmd_add)

    r = add("remove", "stop watching DOIs (arguments or a list file); exit 1 when one was not watched",
            _REMOVE_EXAMPLES)
    r.add_argument("items", nargs="+", metavar="DOI|FILE", help="DOIs, one list file, or '-' for stdin")
    r.set_defaults(func=cmd_remove)

    ls = add("list", "the watched DOIs", _LIST_EXAMPLES)
    ls.add_argument("--tag", help="only the DOIs with this tag")
    ls.add_argument("-f", "--format", choices=["table", "csv", "json"], default="table",
                    help="table (default), csv or json")
    ls.set_defaults(func=cmd_list)

    i = add("import", "watch the DOIs of a Crossref or DataCite listing", _IMPORT_EXAMPLES)
    i.add_argument("registry", choices=["crossref", "datacite"], help="the registration agency to list from")
    i.add_argument("--prefix", help="DOI prefix, e.g. 10.5555")
    i.add_argument("--member", help="Crossref member id")
    i.add_argument("--client-id", dest="client_id", help="DataCite repository (client) id")
    i.add_argument("--query", help="DataCite query (Elasticsearch syntax)")
    i.add_argument("--since", help="only records updated since this date (YYYY-MM-DD), or 'last' (the last import)")
    i.add_argument("--tags", help="tags given to the imported DOIs")
    i.set_defaults(func=cmd_import)

    s = add("status", "per DOI: last check, outcome, final URL, change, first drift, reason", _STATUS_EXAMPLES)
    s.add_argument("-f", "--format", choices=["table", "csv", "json"], default="table",
                   help="table (default), csv or json")
    s.add_argument("-o", "--output", help="write to this file instead of stdout")
    s.set_defaults(func=cmd_status)

    rn = add("run", "check the watched DOIs on their schedules and produce capture events", _RUN_EXAMPLES)
    rn.add_argument("--once", action="store_true", help="check every DOI once, then exit")
    rn.set_defaults(func=cmd_run, run_monitor=run_monitor)
