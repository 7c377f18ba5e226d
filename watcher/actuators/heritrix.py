"""Heritrix 3: reject a seed's host, pause a job, or deprioritise a SURT prefix.

Its REST API uses HTTP digest auth over TLS with a self-signed certificate.

``stop-seed`` (``heritrix_action``): ``reject-surt`` posts a script to
``/engine/job/JOB/script`` that adds the seed's SURT prefix to a REJECT
``SurtPrefixedDecideRule`` of the ``scope`` bean, so the job keeps running and
only that host is dropped; ``pause`` posts ``action=pause`` to
``/engine/job/JOB``.

``deprioritise-seed`` (``heritrix_guidance: overlay``): a sheet overlay on the
seed's SURT prefix.  Evidence for the calls and the bean path, from
internetarchive/heritrix3:

* ``SheetOverlaysManager.putSheetOverlay(sheet, beanPath, value)`` creates the
  sheet and primes it; its javadoc says sheets should only be changed "in a
  paused crawl", hence pause, wait for ``PAUSED``, script, unpause.
  ``addSurtAssociation(prefix, sheet)`` appends to a list without checking for
  duplicates, so the script checks ``getSheetsNamesBySurt()`` first.
* ``Sheet.prime()`` resolves a bean path as *bean name* + Spring property path
  + terminal property, and requires the object it reaches to be
  ``HasKeyedProperties``.  ``frontier.queuePrecedencePolicy.basePrecedence``
  reaches the ``BdbFrontier`` bean's ``queuePrecedencePolicy`` property (a
  ``BaseQueuePrecedencePolicy`` in the stock profile, which keeps
  ``basePrecedence`` in its ``KeyedProperties``): the default target.  A
  larger precedence is served later; 255 (``precedenceFloor``) and above are
  not crawled at all.  A queue's precedence is recomputed when the queue is
  created or re-evaluated, so the overlay acts on new and re-activated queues.
* Public operator scripts overlay ``frontier.queueTotalBudget`` per SURT the
  same way and then call ``frontier.reconsiderRetiredQueues()``; set
  ``heritrix_overlay_target`` to that path for a budget instead (the script
  always calls ``reconsiderRetiredQueues``, harmless for precedence).

No public script overlays ``basePrecedence`` per SURT, so the target is a
setting: check it on a test job before relying on it.  ``heritrix_guidance:
precedence-file`` writes "URI precedence" lines for ``PrecedenceLoader`` (the
next crawl's ``PreloadedUriPrecedencePolicy``) instead, with no live crawler.
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
import time
from typing import TYPE_CHECKING, Literal

import aiohttp

from .common import JOB_NAME, SURT_PREFIX, ActionRequest, ActionResult, ActuatorError, describe_steps
from .files import precedence_request, recrawl_request, write_request
from .settings import ActuatorConfig

if TYPE_CHECKING:
    from ..recommend import Recommendation

log = logging.getLogger(__name__)

_STATE = re.compile(r"<crawlControllerState>\s*([A-Z_]*)\s*</crawlControllerState>")
_PAUSABLE = frozenset({"RUNNING", "EMPTY", "PREPARING"})


def heritrix_reject_script(prefix: str, engine: Literal["groovy", "beanshell"] = "groovy") -> str:
    """The script a Heritrix 3 operator runs to drop a host from a running job.

    It finds the scope's REJECT ``SurtPrefixedDecideRule`` (appending one as
    the *last* rule when there is none: in a ``DecideRuleSequence`` the last
    non-NONE decision wins) and adds ``prefix`` through ``nonseedLine('-' +
    prefix)``, the same public entry point a ``-``-prefixed line of the seeds
    file uses.  Idempotent: a prefix already present is reported, not added
    twice.
    """
    if not SURT_PREFIX.match(prefix):
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


def heritrix_overlay_script(
    prefix: str, sheet: str, target: str, value: int, engine: Literal["groovy", "beanshell"] = "groovy"
) -> str:
    """The script that overlays ``target = value`` on the hosts under ``prefix``.

    Idempotent: the SURT association is added only when absent (the manager's
    own ``addSurtAssociation`` would add a duplicate).
    """
    if not SURT_PREFIX.match(prefix):
        raise ActuatorError(f"not a SURT prefix: {prefix!r}", reason="bad_surt_prefix")
    if engine == "groovy":
        return f"""// driftline: low yield; serve this host's queues after the others (sheet overlay on its SURT prefix)
