"""Acquiring captured bytes: inline, WARC (file or HTTP Range), raw replay, live, rendered.

Public API::

    Acquirer(cfg, on_fetch=None, renderer=None): await get(event) -> Capture; await close()
    AddressPolicy(allow_cidrs), GuardedResolver     (SSRF guard)
    HttpFetcher, FetchResult                        (guarded HTTP client)
    RenderPool(render_cfg, allow, fetch=None): await render(url) -> (html_bytes, seconds)
    wants_render(event, capture, text_word_count, script_count, cfg), count_scripts(html)
    rendered_capture(capture, html) -> Capture      (rendered DOM, same digest -> same verdict id)
    raw_replay_uri(uri), build_replay_uri(base, timestamp, url)
"""

from __future__ import annotations

from ..archive.replay import build_replay_uri, raw_replay_uri
from ..net.http import FetchResult, HttpFetcher
from ..net.netguard import AddressPolicy, GuardedResolver, address_category
from .acquirer import FETCH_SOURCES, Acquirer, FetchCallback
from .render import RenderPool, count_scripts, quick_word_count, rendered_capture, wants_render

__all__ = [
    "FETCH_SOURCES",
    "Acquirer",
    "AddressPolicy",
    "FetchCallback",
    "FetchResult",
    "GuardedResolver",
    "HttpFetcher",
    "RenderPool",
    "address_category",
    "build_replay_uri",
    "count_scripts",
    "quick_word_count",
    "raw_replay_uri",
    "rendered_capture",
    "wants_render",
]
