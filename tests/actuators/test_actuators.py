"""Actuators: a local aiohttp server stands in for the Heritrix REST endpoint
(HTTPS with a self-signed certificate, real digest-auth checking, recording the
exact form it receives); a fake ``brozzler-stop-crawl`` on PATH records argv."""

from __future__ import annotations

import logging
import os
import re
import secrets
import ssl
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.typedefs import Handler

from tests.fixtures.crawlers import HERITRIX_PASSWORD, HERITRIX_USER, REALM, check_digest
from watcher.actuators import (
    ActuatorError,
    BrozzlerActuator,
    HeritrixActuator,
    apply_recommendation,
    heritrix_reject_script,
    make_actuator,
)
from watcher.config import ActuatorConfig
from watcher.recommend import Recommendation

from ..conftest import free_port

USER, PASSWORD = HERITRIX_USER, HERITRIX_PASSWORD
SEED = "https://www.example-ngo.org/"
PREFIX = "http://(org,example-ngo,"


def make_rec(job: str | None = "weekly-ngo", site_id: str | None = None) -> Recommendation:
    return Recommendation(
        id="f" * 32,
        history="org,example-ngo)/",
        seed=SEED,
        job=job,
        crawler="heritrix",
        since=datetime(2024, 2, 1, tzinfo=UTC),
        captures=("a", "b", "c"),
        page_kind="parked",
        reason="3 consecutive captures off topic",
        what_to_do="...",
        surt_prefix=PREFIX,
        site_id=site_id,
    )


# -- a Heritrix-like REST endpoint with real digest auth --------------------


@dataclass
class FakeHeritrix:
    url: str
    cert: Path
    received: list[dict[str, Any]] = field(default_factory=list)
    auth_failures: int = 0
    nonces: set[str] = field(default_factory=set)


@pytest.fixture(scope="session")
def self_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True,
    )
    return cert, key


@pytest.fixture
async def heritrix(self_signed: tuple[Path, Path]) -> AsyncIterator[FakeHeritrix]:
    cert, key = self_signed
    port = free_port()
    state = FakeHeritrix(url=f"https://127.0.0.1:{port}", cert=cert)

    @web.middleware
    async def digest(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not check_digest(request, state.nonces):
            if "Authorization" in request.headers:
                state.auth_failures += 1
            nonce = secrets.token_hex(16)
            state.nonces.add(nonce)
            return web.Response(
                status=401,
                headers={"WWW-Authenticate": f'Digest realm="{REALM}", qop="auth", nonce="{nonce}", algorithm=MD5'},
            )
        return await handler(request)

    async def script(request: web.Request) -> web.Response:
        form = await request.post()
        job = request.match_info["job"]
        state.received.append({"path": request.path, "form": {k: str(v) for k, v in form.items()},
                               "accept": request.headers.get("Accept")})
        if job == "broken":
            body = ("<script><crawlJobShortName>broken</crawlJobShortName><linesExecuted>0</linesExecuted>"
                    "<exception>groovy.lang.MissingPropertyException: No such property: rules</exception></script>")
        else:
            m = re.search(r"def prefix = '([^']+)'", str(form.get("script", "")))
            body = (f"<script><crawlJobShortName>{job}</crawlJobShortName><linesExecuted>1</linesExecuted>"
                    f"<rawOutput>driftline: rejected {m.group(1) if m else '?'}</rawOutput></script>")
        return web.Response(text=body, content_type="application/xml")

    async def job_action(request: web.Request) -> web.Response:
        form = await request.post()
        state.received.append({"path": request.path, "form": {k: str(v) for k, v in form.items()}})
        raise web.HTTPSeeOther(location=request.path)

    async def job_page(request: web.Request) -> web.Response:
        return web.Response(text="<job><statusDescription>PAUSED</statusDescription></job>",
                            content_type="application/xml")

    app = web.Application(middlewares=[digest])
    app.router.add_post("/engine/job/{job}/script", script)
    app.router.add_post("/engine/job/{job}", job_action)
    app.router.add_get("/engine/job/{job}", job_page)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, ssl_context=ctx)
    await site.start()
    try:
        yield state
    finally:
        await runner.cleanup()


