"""The ``driftline`` command: each subcommand wires its options to one call.

Batch: ``scan`` (WARC/ARC, WACZ, CDX(J), TimeMaps, gold directories; exit 3 when an input or
capture could not be read), ``spark`` (the same scan as an Apache Spark job), ``eval`` (against
labels, ``--folds`` for grouped cross-validation), ``tune``, ``compare`` (two pages, every measure).
Stream: ``run`` (the Kafka watcher, or ``--crawl-log`` without a broker), ``feed`` (archives or
crawl.log files as events), ``tail`` (what driftline publishes), ``demo``.  Guidance and review:
``seeds``, ``guide``, ``review``, ``labels``.  The DOI monitor: ``doi``.  ``driftline COMMAND
--help`` gives each one's options (docs/reference/cli.md is generated from them).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__, profiles
from .config import Config, load_config
from .errors import ConfigError, DriftlineError

log = logging.getLogger(__name__)

# Where each config path set from the command line came from, for error messages.
_OPTION_OF: dict[tuple[str, ...], str] = {
    ("engine", "measures"): "-tm/--measures",
    ("engine", "report_measures"): "--report",
    ("engine", "policy", "kind"): "--policy",
    ("engine", "policy", "k"): "--policy",
    ("engine", "baseline", "policy"): "--baseline",
    ("engine", "extract", "main_content"): "--main-content",
    ("engine", "tokens", "stemming"): "--stemming",
    ("engine", "profile"): "--profile",
    ("scan", "workers"): "-j/--workers",
    ("scan", "allow_missing"): "--allow-missing",
    ("log_level",): "--log-level",
}


def _policy(text: str) -> dict[str, Any]:
    """``--policy any|all|weighted|k-of-n:K`` as the ``engine.policy`` overlay."""
    kind, sep, k = text.partition(":")
    expected = "expected any, all, weighted or k-of-n:K (K a whole number >= 1)"
    if kind not in ("any", "all", "weighted", "k-of-n") or (sep and kind != "k-of-n"):
        raise ConfigError(f"--policy {text!r}: {expected}", reason="usage")
    if not sep:
        return {"kind": kind}
    try:
        return {"kind": kind, "k": int(k)}
    except ValueError:
        raise ConfigError(f"--policy {text!r}: {expected}", reason="usage") from None


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
        engine["policy"] = _policy(args.policy)
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
    overrides = _overrides(args)

    def given(path: tuple[str, ...]) -> bool:
        node: Any = overrides
        for part in path:
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    sources = {path: option for path, option in _OPTION_OF.items() if given(path)}
    return load_config(args.config, overrides=overrides, override_sources=sources)


def cmd_scan(args: argparse.Namespace, cfg: Config) -> int:
    from .scan import scan

    if args.warc_dirs:  # --warc-dir first, then acquire.warc_dirs
        for d in args.warc_dirs:
            if not Path(d).is_dir():
                raise DriftlineError(f"--warc-dir {d}: no such directory", reason="usage")
        dirs = tuple(dict.fromkeys((*args.warc_dirs, *cfg.acquire.warc_dirs)))
        cfg = cfg.model_copy(update={"acquire": cfg.acquire.model_copy(update={"warc_dirs": dirs})})

    counts = scan(args.inputs, cfg, args.output, args.format)
    log.info("scanned %(histories)d histories, %(captures)d captures: %(off-topic)d off-topic, %(empty)d empty, "
             "%(error)d errors; unreadable: %(unreadable captures)d captures, %(unreadable inputs)d inputs; "
             "skipped: %(skipped non-documents)d non-documents", counts)
    if (counts["unreadable captures"] or counts["unreadable inputs"]) and not cfg.scan.allow_missing:
        log.error("some inputs or captures could not be read (see the warnings above); exit code %d "
                  "(--allow-missing accepts that)", EXIT_UNREADABLE)
        return EXIT_UNREADABLE
    return 0


def cmd_spark(args: argparse.Namespace, cfg: Config) -> int:
    try:
        import pyspark  # noqa: F401 - the optional extra, asked for before anything starts
    except ImportError:
        raise DriftlineError("driftline spark needs PySpark and Java 17: pip install 'driftline[spark]' and "
                             "apt-get install openjdk-17-jre-headless", reason="usage") from None
    from .spark.job import run

    counts = run(args.inputs, cfg, args.output, args.format, args.master, args.store, args.partitions)
    print(json.dumps(counts, indent=2, sort_keys=True), file=sys.stderr)
    return 0


def _eval_report(args: argparse.Namespace, cfg: Config, result: str) -> str:
    # The report's header names what the user gave, never a temporary file (a scan's result, labels
    # read from a review store): ``args.shown`` when the evaluation-as-code path set it.
    labels_shown, result_shown = getattr(args, "shown", None) or (str(args.labels), str(args.result or result))
    if not getattr(args, "folds", None):
        from dataclasses import replace

        from .evaluation.evaluate import evaluate, format_report

        return format_report(replace(evaluate(args.labels, result, cfg.engine.canonical), labels_path=labels_shown,
                                     result_path=result_shown))
    from .evaluation.crossval import cross_validate, format_cv
    from .evaluation.evaluate import match_results

    rep = cross_validate(match_results(args.labels, result, cfg.engine.canonical), args.folds, args.seed,
                         voting=list(cfg.engine.measures), policy=cfg.engine.policy,
                         labels_path=labels_shown, result_path=result_shown)
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
            args.shown = (str(args.labels), f"a scan of {args.labels}")
            print(_eval_report(args, cfg, result))
        return 0
    print(_eval_report(args, cfg, args.result))
    return 0


def cmd_compare(args: argparse.Namespace, cfg: Config) -> int:
    from .compare import compare_files, format_comparison

    result = compare_files(args.a, args.b, cfg.engine, url=args.url)
    print(json.dumps(result, ensure_ascii=False, indent=2) if args.json else format_comparison(result))
    return 0


def _check_crawl_logs(paths: Sequence[str], *, once: bool) -> None:
    """Refuse, in one line, a ``--crawl-log`` that can never be read: a directory (it printed a raw
    ``[Errno 21]``) or, with ``--once``, a file that does not exist (it exited 0 having read nothing).
    Without ``--once`` a missing file is followed once it appears (a crawl not started yet)."""
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            hint = f"; did you mean {p / 'crawl.log'}?" if (p / "crawl.log").is_file() else ""
            raise ConfigError(f"--crawl-log {raw}: is a directory, not a crawl.log file{hint}", reason="usage")
        if once and not p.exists():
            raise ConfigError(f"--crawl-log {raw}: no such file (with --once there would be nothing to read; without "
                              "--once it is followed once it appears)", reason="usage")


def cmd_run(args: argparse.Namespace, cfg: Config) -> int:
    if args.replay_since is not None:  # the durable path's messages again, from the store's ledger
        from consumers.crawllog import run_replay

        return run_replay(cfg, args.replay_since)
    if args.crawl_log:  # the durable single-machine path: follow crawl.log files, no broker
        _check_crawl_logs(args.crawl_log, once=args.once)
        from consumers.crawllog import run_durable

        return run_durable(cfg, args.crawl_log, once=args.once)
    from consumers.app import run

    return run(cfg, once=args.once)


def cmd_demo(args: argparse.Namespace, cfg: Config) -> int:
    from .demo.run import run_demo

    return run_demo(cfg, once=args.once, keep=Path(args.keep) if args.keep else None)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors: the message, then where to read more."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {n} (omit -j for one per core)")
    return n


_SCAN_EXAMPLES = """examples:
  driftline scan crawl.warc.gz -o results.json
  driftline scan index.cdxj --format summary
  driftline scan indexes/all.cdxj --warc-dir /data/warcs -f csv -o results.csv
  driftline scan /data/warcs/ -f jsonl -o out.jsonl     every WARC/ARC file of a directory
  driftline scan https://web.archive.org/web/timemap/link/http://example.org/ -f jsonl -o out.jsonl
  driftline scan gold/ -tm cosine=0.12,wordcount=-0.70 --policy k-of-n:2 -j 4
