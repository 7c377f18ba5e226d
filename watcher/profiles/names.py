"""The profile names the configuration accepts: the registry, apart from the profiles.

The configuration validates a name (``engine.profile``, ``kafka.topic_profiles``, ``alerts.changes``)
against this table without importing any profile, nor the protocol they meet: so the configuration
sits below every profile in the import graph (no circle through ``watcher.profiles.base``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

DEFAULT = "collection"

# name -> "module:attribute" (loaded on first use by watcher.profiles.get)

REGISTRY: dict[str, str] = {
    "collection": "watcher.profiles.collection:PROFILE",
    "text": "watcher.profiles.text:PROFILE",
    "doi": "watcher.doi.profile:PROFILE",
}
# the loaded profiles (watcher.profiles.get), by name; typed there
LOADED: dict[str, object] = {}


def register(name: str, target: object) -> None:
    """Make ``name`` a profile: ``target`` is the profile object or its ``"module:attribute"``."""
    LOADED.pop(name, None)
    if isinstance(target, str):
        REGISTRY[name] = target
    else:
        REGISTRY[name] = f"<object {name}>"
        LOADED[name] = target


def unregister(name: str) -> None:
    """Forget ``name`` (a test's own profile, after the test)."""
    REGISTRY.pop(name, None)
    LOADED.pop(name, None)


def names() -> tuple[str, ...]:
    """The registered profile names, the default first."""
    return tuple(REGISTRY)


def _known(name: str) -> str:
    if name not in REGISTRY:
        raise ValueError(f"expected one of {', '.join(REGISTRY)}")
    return name


# A profile name in the configuration: refused at start-up unless registered.
ProfileName = Annotated[str, AfterValidator(_known)]