def prefix = '{prefix}'
def sheet = '{sheet}'
def mgr = appCtx.getBean('sheetOverlaysManager')
mgr.putSheetOverlay(sheet, '{target}', {value})
def names = mgr.getSheetsNamesBySurt().get(prefix)
if (names == null || !names.contains(sheet)) {{
    mgr.addSurtAssociation(prefix, sheet)
}}
appCtx.getBean('frontier').reconsiderRetiredQueues()
rawOut.println('driftline: deprioritised ' + prefix + ' ({target}={value}, sheet ' + sheet + ')')
"""
    return f"""// driftline: low yield; serve this host's queues after the others (sheet overlay on its SURT prefix)
prefix = "{prefix}";
sheet = "{sheet}";
mgr = appCtx.getBean("sheetOverlaysManager");
mgr.putSheetOverlay(sheet, "{target}", Integer.valueOf({value}));
names = mgr.getSheetsNamesBySurt().get(prefix);
if (names == null || !names.contains(sheet)) {{ mgr.addSurtAssociation(prefix, sheet); }}
appCtx.getBean("frontier").reconsiderRetiredQueues();
rawOut.println("driftline: deprioritised " + prefix + " ({target}={value}, sheet " + sheet + ")");
"""


def controller_state(job_xml: str) -> str | None:
    """``crawlControllerState`` of a job's status XML (``None``: not launched)."""
    m = _STATE.search(job_xml)
    return m.group(1) or None if m else None


def _script_failed(body: str) -> bool:
    return bool(re.search(r"<failure>\s*true\s*</failure>", body) or re.search(r"<exception>\s*\S", body))


