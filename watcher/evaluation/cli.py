"""``driftline eval`` options for evaluation as code, and curator labels as the gold.

Kept out of :mod:`watcher.cli` (shared by every stage) so that the eval
command grows here: :func:`extend_eval` adds the options to the eval parser
and wraps its function.

- ``--results FILE``: write the collection's results block (see
  :mod:`watcher.evaluation.results`) into FILE;
- ``--check-floors FILE``: exit 1 when a figure falls below its floor;
- ``--update-floors FILE [--reason TEXT]``: move the floors (see
  :mod:`watcher.evaluation.floors`);
- ``--labels SOURCE``: score the current configuration against curator labels
  (a gold-format TSV, or a review store: a ``.sqlite``/``.db`` path or a
  ``postgresql://`` DSN, read through ``watcher.review.labels.export_gold``);
  the positional argument is then the captures: a gold directory or any scan
  input (scanned first), or a scan result (JSON/JSONL).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import Config
from ..errors import DriftlineError, InputError

log = logging.getLogger(__name__)

EXIT_BELOW_FLOOR = 1
STORE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
RESULT_SUFFIXES = (".json", ".jsonl")

EvalFunc = Callable[[argparse.Namespace, Config], int]


def is_store(source: str) -> bool:
    """Whether a labels source names a review store rather than a TSV file."""
    return source.startswith(("postgresql://", "postgres://")) or source.lower().endswith(STORE_SUFFIXES)


def resolve_labels(source: str, workdir: str | Path) -> Path:
    """A gold-format labels file for ``source``.

    A TSV path (or a gold directory) is used as it is.  A review store is
    exported with ``watcher.review.labels.export_gold(source, out_path) -> int``
    (the review feature's contract: it writes the header ``id date URI label``,
    then one row per labelled capture, date as 14 digits, label 1 = on topic,
    0 = off topic, and returns the number of rows), imported only here so that
    the TSV path works without that feature.
    """
    if not is_store(source):
        return Path(source)
    try:
        review = importlib.import_module("watcher.review.labels")
    except ImportError:
        raise InputError(f"--labels {source}: reading labels from a review store needs the review feature "
                         f"(watcher.review.labels); export them with 'driftline labels export -f gold' and pass "
                         f"the TSV instead", reason="labels_source") from None
    out = Path(workdir) / "labels.tsv"
    n = int(review.export_gold(source, str(out)))
    if n == 0:
        raise InputError(f"--labels {source}: the store holds no labelled capture", reason="labels_source")
    log.info("read %d labels from %s", n, source)
    return out


def scan_to(inputs: list[str], cfg: Config, out: Path, every_measure: bool = False) -> Path:
    """Scan ``inputs`` with ``cfg`` into ``out`` (JSON); ``every_measure``: score
    every registered measure (as reported ones) so that any can be re-thresholded."""
    from ..scan import scan

    if every_measure:
        from ..measures import REGISTRY

        every = tuple(n for n in REGISTRY if n not in cfg.engine.measures)
        cfg = cfg.model_copy(update={"engine": cfg.engine.model_copy(update={"report_measures": every})})
    scan(inputs, cfg, str(out), "json")
    return out


def captures_result(captures: str, cfg: Config, workdir: str | Path, every_measure: bool = False) -> Path:
    """A scan result for ``captures``: the file itself when it is one, else a scan of it."""
    p = Path(captures)
    if p.is_file() and p.suffix.lower() in RESULT_SUFFIXES:
        return p
    return scan_to([captures], cfg, Path(workdir) / "result.json", every_measure)


def _seeds(text: str) -> tuple[int, ...]:
    try:
        seeds = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected fold seeds as whole numbers, e.g. 0,1,2; got {text!r}") from None
    if not seeds:
        raise argparse.ArgumentTypeError("expected at least one fold seed, e.g. 0,1,2")
    return seeds


def add_options(e: argparse.ArgumentParser) -> None:
    g = e.add_argument_group("evaluation as code")
    g.add_argument("--results", metavar="FILE",
                   help="write this collection's figures (per measure, per profile, TimeMap level, grouped CV at "
                        "several fold seeds) into the results file FILE (JSON; other collections in it are kept)")
    g.add_argument("--collection", metavar="NAME",
                   help="the collection's name in the results and floors files (default: the labels' directory)")
    g.add_argument("--seeds", type=_seeds, metavar="S,S,...", default=None,
                   help="fold seeds of the results' cross-validation (default 0,1,2; --folds K sets K, default 5)")
    g.add_argument("--check-floors", metavar="FILE", help="exit 1 when a figure falls below its floor in FILE")
    g.add_argument("--update-floors", metavar="FILE",
                   help="set the floors in FILE from these figures: raised freely, lowered only with --reason")
    g.add_argument("--reason", metavar="TEXT", help="why floors may fall (recorded in the floors file)")
    g.add_argument("--labels", dest="labels_source", metavar="SOURCE",
                   help="curator labels to score against: a gold-format TSV (id, date, URI, label; 1 = on topic, "
                        "0 = off topic) or a review store (.sqlite/.db path, postgresql:// DSN); the positional "
                        "argument is then the captures (gold directory, scan input, or scan result)")


def _collection_name(args: argparse.Namespace, labels: Path) -> str:
    """``--collection``, else the curator labels' file name, else the gold directory's name."""
    if args.collection:
        return str(args.collection)
    if args.labels_source:
        return "review-store" if is_store(args.labels_source) and "://" in args.labels_source \
            else Path(args.labels_source).stem
    return (labels if labels.is_dir() else labels.parent).resolve().name or "collection"


def _config_summary(cfg: Config) -> dict[str, Any]:
    return {"measures": dict(cfg.engine.measures), "policy": cfg.engine.policy.kind, "profile": cfg.engine.profile,
            "main_content": str(cfg.engine.extract.main_content)}


def run(args: argparse.Namespace, cfg: Config, base: EvalFunc) -> int:
    """``driftline eval`` with the options above; without them, the base command."""
    as_code = bool(args.results or args.check_floors or args.update_floors)
    if args.reason and not args.update_floors:
        raise DriftlineError("--reason goes with --update-floors", reason="usage")
    # `eval labels.tsv crawl.warc.gz`: a second argument that is not a scan result is the captures,
    # scanned first (as with --labels), instead of being refused as an unreadable result.
    captures_given = args.result is not None and is_scan_input(args.result)
    if not as_code and not args.labels_source and not captures_given:
        return base(args, cfg)
    with tempfile.TemporaryDirectory() as tmp:
        if args.labels_source:
            if args.result is not None:
                raise DriftlineError("with --labels give one CAPTURES argument (a gold directory, scan input or "
                                     "scan result), not two", reason="usage")
            labels = resolve_labels(args.labels_source, tmp)
            result = captures_result(args.labels, cfg, tmp, every_measure=bool(args.folds) and not as_code)
            args.shown = (args.labels_source, shown_result(args.labels, result))
        elif captures_given:
            labels = Path(args.labels)
            result = captures_result(args.result, cfg, tmp, every_measure=bool(args.folds) and not as_code)
            args.shown = (args.labels, shown_result(args.result, result))
        else:
            labels = Path(args.labels)
            if args.result is None and not labels.is_dir():
                raise DriftlineError("eval needs LABELS RESULT, or a gold directory to scan first", reason="usage")
            result = Path(args.result) if args.result else scan_to([str(labels)], cfg, Path(tmp) / "result.json")
            args.shown = (args.labels, shown_result(args.result or args.labels, result))
        if not as_code:
            args.labels, args.result = str(labels), str(result)
            return base(args, cfg)
        return _as_code(args, cfg, labels, result)


def is_scan_input(path: str) -> bool:
    """Whether ``path`` holds captures to scan (WARC, CDX(J), TimeMap) rather than a scan result.
    Anything else is read as a result, whose reader says in one line what it is not."""
    from ..archive.detect import detect_input

    if Path(path).suffix.lower() in RESULT_SUFFIXES:
        return False
    try:
        return detect_input(path) != "unknown"
    except DriftlineError:
        return False


def shown_result(given: str, result: Path) -> str:
    """How a report names the result: the file given, or the scan of what was given (never the temporary
    file the scan was written to, which is gone when the report is read)."""
    return given if Path(given).resolve() == result.resolve() else f"a scan of {given}"


def _as_code(args: argparse.Namespace, cfg: Config, labels: Path, result: Path) -> int:
    from .floors import check_floors, load_floors, update_floors
    from .report import render
    from .results import DEFAULT_FOLDS, DEFAULT_SEEDS, SCHEMA, collection_results, write_results

    block = collection_results(labels, result, voting=list(cfg.engine.measures), policy=cfg.engine.policy,
                               canonical=cfg.engine.canonical,
                               k=args.folds or DEFAULT_FOLDS, seeds=args.seeds or DEFAULT_SEEDS)
    name = _collection_name(args, labels)
    if getattr(args, "shown", ("", "a scan of "))[1].startswith("a scan of "):
        block["result"] = "scanned by this run"  # a temporary file, not worth naming
    if args.labels_source and is_store(args.labels_source):  # exported to a temporary file: name the store
        block["labels"] = "a PostgreSQL review store" if "://" in args.labels_source else \
            f"review store {Path(args.labels_source).name}"
    if args.results:
        data = write_results(args.results, name, block, _config_summary(cfg))
        log.info("wrote collection %s into %s", name, args.results)
    else:
        data = {"schema": SCHEMA, "collections": {name: block}}
    print(render({"collections": {name: data["collections"][name]}}))
    code = 0
    if args.update_floors:
        for line in update_floors(args.update_floors, data, args.reason, collections=[name]) or ["no floor moved"]:
            print(f"floors: {line}")
    if args.check_floors:
        checked, failures = check_floors({"collections": {name: block}}, load_floors(args.check_floors))
        for line in failures:
            log.error("below floor: %s", line)
        if not checked:
            log.warning("%s holds no floor for collection %s", args.check_floors, name)
        print(f"floors: {checked - len(failures)} of {checked} figures at or above their floors")
        code = EXIT_BELOW_FLOOR if failures else 0
    return code


def extend_eval(e: argparse.ArgumentParser, base: EvalFunc) -> None:
    """Add the options to the eval parser and route it through :func:`run`."""
    add_options(e)
    e.set_defaults(func=lambda args, cfg: run(args, cfg, base))
