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

import itertools

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
# (a noncharacter, as lxml refuses NUL in a tree's text; a page's own is made a space before the
# parse, ``extract.html.parse_tree``)
BREAK_MARK = _BREAK = "\ufdd0"
_MARKED = BLOCK_TAGS | {"br"} | SPACED_TAGS


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
    ``None`` when more than ``max_nodes`` elements are shown (0: no bound).  Comments and
    processing instructions are removed from ``root`` first (their text is not shown, the text
    after them is), which ``extract.html.parse_tree``'s parser has already done.

    How, and why so: the hidden elements are dropped from the tree (their tails kept), each block's
    text and tail get a line-break mark, each ``<span>``'s a space, and lxml writes the tree's
    text in C.  The elements this visits are found by tag or by an XPath over ``style``
    attributes, in C: a walk that stepped through every element's start and end in Python was a
    tenth of a capture's CPU.  ``root`` is changed: the caller reads nothing else of it after."""
    lxml.etree.strip_tags(root, lxml.etree.Comment, lxml.etree.ProcessingInstruction)
    shown: dict[lxml.etree._Element, str] = {}
    for el in root.xpath("descendant-or-self::*[@style]"):
        style = el.get("style") or ""
        how = _display(style) if "isplay" in style else None
        if how is not None:
            shown[el] = how
    if root.tag in HIDDEN_TAGS or shown.get(root) == "none":
        return ""
    hidden = [el for el in root.iter(*HIDDEN_TAGS) if el is not root]
    hidden += [el for el, how in shown.items() if how == "none" and el is not root]
    for el in hidden:
        parent = el.getparent()
        if parent is not None:  # not inside another hidden element dropped before it
            el.drop_tree()  # the tail stays, joined to the text before it
    if max_nodes and int(root.xpath("count(descendant-or-self::*)")) > max_nodes:
        return None
    ends = ""
    # the marked tags as they stand in the tree, and the other styled elements still in it
    styled = (e for e in shown if e.tag not in _MARKED and (e is root or any(a is root for a in e.iterancestors())))
    for el in itertools.chain(root.iter(*_MARKED), styled):
        how = shown.get(el)  # never "none" here: those were dropped above
        block = (el.tag in BLOCK_TAGS and how != "inline") or how == "block"
        start = _BREAK if block or el.tag == "br" else " " if el.tag in SPACED_TAGS else ""
        end = _BREAK if block else " " if el.tag in SPACED_TAGS else ""
        if start:
            el.text = start + (el.text or "")
        if end:
            if el is root:
                ends = end
            else:
                el.tail = end + (el.tail or "")
    text = str(lxml.etree.tostring(root, method="text", encoding="unicode", with_tail=False)) + ends
    # the markup's line breaks are spaces (a space each: the caller collapses runs of them)
    text = text.replace("\n", " ").replace("\r", " ")
    if "\f" in text or "\v" in text:
        text = text.replace("\f", " ").replace("\v", " ")
    return text.replace(_BREAK, "\n")
