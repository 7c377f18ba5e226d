"""Secured Kafka: TLS through a real TLS terminator (stunnel) in front of a real Tansu broker,
SASL options reaching aiokafka, and an incomplete setting refused at start-up.

The test makes its own CA and server certificate with openssl; a second,
unrelated CA must be refused.  Tansu advertises the stunnel port, so every
connection a client makes after bootstrapping also goes through TLS.

SASL: this Tansu build (0.6.0, memory storage only; its postgres storage
feature is not compiled in) keeps SCRAM users in memory and creates them only
through ``tansu user create``, which itself needs an authenticated connection
once ``--authentication`` is on; without that flag the broker enables no SASL
mechanism (the handshake answers UnsupportedSaslMechanism).  So a successful
SASL login cannot be tested here; what is tested: the options reach aiokafka,
the broker requiring authentication refuses PLAINTEXT, and a SASL handshake
with the configured mechanism is made.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer

from consumers.client import client_options, produce, read_topic
from tests.conftest import free_port, stop_process
from watcher.broker import broker_reachable, ensure_topics, tansu_binary
from watcher.config import Config, KafkaConfig, load_config
from watcher.errors import ConfigError
from watcher.kafkasec import kafka_security_options

STUNNEL = shutil.which("stunnel4") or shutil.which("stunnel")
OPENSSL = shutil.which("openssl")
needs_tls_tools = pytest.mark.skipif(STUNNEL is None or OPENSSL is None,
                                     reason="needs stunnel4 and openssl (apt-get install stunnel4 openssl)")


def _wait_port(port: int, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


def _openssl(*args: str, cwd: Path) -> None:
    assert OPENSSL is not None
    subprocess.run([OPENSSL, *args], cwd=cwd, check=True, capture_output=True)


def make_ca(d: Path, name: str) -> tuple[Path, Path]:
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
             "-keyout", f"{name}.key", "-out", f"{name}.pem", cwd=d)
    return d / f"{name}.pem", d / f"{name}.key"


def make_server_cert(d: Path, ca: tuple[Path, Path]) -> tuple[Path, Path]:
    (d / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "server.key",
             "-out", "server.csr", cwd=d)
    _openssl("x509", "-req", "-in", "server.csr", "-CA", str(ca[0]), "-CAkey", str(ca[1]), "-CAcreateserial",
             "-days", "2", "-extfile", "san.ext", "-out", "server.pem", cwd=d)
    return d / "server.pem", d / "server.key"


@dataclass(frozen=True)
class TlsBroker:
    bootstrap: str
    ca: Path
    wrong_ca: Path


@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsBroker]:
    """Tansu on a plaintext port behind stunnel (TLS), advertising the TLS port."""
    if STUNNEL is None or OPENSSL is None:
        pytest.skip("needs stunnel4 and openssl (apt-get install stunnel4 openssl)")
    d = tmp_path_factory.mktemp("tls")
    ca = make_ca(d, "test-ca")
    wrong_ca, _ = make_ca(d, "other-ca")
    cert, key = make_server_cert(d, ca)
    plain, tls = free_port(), free_port()
    conf = d / "stunnel.conf"
    conf.write_text(f"foreground = yes\npid =\noutput = {d / 'stunnel.log'}\n\n[kafka]\n"
                    f"accept = 127.0.0.1:{tls}\nconnect = 127.0.0.1:{plain}\ncert = {cert}\nkey = {key}\n")
    stunnel = subprocess.Popen([STUNNEL, str(conf)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    env = {**os.environ, "RUST_LOG": "warn"}
    with open(d / "tansu.log", "wb") as log:
        broker = subprocess.Popen(
            [str(tansu_binary()), "broker", "--listener-url", f"tcp://127.0.0.1:{plain}",
             "--advertised-listener-url", f"tcp://localhost:{tls}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        _wait_port(plain)
        _wait_port(tls)
        yield TlsBroker(f"localhost:{tls}", ca[0], wrong_ca)
    finally:
        for proc in (broker, stunnel):
            stop_process(proc)


def kcfg(bootstrap: str, **kw: object) -> KafkaConfig:
    return KafkaConfig.model_validate({"bootstrap_servers": bootstrap, **kw})


@needs_tls_tools
async def test_produce_and_consume_over_tls(tls_broker: TlsBroker) -> None:
    security = client_options(kcfg(tls_broker.bootstrap, security_protocol="SSL", ssl_cafile=str(tls_broker.ca)))
    assert security["security_protocol"] == "SSL"
    topic = f"tls-{time.monotonic_ns()}"
    assert await broker_reachable(tls_broker.bootstrap, 10.0, security=security)
    await ensure_topics(tls_broker.bootstrap, [topic], 1, security=security)
    sent = await produce(tls_broker.bootstrap, topic, [json.dumps({"over": "tls"}).encode()], security=security)
    assert len(sent) == 1
    got = await read_topic(tls_broker.bootstrap, topic, expect=1, timeout_s=20.0, security=security)
    assert [m["value"] for m in got] == [{"over": "tls"}]


@needs_tls_tools
async def test_wrong_ca_and_plaintext_are_refused(tls_broker: TlsBroker) -> None:
    wrong = kafka_security_options(kcfg(tls_broker.bootstrap, security_protocol="SSL",
                                        ssl_cafile=str(tls_broker.wrong_ca)))
    assert not await broker_reachable(tls_broker.bootstrap, 3.0, security=wrong)
    assert not await broker_reachable(tls_broker.bootstrap, 3.0)  # PLAINTEXT to a TLS port
    right = kafka_security_options(kcfg(tls_broker.bootstrap, security_protocol="SSL",
                                        ssl_cafile=str(tls_broker.ca)))
    assert await broker_reachable(tls_broker.bootstrap, 10.0, security=right)  # the same port, the right CA


@pytest.fixture
def auth_broker(tmp_path: Path) -> Iterator[str]:
    """Tansu with ``--authentication``: every client must authenticate with SASL."""
    port = free_port()
    with open(tmp_path / "tansu.log", "wb") as log:
        proc = subprocess.Popen(
            [str(tansu_binary()), "broker", "--authentication", "--listener-url", f"tcp://127.0.0.1:{port}",
             "--advertised-listener-url", f"tcp://127.0.0.1:{port}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "RUST_LOG": "warn"})
    try:
        _wait_port(port)
        yield f"127.0.0.1:{port}"
    finally:
        stop_process(proc)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"])
async def test_sasl_options_reach_aiokafka_and_the_handshake_reaches_the_broker(
    auth_broker: str, mechanism: str
) -> None:
    """What this Tansu build allows (see the module doc): the options reach aiokafka's
    client, a broker requiring authentication refuses a PLAINTEXT client, and a SASL
    client opens the handshake with the configured mechanism.  A *successful* login is
    not testable here: users can be provisioned only through an authenticated connection."""
    k = kcfg(auth_broker, security_protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism,
             sasl_plain_username="driftline", sasl_plain_password="s3cret-pw")
    opts = kafka_security_options(k)
    assert opts == {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": mechanism,
                    "sasl_plain_username": "driftline", "sasl_plain_password": "s3cret-pw"}
    assert not await broker_reachable(auth_broker, 3.0)  # PLAINTEXT without SASL is refused
    producer = AIOKafkaProducer(bootstrap_servers=auth_broker, request_timeout_ms=3000, **opts)
    assert producer.client._security_protocol == "SASL_PLAINTEXT"
    assert producer.client._sasl_mechanism == mechanism
    handshakes: list[str] = []
    from aiokafka import conn as aiokafka_conn

    original = aiokafka_conn.AIOKafkaConnection._do_sasl_handshake

    async def spy(self: aiokafka_conn.AIOKafkaConnection) -> None:
        handshakes.append(self._sasl_mechanism)
        await original(self)

    aiokafka_conn.AIOKafkaConnection._do_sasl_handshake = spy
    try:
        with pytest.raises(Exception):  # noqa: B017 - no such user on this broker: any refusal will do
            await asyncio.wait_for(producer.start(), 10)
    finally:
        aiokafka_conn.AIOKafkaConnection._do_sasl_handshake = original
        await producer.stop()
    assert handshakes and set(handshakes) == {mechanism}


def test_incomplete_security_settings_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        kafka_security_options(kcfg("k:9093", security_protocol="SASL_SSL", sasl_plain_username="u"))
    assert err.value.reason == "kafka_security"
    with pytest.raises(ConfigError, match="ssl_keyfile"):
        kafka_security_options(kcfg("k:9093", security_protocol="SSL", ssl_keyfile="/x.key"))
    with pytest.raises(ConfigError, match="TLS settings unusable"):
        kafka_security_options(kcfg("k:9093", security_protocol="SSL", ssl_cafile=str(tmp_path / "none.pem")))
    # the embedded broker (no bootstrap_servers) is always plaintext
    assert kafka_security_options(KafkaConfig(security_protocol="SASL_SSL")) == {}
    # environment: the password is taken verbatim, not as YAML
    cfg = load_config(None, environ={"DRIFTLINE__KAFKA__BOOTSTRAP_SERVERS": "k:9093",
                                     "DRIFTLINE__KAFKA__SECURITY_PROTOCOL": "SASL_SSL",
                                     "DRIFTLINE__KAFKA__SASL_MECHANISM": "SCRAM-SHA-256",
                                     "DRIFTLINE__KAFKA__SASL_PLAIN_USERNAME": "u",
                                     "DRIFTLINE__KAFKA__SASL_PLAIN_PASSWORD": "0123"})
    assert isinstance(cfg, Config)
    opts = kafka_security_options(cfg.kafka)
    assert opts["sasl_plain_password"] == "0123" and opts["sasl_mechanism"] == "SCRAM-SHA-256"
