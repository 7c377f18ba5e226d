"""What every actuator shares: the request it makes, its result, its errors.

Why a request object: an actuator is off and in dry run by default, and dry
run must show the *exact* request that would be made (method, URL, form
fields or JSON body, or the command line), so an operator can review it,
paste it, or switch dry run off.  Live and dry run build the same
:class:`ActionRequest`; only the sending differs.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlencode

from ..errors import DriftlineError
from .settings import ActuatorConfig

if TYPE_CHECKING:
    from ..recommend import Recommendation

log = logging.getLogger(__name__)

JOB_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
SURT_PREFIX = re.compile(r"^https?://\([a-z0-9,.:_-]+$")
_ACTED_MEMORY = 10_000


class ActuatorError(DriftlineError):
    """An actuator could not act (crawler unreachable, refused, bad input)."""

    reason = "actuator"


@dataclass(frozen=True, slots=True)
class ActionRequest:
    """One exact request an actuator makes (or, in dry run, would make).

    ``http`` is a form post (Heritrix) unless ``json_body`` or ``params`` are
    set (Browsertrix); ``command`` is an argument list, never a shell string;
    ``rule`` is a configuration or document change an operator applies;
    ``file`` is lines written to a file.
    """

    kind: Literal["http", "command", "rule", "file"]
    method: str | None = None
    url: str | None = None
    form: Mapping[str, str] = field(default_factory=dict)
    argv: tuple[str, ...] = ()
    rule: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)
    auth: str = "digest"
    path: str | None = None
    lines: tuple[str, ...] = ()

    def describe(self) -> str:
        """One exact, reproducible description (what dry run logs)."""
        if self.kind == "http":
            if self.auth == "bearer" or self.params:
                query = urlencode(dict(self.params))
                raw = "".join(f"\n--- query parameter {k}:\n{v}" for k, v in self.params.items())
                return f"{self.method} {self.url}{'?' + query if query else ''} (bearer auth){raw}"
            if not self.form:
                return f"{self.method} {self.url} (Accept: application/xml, digest auth)"
            fields = "\n".join(f"--- form field {k}:\n{v}" for k, v in self.form.items())
            return f"{self.method} {self.url} (application/x-www-form-urlencoded, digest auth)\n{fields}"
        if self.kind == "command":
            return shlex.join(self.argv)
        if self.kind == "file":
            where = self.path or "a file (none configured: actuator.recrawl_schedule_file or heritrix_precedence_file)"
            return f"append to {where}:\n" + "\n".join(self.lines)
        label = str(self.rule.get("_describe", "scope.blocks rule"))
        body = {k: v for k, v in self.rule.items() if k not in ("_describe", "reql")}
        reql = f"\n{self.rule['reql']}" if "reql" in self.rule else ""
        return f"{label} " + json.dumps(body, sort_keys=True) + reql

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "method": self.method,
            "url": self.url,
            "form": dict(self.form),
            "argv": list(self.argv),
            "rule": dict(self.rule),
            "params": dict(self.params),
            "path": self.path,
            "lines": list(self.lines),
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
    # Every request of a multi-step action (pause, poll, script, unpause), in order.
    steps: tuple[ActionRequest, ...] = ()

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
            "steps": [s.to_dict() for s in self.steps],
        }


class Actuator(Protocol):
    cfg: ActuatorConfig

    async def act(self, rec: Recommendation) -> ActionResult: ...


def describe_steps(steps: tuple[ActionRequest, ...]) -> str:
    """Numbered descriptions of a multi-step action (what its dry run logs)."""
    return "\n".join(f"[{i}] {s.describe()}" for i, s in enumerate(steps, 1))


# Guidance ids acted on, per live actuator (weak keys: a new actuator starts afresh).
_acted: weakref.WeakKeyDictionary[object, OrderedDict[str, None]] = weakref.WeakKeyDictionary()


async def apply_recommendation(actuator: Actuator | None, rec: Recommendation) -> ActionResult | None:
    """The one-line hook for the streaming app: act on ``rec`` if an actuator is
    configured and ``actuator.act_on`` names its action.

    An :class:`ActuatorError` is logged (with its reason) and swallowed,
    because a crawler that cannot be reached must not stop scoring.  A
    guidance recommendation (its id is stable while its advice stands) is
    acted on once per actuator and process, so a seed report updated by every
    verdict does not pause a Heritrix job every time.
    """
    if actuator is None:
        return None
    action = str(getattr(rec, "action", "stop-seed"))
    if action not in actuator.cfg.act_on:
        log.debug("actuator: %s recommendation %s not acted on (actuator.act_on)", action, rec.id)
        return None
    acted = _acted.setdefault(actuator, OrderedDict())
    if action != "stop-seed" and rec.id in acted:
        return None
    try:
        result = await actuator.act(rec)
    except ActuatorError as exc:
        log.error("actuator failed for recommendation %s (%s): %s", rec.id, exc.reason, exc)
        return None
    if action != "stop-seed":
        acted[rec.id] = None
        while len(acted) > _ACTED_MEMORY:
            acted.popitem(last=False)
    return result
