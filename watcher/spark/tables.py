"""The Parquet form of a verdict: a column per field of :class:`watcher.model.Verdict`.

Derived from the model's fields, so a field added to the verdict becomes a column without
a second list to keep in step.  The measures are a map ``name -> {score, status,
threshold}``; ``year`` and ``month`` (of the capture time) are the partition columns, so a
query on a crawl period reads only its folders (Spark SQL, DuckDB's ``hive_partitioning``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..model import Verdict, utc

# a field's annotation (the model's, as written) -> the kind of column it becomes
_KINDS = {
    "str": "string", "str | None": "string", "TopicStatus": "string", "ChangeClass": "string",
    "datetime": "timestamp", "datetime | None": "timestamp",
    "int": "long", "int | None": "long",
    "float": "double", "float | None": "double",
    "tuple[str, ...]": "strings",
    "Mapping[str, MeasureResult]": "measures",
}


def _columns() -> list[tuple[str, str]]:
    out = []
    for f in dataclasses.fields(Verdict):
        kind = _KINDS.get(str(f.type))
        if kind is None:  # a new field of a new type: refuse loudly, in the tests, not in a job
            raise TypeError(f"Verdict.{f.name}: no Parquet column for {f.type}")
        out.append((f.name, kind))
    return out


def parquet_schema() -> Any:
    from pyspark.sql import types as t

    simple = {"string": t.StringType(), "timestamp": t.TimestampType(), "long": t.LongType(),
              "double": t.DoubleType(), "strings": t.ArrayType(t.StringType())}
    measure = t.StructType([t.StructField("score", t.DoubleType()), t.StructField("status", t.StringType()),
                            t.StructField("threshold", t.DoubleType())])
    fields = [t.StructField(name, simple[kind] if kind in simple else t.MapType(t.StringType(), measure))
              for name, kind in _columns()]
    fields += [t.StructField("locator", t.StringType()), t.StructField("year", t.IntegerType()),
               t.StructField("month", t.IntegerType())]
    return t.StructType(fields)


def _float(x: float | None) -> float | None:
    return None if x is None else float(x)


def parquet_row(v: Verdict, locator: str | None) -> tuple[Any, ...]:
    """``v`` as a row of :func:`parquet_schema`."""
    values: list[Any] = []
    for name, kind in _columns():
        value = getattr(v, name)
        if kind == "measures":
            value = {k: (_float(m.score), m.status, _float(m.threshold)) for k, m in value.items()}
        elif kind == "strings":
            value = list(value)
        elif kind == "double":
            value = _float(value)
        elif kind == "timestamp" and value is not None:
            value = utc(value)
        values.append(value)
    t = utc(v.capture_time)
    return (*values, locator, t.year, t.month)
