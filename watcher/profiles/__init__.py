"""Profiles: the question a verdict answers, as plug-ins.

One capture can be judged by different questions, and each user group asks its own:

- ``collection`` (the default, for curators; :mod:`watcher.profiles.collection`): is the capture
  still on the topic the curator chose when selecting the seed?
- ``text`` (content drift, for citations; :mod:`watcher.profiles.text`): is the text that was there
  still there?
- ``doi`` (the DOI monitor; :mod:`watcher.doi.profile`): is the scholarly record still at the
  endpoint?

A profile is one module holding an object that meets :class:`watcher.profiles.base.Profile`, plus
one line in :data:`_REGISTRY` (or one :func:`register` call, as the test suite does for its own).
The configuration (``engine.profile``, ``kafka.topic_profiles``, ``alerts.changes``), the command
line (``--profile``) and the alert defaults read the registry.  This module imports no profile: a
name maps to ``"module:attribute"``, loaded on first use, so the configuration can validate a name
without importing the engine (and no profile module imports another's).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Annotated

from pydantic import AfterValidator

if TYPE_CHECKING:
    from .base import Profile

DEFAULT = "collection"

_REGISTRY: dict[str, str] = {
    "collection": "watcher.profiles.collection:PROFILE",
    "text": "watcher.profiles.text:PROFILE",
    "doi": "watcher.doi.profile:PROFILE",
}
_LOADED: dict[str, Profile] = {}


def register(name: str, target: str | Profile) -> None:
    """Make ``name`` a profile: ``target`` is the profile object or its ``"module:attribute"``."""
    _LOADED.pop(name, None)
    if isinstance(target, str):
        _REGISTRY[name] = target
    else:
        _REGISTRY[name] = f"<object {name}>"
        _LOADED[name] = target


def unregister(name: str) -> None:
    """Forget ``name`` (a test's own profile, after the test)."""
    _REGISTRY.pop(name, None)
    _LOADED.pop(name, None)


def names() -> tuple[str, ...]:
    """The registered profile names, the default first."""
    return tuple(_REGISTRY)


def get(name: str | None = None) -> Profile:
    """The profile registered as ``name`` (the default profile for ``None``)."""
    key = name or DEFAULT
    got = _LOADED.get(key)
    if got is not None:
        return got
    target = _REGISTRY.get(key)
    if target is None:
        raise KeyError(f"unknown profile {key!r}; expected one of {', '.join(_REGISTRY)}")
    module, _, attr = target.partition(":")
    profile: Profile = getattr(importlib.import_module(module), attr)
    _LOADED[key] = profile
    return profile


def _known(name: str) -> str:
    if name not in _REGISTRY:
        raise ValueError(f"expected one of {', '.join(_REGISTRY)}")
    return name


# A profile name in the configuration: refused at start-up unless registered.
ProfileName = Annotated[str, AfterValidator(_known)]
