"""The `text` profile through the broker: the six drift cases, typo densities, a word reworded, a paragraph put in.

The `text` profile's baseline keeps its word sequence (to tell a typo from another word), so its
verdicts depend on what the store keeps and on which capture is the baseline when they arrive out
of order.  Here every case is a history of its own, written to one WARC and announced as an
unkeyed, shuffled Heritrix backlog on a topic that `kafka.topic_profiles` maps to `text`, with
two consumer restarts (tests/fixtures/streamcheck.py); batch is `scan --profile text` on the same
WARC.  Every newest stream verdict must equal batch, and batch must say what the suite expects.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures import textgen
from tests.fixtures.kafka import KafkaNames
from tests.fixtures.streamcheck import stream_equals_batch
from tests.fixtures.textcases import EXPECTED, LONG, _one_word, _reworded, _with_paragraph, text_pairs
from watcher.broker import EmbeddedBroker
from watcher.config import Config
from watcher.scan import score_histories
from watcher.sources import iter_histories

TIMES = ("20120301000000", "20120401000000", "20120501000000", "20120601000000")


def _histories() -> tuple[list[tuple[str, str, bytes]], list[bool], dict[str, set[str]]]:
    """Each case one history: the baseline, the changed page, the baseline again, the changed page
    again (the repeats must be `unchanged` and the same verdict again, whatever order they arrive
    in).  Returns the captures, their labels (off topic: only the unrelated long text) and the
    changes each history's changed pages must get."""
    cases = dict(text_pairs())
    want = {name: EXPECTED[name] for name in cases}
    for every in (50, 25, 12):
        base = cases["identical"][0]
        cases[f"typo-1-in-{every}"] = (base, _reworded(every, "typo"))
        cases[f"other-1-in-{every}"] = (base, _reworded(every, "other"))
        want[f"typo-1-in-{every}"] = {"minor"}
        want[f"other-1-in-{every}"] = {"drifted"}
    cases["one-word-in-1000"] = (cases["identical"][0], _one_word(500))  # over the 0.98 "unchanged" line
    want["one-word-in-1000"] = {"drifted"}
    long_base = textgen.html(LONG, "A report")
    cases["paragraph-inserted"] = (long_base, _with_paragraph(6))  # nothing of the baseline gone
    want["paragraph-inserted"] = {"drifted"}
    cases["paragraph-appended"] = (long_base, _with_paragraph(12))
    want["paragraph-appended"] = {"minor"}
    caps: list[tuple[str, str, bytes]] = []
    labels: list[bool] = []
    for name, (base, changed) in cases.items():
        url = f"http://journal.example.org/2012/03/{name}-annual-report-on-detention.html"
        for ts, page in zip(TIMES, (base, changed, base, changed), strict=True):
            caps.append((url, ts, page))
            labels.append(name == "long" and page is changed)
    return caps, labels, {f"http://journal.example.org/2012/03/{n}-annual-report-on-detention.html": w
                          for n, w in want.items()}


@pytest.mark.kafka
@pytest.mark.timeout(900)
async def test_text_profile_through_the_broker_equals_batch(tmp_path: Path, kafka_broker: EmbeddedBroker,
                                                           kafka_names: KafkaNames) -> None:
    caps, labels, want = _histories()
    f1_batch, f1_stream = await stream_equals_batch(caps, labels, kafka_broker, kafka_names, tmp_path, seed=5,
                                                    profile="text")
    assert f1_stream == f1_batch == 1.0  # the long unrelated text, and nothing else, is off topic
    # what batch said (and so the stream) is what the drift suite expects, per history
    cfg = Config.model_validate({"engine": {"profile": "text"}, "scan": {"workers": 1, "progress": False}})
    warc = str(tmp_path / "warcs" / "COLL-00001.warc.gz")
    seen = 0
    for result in score_histories(iter_histories([warc], cfg), cfg, workers=1):
        url = result.verdicts[0].url
        changes = [v.change for v in result.verdicts]
        assert changes[0] == "baseline" and changes[2] == "unchanged", (url, changes)
        assert changes[1] in want[url] and changes[3] == changes[1], (url, changes, result.verdicts[1].reason)
        assert all(v.profile == "text" for v in result.verdicts)
        seen += 1
    assert seen == len(want)
