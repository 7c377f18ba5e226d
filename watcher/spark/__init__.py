"""``driftline spark``: the batch scan on Apache Spark, and the store backfill.

Needs the optional extra ``spark`` (PySpark) and a Java 17 runtime.  Nothing here is
imported by the rest of the engine: :mod:`watcher.spark.job` imports PySpark only when a
job runs.
"""
