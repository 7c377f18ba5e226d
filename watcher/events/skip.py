"""Which events are not scored, and why (:func:`should_skip`).

A crawl emits far more than documents: DNS lookups, robots.txt, images,
scripts, failed fetches (negative status codes).  Skipping them is normal
flow, not an error; the reason slug is counted per reason in metrics, so the
set of slugs is fixed and small (never a URL, never a raw MIME type).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ..config import EventsConfig
from .model import CaptureEvent

# Every slug should_skip can return (bounded metric label values).
SKIP_REASONS = (
    "dns",
    "scheme",
    "robots_txt",
    "path",
    "status_negative",
    "status",
    "mimetype",
    "annotation",
)

# MIME types crawlers write when they know nothing: not evidence of a non-document.
_UNKNOWN_MIME = frozenset({"", "-", "unknown", "no-type", "application/octet-stream+unknown"})


def base_mimetype(mimetype: str | None) -> str:
    """``text/html; charset=UTF-8`` -> ``text/html``."""
    return (mimetype or "").split(";", 1)[0].strip().lower()


def non_document(mimetype: str | None, cfg: EventsConfig) -> bool:
    """True when ``mimetype`` names a non-document (CSS, script, image...): not in
    ``cfg.document_mimetypes``.  An unknown type never does.  The batch scan uses
    the same rule, so a stylesheet is skipped there as in the stream."""
    mime = base_mimetype(mimetype)
    return mime not in _UNKNOWN_MIME and mime not in {base_mimetype(m) for m in cfg.document_mimetypes}


def should_skip(event: CaptureEvent, cfg: EventsConfig) -> str | None:
    """The reason slug (one of :data:`SKIP_REASONS`) if ``event`` is not to be scored.

    Checks, in order: the URL scheme (``dns:`` and configured schemes, then
    anything but http/https), configured paths (``/robots.txt``), negative
    (crawler failure) status codes, status outside ``cfg.accept_status``,
    non-document MIME types, and configured annotations (prefix match, so
    ``duplicate`` matches ``duplicate:digest``).  Missing status or MIME type
    (driftline events for live fetches) never causes a skip.
    """
    scheme, _, _ = event.url.partition(":")
    scheme = scheme.strip().lower()
    if scheme == "dns":
        return "dns"
    if scheme in {s.lower() for s in cfg.skip_schemes} or scheme not in ("http", "https"):
        return "scheme"
    try:
        path = urlsplit(event.url).path or "/"
    except ValueError:
        return "scheme"
    for skip_path in cfg.skip_paths:
        if path == skip_path:
            return "robots_txt" if skip_path.endswith("robots.txt") else "path"
    status = event.status_code
    if status is not None:
        if status < 0:
            return "status_negative"
        low, high = cfg.accept_status
        if not low <= status <= high:
            return "status"
    if non_document(event.mimetype, cfg):
        return "mimetype"
    for annotation in event.annotations:
        for wanted in cfg.skip_annotations:
            if annotation == wanted or annotation.startswith(wanted):
                return "annotation"
    return None
