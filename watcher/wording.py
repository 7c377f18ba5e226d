"""How a reason is worded when it is built from a head and a detail.

Why a helper: reasons are read by people (alerts, the CSV ``reason`` column,
``doi status``), and a detail that only repeats its head ("no content (no
content)") reads like a bug.  Every place that builds ``head (detail)`` goes
through :func:`headed`, so the rule is written once.
"""

from __future__ import annotations


def headed(head: str, detail: str | None, default: str | None = None) -> str:
    """``head (detail)``; just ``head`` when the detail is empty or says nothing more than the head.

    ``default`` stands in for a missing detail ("no content (empty)").  A
    detail that equals the head, or that the head already contains, is
    dropped; one that starts with the head ("no content: 0 bytes") is kept
    whole, without the head repeated before it.
    """
    text = (detail or "").strip() or (default or "")
    if not text:
        return head
    h, t = head.strip().lower(), text.lower()
    if t == h or t in h:
        return head
    if t.startswith(h):
        return text
    return f"{head} ({text})"
