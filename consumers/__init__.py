"""The Kafka-facing processes: route, consume, acquire, score, produce, and what shares their scorer.

Thin glue over :mod:`watcher`: :mod:`consumers.router` re-keys the crawler's
unkeyed feed by canonical URL, :mod:`consumers.runner` runs a consumer group
in order per partition, :mod:`consumers.scorer` turns one event into a stored
verdict and its messages, :mod:`consumers.pipeline` wires that scorer once,
:mod:`consumers.app` runs it all (entry points :func:`consumers.app.run` and
:class:`consumers.app.ConsumerApp`), :mod:`consumers.publish` is where every
message goes out.

Two modules here are not consumers of a broker, and why they live here anyway:
:mod:`consumers.feed` (``driftline feed``) is a Kafka producer, the crawler's
side of the same topics; :mod:`consumers.crawllog` (``run --crawl-log``) follows
a file instead of a topic but hands each line to the very :class:`Scorer` the
Kafka path uses, so the two paths cannot judge or publish differently.  Moved
under :mod:`watcher`, it would have to import this package, which
:mod:`watcher` never does.
"""
