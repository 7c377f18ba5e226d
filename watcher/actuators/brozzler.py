"""Brozzler: stop a site, block its host, or lower its pages' priority.

Brozzler has no REST API: what it offers is job configuration, RethinkDB
documents and a few ``brozzler-*`` commands.  ``stop-seed``:
``stop-crawl`` runs ``brozzler-stop-crawl --site=ID`` (argument list, never
a shell string); ``scope-block`` emits the rule for the site's
``scope.blocks`` (no command edits a running site's scope; the rule goes into
the site's RethinkDB document or the job YAML).

``deprioritise-seed``: a site has no priority of its own; the frontier claims
a site's pages in descending ``priority`` order through the
``priority_by_site`` index (``[site_id, brozzle_count, claimed, priority]``),
and seeds start at 1000.  The actuator emits the exact ReQL that divides the
priority of the site's queued pages by ``brozzler_priority_divisor``; no
``brozzler-*`` command does this, so it is emitted, never run.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING

from ..recommend import seed_host
from .common import ActionRequest, ActionResult, ActuatorError
from .files import recrawl_request, write_request
from .settings import ActuatorConfig

if TYPE_CHECKING:
    from ..recommend import Recommendation

log = logging.getLogger(__name__)


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

    def plan_deprioritise(self, rec: Recommendation) -> ActionRequest:
        reql = brozzler_priority_reql(self.site_id(rec), rec.seed, self.cfg.brozzler_priority_divisor,
                                      self.cfg.brozzler_rethinkdb_db)
        return ActionRequest(kind="rule", rule={
            "_describe": "RethinkDB change (rethinkdb Python driver, `from rethinkdb import r`)",
            "reql": reql, "site_id": self.site_id(rec), "seed": rec.seed,
            "priority_divisor": self.cfg.brozzler_priority_divisor,
        })

    async def act(self, rec: Recommendation) -> ActionResult:
        action = str(getattr(rec, "action", "stop-seed"))
        if action == "recrawl-interval":
            return write_request(self.name, rec, recrawl_request(rec, self.cfg), self.cfg.dry_run)
        if action == "deprioritise-seed":
            req = self.plan_deprioritise(rec)
            log.warning("actuator: lower the Brozzler site's page priorities (seed %s, recommendation %s): %s",
                        rec.seed, rec.id, req.describe())
            return ActionResult(rec.id, self.name, action, dry_run=self.cfg.dry_run, applied=False, request=req)
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




def brozzler_priority_reql(site_id: str | None, seed: str, divisor: int, db: str | None) -> str:
    """The ReQL (Python driver, as Brozzler's own code writes it) that lowers
    the priority of a site's queued pages; with no site id, the site is
    looked up by its seed."""
    table = f"r.db({json.dumps(db or 'brozzler')})"
    if site_id is not None:
        head = f"site_id = {json.dumps(site_id)}"
    else:
        head = (f"site_id = {table}.table(\"sites\").filter({{\"seed\": {json.dumps(seed)}}})"
                ".nth(0).get_field(\"id\").run(conn)")
    return (
        f"{head}\n"
        f"{table}.table(\"pages\").between([site_id, 0, r.minval, r.minval], "
        f"[site_id, 0, r.maxval, r.maxval], index=\"priority_by_site\")"
        f".update({{\"priority\": r.row[\"priority\"].div({divisor}).floor()}}).run(conn)"
    )
