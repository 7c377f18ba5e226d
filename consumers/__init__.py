"""The Kafka-facing processes of ``driftline run``: route, consume, acquire, score, produce.

Thin glue over :mod:`watcher`: :mod:`consumers.router` re-keys the crawler's
unkeyed feed by canonical URL, :mod:`consumers.runner` runs a consumer group
in order per partition, :mod:`consumers.scorer` turns one event into a stored
verdict and its messages, :mod:`consumers.app` wires it all (entry points
:func:`consumers.app.run` and :class:`consumers.app.ConsumerApp`).
"""
