"""Optional actuators: act on a crawl-stop recommendation (off by default).

Why off and dry-run by default: stopping a seed is a curatorial decision, and
a false positive that silently drops a seed from a crawl loses captures that
cannot be made later.  ``actuator.kind`` is ``none`` unless an operator turns
it on, and even then ``dry_run`` (default true) only *logs the exact request*
that would be made (method, URL, form fields and script body, or the command
line), so an operator can review it, paste it, or switch dry-run off.

Heritrix 3: its REST API uses HTTP digest auth over TLS with a self-signed
certificate.  ``reject-surt`` posts a script to ``/engine/job/JOB/script``
that adds the seed's SURT prefix to a REJECT ``SurtPrefixedDecideRule`` of the
``scope`` bean (creating and appending one when the scope has none), so the
job keeps running and only that host is dropped; ``pause`` posts
``action=pause`` to ``/engine/job/JOB``.

Brozzler: ``stop-crawl`` runs ``brozzler-stop-crawl --site=ID`` (argument
list, never a shell string); ``scope-block`` emits the rule for the site's
``scope.blocks`` (Brozzler has no command to edit a running site's scope; the
rule goes into the site's RethinkDB document or the job YAML).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import shlex
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import aiohttp

from .config import ActuatorConfig
from .errors import DriftlineError
from .recommend import Recommendation, seed_host

log = logging.getLogger(__name__)

_JOB_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_SURT_PREFIX = re.compile(r"^https?://\([a-z0-9,.:_-]+$")


class ActuatorError(DriftlineError):
    """An actuator could not act (crawler unreachable, refused, bad input)."""

    reason = "actuator"


@dataclass(frozen=True, slots=True)
class ActionRequest:
    """The exact request an actuator makes (or, in dry run, would make)."""

    kind: Literal["http", "command", "rule"]
    method: str | None = None
    url: str | None = None
    form: Mapping[str, str] = field(default_factory=dict)
    argv: tuple[str, ...] = ()
    rule: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """One exact, reproducible description (what dry run logs)."""
        if self.kind == "http":
            fields = "\n".join(f"--- form field {k}:\n{v}" for k, v in self.form.items())
            return f"{self.method} {self.url} (application/x-www-form-urlencoded, digest auth)\n{fields}"
        if self.kind == "command":
            return shlex.join(self.argv)
        return "scope.blocks rule " + json.dumps(dict(self.rule), sort_keys=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "method": self.method,
            "url": self.url,
            "form": dict(self.form),
            "argv": list(self.argv),
            "rule": dict(self.rule),
        }


@dataclass(frozen=True, slots=True)
class ActionResult:
    recommendation_id: str
    actuator: str
    action: str
    dry_run: bool
    applied: bool
    request: ActionRequest
    status: int | None = None
    output: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "recommendation_id": self.recommendation_id,
            "actuator": self.actuator,
            "action": self.action,
            "dry_run": self.dry_run,
            "applied": self.applied,
            "request": self.request.to_dict(),
            "status": self.status,
            "output": self.output,
        }


class Actuator(Protocol):
    async def act(self, rec: Recommendation) -> ActionResult: ...


def make_actuator(cfg: ActuatorConfig) -> Actuator | None:
    """The configured actuator, or ``None`` when ``kind`` is ``none``."""
    if cfg.kind == "heritrix":
        return HeritrixActuator(cfg)
    if cfg.kind == "brozzler":
        return BrozzlerActuator(cfg)
    return None


# -- Heritrix -------------------------------------------------------------


def heritrix_reject_script(prefix: str, engine: Literal["groovy", "beanshell"] = "groovy") -> str:
    """The script a Heritrix 3 operator runs to drop a host from a running job.

    It finds the scope's REJECT ``SurtPrefixedDecideRule`` (appending one as
    the *last* rule when there is none: in a ``DecideRuleSequence`` the last
    non-NONE decision wins) and adds ``prefix`` through ``nonseedLine('-' +
    prefix)``, the same public entry point a ``-``-prefixed line of the seeds
    file uses.  Idempotent: a prefix already present is reported, not added
    twice.
    """
    if not _SURT_PREFIX.match(prefix):
        raise ActuatorError(f"not a SURT prefix: {prefix!r}", reason="bad_surt_prefix")
    if engine == "groovy":
        return f"""// driftline: the seed went off topic for good; reject its host, keep the job running
