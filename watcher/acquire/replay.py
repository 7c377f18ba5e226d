"""Raw replay URIs: ask the archive for the original bytes, not a rewritten page.

Wayback-style archives (Internet Archive, Archive-It, pywb, OpenWayback)
serve the unmodified capture when ``id_`` follows the 14-digit timestamp;
rewritten replays add banners and rewrite links, which reads as drift.
"""

from __future__ import annotations

import re
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
