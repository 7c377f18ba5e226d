"""What ``driftline feed`` and ``driftline tail`` share: finding the broker ``driftline run`` uses.

With ``kafka.bootstrap_servers`` set, that broker; without it, the embedded
broker a running ``driftline run`` started on ``127.0.0.1:kafka.embedded_port``.
Neither command starts a broker of its own: events sent to a broker nobody
reads would be lost with it (the embedded broker keeps nothing across a
restart), so a missing broker is said in one line instead.
"""

from __future__ import annotations

from typing import Any

from watcher.config import Config


def bootstrap_of(cfg: Config) -> str:
    """The broker address ``driftline run`` uses with ``cfg``."""
    return cfg.kafka.bootstrap_servers or f"127.0.0.1:{cfg.kafka.embedded_port}"


async def broker_for(cfg: Config, command: str, timeout_s: float = 5.0) -> tuple[str, dict[str, Any]]:
    """(bootstrap servers, client security options), once the broker answers; :class:`BrokerError` if it does not."""
    from watcher.broker import BrokerError, broker_reachable
    from watcher.kafkasec import kafka_security_options

    from .app import tcp_open

    bootstrap = bootstrap_of(cfg)
    security = kafka_security_options(cfg.kafka)
    if await tcp_open(bootstrap, timeout_s) and await broker_reachable(bootstrap, timeout_s, security=security):
        return bootstrap, security
    if cfg.kafka.bootstrap_servers is None:
        raise BrokerError(f"no broker answers on {bootstrap}: start 'driftline run' first (it starts the embedded "
                          f"broker there and '{command}' uses it), or set kafka.bootstrap_servers", reason="broker")
    raise BrokerError(f"the Kafka broker at {bootstrap} (kafka.bootstrap_servers) does not answer", reason="broker")
