"""Secrets never leak: a DSN password and a SASL password must not appear in
configuration errors, reprs, logs, metrics, dead letters or exceptions.

Each test feeds the secrets to a real component (config loader, PostgreSQL
store opener, the consumer app on the real test broker) in a way that fails,
captures everything it says, and searches it for the secret values.
"""

from __future__ import annotations

import logging
import traceback
from pathlib import Path

import aiohttp
import pytest
from pydantic import SecretStr

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.conftest import free_port
from tests.fixtures.kafka import KafkaNames, heritrix_message, stream_config
from watcher.broker import EmbeddedBroker
from watcher.config import Config, StoreConfig, load_config
from watcher.errors import ConfigError, DriftlineError
from watcher.store import open_store

DSN_PW = "DsnPw-9f3c1e"
SASL_PW = "SaslPw-77ab20"
KEY_PW = "KeyPw-41d0aa"
HERITRIX_PW = "HeritrixPw-5e5e"
SECRETS = (DSN_PW, SASL_PW, KEY_PW, HERITRIX_PW)


def assert_clean(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"secret leaked: ...{text[max(0, text.find(secret) - 80):][:200]}..."


def _everything(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))


def test_config_errors_and_reprs_never_show_secrets(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "store:\n  dsn: {oops: 'postgresql://u:" + DSN_PW + "@db/x'}\n"
        "kafka:\n  sasl_plain_password: ['" + SASL_PW + "']\n  ssl_key_password: 12\n"
        "actuator:\n  heritrix_password: {p: '" + HERITRIX_PW + "'}\n"
        "metrics:\n  port: not-a-port\n"
    )
    with pytest.raises(ConfigError) as err:
        load_config(bad, environ={"DRIFTLINE__KAFKA__SSL_KEY_PASSWORD": "[" + KEY_PW + "]"})
    text = _everything(err.value)
    assert "store.dsn" in text and "kafka.sasl_plain_password" in text and "metrics.port" in text
    assert_clean(text, repr(err.value))

    cfg = load_config(None, environ={
        "DRIFTLINE__STORE__DSN": f"postgresql://driftline:{DSN_PW}@db.example.org/driftline",
        "DRIFTLINE__KAFKA__SASL_PLAIN_PASSWORD": SASL_PW,
        "DRIFTLINE__KAFKA__SSL_KEY_PASSWORD": KEY_PW,
        "DRIFTLINE__ACTUATOR__HERITRIX_PASSWORD": HERITRIX_PW,
    })
    assert cfg.store.dsn is not None and DSN_PW in cfg.store.dsn.get_secret_value()
    assert cfg.kafka.sasl_plain_password is not None and cfg.kafka.sasl_plain_password.get_secret_value() == SASL_PW
    assert_clean(repr(cfg), str(cfg), cfg.model_dump_json(), repr(cfg.model_dump()))


def test_store_errors_never_show_the_dsn_password(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("psycopg")
    caplog.set_level(logging.DEBUG)
    unreachable = f"postgresql://driftline:{DSN_PW}@127.0.0.1:{free_port()}/driftline?connect_timeout=2"
    malformed = f"host=127.0.0.1 password={DSN_PW} port"
    texts: list[str] = []
    for dsn in (unreachable, malformed):
        try:
            store = open_store(StoreConfig(backend="postgres", dsn=SecretStr(dsn)))
            store.get_state("org,example)/")
            store.close()
        except DriftlineError as exc:
            texts.append(_everything(exc))
    assert len(texts) == 2, "both DSNs must fail"
    assert_clean(*texts, caplog.text)


@pytest.mark.kafka
async def test_app_logs_metrics_and_dead_letters_never_show_secrets(
    kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A running app configured with every secret: bad events are dead-lettered and counted;
    nothing it logs (DEBUG), exports or dead-letters names a secret."""
    caplog.set_level(logging.DEBUG)
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, partitions=1, extra={
        "store": {"backend": "sqlite", "path": str(tmp_path / "d.db"),
                  "dsn": f"postgresql://driftline:{DSN_PW}@db.example.org/driftline"},
        "actuator": {"heritrix_password": HERITRIX_PW},
    })
    cfg = Config.model_validate({**cfg.model_dump(), "kafka": {**cfg.kafka.model_dump(), "sasl_plain_password": SASL_PW,
                                                               "ssl_key_password": KEY_PW}})
    boot, k = kafka_broker.bootstrap_servers, cfg.kafka
    crawl = next(iter(k.input_topics))
    bad = [b'{"url": "http://x.example.org/", "timestamp": ', heritrix_message(None, url=None)]
    async with ConsumerApp(cfg) as app:
        await produce(boot, crawl, bad)
        assert await app.wait_caught_up(timeout_s=60)
        dead = await read_topic(boot, k.dead_letter_topic, expect=2, timeout_s=20)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http, \
                http.get(f"http://{cfg.metrics.host}:{cfg.metrics.port}/metrics") as resp:
            metrics = await resp.text()
    assert len(dead) == 2 and "driftline_dead_letter_total" in metrics
    assert_clean(caplog.text, metrics, repr(dead))


@pytest.mark.kafka
async def test_sasl_failure_never_shows_the_password(
    kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SASL against a broker that does not accept it: the app fails to start; the
    exception and every log line (aiokafka's DEBUG included) keep the password out."""
    caplog.set_level(logging.DEBUG)
    cfg = stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path, partitions=1, kafka={
        "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "driftline", "sasl_plain_password": SASL_PW, "create_topics": True,
    })
    app = ConsumerApp(cfg)
    with pytest.raises(Exception) as err:  # whatever aiokafka raises, it must not carry the secret
        await app.start()
    await app.stop()
    assert_clean(_everything(err.value), caplog.text)
