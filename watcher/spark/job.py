"""``driftline spark``: the batch scan as an Apache Spark job.

The stages, and what travels between them (never a payload):

1. **Read** (a task per archive file, per CDX index's archive, per gold history): records
   read with ``scan``'s readers and fingerprinted where they lie
   (:mod:`watcher.spark.records`).
2. **Revisits**: each revisit's candidate originals (by ``WARC-Refers-To``, by payload
   digest) are joined to it by their index metadata, ``scan``'s resolver picks one
   (:class:`watcher.archive.warc.RevisitResolver`), and the revisit takes its fingerprint.
3. **Secondary sort**: records keyed by ``(history, capture time, tie)``, partitioned by
   history alone (``repartitionAndSortWithinPartitions``), so each partition streams whole
   histories in capture-time order; Spark's sorter spills to disk, so no history is ever
   held whole.
4. **Fold** (:mod:`watcher.spark.fold`): the one scoring step over each history.
5. **Write**: ``scan``'s writers on the driver (streamed one partition at a time), or
   Parquet written by the executors, partitioned by capture year and month.  Counters and
   error rows beside the output; with ``--store``, each history's final state into the
   store (the backfill the stream starts from).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import sys
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..archive.detect import detect_input
from ..archive.index import IndexEntry, index_cdx
from ..archive.wacz import archive_members
from ..archive.warc import RevisitResolver
from ..config import Config
from ..engine import Engine
from ..errors import ConfigError, InputError
from ..events.skip import base_mimetype, non_document
from ..sources import expand_inputs
from ..sources.gold import GoldRow, read_labels
from .fold import HistoryEnd, Scored, fold_partition, history_results
from .records import ErrorRow, Record, archive_records, gold_records, revisit_resolved, staged_copy, where_of
from .tables import parquet_row, parquet_schema

log = logging.getLogger(__name__)

FORMATS = ("json", "csv", "jsonl", "parquet")
_LOCAL_SCHEMES = ("file://",)
_HADOOP_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


@dataclasses.dataclass
class Plan:
    """The inputs sorted by how the job reads them."""

    archives: list[str] = dataclasses.field(default_factory=list)  # local paths (or on a shared file system)
    hadoop: list[str] = dataclasses.field(default_factory=list)  # hdfs://, s3a://... files, directories, globs
    indexes: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (path, cdx|cdxj)
    gold: list[str] = dataclasses.field(default_factory=list)


def plan_inputs(inputs: Sequence[str]) -> Plan:
    """Recognise each input as ``scan`` does (by content); Hadoop paths are recognised by
    the tasks that read them."""
    plan = Plan()
    local: list[str] = []
    for source in inputs:
        if source.startswith(_LOCAL_SCHEMES):
            local.append(source[len("file://"):])
        elif source.startswith(("http://", "https://")):
            raise InputError(f"{source}: TimeMaps are read by 'driftline scan' (they are fetched, not stored "
                             "on a cluster's file system)", reason="unknown_input")
        elif _HADOOP_URI.match(source):  # hdfs://, s3a://, file:/dir/*.warc.gz: read through Hadoop's file system
            plan.hadoop.append(source)
        else:
            local.append(source)
    for source in expand_inputs(local):
        kind = detect_input(source)
        if kind in ("warc", "arc"):
            plan.archives.append(source)
        elif kind == "wacz":  # its WARCs, each read by a task where it lies in the package
            plan.archives.extend(archive_members(source))
        elif kind in ("cdx", "cdxj"):
            plan.indexes.append((source, kind))
        elif kind == "gold":
            plan.gold.append(source)
        elif kind == "timemap":
            raise InputError(f"{source}: TimeMaps are read by 'driftline scan'", reason="unknown_input")
        else:
            raise InputError(f"{source}: not a WARC/ARC file, CDX(J) index, directory of them or gold directory",
                             reason="unknown_input")
    return plan


def _partition_of(key: tuple[str, int, int, str]) -> int:
    """Partition by history alone (the secondary sort): a stable hash, the same on every executor."""
    return zlib.crc32(key[0].encode("utf-8"))


class _Reading:
    """The read stage's functions (shipped to executors with the configuration)."""

    def __init__(self, cfg: Config, acc: Any) -> None:
        self.cfg = cfg
        self.acc = acc
        self._engine: Engine | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"cfg": self.cfg, "acc": self.acc, "_engine": None}  # each task builds its engine once

    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = Engine(self.cfg.engine)
        return self._engine

    def _run(self, produce: Any) -> Iterator[Record | ErrorRow]:
        engine = self.engine()
        counts: Counter[str] = Counter()
        errors: list[ErrorRow] = []
        yield from produce(engine, counts, errors)
        yield from errors
        self.acc.add(counts)

    def archives(self, paths: Iterable[str]) -> Iterator[Record | ErrorRow]:
        def produce(engine: Engine, counts: Counter[str], errors: list[ErrorRow]) -> Iterator[Record]:
            for path in paths:
                yield from archive_records(path, self.cfg, engine, counts, errors)
        return self._run(produce)

    def hadoop_files(self, files: Iterable[tuple[str, bytes]]) -> Iterator[Record | ErrorRow]:
        def produce(engine: Engine, counts: Counter[str], errors: list[ErrorRow]) -> Iterator[Record]:
            for name, data in files:
                tmp = staged_copy(name, data)
                try:
                    for rec in archive_records(tmp, self.cfg, engine, counts, errors):
                        yield _renamed(rec, tmp, name)
                finally:
                    os.unlink(tmp)
        return self._run(produce)

    def indexed(self, entries: Iterable[tuple[str, IndexEntry]]) -> Iterator[Record | ErrorRow]:
        def produce(engine: Engine, counts: Counter[str], errors: list[ErrorRow]) -> Iterator[Record]:
            yield from archive_records("", self.cfg, engine, counts, errors, (e for _, e in entries))
        return self._run(produce)

    def gold(self, groups: Iterable[tuple[str, list[GoldRow]]]) -> Iterator[Record | ErrorRow]:
        def produce(engine: Engine, counts: Counter[str], errors: list[ErrorRow]) -> Iterator[Record]:
            for directory, rows in groups:
                yield from gold_records(directory, rows, engine, counts)
        return self._run(produce)

    def resolve(self, item: tuple[str, tuple[Record, Iterable[IndexEntry] | None]]) -> tuple[str, Record] | None:
        """A revisit and its candidate originals -> (the chosen original's place, the revisit);
        None for a non-document (judged by its original's type, as ``scan`` does)."""
        _, (rev, cands) = item
        assert rev.entry is not None
        chosen = RevisitResolver(list(cands or ()), self.cfg).resolve(rev.entry) if cands else None
        mime = rev.entry.mime or (chosen.mime if chosen is not None else None)
        if non_document(mime, self.cfg.events):
            self.acc.add(Counter({f"skipped:{base_mimetype(mime)}": 1}))
            return None
        return (where_of(chosen) if chosen is not None else "", rev)

    def resolved(self, item: tuple[str, tuple[Record, Record | None]]) -> Record:
        _, (rev, original) = item
        return revisit_resolved(rev, original, self.engine())