"""
_EVAL_LABELS = """

labels file: tab-separated, a header row naming the columns id, date, uri, label (any order):
  id     the TimeMap (history) the capture belongs to
  date   the capture time, 14 digits (YYYYMMDDhhmmss)
  uri    the memento's URI-M; an original URL is matched by (URL, date), with a warning
  label  1 = on topic, 0 = off topic (as in the published off-topic gold standards);
         off topic is the positive class of precision, recall and F1"""
_EVAL_EXAMPLES = """examples:
  driftline eval labels.tsv results.json     score a scan's result against labels
  driftline eval gold/                       scan a gold directory, then score it
  driftline eval labels.tsv crawl.warc.gz    scan the captures (WARC, CDX(J), TimeMap), then score them
"""
_COMPARE_EXAMPLES = """examples:
  driftline compare before.html after.html
  driftline compare cited.pdf today.html --json | jq .overall
  driftline compare a.html b.html --url http://example.org/    judged as the site's home page
"""
_SPARK_EXAMPLES = """examples:
  driftline spark crawl/ -o verdicts.jsonl -f jsonl --master local[4]
  driftline spark s3a://bucket/collection/ -o out.parquet -f parquet        under spark-submit
  driftline spark archive.wacz -o out.json --store postgresql://driftline@db/driftline
  spark-submit --master yarn "$(python -m watcher.spark --driver-file)" hdfs:///warcs/ -o out.parquet -f parquet
    (see docs/operations/spark.md: shipping the environment, reading S3, sizing)
