"""Visible text of a parsed page, a line per block, in one C-level walk of the lxml tree.

Why not inscriptis (which this replaces): it builds a layout object per node and lays tables out
as columns, half of a capture's CPU (issue 37, ``docs/performance.md``).  What the scores read of
the text is its words in order, separated where the page separates them; so this walk keeps what
inscriptis' relaxed profile decides about words (which elements are blocks, a ``<span>`` a word
boundary, ``<br>``, inline ``style="display: none"`` hidden with its subtree, text glued across
other inline elements: "<b>W</b>ord" is one word) and drops only the layout: a table cell's text is
read whole in document order instead of interleaved line by line with its neighbours' (the cell's
sentence kept together is the better reading for shingles).
"""

from __future__ import annotations

import re

import lxml.etree
import lxml.html

# Block-level in inscriptis' profile (and so a line of their own), plus the table parts it lays out.
BLOCK_TAGS = frozenset({
    "p", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "address", "article", "aside",
    "div", "footer", "header", "hgroup", "layer", "main", "nav", "figcaption", "blockquote", "pre", "xmp",
    "listing", "plaintext", "table", "tr", "td", "th", "caption",
})
# Never shown: inscriptis' display-none elements (most are dropped before, extract.html._INVISIBLE).
HIDDEN_TAGS = frozenset({"head", "link", "meta", "script", "title", "style"})
# Inline, but a word boundary on both sides (the relaxed profile's ``span``), and the line break.
SPACED_TAGS = frozenset({"span"})
# A line break the walk writes, kept apart from the page's own line breaks until those are spaces:
# a newline in the markup's text is whitespace (as a browser shows it), not a line of its own.
_BREAK = "\x00"
_SOURCE_BREAKS = re.compile(r"[\n\r\f\v]+")


def _display(style: str) -> str | None:
    """``"none"``, ``"block"``, ``"inline"`` from an inline style's ``display`` (the last one wins,
    ``none`` wins over all), or ``None`` where it sets none."""
    found: str | None = None
    for directive in style.lower().split(";"):
        key, sep, value = directive.partition(":")
        if not sep or key.strip().replace("-webkit-", "") != "display":
            continue
        value = value.strip()
        if value == "none":
            return "none"
        found = "block" if value == "block" else "inline"
    return found


def block_text(root: lxml.html.HtmlElement, max_nodes: int = 0) -> str | None:
    """The visible text under ``root``: blocks on lines of their own, other elements' text joined
    as written, the markup's own line breaks read as spaces (``<pre>`` too: its words are what
    counts); runs of spaces are left for the caller to collapse (``extract.html.normalise_ws``).
    ``None`` once the walk meets more than ``max_nodes`` elements (0: no bound), so the caller
    needs no walk of its own to count them first.  Comments and processing instructions are removed
    from ``root`` first (their text is not shown, the text after them is; lxml's walk skips them
    with that text), which ``extract.html.parse_tree``'s parser has already done."""
    lxml.etree.strip_tags(root, lxml.etree.Comment, lxml.etree.ProcessingInstruction)
    out: list[str] = []
    append = out.append
    hidden: set[lxml.etree._Element] = set()
    block_styled: set[lxml.etree._Element] = set()
    inline_styled: set[lxml.etree._Element] = set()
    walk = lxml.etree.iterwalk(root, events=("start", "end"))
    seen = 0
    for event, el in walk:
        tag = el.tag
        if event == "start":
            seen += 1
            if max_nodes and seen > max_nodes:
                return None
            style = el.get("style")
            shown = _display(style) if style and "isplay" in style else None
            if tag in HIDDEN_TAGS or shown == "none":
                hidden.add(el)
                walk.skip_subtree()
                continue
            if shown == "block":
                block_styled.add(el)
            elif shown == "inline":
                inline_styled.add(el)
            if (tag in BLOCK_TAGS and el not in inline_styled) or el in block_styled or tag == "br":
                append(_BREAK)
            elif tag in SPACED_TAGS:
                append(" ")
            if el.text:
                append(el.text)
            continue
        if el in hidden:
            hidden.discard(el)
        elif (tag in BLOCK_TAGS and el not in inline_styled) or el in block_styled:
            append(_BREAK)
        elif tag in SPACED_TAGS:
            append(" ")
        if el.tail and el is not root:
            append(el.tail)
    return _SOURCE_BREAKS.sub(" ", "".join(out)).replace(_BREAK, "\n")
