"""The base of every configuration section.

Kept apart from :mod:`watcher.config` so that a pipeline stage can define its own
section next to its code (``watcher/<stage>/settings.py``) and :mod:`watcher.config`
can import it without an import circle.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """A frozen section that refuses unknown keys."""

    # Numbers given where text is expected (an env var "DRIFTLINE__KAFKA__CLIENT_ID=42", parsed as YAML) are text.
    model_config = ConfigDict(frozen=True, extra="forbid", coerce_numbers_to_str=True)
