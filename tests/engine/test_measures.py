"""Each measure on hand-made cases: identical, unrelated, one paragraph of
four replaced, growth around the original, typos, empty."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.fixtures import textgen
from watcher import measures as ms
from watcher.config import EngineConfig, TokenConfig
from watcher.engine import Engine
from watcher.errors import UnknownMeasureError
from watcher.fingerprint import fingerprint
from watcher.model import Capture, Fingerprint

# every measure, every feature (word sequences for levenshtein, exact shingles)
CFG = EngineConfig(report_measures=tuple(ms.REGISTRY), tokens=TokenConfig(keep_tokens=True, keep_shingles=True))
BASE = textgen.document(["river", "law", "music", "garden"])


def fp(paragraphs: list[str], title: str = "Riverside Rights Project") -> Fingerprint:
    return fingerprint(Capture(url="http://example.org/", timestamp=datetime(2020, 1, 1, tzinfo=UTC),
                               content=textgen.html(paragraphs, title)), CFG)


def ctx_for(*fps: Fingerprint) -> ms.Context:
    return ms.Context()


@pytest.fixture(scope="module")
def cases() -> dict[str, Fingerprint]:
    return {
        "base": fp(BASE),
        "identical": fp(BASE),
        "unrelated": fp(textgen.document(["space", "cooking", "space", "cooking"], seed=50), "Rocket kitchen"),
        "replaced": fp([*BASE[:3], textgen.paragraph("space", 200, 99)]),
        "growth": fp([textgen.paragraph("cooking", 120, 7), *BASE, textgen.paragraph("space", 150, 8)]),
        "typos": fp([textgen.typos(p) for p in BASE]),
        "empty": fingerprint(Capture(url="http://example.org/", timestamp=datetime(2020, 2, 1, tzinfo=UTC),
                                     content=b"<html><head><title>t</title></head><body> </body></html>"), CFG),
    }


def score(name: str, cases: dict[str, Fingerprint], case: str) -> float | None:
    b, c = cases["base"], cases[case]
    return ms.get(name).fn(b, c, ctx_for(b, c))


@pytest.mark.parametrize("name", ["cosine", "containment", "resemblance", "levenshtein", "title"])
def test_similarities_identical_is_one(cases: dict[str, Fingerprint], name: str) -> None:
    assert score(name, cases, "identical") == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["jaccard", "sorensen", "raw_simhash", "tf_simhash", "bytecount", "wordcount"])
def test_distances_identical_is_zero(cases: dict[str, Fingerprint], name: str) -> None:
    assert score(name, cases, "identical") == pytest.approx(0.0)


def test_unrelated_pair_is_far_apart(cases: dict[str, Fingerprint]) -> None:
    cos = score("cosine", cases, "unrelated")
    assert cos is not None and cos < 0.1
    con = score("containment", cases, "unrelated")
    assert con is not None and con < 0.05
    jac = score("jaccard", cases, "unrelated")
    assert jac is not None and jac > 0.9
    tfi = score("tfintersection", cases, "unrelated")
    assert tfi is not None and tfi <= 1
    sim = score("raw_simhash", cases, "unrelated")
    assert sim is not None and sim > 10


def test_one_paragraph_of_four_replaced(cases: dict[str, Fingerprint]) -> None:
    c = score("containment", cases, "replaced")
    assert c is not None and 0.6 < c < 0.85
    cos = score("cosine", cases, "replaced")
    assert cos is not None and 0.5 < cos < 0.95
    lev = score("levenshtein", cases, "replaced")
    assert lev is not None and 0.6 < lev < 0.9


def test_growth_around_the_original_keeps_containment(cases: dict[str, Fingerprint]) -> None:
    con = score("containment", cases, "growth")
    assert con is not None and con > 0.97
    assert score("wordcount", cases, "growth") == 0.0  # grew: not a loss
    res = score("resemblance", cases, "growth")
    assert res is not None and res < 0.85  # resemblance drops, containment does not


def test_typos_are_minor(cases: dict[str, Fingerprint]) -> None:
    cos = score("cosine", cases, "typos")
    assert cos is not None and cos > 0.8
    lev = score("levenshtein", cases, "typos")
    assert lev is not None and lev > 0.9


def test_empty_capture_against_content(cases: dict[str, Fingerprint]) -> None:
    e = cases["empty"]
    assert e.word_count == 0
    assert score("wordcount", cases, "empty") == -1.0
    assert score("containment", cases, "empty") == 0.0
    assert score("cosine", cases, "empty") == 0.0
    # nothing to compare against: the measure abstains
    assert ms.cosine(e, cases["base"], ms.Context()) is None


def test_minhash_containment_estimate_tracks_exact(cases: dict[str, Fingerprint]) -> None:
    from dataclasses import replace

    b, c = cases["base"], cases["replaced"]
    exact = ms.containment(b, c, ms.Context())
    est = ms.containment(replace(b, shingles=None), replace(c, shingles=None), ms.Context())
    assert exact is not None and est is not None
    assert abs(exact - est) < 0.12


def test_registry_directions_and_unknown_name() -> None:
    assert ms.get("cosine").direction == "below"
    assert ms.get("jaccard").direction == "above"
    assert ms.get("simhash").name == "raw_simhash"
    with pytest.raises(UnknownMeasureError, match="unknown measure 'cosin'"):
        ms.get("cosin")
    with pytest.raises(UnknownMeasureError):
        Engine(EngineConfig(measures={"nope": None}))


def test_otmt_style_measure_option() -> None:
    assert ms.parse_measures("cosine=0.12,wordcount=-0.70") == {"cosine": 0.12, "wordcount": -0.70}
    assert ms.parse_measures("jaccard") == {"jaccard": None}
    with pytest.raises(UnknownMeasureError):
        ms.parse_measures("cosine=abc")


def test_doi_and_title_feature_checks() -> None:
    page = (b"<html><head><title>Effects of rain</title><meta name='citation_doi' content='10.1234/abc.5'>"
            b"</head><body><p>Rain falls on the valley and the river rises slowly.</p></body></html>")
    moved = page.replace(b"10.1234/abc.5", b"10.9999/other").replace(b"Effects of rain", b"Shop now")
    b = fingerprint(Capture(url="http://j.org/a", timestamp=datetime(2020, 1, 1), content=page), CFG)
    c = fingerprint(Capture(url="http://j.org/a", timestamp=datetime(2020, 2, 1), content=moved), CFG)
    assert b.dois == frozenset({"10.1234/abc.5"})
    assert ms.doi(b, b, ms.Context()) == 1.0
    assert ms.doi(b, c, ms.Context()) == 0.0
    ti = ms.title(b, c, ms.Context())
    assert ti is not None and ti < 0.3


def test_a_date_in_an_image_path_is_not_a_doi() -> None:
    """A home page's photos filed under a month ("/10.2011/proba-deca3.jpg", as on a gold
    ombudsman's page) match the DOI pattern: read as DOIs, each new photo was "DOI lost" and
    hid the text's own reason.  A DOI in a link, a script's escaped string or the text stays one."""
    page = (b"<html><head><title>Ombudsman</title></head><body><p>News of the office this month.</p>"
            b"<img src='/images/10.2011/Proba-deca3.jpg'><link href='/css/10.2012/site.css'>"
            b"<a href='https://doi.org/10.1093/bioinformatics/btp035'>paper</a>"
            b"<script>var d = \"10.1038/nature16161\";</script><p>See doi 10.1172/jci64240.</p></body></html>")
    f = fingerprint(Capture(url="http://ombudsman.example/", timestamp=datetime(2020, 1, 1), content=page), CFG)
    assert f.dois == frozenset({"10.1093/bioinformatics/btp035", "10.1038/nature16161", "10.1172/jci64240"})
    photos = page.replace(b"Proba-deca3", b"Konferencija")
    g = fingerprint(Capture(url="http://ombudsman.example/", timestamp=datetime(2020, 2, 1), content=photos), CFG)
    assert ms.doi(f, g, ms.Context()) == 1.0