import org.archive.modules.deciderules.DecideResult
import org.archive.modules.deciderules.surt.SurtPrefixedDecideRule

def prefix = '{prefix}'
def scope = appCtx.getBean('scope')
def rule = scope.rules.find {{ it.getClass() == SurtPrefixedDecideRule && it.decision == DecideResult.REJECT }}
if (rule == null) {{
    rule = new SurtPrefixedDecideRule()
    rule.setDecision(DecideResult.REJECT)
    rule.setSeedsAsSurtPrefixes(false)
    def rules = new ArrayList(scope.rules)
    rules.add(rule)
    scope.setRules(rules)
    rawOut.println('driftline: appended a REJECT SurtPrefixedDecideRule to the scope')
}}
if (rule.surtPrefixes.contains(prefix)) {{
    rawOut.println('driftline: already rejected ' + prefix)
}} else {{
    rule.nonseedLine('-' + prefix)
    rawOut.println('driftline: rejected ' + prefix)
}}
"""
    return f"""// driftline: the seed went off topic for good; reject its host, keep the job running
import org.archive.modules.deciderules.DecideResult;
import org.archive.modules.deciderules.surt.SurtPrefixedDecideRule;

prefix = "{prefix}";
scope = appCtx.getBean("scope");
rule = null;
for (r : scope.getRules()) {{
    if (r.getClass() == SurtPrefixedDecideRule.class && r.getDecision() == DecideResult.REJECT) {{ rule = r; break; }}
}}
if (rule == null) {{
    rule = new SurtPrefixedDecideRule();
    rule.setDecision(DecideResult.REJECT);
    rule.setSeedsAsSurtPrefixes(false);
    rules = new ArrayList(scope.getRules());
    rules.add(rule);
    scope.setRules(rules);
    rawOut.println("driftline: appended a REJECT SurtPrefixedDecideRule to the scope");
}}
rule.nonseedLine("-" + prefix);
rawOut.println("driftline: rejected " + prefix);
"""


class HeritrixActuator:
    """Acts through the Heritrix 3 REST API (digest auth, configurable TLS)."""

    name = "heritrix"

    def __init__(self, cfg: ActuatorConfig) -> None:
        self.cfg = cfg

    def plan(self, rec: Recommendation) -> ActionRequest:
        job = rec.job
        if not job or not _JOB_NAME.match(job):
            raise ActuatorError(f"recommendation {rec.id} names no usable Heritrix job: {job!r}", reason="no_job")
        base = self.cfg.heritrix_url.rstrip("/")
        if self.cfg.heritrix_action == "pause":
            return ActionRequest(kind="http", method="POST", url=f"{base}/engine/job/{job}", form={"action": "pause"})
        script = heritrix_reject_script(rec.surt_prefix, self.cfg.heritrix_script_engine)
        return ActionRequest(
            kind="http",
            method="POST",
            url=f"{base}/engine/job/{job}/script",
            form={"engine": self.cfg.heritrix_script_engine, "script": script},
        )

    def _ssl(self) -> ssl.SSLContext | bool:
        if not self.cfg.heritrix_verify_tls:
            return False
        if self.cfg.heritrix_ca_file:
            return ssl.create_default_context(cafile=self.cfg.heritrix_ca_file)
        return True

    async def act(self, rec: Recommendation) -> ActionResult:
        req = self.plan(rec)
        action = self.cfg.heritrix_action
        if self.cfg.dry_run:
            log.info("actuator dry run (heritrix %s, recommendation %s): would send %s", action, rec.id, req.describe())
            return ActionResult(rec.id, self.name, action, dry_run=True, applied=False, request=req)
        assert req.url is not None
        auth = aiohttp.DigestAuthMiddleware(self.cfg.heritrix_user, self.cfg.heritrix_password.get_secret_value())
        timeout = aiohttp.ClientTimeout(total=self.cfg.heritrix_timeout_s)
        try:
            async with (
                aiohttp.ClientSession(middlewares=(auth,), timeout=timeout) as session,
                session.post(
                    req.url, data=dict(req.form), ssl=self._ssl(), headers={"Accept": "application/xml"}
                ) as resp,
            ):
                status = resp.status
                body = await resp.text(errors="replace")
        except (aiohttp.ClientError, TimeoutError) as exc:
            msg = f"Heritrix at {self.cfg.heritrix_url} unreachable: {exc}"
            raise ActuatorError(msg, reason="unreachable") from exc
        if status == 401:
            raise ActuatorError("Heritrix refused the credentials (HTTP 401)", reason="unauthorized")
        if status >= 400:
            raise ActuatorError(f"Heritrix answered HTTP {status}: {body[:300]}", reason="http_status")
        failed = re.search(r"<failure>\s*true\s*</failure>", body) or re.search(r"<exception>\s*\S", body)
        if failed:
            raise ActuatorError(f"Heritrix script failed: {body[:500]}", reason="script_failed")
        log.warning("actuator: heritrix %s applied for recommendation %s (HTTP %d)", action, rec.id, status)
        return ActionResult(rec.id, self.name, action, dry_run=False, applied=True, request=req, status=status,
                            output=body[:2000])


# -- Brozzler -------------------------------------------------------------


def brozzler_block_rule(seed: str) -> dict[str, str]:
    """The ``scope.blocks`` rule that drops the seed's host and its subdomains."""
    return {"domain": seed_host(seed)}


