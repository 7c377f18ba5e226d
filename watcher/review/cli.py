"""``driftline review`` and ``driftline labels export``: parsers and the functions they run.

``register(sub)`` adds both to the main parser (watcher/cli.py calls it once).
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import ConfigError, DriftlineError

_REVIEW_EXAMPLES = """examples:
  driftline review result.json                      labels kept in result.json.review.sqlite
  driftline review result.json --warc-dir /data/warcs   the WARCs the scan read live in another folder
  driftline review driftline.db                     the store `driftline run` writes
  driftline review postgresql://driftline@db/driftline --read-only
  DRIFTLINE__REVIEW__TOKEN=s3cret driftline review result.jsonl --host 0.0.0.0
"""
_EXPORT_EXAMPLES = """examples:
  driftline labels export --store result.json.review.sqlite -o labels.tsv
  driftline labels export --store postgresql://driftline@db/driftline -f jsonl -o labels.jsonl
"""
_LABELS_EXAMPLES = """examples:
  driftline labels export --store result.json.review.sqlite -o labels.tsv
  driftline eval labels.tsv result.json             driftline measured on the curator's labels
  driftline labels export --store driftline.db -f jsonl
"""


def run_review(args: argparse.Namespace, cfg: Config) -> int:
    from .hosts import check_bind
    from .ingest import open_input
    from .server import make_app, serve, started_line

    host = args.host or cfg.review.host
    port = cfg.review.port if args.port is None else args.port
    token = cfg.review.token.get_secret_value() if cfg.review.token else None
    check_bind(host, token)  # before anything is opened or imported
    for d in args.warc_dirs:
        if not Path(d).is_dir():
            raise DriftlineError(f"--warc-dir {d}: no such directory", reason="usage")
    if args.warc_dirs:  # folders captures may be read from, besides the result's own and acquire.warc_dirs
        dirs = tuple(dict.fromkeys((*args.warc_dirs, *cfg.acquire.warc_dirs)))
        cfg = cfg.model_copy(update={"acquire": cfg.acquire.model_copy(update={"warc_dirs": dirs})})
    store, review, where, result = open_input(args.input, args.store)
    try:
        shots = Path(cfg.review.screenshot_dir) if cfg.review.screenshot_dir else (
            Path(f"{where}.shots") if Path(where).is_file() else Path(tempfile.gettempdir()) / "driftline-review-shots")
        app = make_app(store, review, cfg, where=where, read_only=args.read_only, token=token, shots_dir=shots,
                       host=host, result=result)

        def announce(url: str) -> None:
            print(started_line(where, url), flush=True)

        try:
            asyncio.run(serve(app, host, port, announce))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
                what = {errno.EADDRINUSE: "is in use", errno.EADDRNOTAVAIL: "is not an address of this machine",
                        errno.EACCES: "needs privileges"}[exc.errno]
                raise ConfigError(f"review: cannot listen on {host} port {port}: the port {what}; choose "
                                  "another with --port P (0 = a free one) or review.port",
                                  reason="review_port") from None
            raise
    finally:
        store.close()
    return 0


def run_labels(args: argparse.Namespace, cfg: Config) -> int:
    from .labels import export_labels

    if args.store:
        store = args.store
    elif cfg.store.backend == "postgres" and cfg.store.dsn is not None:
        store = cfg.store.dsn.get_secret_value()
    else:
        store = cfg.store.path
    n = export_labels(store, Path(args.output) if args.output else None, args.format)
    print(f"driftline labels: {n} labels written ({args.format})", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction[Any]) -> None:
    r = sub.add_parser("review", help="the curator's page: verdicts seen, checked and labelled",
                       description="the curator's page: verdicts seen, checked and labelled",
                       epilog=_REVIEW_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("input", metavar="INPUT", help="a store (SQLite file or postgresql:// DSN) or a scan result "
                   "(JSON or JSONL of 'driftline scan')")
    r.add_argument("--store", metavar="PATH|DSN", help="where a scan result's verdicts and labels are kept "
                   "(default: <result file>.review.sqlite)")
    r.add_argument("--host", metavar="H", help="address to bind (default: review.host, 127.0.0.1; any other "
                   "needs review.token)")
    r.add_argument("--port", type=int, metavar="P", help="port (default: review.port; 0 = a free one)")
    r.add_argument("--read-only", action="store_true", help="serve no write at all")
    r.add_argument("--warc-dir", dest="warc_dirs", action="append", default=[], metavar="DIR",
                   help="a folder the captures' WARC files or pages may be read from (repeatable; besides the "
                        "scan result's folder, acquire.warc_dirs and doi.warc_dir; nothing outside them is read)")
    r.set_defaults(func=run_review)

    lab = sub.add_parser("labels", help="the curator's labels: export",
                         description="the curator's labels: export", epilog=_LABELS_EXAMPLES,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    lsub = lab.add_subparsers(dest="labels_command", required=True, metavar="ACTION", help="export")
    e = lsub.add_parser("export", help="write the labels as gold TSV (what eval reads) or JSONL",
                        description="write the curator's labels as gold TSV (what eval reads) or JSONL",
                        epilog=_EXPORT_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("--store", metavar="PATH|DSN", help="the store holding the labels (default: store.path, or "
                   "store.dsn for the postgres backend)")
    e.add_argument("-f", "--format", choices=["gold", "jsonl"], default="gold",
                   help="gold: id, date, URI, label (1 on topic, 0 off topic; blocked/unsure left out); jsonl: "
                        "every label with note, time, reviewer")
    e.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    e.set_defaults(func=run_labels)
