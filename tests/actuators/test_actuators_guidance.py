"""Guidance actuators: deprioritise a seed, advise a recrawl interval.

Heritrix and Browsertrix are local servers that answer as the real APIs do
(tests/fixtures/crawlers.py); files are written to a temporary directory.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from pydantic import ValidationError

from tests.fixtures.crawlers import (
    BTRIX_PASSWORD,
    BTRIX_TOKEN,
    BTRIX_USER,
    HERITRIX_PASSWORD,
    HERITRIX_USER,
    ORG,
    FakeBrowsertrix,
    FakeHeritrix,
    HeritrixJob,
    browsertrix_server,
    heritrix_server,
)
from watcher.actuators import (
    ActionRequest,
    ActuatorConfig,
    ActuatorError,
    BrowsertrixActuator,
    BrozzlerActuator,
    HeritrixActuator,
    apply_recommendation,
    controller_state,
    guidance_for,
    heritrix_overlay_script,
    host_exclusion_regex,
    make_actuator,
)
from watcher.recommend import Recommendation

from ..conftest import free_port

SEED = "https://www.example-ngo.org/"
PREFIX = "http://(org,example-ngo,"


@dataclass(frozen=True)
class StubReport:
    """The SeedReport's attributes (watcher/seeds/report.py on the lead's branch)."""

    seed: str = SEED
    surt: str = PREFIX
    captures: int = 12
    yield_: float | None = 0.1
    new_text_per_byte: float | None = 0.002
    badness: float | None = 1.7
    boilerplate_share: float | None = 0.8
    change_rate_per_day: float | None = 0.05
    change_rate_low: float | None = 0.03
    change_rate_high: float | None = 0.08
    recrawl_interval_days: float | None = 14.0
    blocked_share: float | None = 0.0
    error_share: float | None = 0.1
    verdict_ids: tuple[str, ...] = field(default=())


CFG = ActuatorConfig()


# -- guidance_for -------------------------------------------------------------


def test_low_yield_is_deprioritised_with_its_evidence() -> None:
    rec = guidance_for(StubReport(), CFG, verdicts=("v1", "v2"), job="weekly-ngo", crawler="heritrix")
    assert rec is not None and rec.action == "deprioritise-seed"
    assert rec.surt_prefix == PREFIX and rec.seed == SEED and rec.job == "weekly-ngo"
    assert rec.captures == ("v1", "v2") and rec.recrawl_interval_days is None
    ev = rec.evidence or {}
    assert ev["yield"] == 0.1 and ev["badness"] == 1.7 and ev["change_rate_per_day"] == 0.05
    assert ev["change_rate_low"] == 0.03 and ev["change_rate_high"] == 0.08 and ev["verdicts"] == ["v1", "v2"]
    assert "yield 0.10 below 0.40" in rec.reason and "Badness 1.70" in rec.reason
    assert f"addSurtAssociation('{PREFIX}', 'driftlineDeprioritised')" in rec.what_to_do
    assert "REJECT" not in rec.what_to_do
    # The message on the recommendations topic carries it, and reads back.
    msg = json.loads(rec.to_json())
    assert msg["action"] == "deprioritise-seed" and msg["evidence"]["yield"] == 0.1
    back = Recommendation.from_dict(msg)
    assert back.action == "deprioritise-seed" and back.evidence == msg["evidence"]


def test_recrawl_interval_when_yield_is_fine_and_none_without_evidence() -> None:
    rec = guidance_for(StubReport(yield_=0.9, verdict_ids=("a",)), CFG)
    assert rec is not None and rec.action == "recrawl-interval" and rec.recrawl_interval_days == 14.0
    assert rec.captures == ("a",) and "band 0.030-0.080" in rec.reason
    assert Recommendation.from_dict(json.loads(rec.to_json())).recrawl_interval_days == 14.0
    assert guidance_for(StubReport(yield_=0.9, recrawl_interval_days=None), CFG) is None
    assert guidance_for(StubReport(captures=4), CFG) is None  # below guidance_min_captures
    assert guidance_for(StubReport(yield_=None, recrawl_interval_days=None), CFG) is None
    # The threshold is the configured one.
    assert guidance_for(StubReport(yield_=0.4), ActuatorConfig(deprioritise_below_yield=0.5)) is not None
    assert guidance_for(StubReport(yield_=0.4, recrawl_interval_days=None), CFG) is None


def test_guidance_ids_are_stable_while_the_advice_stands() -> None:
    a = guidance_for(StubReport(captures=12), CFG)
    b = guidance_for(StubReport(captures=40, yield_=0.05), CFG)
    assert a is not None and b is not None and a.id == b.id
    r1 = guidance_for(StubReport(yield_=0.9, recrawl_interval_days=14.2), CFG)
    r2 = guidance_for(StubReport(yield_=0.9, recrawl_interval_days=13.9), CFG)
    r3 = guidance_for(StubReport(yield_=0.9, recrawl_interval_days=7.0), CFG)
    assert r1 is not None and r2 is not None and r3 is not None
    assert r1.id == r2.id != r3.id != a.id


def test_old_recommendation_messages_still_read() -> None:
    old = {"id": "x", "history": "h", "seed": SEED, "since": "2024-01-01T00:00:00Z", "surt_prefix": PREFIX}
    rec = Recommendation.from_dict(old)
    assert rec.action == "stop-seed" and rec.evidence is None and rec.to_dict()["evidence"] is None


def test_config_keys_are_validated() -> None:
    for bad in ({"heritrix_overlay_target": "frontier; System.exit(0)"}, {"heritrix_overlay_sheet": "a'b"},
                {"deprioritise_below_yield": 1.5}, {"act_on": ["drop-everything"]}, {"kind": "wget"}):
        with pytest.raises(ValidationError):
            ActuatorConfig(**bad)
    assert ActuatorConfig().act_on == ("stop-seed",) and ActuatorConfig().kind == "none"


# -- Heritrix overlay -----------------------------------------------------------


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True, capture_output=True,
    )
    return cert, key


@pytest.fixture
async def heritrix(tls: tuple[Path, Path]) -> AsyncIterator[FakeHeritrix]:
    jobs = {"weekly-ngo": HeritrixJob(pause_polls=2), "paused-job": HeritrixJob(state="PAUSED"),
            "unlaunched": HeritrixJob(state=None), "finished": HeritrixJob(state="FINISHED"),
            "stuck": HeritrixJob(pause_polls=10_000)}
    async with heritrix_server(*tls, free_port(), jobs) as state:
        yield state


def hcfg(h: FakeHeritrix, **kw: Any) -> ActuatorConfig:
    base: dict[str, Any] = {"kind": "heritrix", "heritrix_url": h.url, "heritrix_user": HERITRIX_USER,
                            "heritrix_password": HERITRIX_PASSWORD, "heritrix_verify_tls": False, "dry_run": False,
                            "act_on": ["stop-seed", "deprioritise-seed", "recrawl-interval"],
                            "heritrix_poll_interval_s": 0.01}
    base.update(kw)
    return ActuatorConfig(**base)


def deprioritise(job: str | None = "weekly-ngo", **kw: Any) -> Recommendation:
    rec = guidance_for(StubReport(**kw), CFG, job=job, crawler="heritrix", verdicts=("v1",))
    assert rec is not None and rec.action == "deprioritise-seed"
    return rec


async def test_heritrix_overlay_pauses_waits_scripts_and_unpauses(heritrix: FakeHeritrix) -> None:
    result = await HeritrixActuator(hcfg(heritrix)).act(deprioritise())
    assert result.applied and result.action == "deprioritise-seed"
    log = heritrix.log()
    job = "/engine/job/weekly-ngo"
    assert log[0] == f"GET {job}" and log[1] == f"POST {job} pause"
    script_at = log.index(f"POST {job}/script groovy")
    assert log[script_at + 1] == f"POST {job} unpause" and script_at + 2 <= len(log)
    assert heritrix.jobs["weekly-ngo"].state == "RUNNING"
    assert heritrix.sheets == {"driftlineDeprioritised": {"frontier.queuePrecedencePolicy.basePrecedence": "100"}}
    assert heritrix.associations == {PREFIX: ["driftlineDeprioritised"]}
    assert f"driftline: deprioritised {PREFIX}" in result.output
    # The same advice again: the association is not duplicated.
    await HeritrixActuator(hcfg(heritrix)).act(deprioritise())
    assert heritrix.associations == {PREFIX: ["driftlineDeprioritised"]}


async def test_heritrix_overlay_target_is_configurable_and_beanshell(heritrix: FakeHeritrix) -> None:
    cfg = hcfg(heritrix, heritrix_overlay_target="frontier.queueTotalBudget", heritrix_overlay_value=50,
               heritrix_overlay_sheet="budget50", heritrix_script_engine="beanshell")
    await HeritrixActuator(cfg).act(deprioritise())
    assert heritrix.sheets == {"budget50": {"frontier.queueTotalBudget": "50"}}
    script = next(r for r in heritrix.received if r["path"].endswith("/script"))["form"]
    assert script["engine"] == "beanshell" and "reconsiderRetiredQueues()" in script["script"]


async def test_heritrix_overlay_leaves_an_operators_pause_alone(heritrix: FakeHeritrix) -> None:
    await HeritrixActuator(hcfg(heritrix)).act(deprioritise(job="paused-job"))
    assert heritrix.log() == ["GET /engine/job/paused-job", "POST /engine/job/paused-job/script groovy"]
    assert heritrix.jobs["paused-job"].state == "PAUSED"


async def test_heritrix_overlay_dry_run_logs_every_step(
        heritrix: FakeHeritrix, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="watcher.actuators")
    result = await HeritrixActuator(hcfg(heritrix, dry_run=True)).act(deprioritise())
    assert result.dry_run and not result.applied and heritrix.received == []
    text = caplog.text
    base = f"{heritrix.url}/engine/job/weekly-ngo"
    assert f"[1] GET {base} (Accept: application/xml, digest auth)" in text
    assert f"[2] POST {base} (application/x-www-form-urlencoded, digest auth)\n--- form field action:\npause" in text
    assert f"[5] POST {base} (application/x-www-form-urlencoded, digest auth)\n--- form field action:\nunpause" in text
    script = heritrix_overlay_script(PREFIX, "driftlineDeprioritised", "frontier.queuePrecedencePolicy.basePrecedence",
                                     100)
    assert script in text  # the whole script body, verbatim
    assert [s.to_dict()["form"].get("action") for s in result.steps] == [None, "pause", None, None, "unpause"]


async def test_heritrix_overlay_failures(heritrix: FakeHeritrix) -> None:
    act = HeritrixActuator(hcfg(heritrix))
    for job, reason in (("unlaunched", "job_not_running"), ("finished", "job_not_running"),
                        ("no-such-job", "no_such_job"), (None, "no_job")):
        with pytest.raises(ActuatorError) as err:
            await act.act(deprioritise(job=job))
        assert err.value.reason == reason, job
    with pytest.raises(ActuatorError) as denied:
        await HeritrixActuator(hcfg(heritrix, heritrix_password="wrong")).act(deprioritise())
    assert denied.value.reason == "unauthorized" and heritrix.jobs["weekly-ngo"].state == "RUNNING"
    # A job that never reaches PAUSED: give up, and unpause what was paused.
    with pytest.raises(ActuatorError) as stuck:
        await HeritrixActuator(hcfg(heritrix, heritrix_pause_timeout_s=0.2)).act(deprioritise(job="stuck"))
    assert stuck.value.reason == "pause_timeout"
    assert [x for x in heritrix.log() if x.startswith("POST")][-1] == "POST /engine/job/stuck unpause"
    assert not any(r["path"] == "/engine/job/stuck/script" for r in heritrix.received)


async def test_heritrix_script_failure_still_unpauses(heritrix: FakeHeritrix, monkeypatch: pytest.MonkeyPatch) -> None:
    # An overlay target the fake's sheet manager cannot parse: the script fails, the job is unpaused.
    act = HeritrixActuator(hcfg(heritrix))
    rec = deprioritise()
    original = act.plan_deprioritise

    def broken(r: Recommendation) -> tuple[ActionRequest, ...]:
        steps = list(original(r))
        form = dict(steps[3].form)
        form["script"] = form["script"].replace("putSheetOverlay(sheet", "putSheetOverlay(nosheet")
        steps[3] = type(steps[3])(kind="http", method="POST", url=steps[3].url, form=form)
        return tuple(steps)

    monkeypatch.setattr(act, "plan_deprioritise", broken)
    with pytest.raises(ActuatorError) as err:
        await act.act(rec)
    assert err.value.reason == "script_failed"
    assert [x for x in heritrix.log() if x.startswith("POST")][-1] == "POST /engine/job/weekly-ngo unpause"
    assert heritrix.jobs["weekly-ngo"].state == "RUNNING"


def test_controller_state() -> None:
    assert controller_state("<job><crawlControllerState>PAUSED</crawlControllerState></job>") == "PAUSED"
    assert controller_state("<job><crawlControllerState></crawlControllerState></job>") is None
    assert controller_state("<job><statusDescription>Unbuilt</statusDescription></job>") is None


# -- files for the next crawl ----------------------------------------------------


async def test_precedence_file_and_recrawl_schedule(tmp_path: Path) -> None:
    prec = tmp_path / "next" / "precedence.txt"
    sched = tmp_path / "recrawl.tsv"
    cfg = ActuatorConfig(kind="heritrix", dry_run=False, heritrix_guidance="precedence-file",
                         heritrix_precedence_file=str(prec), recrawl_schedule_file=str(sched),
                         act_on=("deprioritise-seed", "recrawl-interval"))
    prec.parent.mkdir()
    prec.write_text("http://other.example/ 3\n" + f"{SEED} 7\n")
    act = HeritrixActuator(cfg)
    r = await act.act(deprioritise())
    assert r.applied and r.request.kind == "file"
    assert prec.read_text().splitlines() == ["http://other.example/ 3", f"{SEED} 100"]
    interval = guidance_for(StubReport(yield_=0.9, recrawl_interval_days=14.0), CFG)
    assert interval is not None
    await act.act(interval)
    later = guidance_for(StubReport(yield_=0.9, recrawl_interval_days=3.0), CFG)
    assert later is not None
    await BrozzlerActuator(cfg).act(later)  # the schedule is crawler-independent
    rows = [line.split("\t") for line in sched.read_text().splitlines()]
    assert rows[0] == ["seed", "surt", "recrawl_interval_days", "recommendation_id", "issued_at"]
    assert len(rows) == 2 and rows[1][:4] == [SEED, PREFIX, "3.000", later.id]
    assert not list(tmp_path.glob("**/*.tmp"))


async def test_file_guidance_dry_run_writes_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="watcher.actuators")
    prec = tmp_path / "precedence.txt"
    cfg = ActuatorConfig(kind="heritrix", heritrix_guidance="precedence-file", heritrix_precedence_file=str(prec))
    r = await HeritrixActuator(cfg).act(deprioritise())
    assert r.dry_run and not prec.exists()
    assert f"append to {prec}:\n{SEED} 100" in caplog.text
    with pytest.raises(ActuatorError) as err:
        await HeritrixActuator(ActuatorConfig(heritrix_guidance="precedence-file")).act(deprioritise())
    assert err.value.reason == "no_file"


# -- Brozzler ------------------------------------------------------------------


async def test_brozzler_deprioritise_emits_the_reql(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="watcher.actuators")
    cfg = ActuatorConfig(kind="brozzler", dry_run=False, brozzler_site_ids={SEED: "5f2c9a"},
                         brozzler_rethinkdb_db="archiveit_brozzler")
    r = await BrozzlerActuator(cfg).act(deprioritise())
    assert r.request.kind == "rule" and not r.applied
    reql = str(r.request.rule["reql"])
    assert reql.startswith('site_id = "5f2c9a"\nr.db("archiveit_brozzler").table("pages").between(')
    assert 'index="priority_by_site"' in reql and '.update({"priority": r.row["priority"].div(10).floor()})' in reql
    assert "RethinkDB change" in caplog.text and '"priority_divisor": 10' in caplog.text
    assert "\n" + reql in caplog.text  # the ReQL itself, ready to paste
    unknown = await BrozzlerActuator(ActuatorConfig(kind="brozzler")).act(deprioritise())
    assert f'.filter({{"seed": "{SEED}"}})' in str(unknown.request.rule["reql"])


# -- Browsertrix -----------------------------------------------------------------

QUEUE = ["https://www.example-ngo.org/a", "https://example-ngo.org:8443/b", "http://news.example-ngo.org",
         "https://notexample-ngo.org/c", "https://example-ngo.org.evil.test/d", "https://other.test/?u=example-ngo.org"]


@pytest.fixture
async def btrix() -> AsyncIterator[FakeBrowsertrix]:
    async with browsertrix_server(free_port(), {"crawl-1": "running", "crawl-done": "complete"}, list(QUEUE)) as s:
        yield s


def bcfg(b: FakeBrowsertrix, **kw: Any) -> ActuatorConfig:
    base: dict[str, Any] = {"kind": "browsertrix", "browsertrix_url": b.url, "browsertrix_org_id": ORG,
                            "browsertrix_token": BTRIX_TOKEN, "dry_run": False,
                            "browsertrix_crawl_ids": {SEED: "crawl-1"},
                            "act_on": ["stop-seed", "deprioritise-seed"]}
    base.update(kw)
    return ActuatorConfig(**base)


def test_host_exclusion_regex_matches_the_host_and_its_subdomains_only() -> None:
    rx = re.compile(host_exclusion_regex(SEED))
    assert [u for u in QUEUE if rx.search(u)] == QUEUE[:3]


async def test_browsertrix_adds_the_exclusion_with_bearer_auth(btrix: FakeBrowsertrix) -> None:
    r = await BrowsertrixActuator(bcfg(btrix)).act(deprioritise())
    assert r.applied and r.status == 200 and json.loads(r.output) == {"success": True, "num_removed": 3}
    assert btrix.received == [{"path": f"/api/orgs/{ORG}/crawls/crawl-1/exclusions",
                               "query": {"regex": host_exclusion_regex(SEED)},
                               "authorization": f"Bearer {BTRIX_TOKEN}"}]
    assert btrix.queue == QUEUE[3:]
    again = await BrowsertrixActuator(bcfg(btrix)).act(deprioritise())  # exclusion_already_exists: done
    assert again.applied and again.status == 400


async def test_browsertrix_logs_in_for_a_token(btrix: FakeBrowsertrix) -> None:
    cfg = bcfg(btrix, browsertrix_token="", browsertrix_user=BTRIX_USER, browsertrix_password=BTRIX_PASSWORD)
    r = await BrowsertrixActuator(cfg).act(deprioritise())
    assert r.applied and btrix.logins == 1
    bad = bcfg(btrix, browsertrix_token="", browsertrix_user=BTRIX_USER, browsertrix_password="nope")
    with pytest.raises(ActuatorError) as err:
        await BrowsertrixActuator(bad).act(deprioritise())
    assert err.value.reason == "unauthorized"


async def test_browsertrix_failures(btrix: FakeBrowsertrix) -> None:
    cases = [
        (bcfg(btrix, browsertrix_token="wrong"), "unauthorized"),
        (bcfg(btrix, browsertrix_crawl_ids={SEED: "crawl-done"}), "crawl_not_running"),
        (bcfg(btrix, browsertrix_crawl_ids={SEED: "crawl-404"}), "no_such_crawl"),
        (bcfg(btrix, browsertrix_crawl_ids={}), "no_crawl"),
        (bcfg(btrix, browsertrix_org_id=None), "no_org"),
        (bcfg(btrix, browsertrix_token=""), "no_credentials"),
    ]
    for cfg, reason in cases:
        with pytest.raises(ActuatorError) as err:
            await BrowsertrixActuator(cfg).act(deprioritise())
        assert err.value.reason == reason
    assert btrix.exclusions == {} and btrix.queue == QUEUE


async def test_browsertrix_dry_run(btrix: FakeBrowsertrix, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="watcher.actuators")
    r = await BrowsertrixActuator(bcfg(btrix, dry_run=True)).act(deprioritise())
    assert r.dry_run and btrix.received == []
    rx = host_exclusion_regex(SEED)
    assert (f"would send POST {btrix.url}/api/orgs/{ORG}/crawls/crawl-1/exclusions?{urlencode({'regex': rx})} "
            f"(bearer auth)\n--- query parameter regex:\n{rx}") in caplog.text
    assert BTRIX_TOKEN not in caplog.text


# -- the hook ----------------------------------------------------------------------


async def test_apply_acts_only_on_configured_actions_and_once(heritrix: FakeHeritrix) -> None:
    only_stop = HeritrixActuator(hcfg(heritrix, act_on=["stop-seed"]))
    assert await apply_recommendation(only_stop, deprioritise()) is None and heritrix.received == []
    act = make_actuator(hcfg(heritrix))
    assert isinstance(act, HeritrixActuator)
    first = await apply_recommendation(act, deprioritise())
    assert first is not None and first.applied
    n = len(heritrix.received)
    assert await apply_recommendation(act, deprioritise(yield_=0.05)) is None  # same advice, same id
    assert len(heritrix.received) == n
    assert isinstance(make_actuator(ActuatorConfig(kind="browsertrix")), BrowsertrixActuator)


def test_bad_actuator_values_are_refused_at_start_up_naming_the_key() -> None:
    from watcher.config import load_config
    from watcher.errors import ConfigError

    env = {"DRIFTLINE__ACTUATOR__HERITRIX_OVERLAY_TARGET": "frontier",
           "DRIFTLINE__ACTUATOR__ACT_ON": "[stop-seed, drop-everything]",
           "DRIFTLINE__ACTUATOR__BROWSERTRIX_TOKEN": "tok-from-env"}
    with pytest.raises(ConfigError) as err:
        load_config(environ=env)
    lines = str(err.value).splitlines()
    assert len(lines) == 2
    # A value from the environment is blamed on its variable (which names the key).
    assert any(line.startswith("DRIFTLINE__ACTUATOR__HERITRIX_OVERLAY_TARGET=") and "bean path" in line
               for line in lines)
    assert any(line.startswith("DRIFTLINE__ACTUATOR__ACT_ON (actuator.act_on.1)") for line in lines)
    cfg = load_config(environ={"DRIFTLINE__ACTUATOR__BROWSERTRIX_TOKEN": "tok-from-env",
                               "DRIFTLINE__ACTUATOR__KIND": "browsertrix"})
    assert cfg.actuator.browsertrix_token.get_secret_value() == "tok-from-env"
    assert "tok-from-env" not in repr(cfg.actuator)


# -- driftline guide -----------------------------------------------------------------


def _seed_obj(**kw: Any) -> dict[str, Any]:
    r = StubReport(**kw)
    out: dict[str, Any] = {k: getattr(r, "yield_" if k == "yield" else k) for k in (
        "seed", "surt", "captures", "yield", "new_text_per_byte", "badness", "boilerplate_share",
        "change_rate_per_day", "change_rate_low", "change_rate_high", "recrawl_interval_days", "blocked_share",
        "error_share")}
    return out


async def test_guide_command_prints_recommendations_and_acts(
        heritrix: FakeHeritrix, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from watcher.cli import main

    seeds = tmp_path / "seeds.json"
    seeds.write_text(json.dumps([
        _seed_obj(),  # low yield: deprioritise
        _seed_obj(seed="http://calm.example.org/", surt="http://(org,example,calm,", yield_=0.9),  # interval
        _seed_obj(seed="http://new.example.org/", surt="http://(org,example,new,", captures=2),  # too few
    ]))
    for k, v in {"KIND": "heritrix", "DRY_RUN": "false", "HERITRIX_URL": heritrix.url,
                 "HERITRIX_USER": HERITRIX_USER, "HERITRIX_PASSWORD": HERITRIX_PASSWORD,
                 "HERITRIX_VERIFY_TLS": "false", "ACT_ON": "[deprioritise-seed]",
                 "HERITRIX_POLL_INTERVAL_S": "0.01"}.items():
        monkeypatch.setenv(f"DRIFTLINE__ACTUATOR__{k}", v)
    # main() runs its own event loop: run it in a thread so this test's loop keeps serving the fake Heritrix.
    code = await asyncio.to_thread(main, ["guide", str(seeds), "--job", "weekly-ngo", "--crawler", "heritrix",
                                          "--act"])
    assert code == 0
    recs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["action"] for r in recs] == ["deprioritise-seed", "recrawl-interval"]
    assert recs[0]["evidence"]["yield"] == 0.1 and recs[1]["recrawl_interval_days"] == 14.0
    assert heritrix.associations == {PREFIX: ["driftlineDeprioritised"]}  # only deprioritise-seed is in act_on
    bad = tmp_path / "bad.json"
    bad.write_text('[{"seed": "x"}]')
    assert await asyncio.to_thread(main, ["guide", str(bad)]) == 2
    assert "item 1: not a seed report object" in capsys.readouterr().err
