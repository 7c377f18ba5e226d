"""The ``review`` section: how ``driftline review`` serves the curator's page.

Kept beside the review code (house rule: a new section is a small model of its own, one field line in
:class:`watcher.config.Config`).  The token is a secret: a page reachable from another machine lets
whoever reaches it change labels and baselines, so any address other than loopback needs one.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator

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
    # Host names (or addresses) the page answers to besides the bound address and localhost/127.0.0.1/[::1]:
    # any other Host header is refused (421) before a handler runs (DNS rebinding).
    allowed_hosts: tuple[str, ...] = ()
    # Archive replay prefixes (e.g. https://web.archive.org/web/) a capture's URI-M may be re-read from;
    # a URI-M under none of them is never fetched.  Empty: captures are read from files only.
    archives: tuple[str, ...] = ()
    # Behind a TLS-terminating proxy: take X-Forwarded-Proto: https as "served over HTTPS" (the token
    # cookie then gets Secure).  Only when the proxy sets that header itself.
    trust_forwarded_proto: bool = False

    @field_validator("archives")
    @classmethod
    def _archive_prefixes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for prefix in value:
            p = urlsplit(prefix)
            if p.scheme not in ("http", "https") or not p.hostname or p.username or p.password:
                raise ValueError(f"{prefix!r} is not an http(s) archive prefix such as https://web.archive.org/web/")
        return value
