"""Connection security for every Kafka client driftline makes (TLS, SASL).

Why one function: the consumers, the producer, the admin client (topic
creation, readiness) and the small client helpers must all reach a secured
broker the same way; building the options in one place means a new client
cannot forget them.  The embedded broker (``kafka.bootstrap_servers`` unset)
listens on 127.0.0.1 in PLAINTEXT only, so it gets no options.
"""

from __future__ import annotations

import logging
import ssl
from typing import Any

from .config import KafkaConfig
from .errors import ConfigError

log = logging.getLogger(__name__)


def kafka_security_options(kafka: KafkaConfig) -> dict[str, Any]:
    """Keyword arguments for ``AIOKafkaConsumer/Producer/AdminClient`` (empty for PLAINTEXT).

    Raises :class:`ConfigError` (reason ``kafka_security``) for an
    incomplete setting: SASL without a user name or password, an unreadable
    CA, certificate or key.  Messages never include a password.
    """
    if kafka.bootstrap_servers is None or kafka.security_protocol == "PLAINTEXT":
        return {}
    opts: dict[str, Any] = {"security_protocol": kafka.security_protocol}
    if kafka.security_protocol in ("SSL", "SASL_SSL"):
        opts["ssl_context"] = _ssl_context(kafka)
    if kafka.security_protocol.startswith("SASL_"):
        if not kafka.sasl_plain_username or kafka.sasl_plain_password is None:
            raise ConfigError(
                f"kafka.security_protocol {kafka.security_protocol} needs kafka.sasl_plain_username and "
                "kafka.sasl_plain_password (DRIFTLINE__KAFKA__SASL_PLAIN_PASSWORD)", reason="kafka_security")
        opts["sasl_mechanism"] = kafka.sasl_mechanism
        opts["sasl_plain_username"] = kafka.sasl_plain_username
        opts["sasl_plain_password"] = kafka.sasl_plain_password.get_secret_value()
    log.debug("Kafka clients use %s%s", kafka.security_protocol,
              f" ({kafka.sasl_mechanism} as {kafka.sasl_plain_username})" if "sasl_mechanism" in opts else "")
    return opts


def _ssl_context(kafka: KafkaConfig) -> ssl.SSLContext:
    """A verifying TLS client context: the configured CA (or the system's), optional client certificate."""
    try:
        ctx = ssl.create_default_context(cafile=kafka.ssl_cafile)
        ctx.check_hostname = kafka.ssl_check_hostname
        if kafka.ssl_certfile:
            password = kafka.ssl_key_password.get_secret_value() if kafka.ssl_key_password is not None else None
            ctx.load_cert_chain(kafka.ssl_certfile, kafka.ssl_keyfile, password=password)
        elif kafka.ssl_keyfile:
            raise ConfigError("kafka.ssl_keyfile is set without kafka.ssl_certfile", reason="kafka_security")
    except (OSError, ssl.SSLError) as exc:
        # str(exc) names the file and the OpenSSL reason, never the key password
        raise ConfigError(f"kafka TLS settings unusable: {exc}", reason="kafka_security") from None
    return ctx