class HeritrixActuator:
    """Acts through the Heritrix 3 REST API (digest auth, configurable TLS)."""

    name = "heritrix"

    def __init__(self, cfg: ActuatorConfig) -> None:
        self.cfg = cfg

    def _job_url(self, rec: Recommendation) -> str:
        job = rec.job
        if not job or not JOB_NAME.match(job):
            raise ActuatorError(f"recommendation {rec.id} names no usable Heritrix job: {job!r}", reason="no_job")
        return f"{self.cfg.heritrix_url.rstrip('/')}/engine/job/{job}"

    def plan(self, rec: Recommendation) -> ActionRequest:
        """The stop-seed request (reject the SURT prefix, or pause the job)."""
        job_url = self._job_url(rec)
        if self.cfg.heritrix_action == "pause":
            return ActionRequest(kind="http", method="POST", url=job_url, form={"action": "pause"})
        script = heritrix_reject_script(rec.surt_prefix, self.cfg.heritrix_script_engine)
        return ActionRequest(
            kind="http", method="POST", url=f"{job_url}/script",
            form={"engine": self.cfg.heritrix_script_engine, "script": script},
        )

    def plan_deprioritise(self, rec: Recommendation) -> tuple[ActionRequest, ...]:
        """The overlay's steps: status, pause, status (polled until PAUSED), script, unpause."""
        job_url = self._job_url(rec)
        c = self.cfg
        script = heritrix_overlay_script(rec.surt_prefix, c.heritrix_overlay_sheet, c.heritrix_overlay_target,
                                         c.heritrix_overlay_value, c.heritrix_script_engine)
        status = ActionRequest(kind="http", method="GET", url=job_url)
        return (
            status,
            ActionRequest(kind="http", method="POST", url=job_url, form={"action": "pause"}),
            status,
            ActionRequest(kind="http", method="POST", url=f"{job_url}/script",
                          form={"engine": c.heritrix_script_engine, "script": script}),
            ActionRequest(kind="http", method="POST", url=job_url, form={"action": "unpause"}),
        )

    def _ssl(self) -> ssl.SSLContext | bool:
        if not self.cfg.heritrix_verify_tls:
            return False
        if self.cfg.heritrix_ca_file:
            return ssl.create_default_context(cafile=self.cfg.heritrix_ca_file)
        return True

    def _session(self) -> aiohttp.ClientSession:
        auth = aiohttp.DigestAuthMiddleware(self.cfg.heritrix_user, self.cfg.heritrix_password.get_secret_value())
        return aiohttp.ClientSession(middlewares=(auth,),
                                     timeout=aiohttp.ClientTimeout(total=self.cfg.heritrix_timeout_s))

    async def _send(self, session: aiohttp.ClientSession, req: ActionRequest) -> tuple[int, str]:
        assert req.url is not None and req.method is not None
        try:
            async with session.request(
                req.method, req.url, data=dict(req.form) if req.form else None, ssl=self._ssl(),
                headers={"Accept": "application/xml"},
            ) as resp:
                status, body = resp.status, await resp.text(errors="replace")
        except (aiohttp.ClientError, TimeoutError) as exc:
            msg = f"Heritrix at {self.cfg.heritrix_url} unreachable: {exc}"
            raise ActuatorError(msg, reason="unreachable") from exc
        if status == 401:
            raise ActuatorError("Heritrix refused the credentials (HTTP 401)", reason="unauthorized")
        if status == 404:
            raise ActuatorError(f"Heritrix has no such job: {req.url}", reason="no_such_job")
        if status >= 400:
            raise ActuatorError(f"Heritrix answered HTTP {status}: {body[:300]}", reason="http_status")
        return status, body

    async def act(self, rec: Recommendation) -> ActionResult:
        action = str(getattr(rec, "action", "stop-seed"))
        if action == "deprioritise-seed":
            if self.cfg.heritrix_guidance == "precedence-file":
                return write_request(self.name, rec, precedence_request(rec, self.cfg), self.cfg.dry_run)
            return await self._deprioritise(rec)
        if action == "recrawl-interval":
            return write_request(self.name, rec, recrawl_request(rec, self.cfg), self.cfg.dry_run)
        return await self._stop(rec)

    async def _stop(self, rec: Recommendation) -> ActionResult:
        req = self.plan(rec)
        action = self.cfg.heritrix_action
        if self.cfg.dry_run:
            log.info("actuator dry run (heritrix %s, recommendation %s): would send %s", action, rec.id, req.describe())
            return ActionResult(rec.id, self.name, action, dry_run=True, applied=False, request=req)
        async with self._session() as session:
            status, body = await self._send(session, req)
        if _script_failed(body):
            raise ActuatorError(f"Heritrix script failed: {body[:500]}", reason="script_failed")
        log.warning("actuator: heritrix %s applied for recommendation %s (HTTP %d)", action, rec.id, status)
        return ActionResult(rec.id, self.name, action, dry_run=False, applied=True, request=req, status=status,
                            output=body[:2000])

    async def _deprioritise(self, rec: Recommendation) -> ActionResult:
        steps = self.plan_deprioritise(rec)
        status_req, pause, _, script, unpause = steps
        action = "deprioritise-seed"
        if self.cfg.dry_run:
            log.info("actuator dry run (heritrix %s, recommendation %s): would send, in order "
                     "(step 3 repeated until <crawlControllerState>PAUSED; steps 2 and 5 skipped when the job "
                     "is already paused):\n%s", action, rec.id, describe_steps(steps))
            return ActionResult(rec.id, self.name, action, dry_run=True, applied=False, request=script, steps=steps)
        sent: list[ActionRequest] = []
        async with self._session() as session:
            _, xml = await self._send(session, status_req)
            sent.append(status_req)
            state = controller_state(xml)
            if state not in _PAUSABLE and state not in ("PAUSING", "PAUSED"):
                raise ActuatorError(f"Heritrix job at {status_req.url} is not running (state {state or 'none'})",
                                    reason="job_not_running")
            # A job the operator paused stays paused; one paused here is unpaused whatever happens.
            paused_by_us = state != "PAUSED"
            if state in _PAUSABLE:
                await self._send(session, pause)
                sent.append(pause)
            try:
                if paused_by_us:
                    await self._wait_paused(session, status_req, sent)
                status, body = await self._send(session, script)
                sent.append(script)
            finally:
                if paused_by_us:
                    await self._send(session, unpause)
                    sent.append(unpause)
        if _script_failed(body):
            raise ActuatorError(f"Heritrix overlay script failed: {body[:500]}", reason="script_failed")
        log.warning("actuator: heritrix %s applied to %s for recommendation %s", action, rec.surt_prefix, rec.id)
        return ActionResult(rec.id, self.name, action, dry_run=False, applied=True, request=script, status=status,
                            output=body[:2000], steps=tuple(sent))

    async def _wait_paused(self, session: aiohttp.ClientSession, status_req: ActionRequest,
                           sent: list[ActionRequest]) -> None:
        deadline = time.monotonic() + self.cfg.heritrix_pause_timeout_s
        while True:
            _, xml = await self._send(session, status_req)
            sent.append(status_req)
            if controller_state(xml) == "PAUSED":
                return
            if time.monotonic() >= deadline:
                raise ActuatorError(
                    f"Heritrix job at {status_req.url} not PAUSED after {self.cfg.heritrix_pause_timeout_s:g} s "
                    f"(state {controller_state(xml) or 'none'}); unpausing it", reason="pause_timeout")
            await asyncio.sleep(self.cfg.heritrix_poll_interval_s)
