"""How a reason is worded when it is built from a head and a detail.

Why a helper: reasons are read by people (alerts, the CSV ``reason`` column,
``doi status``), and a detail that only repeats its head ("no content (no
content)") reads like a bug.  Every place that builds ``head (detail)`` goes
through :func:`headed`, so the rule is written once.  Numbers in reasons are
written by :func:`fmt` (and :func:`fmt_vs`, :func:`fmt_below` beside a threshold).
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


def fmt(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2f}"


def fmt_vs(score: float, threshold: float) -> str:
    """``score`` with enough digits that it never reads equal to ``threshold``
    ("-0.9512 < -0.95", not "-0.95 < -0.95")."""
    text = fmt(score)
    if text == fmt(threshold) and score != threshold:
        text = f"{score:.4f}"
    return text


def fmt_below(score: float, line: float) -> str:
    """"score < line", the score with enough digits to differ from the line (:func:`fmt_vs`)."""
    return f"{fmt_vs(score, line)} < {fmt(line)}"
