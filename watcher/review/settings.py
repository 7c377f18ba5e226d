"""The ``review`` section: how ``driftline review`` serves the curator's page.

Kept beside the review code (house rule: a new section is a small model of its own, one field line in
:class:`watcher.config.Config`).  The token is a secret: a page reachable from another machine lets
whoever reaches it change labels and baselines, so any address other than loopback needs one.
"""

from __future__ import annotations

from pydantic import Field, SecretStr

from ..confbase import Frozen


class ReviewConfig(Frozen):
    host: str = "127.0.0.1"  # any other address needs token (DRIFTLINE__REVIEW__TOKEN)
    port: int = Field(default=8765, ge=0, le=65535)  # 0 = a free port
    # Shared secret a non-loopback page is opened with (?token=...; then kept in a cookie).  A secret:
    # never logged; set it from DRIFTLINE__REVIEW__TOKEN rather than in the file.
    token: SecretStr | None = None
    page_size: int = Field(default=50, ge=1, le=500)  # queue rows per page
    reviewer: str = "curator"  # the name stored with each label
    fetch_timeout_s: float = Field(default=20.0, gt=0)  # re-reading a memento from its archive
    max_text_chars: int = Field(default=50_000, ge=1_000)  # text shown per capture in the diff
    # Screenshots of both captures in the detail view, rendered from the archive by Chromium
    # (render.executable_path), cached in screenshot_dir ("" = beside a SQLite store, <store>.shots/).
    screenshots: bool = True
    screenshot_dir: str = ""
    # A running `driftline run` on the same store publishes the versions a pin re-scored to its results
    # topic (the review page writes them to the store's outbox); it looks this often.
    republish_interval_s: float = Field(default=5.0, gt=0)
