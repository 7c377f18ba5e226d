"""Profiles: the question a verdict answers, as plug-ins.

One capture can be judged by different questions, and each user group asks its own:

- ``collection`` (the default, for curators; :mod:`watcher.profiles.collection`): is the capture
  still on the topic the curator chose when selecting the seed?
- ``text`` (content drift, for citations; :mod:`watcher.profiles.text`): is the text that was there
  still there?
- ``doi`` (the DOI monitor; :mod:`watcher.doi.profile`): is the scholarly record still at the
  endpoint?

A profile is one module holding an object that meets :class:`watcher.profiles.base.Profile`, plus
one line in :data:`REGISTRY` (or one :func:`register` call, as the test suite does for its own; the table is
:mod:`watcher.profiles.names`).
The configuration (``engine.profile``, ``kafka.topic_profiles``, ``alerts.changes``), the command
line (``--profile``) and the alert defaults read the registry.  This module imports no profile: a
name maps to ``"module:attribute"``, loaded on first use, so the configuration can validate a name
without importing the engine (and no profile module imports another's).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

from .names import DEFAULT, LOADED, REGISTRY, ProfileName, names, register, unregister

if TYPE_CHECKING:
    from .base import Profile

__all__ = ["DEFAULT", "ProfileName", "get", "names", "register", "unregister"]


def get(name: str | None = None) -> Profile:
    """The profile registered as ``name`` (the default profile for ``None``)."""
    key = name or DEFAULT
    got = LOADED.get(key)
    if got is not None:
        return cast("Profile", got)
    target = REGISTRY.get(key)
    if target is None:
        raise KeyError(f"unknown profile {key!r}; expected one of {', '.join(REGISTRY)}")
    module, _, attr = target.partition(":")
    profile: Profile = getattr(importlib.import_module(module), attr)
    LOADED[key] = profile
    return profile
