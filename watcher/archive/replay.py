"""Raw replay URIs: ask the archive for the original bytes, not a rewritten page.

Wayback-style archives (Internet Archive, Archive-It, pywb, OpenWayback)
serve the unmodified capture when ``id_`` follows the 14-digit timestamp;
rewritten replays add banners and rewrite links, which reads as drift.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from ..model import ts14

# scheme://host/[collection/...]TIMESTAMP[modifier_]/original-url -- the one Wayback URI-M parser
# (batch TimeMap fetching, replay, archived rendering all use it).
WAYBACK = re.compile(r"^(https?://[^/]+/(?:[^/]+/)*?)(\d{14})(?:[a-z]{2}_)?/(.+)$")


def raw_replay_uri(uri: str) -> str:
    """``uri`` with the ``id_`` modifier after its timestamp (unchanged if not Wayback-style)."""
    m = WAYBACK.match(uri)
    if m is None:
        return uri
    return f"{m.group(1)}{m.group(2)}id_/{m.group(3)}"


def build_replay_uri(base: str, timestamp: datetime, url: str) -> str:
    """``BASE/TIMESTAMPid_/URL`` for an archive configured by ``acquire.replay_base``."""
    return f"{base.rstrip('/')}/{ts14(timestamp)}id_/{url}"


def is_archived_response(headers: Mapping[str, str]) -> bool:
    """Whether a replay's answer is the archived response itself, whatever its status.

    A raw replay answers with the status the crawler recorded: a memento of the site's "404 Not
    Found" comes back as HTTP 404, and it is a capture to judge (off topic), not a failed fetch.
    The archive's own refusal ("not in this archive", an exclusion) carries the same statuses.
    Memento (RFC 7089) tells them apart: a memento's answer carries ``Memento-Datetime`` (the
    Internet Archive's, pywb's and OpenWayback's replays send it); the archive's own page does not.
    (Where an archive sends it on its own page anyway, the fingerprint reads that page's wording as
    no content: :func:`watcher.extract.html.replay_missing_of`.)"""
    return any(k.lower() == "memento-datetime" for k in headers)
