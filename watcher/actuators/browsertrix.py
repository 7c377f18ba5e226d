"""Browsertrix: exclude a seed's host from a running crawl through its API.

The backend (webrecorder/browsertrix, ``backend/btrixcloud/crawls.py``)
serves ``POST /api/orgs/{oid}/crawls/{crawl_id}/exclusions?regex=...`` and
``DELETE`` of the same: the regex is added to the crawl's configuration, sent
to the running crawler and matching URLs are removed from its queue.  It
answers ``{"success": true, "num_removed": N}``; HTTP 400 with ``detail``
``crawl_not_running`` when the crawl has ended, ``invalid_regex`` for a bad
regex and ``exclusion_already_exists`` when it is there already (taken as
done); 404 when the crawl is not the org's.  Auth is a bearer JWT: a token
from ``actuator.browsertrix_token``, or one obtained by logging in at
``POST /api/auth/jwt/login`` (form fields ``username`` and ``password``;
answer ``{"access_token": ..., "token_type": "bearer"}``).

Browsertrix has no per-host priority, so a ``deprioritise-seed``
recommendation is acted on only when ``act_on`` names it, and then as an
exclusion (like ``stop-seed``): the operator decides whether a low yield
warrants that.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any

import aiohttp

from ..recommend import seed_host
from .common import ActionRequest, ActionResult, ActuatorError
from .files import recrawl_request, write_request
from .settings import ActuatorConfig

if TYPE_CHECKING:
    from ..recommend import Recommendation

log = logging.getLogger(__name__)

_HOST = re.compile(r"^[a-z0-9.-]+$")
_ID = re.compile(r"^[A-Za-z0-9_-]+$")


def host_exclusion_regex(seed: str) -> str:
    """A regex for every URL on the seed's host and its subdomains (``www.`` dropped, as in the SURT prefix).

    Only ``.`` needs escaping in a host name; nothing else is escaped, so the
    regex means the same to Python and to the crawler's JavaScript ``RegExp``.
    """
    host = seed_host(seed)
    if not host or not _HOST.match(host):
        raise ActuatorError(f"no usable host in seed {seed!r}", reason="bad_seed")
    return r"^https?://([^/?#]*\.)?" + host.replace(".", r"\.") + r"(:[0-9]+)?([/?#]|$)"


class BrowsertrixActuator:
    """Adds exclusions to a running Browsertrix crawl (bearer auth)."""

    name = "browsertrix"

    def __init__(self, cfg: ActuatorConfig) -> None:
        self.cfg = cfg

    def crawl_id(self, rec: Recommendation) -> str:
        crawl = rec.crawl_id or self.cfg.browsertrix_crawl_ids.get(rec.seed)
        if not crawl or not _ID.match(crawl):
            raise ActuatorError(f"recommendation {rec.id} names no usable Browsertrix crawl: {crawl!r}",
                                reason="no_crawl")
        return crawl

    def plan(self, rec: Recommendation) -> ActionRequest:
        org = self.cfg.browsertrix_org_id
        if not org or not _ID.match(org):
            raise ActuatorError("actuator.browsertrix_org_id is not set", reason="no_org")
        base = self.cfg.browsertrix_url.rstrip("/")
        return ActionRequest(kind="http", method="POST", auth="bearer",
                             url=f"{base}/api/orgs/{org}/crawls/{self.crawl_id(rec)}/exclusions",
                             params={"regex": host_exclusion_regex(rec.seed)})

    async def act(self, rec: Recommendation) -> ActionResult:
        action = str(getattr(rec, "action", "stop-seed"))
        if action == "recrawl-interval":
            return write_request(self.name, rec, recrawl_request(rec, self.cfg), self.cfg.dry_run)
        req = self.plan(rec)
        if self.cfg.dry_run:
            log.info("actuator dry run (browsertrix %s, recommendation %s): would send %s", action, rec.id,
                     req.describe())
            return ActionResult(rec.id, self.name, action, dry_run=True, applied=False, request=req)
        timeout = aiohttp.ClientTimeout(total=self.cfg.browsertrix_timeout_s)
        try:
            async with aiohttp.ClientSession(timeout=timeout) as session:
                token = await self._token(session)
                assert req.url is not None
                async with session.post(req.url, params=dict(req.params),
                                        headers={"Authorization": f"Bearer {token}",
                                                 "Accept": "application/json"}) as resp:
                    status, body = resp.status, await resp.text(errors="replace")
        except (aiohttp.ClientError, TimeoutError) as exc:
            msg = f"Browsertrix at {self.cfg.browsertrix_url} unreachable: {exc}"
            raise ActuatorError(msg, reason="unreachable") from exc
        detail = _detail(body)
        if status == 400 and detail == "exclusion_already_exists":
            log.info("actuator: browsertrix crawl already excludes %s (recommendation %s)", rec.seed, rec.id)
            return ActionResult(rec.id, self.name, action, dry_run=False, applied=True, request=req, status=status,
                                output=body[:2000])
        if status in (401, 403):
            raise ActuatorError(f"Browsertrix refused the token (HTTP {status})", reason="unauthorized")
        if status == 404:
            raise ActuatorError(f"Browsertrix has no such crawl: {req.url}", reason="no_such_crawl")
        if status == 400 and detail == "crawl_not_running":
            raise ActuatorError(f"Browsertrix crawl is not running: {req.url}", reason="crawl_not_running")
        if status >= 400:
            raise ActuatorError(f"Browsertrix answered HTTP {status}: {body[:300]}", reason="http_status")
        log.warning("actuator: browsertrix exclusion added for %s (recommendation %s): %s",
                    rec.seed, rec.id, body[:200])
        return ActionResult(rec.id, self.name, action, dry_run=False, applied=True, request=req, status=status,
                            output=body[:2000])

    async def _token(self, session: aiohttp.ClientSession) -> str:
        token = self.cfg.browsertrix_token.get_secret_value()
        if token:
            return token
        if not self.cfg.browsertrix_user:
            raise ActuatorError("set actuator.browsertrix_token, or browsertrix_user and browsertrix_password",
                                reason="no_credentials")
        url = f"{self.cfg.browsertrix_url.rstrip('/')}/api/auth/jwt/login"
        form = {"username": self.cfg.browsertrix_user, "password": self.cfg.browsertrix_password.get_secret_value()}
        async with session.post(url, data=form, headers={"Accept": "application/json"}) as resp:
            status, body = resp.status, await resp.text(errors="replace")
        if status in (400, 401, 403):
            raise ActuatorError(f"Browsertrix login refused (HTTP {status})", reason="unauthorized")
        if status >= 400:
            raise ActuatorError(f"Browsertrix login answered HTTP {status}: {body[:300]}", reason="http_status")
        data = _json(body)
        access = data.get("access_token") if isinstance(data, dict) else None
        if not isinstance(access, str) or not access:
            raise ActuatorError("Browsertrix login answered no access_token", reason="unauthorized")
        return access


def _json(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _detail(body: str) -> str | None:
    data = _json(body)
    detail = data.get("detail") if isinstance(data, dict) else None
    return detail if isinstance(detail, str) else None
