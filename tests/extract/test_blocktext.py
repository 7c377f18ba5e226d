"""The fast text path (issue 37): the block walk's words, the shingle hashes and the MinHash values."""

from __future__ import annotations

import lxml.html
import numpy as np
import pytest
import xxhash

from watcher.extract.blocktext import block_text
from watcher.extract.html import normalise_ws, read_html
from watcher.fingerprint import minhash_of, shingle_hashes, shingle_sequence
from watcher.text import tokens


def _text(html: str) -> str:
    return normalise_ws(block_text(lxml.html.document_fromstring(html)) or "")


def test_blocks_are_lines_and_inline_elements_join_words() -> None:
    text = _text("<div><p>Hu<b>man</b> rights</p><p>defenders<br>of <a href='#'>the</a> world</p>"
                 "<ul><li>one</li><li>two</li></ul></div>")
    assert text.splitlines() == ["Human rights", "defenders", "of the world", "one", "two"]


def test_a_span_is_a_word_boundary_and_the_markups_line_breaks_are_spaces() -> None:
    assert _text("<p>word<span>next</span>word</p>") == "word next word"
    assert _text("<p>Human   rights\n\n   defenders</p>") == "Human rights defenders"


def test_a_pages_own_break_mark_is_a_space_not_a_line() -> None:
    """The walk marks line breaks with U+FDD0 (a noncharacter); one the page itself holds is
    whitespace, as the tokenizer reads it, and never splits the line it stands in."""
    doc = read_html("<html><body><p>Human\ufdd0rights defenders</p><p>next</p></body></html>")
    assert doc.text.splitlines() == ["Human rights defenders", "next"]


def test_hidden_elements_are_skipped_but_their_tails_are_text() -> None:
    html = ("<p>shown <span style='color: red; display : none'>hidden <b>deep</b></span>tail"
            "<script>var x = 1;</script> end</p><div style='display:none'>gone</div>")
    assert tokens(_text(html)) == ["shown", "tail", "end"]


def test_inline_style_block_makes_a_line_and_inline_undoes_a_block() -> None:
    assert _text("<p>a<b style='display:block'>b</b>c</p>").splitlines() == ["a", "b", "c"]
    assert _text("<p>a<div style='display: inline'>b</div>c</p>") == "a\nbc"


def test_a_table_cell_is_read_whole_in_document_order() -> None:
    """Inscriptis interleaved the lines of neighbouring cells; a cell's sentence stays together here."""
    html = ("<table><tr><td><p>first cell line one</p><p>first cell line two</p></td>"
            "<td><p>second cell</p></td></tr></table>")
    assert tokens(_text(html)) == ["first", "cell", "line", "one", "first", "cell", "line", "two", "second", "cell"]


def test_a_tree_deeper_than_the_recursion_limit_is_read() -> None:
    """No recursion: a tree nested thousands of levels deep is read like any other."""
    root = lxml.html.document_fromstring("<div>top</div>")
    el = root.find(".//div")
    for _ in range(5000):
        el = lxml.html.etree.SubElement(el, "div")
    el.text = "deep words"
    assert normalise_ws(block_text(root) or "") == "top\ndeep words"
    assert block_text(root, max_nodes=1000) is None  # the bound: the caller reads plain text then
    assert read_html("<div><p>a</p>" * 200 + "</div>" * 200).text == "\n".join(["a"] * 200)


@pytest.mark.parametrize("words", [["human", "rights", "defenders", "watch"], ["منظمة", "حقوق", "الإنسان"],
                                   ["a"], ["mañana", "2024", "año", "𝔘nicode"]])
def test_shingles_are_xxh3_of_the_words_joined_by_spaces(words: list[str]) -> None:
    kept = [w for w in words if not w.isdigit()]  # numbers are left out
    n = max(1, len(kept) - 2)
    want = [xxhash.xxh3_64_intdigest(" ".join(kept[i:i + 3]).encode("utf-8")) for i in range(n)]
    assert shingle_sequence(words, 3).tolist() == want
    assert shingle_hashes(words, 3).tolist() == sorted(set(want))


def test_no_words_no_shingles() -> None:
    assert shingle_sequence(["2024", "12"], 3).size == 0


@pytest.mark.parametrize("size", [1, 7, 8192, 8193, 20000])
@pytest.mark.parametrize("num_perm", [64, 128])
def test_minhash_gives_datasketch_affine32_values(size: int, num_perm: int) -> None:
    """Sketches stored by earlier versions (made with datasketch) stay comparable."""
    datasketch = pytest.importorskip("datasketch")
    hashes = np.random.default_rng(size).integers(0, 2**63, size, dtype=np.uint64)
    ref = datasketch.MinHash(num_perm=num_perm, seed=1, hashfunc=lambda x: x, scheme="affine32")
    ref.update_batch((hashes & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    assert minhash_of(hashes, num_perm) == ref.hashvalues.astype(np.uint32).tobytes()


def test_the_text_after_a_comment_is_kept_and_the_comment_is_not() -> None:
    root = lxml.html.fromstring("<div><p>a<!-- note -->b<?pi x?>c</p></div>")
    assert normalise_ws(block_text(root) or "") == "abc"