def hcfg(h: FakeHeritrix, **kw: Any) -> ActuatorConfig:
    base: dict[str, Any] = {"kind": "heritrix", "heritrix_url": h.url, "heritrix_user": USER,
                            "heritrix_password": PASSWORD, "heritrix_verify_tls": False, "dry_run": False}
    base.update(kw)
    return ActuatorConfig(**base)


def test_none_is_the_default() -> None:
    assert ActuatorConfig().kind == "none" and ActuatorConfig().dry_run is True
    assert make_actuator(ActuatorConfig()) is None
    assert isinstance(make_actuator(ActuatorConfig(kind="heritrix")), HeritrixActuator)
    assert isinstance(make_actuator(ActuatorConfig(kind="brozzler")), BrozzlerActuator)


async def test_heritrix_dry_run_logs_exact_request_and_sends_nothing(
    heritrix: FakeHeritrix, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="watcher.actuators")
    act = HeritrixActuator(hcfg(heritrix, dry_run=True))
    result = await act.act(make_rec())
    assert result.dry_run and not result.applied
    assert heritrix.received == []
    text = caplog.text
    assert f"POST {heritrix.url}/engine/job/weekly-ngo/script" in text
    assert "--- form field engine:\ngroovy" in text
    assert heritrix_reject_script(PREFIX) in text  # the whole script body, verbatim


async def test_heritrix_reject_surt_posts_script_with_digest_auth(heritrix: FakeHeritrix) -> None:
    result = await HeritrixActuator(hcfg(heritrix)).act(make_rec())
    assert result.applied and result.status == 200
    assert heritrix.received == [{
        "path": "/engine/job/weekly-ngo/script",
        "form": {"engine": "groovy", "script": heritrix_reject_script(PREFIX)},
        "accept": "application/xml",
    }]
    assert f"driftline: rejected {PREFIX}" in result.output
    script = heritrix.received[0]["form"]["script"]
    assert "appCtx.getBean('scope')" in script and "DecideResult.REJECT" in script
    assert f"def prefix = '{PREFIX}'" in script and "rule.nonseedLine('-' + prefix)" in script


async def test_heritrix_beanshell_and_pause(heritrix: FakeHeritrix) -> None:
    await HeritrixActuator(hcfg(heritrix, heritrix_script_engine="beanshell")).act(make_rec())
    form = heritrix.received[-1]["form"]
    assert form["engine"] == "beanshell"
    assert "for (r : scope.getRules())" in form["script"] and f'prefix = "{PREFIX}";' in form["script"]
    result = await HeritrixActuator(hcfg(heritrix, heritrix_action="pause")).act(make_rec())
    assert heritrix.received[-1] == {"path": "/engine/job/weekly-ngo", "form": {"action": "pause"}}
    assert result.applied and "PAUSED" in result.output


async def test_heritrix_wrong_password_is_refused(heritrix: FakeHeritrix) -> None:
    with pytest.raises(ActuatorError) as err:
        await HeritrixActuator(hcfg(heritrix, heritrix_password="wrong")).act(make_rec())
    assert err.value.reason == "unauthorized"
    assert heritrix.received == [] and heritrix.auth_failures >= 1


async def test_heritrix_tls_verification_is_configurable(heritrix: FakeHeritrix) -> None:
    with pytest.raises(ActuatorError) as err:
        await HeritrixActuator(hcfg(heritrix, heritrix_verify_tls=True)).act(make_rec())
    assert err.value.reason == "unreachable"
    assert heritrix.received == []
    ok = await HeritrixActuator(hcfg(heritrix, heritrix_verify_tls=True, heritrix_ca_file=str(heritrix.cert))).act(
        make_rec()
    )
    assert ok.applied and len(heritrix.received) == 1


async def test_heritrix_script_failure_and_bad_job(heritrix: FakeHeritrix) -> None:
    with pytest.raises(ActuatorError) as err:
        await HeritrixActuator(hcfg(heritrix)).act(make_rec(job="broken"))
    assert err.value.reason == "script_failed"
    for job in (None, "../etc", "a b"):
        with pytest.raises(ActuatorError) as bad:
            await HeritrixActuator(hcfg(heritrix)).act(make_rec(job=job))
        assert bad.value.reason == "no_job"
    with pytest.raises(ActuatorError):
        heritrix_reject_script("http://(org,evil'); System.exit(0); //")