def _renamed(rec: Record, tmp: str, name: str) -> Record:
    """A record of a staged copy, named by the file it was read from."""
    if rec.entry is None:
        return rec
    entry = dataclasses.replace(rec.entry, path=name)
    cap = rec.capture
    if cap.locator:
        cap = dataclasses.replace(cap, locator=cap.locator.replace(os.path.abspath(tmp), name))
    return dataclasses.replace(rec, entry=entry, capture=cap, where=rec.where.replace(tmp, name))


def _folder(cfg: Config) -> Any:
    def fold(rows: Iterable[tuple[Any, Record]]) -> Iterator[Scored | HistoryEnd | ErrorRow]:
        return fold_partition(rows, Engine(cfg.engine))
    return fold


PYTHON_WORKER_MEMORY_KEY = "spark.python.worker.memory"
PYTHON_WORKER_MEMORY = "256m"


def session(master: str | None, app: str = "driftline", extra: Mapping[str, str] | None = None) -> Any:
    """A SparkSession: no web UI, bound to loopback when the master is local (a cluster's
    spark-submit sets its own addresses), executors on this Python in local mode.  ``extra``:
    more settings (the benchmark's event log), so that a caller gets driftline's session and not
    one of its own that :func:`run` would then find made."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app)
    if master:
        builder = builder.master(master)
    if local_master(master):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    for key, value in session_settings(master, extra, os.environ.get("PYSPARK_SUBMIT_ARGS", "")).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def local_master(master: str | None) -> bool:
    return not master or master.startswith("local")


def session_settings(master: str | None, extra: Mapping[str, str] | None, submit_args: str = "") -> dict[str, str]:
    """The settings :func:`session` gives its builder: driftline's, then the caller's ``extra``, which
    win (a caller that names a setting gets it)."""
    out = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
    if local_master(master):
        out.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
        if PYTHON_WORKER_MEMORY_KEY not in submit_args:
            # The sort within partitions runs in the Python worker and holds its partition until the
            # worker's memory passes this, then spills to disk: at PySpark's 512m a worker peaked at
            # 360 MB on the gold at local[1], at 256m at 291 MB, at the same throughput
            # (docs/operations/spark.md).  A cluster's spark-submit sets its own.
            out[PYTHON_WORKER_MEMORY_KEY] = PYTHON_WORKER_MEMORY
    out.update(extra or {})
    return out


class _CounterParam:
    """An accumulator of :class:`collections.Counter`."""

    def zero(self, value: Counter[str]) -> Counter[str]:
        return Counter()

    def addInPlace(self, a: Counter[str], b: Counter[str]) -> Counter[str]:  # noqa: N802 - PySpark's name
        a.update(b)
        return a


def records_rdd(sc: Any, plan: Plan, cfg: Config, acc: Any, partitions: int) -> Any:
    """Stage 1 and 2: every capture as a :class:`Record` with its fingerprint, and the error rows."""
    reading = _Reading(cfg, acc)
    parts = []
    if plan.archives:
        parts.append(sc.parallelize(plan.archives, len(plan.archives)).mapPartitions(reading.archives))
    if plan.hadoop:
        parts.append(sc.binaryFiles(",".join(plan.hadoop)).mapPartitions(reading.hadoop_files))
    if plan.indexes:
        indexes = plan.indexes
        entries = (sc.parallelize(indexes, len(indexes))
                   .flatMap(lambda ik: index_cdx(ik[0], cfg, ik[1]))
                   .map(lambda e: (e.path, e))
                   .partitionBy(max(partitions, 1), lambda p: zlib.crc32(p.encode("utf-8"))))
        parts.append(entries.mapPartitions(reading.indexed))
    if plan.gold:
        groups: list[tuple[str, list[GoldRow]]] = []
        for d in plan.gold:
            per_id: dict[str, list[GoldRow]] = {}
            for row in read_labels(Path(d)):
                per_id.setdefault(row.id, []).append(row)
            groups.extend((d, rows) for rows in per_id.values())
        parts.append(sc.parallelize(groups, max(1, min(len(groups), partitions * 4))).mapPartitions(reading.gold))
    if not parts:
        raise InputError("no inputs to read", reason="unknown_input")
    read = sc.union(parts) if len(parts) > 1 else parts[0]
    from pyspark import StorageLevel

    read = read.persist(StorageLevel.MEMORY_AND_DISK)  # read once: the revisit joins use it twice
    errors = read.filter(lambda x: isinstance(x, ErrorRow))
    recs = read.filter(lambda x: isinstance(x, Record))
    done = recs.filter(lambda r: r.fp is not None)
    revisits = recs.filter(lambda r: r.scored and r.fp is None)
    # every record that is not a revisit may be one's original (a non-document too: scan's resolver knows it)
    originals = recs.filter(lambda r: r.entry is not None and r.entry.kind != "revisit")
    n = partitions
    by_id = (revisits.filter(lambda r: bool(r.entry.refers_to)).map(lambda r: (r.entry.refers_to, r.where))
             .join(originals.filter(lambda r: bool(r.entry.record_id)).map(lambda r: (r.entry.record_id, r.entry)), n)
             .values())
    by_digest = (revisits.filter(lambda r: bool(r.entry.digest)).map(lambda r: (r.entry.digest, r.where))
                 .join(originals.filter(lambda r: bool(r.entry.digest)).map(lambda r: (r.entry.digest, r.entry)), n)
                 .values())
    candidates = by_id.union(by_digest).groupByKey(n)
    chosen = (revisits.map(lambda r: (r.where, r)).leftOuterJoin(candidates, n)
              .map(reading.resolve).filter(lambda x: x is not None))
    resolved = (chosen.leftOuterJoin(originals.filter(lambda r: r.fp is not None).map(lambda r: (r.where, r)), n)
                .map(reading.resolved))
    return done.union(resolved), errors


def verdicts_rdd(records: Any, cfg: Config, partitions: int) -> Any:
    """Stages 3 and 4: the secondary sort by (history, time, tie) within history partitions, and the fold."""
    keyed = records.map(lambda r: (r.sort_key, r))
    ordered = keyed.repartitionAndSortWithinPartitions(partitions, _partition_of)
    return ordered.mapPartitions(_folder(cfg))


def store_config(cfg: Config, dsn: str) -> Config:
    """``cfg`` with the store ``--store`` names: a PostgreSQL DSN (``postgresql://...`` or libpq's
    ``host=... dbname=...``), or an SQLite file (``sqlite:PATH`` or a path)."""
    if dsn.startswith(("postgresql://", "postgres://")) or re.match(r"^\s*[a-z_]+\s*=", dsn):
        store = cfg.store.model_copy(update={"backend": "postgres", "dsn": dsn})
    else:
        path = dsn.removeprefix("sqlite:///").removeprefix("sqlite:")
        store = cfg.store.model_copy(update={"backend": "sqlite", "path": path})
    from ..config import StoreConfig

    return cfg.model_copy(update={"store": StoreConfig.model_validate(store.model_dump())})


class _Backfill:
    """Each history's final state and last verdict into the store, through its one interface
    (``put_verdict`` with the state: idempotent, keyed by the verdict id)."""

    def __init__(self, cfg: Config | None) -> None:
        self.store = None
        self.written = 0
        if cfg is not None:
            from ..store import open_store

            self.store = open_store(cfg.store)

    def __call__(self, end: HistoryEnd) -> None:
        if self.store is None or end.last is None:
            return
        if self.store.put_verdict(end.last, state=end.state):
            self.written += 1

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


def run(inputs: Sequence[str], cfg: Config, out: str, fmt: str = "json", master: str | None = None,
        store: str | None = None, partitions: int | None = None) -> dict[str, Any]:
    """``driftline spark``: score ``inputs`` on Spark, write ``out`` in ``fmt``; return the counters
    (also written to ``OUT.counters.json``; error rows to ``OUT.errors.jsonl``)."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown output format {fmt!r}; known: {', '.join(FORMATS)}", reason="output_format")
    Engine(cfg.engine)  # unknown measures fail before the JVM starts
    plan = plan_inputs(inputs)
    backfill_cfg = store_config(cfg, store) if store else None
    spark = session(master)
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    n = partitions or max(2, sc.defaultParallelism * 2)
    acc = sc.accumulator(Counter(), _CounterParam())
    records, errors_rdd = records_rdd(sc, plan, cfg, acc, n)
    from pyspark import StorageLevel

    results = verdicts_rdd(records, cfg, n).persist(StorageLevel.MEMORY_AND_DISK)
    counts: Counter[str] = Counter()
    backfill = _Backfill(backfill_cfg)
    errors_path = f"{out}.errors.jsonl"
    try:
        with open(errors_path, "w", encoding="utf-8") as errors_out:
            def on_error(row: ErrorRow) -> None:
                counts[f"error:{row.reason}"] += 1
                errors_out.write(json.dumps(dataclasses.asdict(row), ensure_ascii=False) + "\n")

            def on_end(end: HistoryEnd) -> None:
                counts["histories"] += 1
                backfill(end)

            for row in errors_rdd.collect():
                on_error(row)
            if fmt == "parquet":
                _write_parquet(spark, results, out)
                tail = results.filter(lambda x: not isinstance(x, Scored)).toLocalIterator()
                for item in tail:
                    (on_end if isinstance(item, HistoryEnd) else on_error)(item)
                for status, k in results.filter(lambda x: isinstance(x, Scored)).map(
                        lambda s: (s.verdict.status, 1)).reduceByKey(lambda a, b: a + b).collect():
                    counts[f"verdicts:{status}"] += k
            else:
                from ..output import write_results

                sources: dict[tuple[str, str, str], str] = {}

                def counted(items: Iterable[Any]) -> Iterator[Any]:
                    for item in items:
                        if isinstance(item, Scored):
                            counts[f"verdicts:{item.verdict.status}"] += 1
                        yield item

                write_results(history_results(counted(results.toLocalIterator()), sources, on_end, on_error),
                              out, fmt, cfg, None, sources)
    finally:
        backfill.close()
        results.unpersist()
    counts.update(acc.value)
    summary = _counters(counts, backfill.written if store else None)
    with open(f"{out}.counters.json", "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return summary


def _counters(counts: Counter[str], backfilled: int | None) -> dict[str, Any]:
    """The counters in their written shape: records read, skipped by kind, errors by reason,
    histories, verdicts (by status)."""
    def group(prefix: str) -> dict[str, int]:
        return {k[len(prefix):]: v for k, v in sorted(counts.items()) if k.startswith(prefix)}

    verdicts = group("verdicts:")
    out: dict[str, Any] = {"records read": counts["read"], "skipped": group("skipped:"), "errors": group("error:"),
                           "histories": counts["histories"], "verdicts": sum(verdicts.values()),
                           "verdicts by status": verdicts}
    if backfilled is not None:
        out["histories backfilled"] = backfilled
    return out


def _write_parquet(spark: Any, results: Any, out: str) -> None:
    """The verdicts as Parquet, a column per field, partitioned by capture year and month."""
    rows = results.filter(lambda x: isinstance(x, Scored)).map(lambda s: parquet_row(s.verdict, s.locator))
    df = spark.createDataFrame(rows, parquet_schema())
    df.write.mode("overwrite").partitionBy("year", "month").parquet(out)

