"""The extraction's C-level fast paths equal what they replaced: the boilerplate candidates found by
attribute value, and an element's text by lxml's text serialiser (issue 37's fourth pass)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lxml.html
import pytest


def _named_by_hand(root: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """What remove_boilerplate's candidates are by definition: each element under <body> whose class,
    id and role, joined by spaces, hold a boilerplate word (the per-element loop it replaced)."""
    from watcher.extract.html import _BOILERPLATE_ATTR

    return [el for el in root.xpath("//body//*[@class or @id or @role]")
            if _BOILERPLATE_ATTR.search(" ".join(filter(None, (el.get("class"), el.get("id"), el.get("role")))))]


_NAMED_CASES = [
    '<div class="Site-Nav">x</div><p id="main">y</p>',
    '<div class="wrap" id="footer" role="contentinfo">x</div>',  # two values, one names it: listed once
    '<div class="has-ads" id="nav">x</div><span class="page-header x" role="banner">y</span>',
    '<div class="side-bar"><ul class="menu"><li class="menu_item">a</li></ul></div>',
    '<div class="\u017fidebar">long s</div><div class="S\u212aIP">Kelvin</div>',  # case folds as re.I does
    '<div class="\u00a0nav\u2003">odd spaces</div><div class="navx">no</div><div class="xnav">no</div>',
    '<div class="ad">a</div><div class="ads-top">b</div><div class="load">c</div><div class="head">d</div>',
    '<main class="content"><article id="comments">c</article></main>',
]


@pytest.mark.parametrize("body", _NAMED_CASES)
def test_named_elements_are_the_elements_whose_joined_names_hold_a_boilerplate_word(body: str) -> None:
    # Found by attribute value in C instead of a Python loop over every named element: the same
    # elements, in document order, once each, whatever the case, spaces or attribute an element uses.
    from watcher.extract.html import _named_elements, parse_tree

    root = parse_tree(f"<html><head><title>t</title></head><body>{body}</body></html>")
    assert root is not None
    assert _named_elements(root) == _named_by_hand(root)


def _gold_trees(gold_dir: Path, step: int = 1) -> Iterator[tuple[Path, Any]]:
    """Every ``step``-th gold page's parsed tree (pages that do not parse are passed over)."""
    from watcher.extract.html import parse_tree

    for path in sorted((gold_dir / "html").glob("*/*.html"))[::step]:
        root = parse_tree(path.read_bytes().decode("utf-8", "replace"))
        if root is not None:
            yield path, root


def test_named_elements_on_the_gold_pages(gold_dir: Path) -> None:
    from watcher.extract.html import _drop_invisible, _named_elements

    checked = found = 0
    for path, root in _gold_trees(gold_dir):
        _drop_invisible(root)
        named = _named_elements(root)
        assert named == _named_by_hand(root), path
        checked += 1
        found += len(named)
    assert checked > 2000 and found > 10_000


_TEXT_CASES = [
    "<p>plain <b>bold</b> tail<!-- a comment --> after</p>",
    "<div><a href='/'>Home</a> | <a>About&nbsp;us</a><script>var x = '<b>';</script>&amp; more</div>",
    "<ul><li>one<li>two<?php echo 1 ?>three</ul>",
    "<p>Ωμέγα \u200bzero-width, emoji \U0001f600, and a tail</p>after the element",
    "<table><tr><td>a<td>b</table>",
]


@pytest.mark.parametrize("body", _TEXT_CASES)
def test_text_of_is_text_content(body: str) -> None:
    # The C-level serialiser stands in for text_content (an XPath per call) in the per-element
    # counts: the same string for every element, comments, processing instructions and tails left out.
    from watcher.extract.html import parse_tree, text_of

    root = parse_tree(f"<html><body>{body}</body></html>")
    assert root is not None
    for el in root.iter():
        if isinstance(el.tag, str):
            assert text_of(el) == el.text_content()


def test_text_of_is_text_content_on_the_gold_pages(gold_dir: Path) -> None:
    from watcher.extract.html import text_of

    checked = 0
    for path, root in _gold_trees(gold_dir, step=7):
        for el in root.iter():
            if isinstance(el.tag, str):
                assert text_of(el) == el.text_content(), path
                checked += 1
    assert checked > 100_000
