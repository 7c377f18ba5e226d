"""The configured actuator."""

from __future__ import annotations

from .browsertrix import BrowsertrixActuator
from .brozzler import BrozzlerActuator
from .common import Actuator
from .heritrix import HeritrixActuator
from .settings import ActuatorConfig


def make_actuator(cfg: ActuatorConfig) -> Actuator | None:
    """The configured actuator, or ``None`` when ``kind`` is ``none``."""
    if cfg.kind == "heritrix":
        return HeritrixActuator(cfg)
    if cfg.kind == "brozzler":
        return BrozzlerActuator(cfg)
    if cfg.kind == "browsertrix":
        return BrowsertrixActuator(cfg)
    return None
