"""Following Heritrix ``crawl.log`` files without a broker (``driftline run --crawl-log``).

:mod:`.settings` holds the ``crawl_log:`` configuration section, :mod:`.follow`
the file tailing (growth, rotation, truncation, partial lines) and the
position each followed path is checkpointed at.  The scoring itself is the
Kafka consumers' per-capture step, wired up in :mod:`consumers.crawllog`.
"""
