"""The indented JSON writer gives ``json.dumps(indent=4, ensure_ascii=False)``'s text, character for
character, on everything ``json`` writes, and refuses what it refuses."""

from __future__ import annotations

import json
import random

import pytest

from watcher.output.jsonindent import dumps_indented

ODD_STRINGS = ["", "plain", 'quote " and \\ backslash', "tab\tnew\nline\rcr", "\x00\x01\x1f control",
               "ü ñ 中文 العربية 🙂", "line\u2028sep\u2029para\x85nel", "\ud800 lone surrogate"]
ODD_NUMBERS = [0, -1, 2**70, 0.1, -0.0, 1e300, 1e-300, float("nan"), float("inf"), float("-inf"), True, False]


def _random_value(rng: random.Random, depth: int) -> object:
    pick = rng.random()
    if depth > 3 or pick < 0.5:
        return rng.choice([*ODD_STRINGS, *ODD_NUMBERS, None])
    if pick < 0.75:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if pick < 0.8:
        return tuple(_random_value(rng, depth + 1) for _ in range(rng.randrange(3)))
    keys = [*ODD_STRINGS, 7, -3, 2.5, float("nan"), True, False, None]
    return {rng.choice(keys): _random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def test_the_same_text_as_json_dumps() -> None:
    rng = random.Random(37)
    for _ in range(2000):
        value = _random_value(rng, 0)
        assert dumps_indented(value) == json.dumps(value, indent=4, ensure_ascii=False)


def test_a_block_nested_in_a_streamed_file_is_written_in_place() -> None:
    block = {"a": {"b": [1, {"c": "d"}], "e": {}}, "f": []}
    nested = json.loads('{"k": ' + dumps_indented(block, level=1) + "}")
    assert nested == {"k": block}
    lines = dumps_indented(block, level=1).splitlines()
    assert lines[0] == "{" and lines[1].startswith(' ' * 8 + '"a"') and lines[-1] == "    }"
    # a line separator inside a string stays in the string (a pass by lines would indent inside it)
    assert json.loads(dumps_indented({"t": "one\u2028two"}, level=1)) == {"t": "one\u2028two"}


@pytest.mark.parametrize("bad", [{"k": object()}, {(1, 2): 1}, [b"bytes"], {"s": {1, 2}}])
def test_what_json_refuses_is_refused(bad: object) -> None:
    with pytest.raises(TypeError):
        json.dumps(bad, indent=4)
    with pytest.raises(TypeError):
        dumps_indented(bad)
