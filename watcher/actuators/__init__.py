"""Optional actuators: tell a crawler what driftline recommends (off by default).

Why off and dry run by default: stopping or deprioritising a seed is a
curatorial decision, and a false positive that silently drops a seed loses
captures that cannot be made later.  ``actuator.kind`` is ``none`` unless an
operator turns it on, ``actuator.act_on`` names the recommendation actions it
may act on (``stop-seed`` only by default), and ``dry_run`` (default true)
only *logs the exact request* that would be made.

One module per crawler (:mod:`.heritrix`, :mod:`.brozzler`,
:mod:`.browsertrix`), the shared request/result types in :mod:`.common`, the
files for the next crawl in :mod:`.files`, the decision from a seed report in
:mod:`.guidance`, the configuration section in :mod:`.settings`.

Only the settings load with the package: :mod:`watcher.config` imports them,
and the actuators import the recommender, which imports the configuration.
The other public names load on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .settings import ActuatorConfig

if TYPE_CHECKING:
    from .browsertrix import BrowsertrixActuator, host_exclusion_regex
    from .brozzler import BrozzlerActuator, brozzler_block_rule, brozzler_priority_reql
    from .common import ActionRequest, ActionResult, Actuator, ActuatorError, apply_recommendation
    from .factory import make_actuator
    from .files import merge_lines
    from .guidance import SeedReportLike, evidence_of, guidance_for
    from .heritrix import HeritrixActuator, controller_state, heritrix_overlay_script, heritrix_reject_script

_WHERE = {
    "BrowsertrixActuator": "browsertrix", "host_exclusion_regex": "browsertrix",
    "BrozzlerActuator": "brozzler", "brozzler_block_rule": "brozzler", "brozzler_priority_reql": "brozzler",
    "ActionRequest": "common", "ActionResult": "common", "Actuator": "common", "ActuatorError": "common",
    "apply_recommendation": "common", "make_actuator": "factory", "merge_lines": "files",
    "SeedReportLike": "guidance", "evidence_of": "guidance", "guidance_for": "guidance",
    "HeritrixActuator": "heritrix", "controller_state": "heritrix", "heritrix_overlay_script": "heritrix",
    "heritrix_reject_script": "heritrix",
}

__all__ = [
    "ActionRequest",
    "ActionResult",
    "Actuator",
    "ActuatorConfig",
    "ActuatorError",
    "BrowsertrixActuator",
    "BrozzlerActuator",
    "HeritrixActuator",
    "SeedReportLike",
    "apply_recommendation",
    "brozzler_block_rule",
    "brozzler_priority_reql",
    "controller_state",
    "evidence_of",
    "guidance_for",
    "heritrix_overlay_script",
    "heritrix_reject_script",
    "host_exclusion_regex",
    "make_actuator",
    "merge_lines",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