class BrozzlerActuator:
    """Runs ``brozzler-stop-crawl`` or emits a ``scope.blocks`` rule."""

    name = "brozzler"

    def __init__(self, cfg: ActuatorConfig) -> None:
        self.cfg = cfg

    def site_id(self, rec: Recommendation) -> str | None:
        return rec.site_id or self.cfg.brozzler_site_ids.get(rec.seed)

    def plan(self, rec: Recommendation) -> ActionRequest:
        site = self.site_id(rec)
        if self.cfg.brozzler_action == "scope-block" or site is None:
            if self.cfg.brozzler_action == "stop-crawl":
                log.warning("actuator: no Brozzler site id for seed %s; emitting a scope.blocks rule instead", rec.seed)
            return ActionRequest(kind="rule", rule=brozzler_block_rule(rec.seed))
        argv: list[str] = [self.cfg.brozzler_command]
        if self.cfg.brozzler_rethinkdb_servers:
            argv += ["--rethinkdb-servers", self.cfg.brozzler_rethinkdb_servers]
        if self.cfg.brozzler_rethinkdb_db:
            argv += ["--rethinkdb-db", self.cfg.brozzler_rethinkdb_db]
        argv.append(f"--site={site}")
        return ActionRequest(kind="command", argv=tuple(argv))

    async def act(self, rec: Recommendation) -> ActionResult:
        req = self.plan(rec)
        action = "stop-crawl" if req.kind == "command" else "scope-block"
        if req.kind == "rule":
            # Nothing to execute: the rule is for the operator (or a site-update tool).
            log.warning("actuator: add to the Brozzler site's scope (seed %s, recommendation %s): %s",
                        rec.seed, rec.id, req.describe())
            return ActionResult(rec.id, self.name, action, dry_run=self.cfg.dry_run, applied=False, request=req)
        if self.cfg.dry_run:
            log.info("actuator dry run (brozzler %s, recommendation %s): would run %s", action, rec.id, req.describe())
            return ActionResult(rec.id, self.name, action, dry_run=True, applied=False, request=req)
        try:
            proc = await asyncio.create_subprocess_exec(
                *req.argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
            )
        except OSError as exc:
            raise ActuatorError(f"cannot run {req.argv[0]}: {exc}", reason="command_missing") from exc
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout=self.cfg.brozzler_timeout_s)
        except TimeoutError as exc:
            proc.kill()
            await proc.wait()
            raise ActuatorError(f"{req.describe()} timed out", reason="timeout") from exc
        text = out.decode("utf-8", "replace")
        if proc.returncode != 0:
            raise ActuatorError(f"{req.describe()} exited {proc.returncode}: {text[:500]}", reason="command_failed")
        log.warning("actuator: brozzler stop-crawl ran for recommendation %s: %s", rec.id, req.describe())
        return ActionResult(rec.id, self.name, action, dry_run=False, applied=True, request=req, status=0,
                            output=text[:2000])


async def apply_recommendation(actuator: Actuator | None, rec: Recommendation) -> ActionResult | None:
    """The one-line hook for the streaming app: act on ``rec`` if an actuator is
    configured; an :class:`ActuatorError` is logged (with its reason) and
    swallowed, because a crawler that cannot be reached must not stop scoring."""
    if actuator is None:
        return None
    try:
        return await actuator.act(rec)
    except ActuatorError as exc:
        log.error("actuator failed for recommendation %s (%s): %s", rec.id, exc.reason, exc)
        return None
