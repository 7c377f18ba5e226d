"""The ``driftline`` command: each subcommand wires its options to one call.

    driftline scan INPUT... [-o FILE] [--format json|csv|jsonl|summary] [--allow-missing]
                                      exit 3 when an input or capture could not be read
    driftline eval LABELS.tsv RESULT.json | driftline eval GOLD_DIR [--folds K [--seed S] [--json]]
    driftline compare A B [--json]
    driftline run [--once]            the streaming watcher (Kafka)
    driftline demo [--once]           a sample crawl through the embedded broker
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .config import Config, load_config
from .errors import DriftlineError

log = logging.getLogger(__name__)

# `driftline scan`: some input or capture could not be read (scan.allow_missing accepts that).
EXIT_UNREADABLE = 3


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """Command-line options as a config overlay (highest precedence)."""
    engine: dict[str, Any] = {}
    if getattr(args, "measures", None):
        from .measures import parse_measures

        engine["measures"] = parse_measures(args.measures)
    if getattr(args, "report", None) is not None:
        engine["report_measures"] = tuple(x for x in args.report.split(",") if x.strip())
    if getattr(args, "policy", None):
        kind, _, k = args.policy.partition(":")
        engine["policy"] = {"kind": kind, **({"k": int(k)} if k else {})}
    if getattr(args, "baseline", None):
        engine["baseline"] = {"policy": args.baseline}
    if getattr(args, "main_content", None) is not None:
        engine["extract"] = {"main_content": args.main_content}
    if getattr(args, "stemming", False):
        engine["tokens"] = {"stemming": True}
    if getattr(args, "profile", None):
        engine["profile"] = args.profile
    out: dict[str, Any] = {"engine": engine} if engine else {}
    scan: dict[str, Any] = {}
    if getattr(args, "workers", None) is not None:
        scan["workers"] = args.workers
    if getattr(args, "no_progress", False):
        scan["progress"] = False
    if getattr(args, "allow_missing", False):
        scan["allow_missing"] = True
    if scan:
        out["scan"] = scan
    if getattr(args, "log_level", None):
        out["log_level"] = args.log_level
    return out


def _config(args: argparse.Namespace) -> Config:
    return load_config(args.config, overrides=_overrides(args))


def cmd_scan(args: argparse.Namespace, cfg: Config) -> int:
    from .scan import scan

    counts = scan(args.inputs, cfg, args.output, args.format)
    log.info("scanned %(histories)d histories, %(captures)d captures: %(off-topic)d off-topic, %(empty)d empty, "
             "%(error)d errors; unreadable: %(unreadable captures)d captures, %(unreadable inputs)d inputs", counts)
    if (counts["unreadable captures"] or counts["unreadable inputs"]) and not cfg.scan.allow_missing:
        log.error("some inputs or captures could not be read (see the warnings above); exit code %d "
                  "(--allow-missing accepts that)", EXIT_UNREADABLE)
        return EXIT_UNREADABLE
    return 0


def _eval_report(args: argparse.Namespace, cfg: Config, result: str) -> str:
    if not getattr(args, "folds", None):
        from .evaluate import evaluate, format_report

        return format_report(evaluate(args.labels, result))
    from .crossval import cross_validate, format_cv
    from .evaluate import match_results

    rep = cross_validate(match_results(args.labels, result), args.folds, args.seed,
                         voting=list(cfg.engine.measures), policy=cfg.engine.policy,
                         labels_path=str(args.labels), result_path=str(args.result or result))
    return json.dumps(rep.to_json(), indent=2) if args.json else format_cv(rep)


def cmd_eval(args: argparse.Namespace, cfg: Config) -> int:
    if args.result is None:
        if not Path(args.labels).is_dir():
            raise DriftlineError("eval needs LABELS RESULT, or a gold directory to scan first", reason="usage")
        from .scan import scan

        if getattr(args, "folds", None) and args.report is None:
            # one scan with every measure scored, so that every rule can be re-thresholded from it
            from .measures import REGISTRY

            every = tuple(n for n in REGISTRY if n not in cfg.engine.measures)
            cfg = cfg.model_copy(update={"engine": cfg.engine.model_copy(update={"report_measures": every})})
        with tempfile.TemporaryDirectory() as tmp:
            result = str(Path(tmp) / "result.json")
            scan([args.labels], cfg, result, "json")
            print(_eval_report(args, cfg, result))
        return 0
    print(_eval_report(args, cfg, args.result))
    return 0


def cmd_compare(args: argparse.Namespace, cfg: Config) -> int:
    from .compare import compare_files, format_comparison

    result = compare_files(args.a, args.b, cfg.engine)
    print(json.dumps(result, ensure_ascii=False, indent=2) if args.json else format_comparison(result))
    return 0


def cmd_run(args: argparse.Namespace, cfg: Config) -> int:
    from consumers.app import run

    return run(cfg, once=args.once)


def cmd_demo(args: argparse.Namespace, cfg: Config) -> int:
    from .demo.run import run_demo

    return run_demo(cfg, once=args.once)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="driftline", description="Crawl-time content-drift watcher.")
    p.add_argument("--version", action="version", version=f"driftline {__version__}")
    p.add_argument("-c", "--config", help="configuration file (default: the shipped config.yaml)")
    p.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    sub = p.add_subparsers(dest="command", required=True)

    def engine_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("-tm", "--measures", help="voting measures, OTMT style: cosine=0.12,wordcount=-0.70")
        sp.add_argument("--report", help="reported (non-voting) measures, comma-separated ('' for none)")
        sp.add_argument("--policy", help="any | all | k-of-n:K | weighted")
        sp.add_argument("--baseline", choices=["first", "first-valid", "pinned", "rolling"])
        sp.add_argument("--main-content", dest="main_content", action=argparse.BooleanOptionalAction, default=None,
                        help="remove boilerplate (navigation, headers, footers) before measuring")
        sp.add_argument("--stemming", action="store_true", help="stem terms (Snowball, by detected language)")
        sp.add_argument("--profile", choices=["collection", "text", "doi"],
                        help="the question a verdict answers: collection (still on the curator's topic?, the "
                             "default), text (is the text still there?), doi (is the scholarly record still there?)")

    s = sub.add_parser("scan", help="score WARC/ARC files, CDX(J) indexes, TimeMaps or a gold directory")
    s.add_argument("inputs", nargs="+")
    s.add_argument("-o", "--output", help="output file (default: stdout)")
    s.add_argument("-f", "--format", choices=["json", "csv", "jsonl", "summary"])
    s.add_argument("-j", "--workers", type=int, help="worker processes (default: one per core)")
    s.add_argument("--no-progress", action="store_true")
    s.add_argument("--allow-missing", action="store_true",
                   help=f"exit 0 even when inputs or captures could not be read (default: exit {EXIT_UNREADABLE})")
    engine_opts(s)
    s.set_defaults(func=cmd_scan)

    e = sub.add_parser("eval", help="precision/recall/F1/AUC against labelled data")
    e.add_argument("labels", help="labels.tsv or a gold directory")
    e.add_argument("result", nargs="?", help="result JSON/JSONL (omit to scan the gold directory first)")
    e.add_argument("-j", "--workers", type=int)
    e.add_argument("--no-progress", action="store_true")
    e.add_argument("--folds", type=int, help="grouped K-fold cross-validation by TimeMap (K >= 2)")
    e.add_argument("--seed", type=int, default=0, help="seed of the fold assignment (default 0)")
    e.add_argument("--json", action="store_true", help="cross-validation report as JSON")
    engine_opts(e)
    e.set_defaults(func=cmd_eval)

    c = sub.add_parser("compare", help="score two files (HTML or text) with every measure")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--json", action="store_true")
    engine_opts(c)
    c.set_defaults(func=cmd_compare)

    r = sub.add_parser("run", help="the streaming watcher: consume capture events from Kafka")
    r.add_argument("--once", action="store_true", help="exit when the input topics are drained")
    r.set_defaults(func=cmd_run)

    d = sub.add_parser("demo", help="feed a sample crawl through the embedded broker and show the verdicts")
    d.add_argument("--once", action="store_true", help="exit after the summary instead of serving /metrics")
    d.set_defaults(func=cmd_demo)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        cfg = _config(args)
        from .logging_setup import setup_logging

        setup_logging(cfg.log_level, cfg.log_format)
        return int(args.func(args, cfg))
    except DriftlineError as exc:
        print(f"driftline: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