# -- Brozzler ---------------------------------------------------------------


@pytest.fixture
def fake_stop_crawl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``brozzler-stop-crawl`` on PATH that records its argv, one per line."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    record = tmp_path / "argv.txt"
    script = bindir / "brozzler-stop-crawl"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"open({str(record)!r}, 'a').write('\\x00'.join(sys.argv[1:]) + '\\n')\n"
        "sys.exit(3 if '--site=fail' in sys.argv else 0)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    return record


def bcfg(**kw: Any) -> ActuatorConfig:
    base: dict[str, Any] = {"kind": "brozzler", "brozzler_action": "stop-crawl", "dry_run": False}
    base.update(kw)
    return ActuatorConfig(**base)


async def test_brozzler_stop_crawl_runs_argv_without_a_shell(fake_stop_crawl: Path, tmp_path: Path) -> None:
    cfg = bcfg(brozzler_rethinkdb_servers="db1:28015,db2:28015", brozzler_rethinkdb_db="brozzler")
    result = await BrozzlerActuator(cfg).act(make_rec(site_id="5f2c9a"))
    assert result.applied and result.action == "stop-crawl"
    lines = fake_stop_crawl.read_text().splitlines()
    assert [line.split("\x00") for line in lines] == [
        ["--rethinkdb-servers", "db1:28015,db2:28015", "--rethinkdb-db", "brozzler", "--site=5f2c9a"]
    ]
    hostile = f"x; touch {tmp_path / 'pwned'}"
    await BrozzlerActuator(bcfg()).act(make_rec(site_id=hostile))
    assert fake_stop_crawl.read_text().splitlines()[-1] == f"--site={hostile}"
    assert not (tmp_path / "pwned").exists()


async def test_brozzler_site_id_from_config_and_failures(fake_stop_crawl: Path) -> None:
    await BrozzlerActuator(bcfg(brozzler_site_ids={SEED: "site-77"})).act(make_rec())
    assert fake_stop_crawl.read_text().splitlines() == ["--site=site-77"]
    with pytest.raises(ActuatorError) as err:
        await BrozzlerActuator(bcfg()).act(make_rec(site_id="fail"))
    assert err.value.reason == "command_failed"
    with pytest.raises(ActuatorError) as missing:
        await BrozzlerActuator(bcfg(brozzler_command="no-such-brozzler-cmd")).act(make_rec(site_id="1"))
    assert missing.value.reason == "command_missing"


async def test_brozzler_dry_run_and_scope_block(fake_stop_crawl: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="watcher.actuators")
    dry = await BrozzlerActuator(bcfg(dry_run=True)).act(make_rec(site_id="5f2c9a"))
    assert dry.dry_run and not dry.applied and dry.request.argv == ("brozzler-stop-crawl", "--site=5f2c9a")
    assert "would run brozzler-stop-crawl --site=5f2c9a" in caplog.text
    assert not fake_stop_crawl.exists()
    block = await BrozzlerActuator(bcfg(brozzler_action="scope-block")).act(make_rec(site_id="5f2c9a"))
    assert block.request.kind == "rule" and dict(block.request.rule) == {"domain": "example-ngo.org"}
    assert 'scope.blocks rule {"domain": "example-ngo.org"}' in caplog.text
    # stop-crawl without any site id falls back to the rule (never stops a whole job by guess).
    fallback = await BrozzlerActuator(bcfg()).act(make_rec())
    assert fallback.request.kind == "rule" and not fallback.applied
    assert not fake_stop_crawl.exists()


async def test_apply_recommendation_hook(heritrix: FakeHeritrix, caplog: pytest.LogCaptureFixture) -> None:
    assert await apply_recommendation(None, make_rec()) is None
    ok = await apply_recommendation(HeritrixActuator(hcfg(heritrix)), make_rec())
    assert ok is not None and ok.applied and len(heritrix.received) == 1
    caplog.set_level(logging.ERROR, logger="watcher.actuators")
    failed = await apply_recommendation(HeritrixActuator(hcfg(heritrix, heritrix_password="nope")), make_rec())
    assert failed is None and "(unauthorized)" in caplog.text