"""
_RUN_EXAMPLES = """examples:
  driftline run                                       embedded broker, metrics on 127.0.0.1:9308
  DRIFTLINE__KAFKA__BOOTSTRAP_SERVERS=kafka:9092 driftline run
  DRIFTLINE__METRICS__PORT=9400 driftline run         another metrics port
  driftline -c my.yaml run --once                     exit when the input topics are drained
  driftline run --crawl-log jobs/JOB/latest/logs/crawl.log   no broker: durable, position kept in the store
exit status: 0 after SIGTERM or a drained --once, 130 after Ctrl-C (SIGINT), 2 when it cannot start;
  either signal first finishes and commits the work in flight
"""
_DEMO_EXAMPLES = """examples:
  driftline demo           run the sample crawl, then serve /metrics until Ctrl-C
  driftline demo --once    run the sample crawl and exit (0 when every seed behaved as designed)
  driftline demo --once --keep sample/   keep the sample WARC, its CDXJ index and crawl.log in sample/
"""


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="driftline", description="Crawl-time content-drift watcher.",
                epilog="'driftline COMMAND --help' shows each command's options and examples.")
    p.add_argument("--version", action="version", version=f"driftline {__version__}")
    p.add_argument("-c", "--config", metavar="FILE", help="configuration file (default: the shipped config.yaml; "
                   "DRIFTLINE__SECTION__KEY variables override it)")
    p.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="log verbosity (default: INFO)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    def add(name: str, help_text: str, epilog: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_text, description=help_text, epilog=epilog,
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    def engine_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("-tm", "--measures", metavar="SPEC",
                        help="voting measures, OTMT style: cosine=0.12,wordcount=-0.70 (a name alone takes its "
                             "default threshold)")
        sp.add_argument("--report", metavar="NAMES",
                        help="reported (non-voting) measures, comma-separated ('' for none)")
        sp.add_argument("--policy", metavar="POLICY",
                        help="how the voting measures combine: any | all | k-of-n:K | weighted (default: any)")
        sp.add_argument("--baseline", choices=["first", "first-valid", "pinned", "rolling"],
                        help="which capture the others are compared with (pinned needs engine.baseline.pinned "
                             "in the config file)")
        sp.add_argument("--main-content", dest="main_content", action=argparse.BooleanOptionalAction, default=None,
                        help="remove boilerplate (navigation, headers, footers) before measuring (default: "
                             "extract.main_content, auto there: for --profile text and for deep-page seeds)")
        sp.add_argument("--stemming", action="store_true", help="stem terms (Snowball, by detected language)")
        sp.add_argument("--profile", choices=profiles.names(),
                        help="the question a verdict answers: collection (still on the curator's topic?, the "
                             "default), text (is the text still there?), doi (is the scholarly record still there?)")

    def batch_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("-j", "--workers", type=_workers, metavar="N",
                        help="worker processes, >= 1 (default: scan.workers, 0 there = one per core)")
        sp.add_argument("--no-progress", action="store_true", help="no progress bar on the terminal")

    s = add("scan", "score WARC/ARC files (or directories of them), CDX(J) indexes, TimeMaps or a gold directory",
            _SCAN_EXAMPLES)
    s.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="WARC/ARC file, CDX/CDXJ index, TimeMap file or URL, directory of WARC/ARC files, or gold "
                        "directory (labels.tsv)")
    s.add_argument("--warc-dir", dest="warc_dirs", action="append", default=[], metavar="DIR",
                   help="where the WARCs a CDX/CDXJ index names are, when not beside it (repeatable; searched "
                        "before acquire.warc_dirs)")
    s.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    s.add_argument("-f", "--format", choices=["json", "csv", "jsonl", "summary"],
                   help="json (OTMT schema), csv, jsonl (one capture a line) or summary (one history a line); "
                        "default: scan.format")
    batch_opts(s)
    s.add_argument("--allow-missing", action="store_true",
                   help=f"exit 0 even when inputs or captures could not be read (default: exit {EXIT_UNREADABLE})")
    engine_opts(s)
    s.set_defaults(func=cmd_scan)

    sp = add("spark", "the batch scan as an Apache Spark job: WARC/ARC files or directories (local, file://, "
             "hdfs://, s3a://), CDX(J) indexes, WACZ files, gold directories", _SPARK_EXAMPLES)
    sp.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="as scan takes them (TimeMaps aside), or a Hadoop path: hdfs://..., s3a://... (a file, a "
                         "directory or a glob)")
    sp.add_argument("-o", "--output", required=True, metavar="OUT",
                    help="output file (a folder for parquet); counters in OUT.counters.json, error rows in "
                         "OUT.errors.jsonl")
    sp.add_argument("-f", "--format", choices=["json", "csv", "jsonl", "parquet"], default="json",
                    help="scan's formats, or parquet (a column per verdict field, partitioned by year and month)")
    sp.add_argument("--master", metavar="URL",
                    help="Spark master (local[4], yarn, k8s://..., spark://...); default: spark-submit's or local[*]")
    sp.add_argument("--store", metavar="DSN",
                    help="backfill: each history's final state into this store (postgresql://... or an SQLite "
                         "file), so 'driftline run' on it judges the next capture against the archive's baseline")
    sp.add_argument("--partitions", type=_workers, metavar="N",
                    help="partitions of the sorted histories (default: twice the default parallelism)")
    engine_opts(sp)
    sp.set_defaults(func=cmd_spark)

    e = add("eval", "precision/recall/F1/AUC against labelled data", _EVAL_EXAMPLES)
    e.description = f"{e.description}{_EVAL_LABELS}"
    e.add_argument("labels", metavar="LABELS", help="labels.tsv (id, date, URI, label) or a gold directory")
    e.add_argument("result", nargs="?", metavar="RESULT",
                   help="result JSON/JSONL of 'driftline scan', or captures to scan first (WARC, CDX(J), "
                        "TimeMap; omit to scan the gold directory first)")
    batch_opts(e)
    e.add_argument("--folds", type=int, metavar="K",
                   help="grouped K-fold cross-validation by TimeMap (K >= 2): thresholds tuned on the training folds, "
                        "scored on the held-out fold")
    e.add_argument("--seed", type=int, default=0, help="seed of the fold assignment (default 0)")
    e.add_argument("--json", action="store_true", help="the cross-validation report as JSON")
    engine_opts(e)
    e.set_defaults(func=cmd_eval)
    from .evaluation.cli import extend_eval  # evaluation as code, curator labels (watcher/evaluation/cli.py)

    extend_eval(e, cmd_eval)

    c = add("compare", "score two pages (HTML, text or PDF files) with every measure", _COMPARE_EXAMPLES)
    c.add_argument("a", metavar="A", help="the baseline page (HTML, text or PDF file)")
    c.add_argument("b", metavar="B", help="the page compared with A")
    c.add_argument("--json", action="store_true", help="print the scores as JSON")
    c.add_argument("--url", metavar="URL", help="the address both pages were captured from: a home page stands for "
                   "the organisation, a deep page for its subject, read by its main content (default: the "
                   "files, read as deep pages)")
    engine_opts(c)
    c.set_defaults(func=cmd_compare)

    r = add("run", "the streaming watcher: consume capture events from Kafka", _RUN_EXAMPLES)
    r.add_argument("--once", action="store_true", help="exit when the input topics are drained")
    r.add_argument("--crawl-log", nargs="+", action="extend", metavar="PATH", help="follow these Heritrix crawl.log "
                   "files instead of Kafka (no broker; rotation followed; position kept in the store)")
    r.add_argument("--replay-since", metavar="SEQ|VERDICT_ID", help="print the messages --crawl-log recorded in the "
                   "store after this seq (or from this verdict on) and exit: what a kill kept from stdout")
    r.set_defaults(func=cmd_run)

    d = add("demo", "feed a sample crawl through the embedded broker and show the verdicts", _DEMO_EXAMPLES)
    d.add_argument("--once", action="store_true", help="exit after the summary instead of serving /metrics")
    d.add_argument("--keep", metavar="DIR", help="work in DIR (new or empty) and keep it: the sample WARC, its CDXJ "
                   "index and crawl.log, and the store, for trying the other commands on")
    d.set_defaults(func=cmd_demo)

    from .doi.cli import register as register_doi

    register_doi(sub, _run_doi_monitor)
    from consumers import feed, tail  # Kafka clients: wired here, as 'run' is

    for command in (feed, tail):
        command.add_parser(sub)
    from .actuators.command import add_parser as add_guide

    add_guide(sub)
    from .seeds.cli import register as register_seeds

    register_seeds(sub)
    from .review.cli import register as register_review

    register_review(sub)
    from .evaluation.tune import add_parser as add_tune  # calibrating on labels (watcher/evaluation/tune.py)

    add_tune(sub)
    return p


def _run_doi_monitor(cfg: Config, *, once: bool = False) -> int:
    from consumers.doi import run_monitor  # the Kafka glue: only the command-line wiring imports consumers

    return run_monitor(cfg, once=once)


def _quiet_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush stays silent."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no real file (captured in tests)
        pass
    finally:
        os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; every failure ends as one line per problem on stderr and a non-zero exit.

    Exit codes: 0 done, 1 the command's own "no" (demo seeds misbehaved),
    2 usage, configuration or input error, 3 scan: some input unreadable, 70 internal error (a bug), 130
    Ctrl-C, 141 output pipe closed.
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # a usage error (one line printed) or --help/--version: an exit code, not a raise
        return exc.code if isinstance(exc.code, int) else 2
    try:
        cfg = _config(args)
        from .logging_setup import setup_logging

        setup_logging(cfg.log_level, cfg.log_format)
        code = int(args.func(args, cfg))
        sys.stdout.flush()
        return code
    except ConfigError as exc:
        for line in exc.problems:
            print(f"driftline: error: {line}", file=sys.stderr)
        return 2
    except DriftlineError as exc:
        print(f"driftline: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (``driftline compare A B --json | head``): not an error worth a word.
        _quiet_stdout()
        return 141
    except KeyboardInterrupt as exc:  # the line says what was kept (a scan's finished histories), if anything
        print(f"driftline: {str(exc) or 'interrupted'}", file=sys.stderr)
        return 130
    except OSError as exc:  # a file or socket the command needed, named by the error itself
        print(f"driftline: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        # A bug: one line for the user, the traceback for the report: in the log at DEBUG, and always
        # for the long-running service (``run``), whose operator reads logs, not a terminal.
        log.log(logging.ERROR if args.command == "run" else logging.DEBUG, "unexpected error", exc_info=True)
        print(f"driftline: internal error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''} "
              f"(a bug: please report it with the output of --log-level DEBUG)", file=sys.stderr)
        return 70


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
