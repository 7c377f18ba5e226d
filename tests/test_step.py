"""The one scoring step: batch, stream and compare agree; causal state; profiles; baselines.

Real engine, real SQLite store; documents made here (tests/textgen.py).
"""

from __future__ import annotations

import dataclasses
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests import textgen
from watcher.compare import compare_files
from watcher.config import BaselineConfig, EngineConfig, ExtractConfig, TokenConfig
from watcher.engine import Engine
from watcher.model import Capture, payload_digest
from watcher.profiles import title_subject
from watcher.step import HistoryState, state_form
from watcher.store import SQLiteStore
from watcher.watch import Watcher

T0 = datetime(2012, 3, 1, tzinfo=UTC)
BASE = textgen.document(["river", "law", "music", "garden"], words=250)
URL = "http://www.riverside-rights.org/"


def cap(i: int, content: bytes | None, url: str = URL, status: int | None = 200, **kw: object) -> Capture:
    return Capture(url=url, timestamp=T0 + timedelta(days=30 * i), content=content, content_type="text/html",
                   status=status, **kw)  # type: ignore[arg-type]


def text_pairs() -> dict[str, tuple[bytes, bytes]]:
    """The six cases of the published content-drift suite, made here."""
    words = " ".join(BASE).split()
    rng = random.Random(7)
    base = textgen.html(BASE, "A report")
    typo = list(words)
    for i in rng.sample(range(len(typo)), 3):  # three typos in 1,000 words
        w = typo[i]
        typo[i] = w[:1] + w[2:3] + w[1:2] + w[3:] if len(w) > 3 else w + "s"
    synonyms = list(words)
    for i in range(7, len(synonyms), 17):  # one word in seventeen replaced by another
        synonyms[i] = "alternative"
    para = [*BASE[:3], textgen.paragraph("space", 250, 9)]
    grown = ["Comments and related links."] + BASE + [textgen.paragraph(t, 250, 40 + i)
                                                      for i, t in enumerate(["cooking", "space", "cooking"])]
    long = textgen.document(["space", "cooking"] * 16, words=250, seed=77)  # ~8,000 unrelated words
    return {
        "identical": (base, base),
        "typo": (base, textgen.html([" ".join(typo)], "A report")),
        "containment": (base, textgen.html(grown, "A report")),
        "paragraph": (base, textgen.html(para, "A report")),
        "synonym": (base, textgen.html([" ".join(synonyms)], "A report")),
        "long": (base, textgen.html(long, "A report")),
    }


EXPECTED = {"identical": {"unchanged"}, "typo": {"unchanged", "minor"}, "containment": {"unchanged", "minor"},
            "paragraph": {"drifted"}, "synonym": {"drifted"}, "long": {"off-topic"}}


@pytest.mark.parametrize("case", list(EXPECTED))
def test_text_profile_on_the_six_drift_cases(case: str, tmp_path: Path) -> None:
    a, b = text_pairs()[case]
    (tmp_path / "a.html").write_bytes(a)
    (tmp_path / "b.html").write_bytes(b)
    out = compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), EngineConfig(), profile="text")
    assert out["change"] in EXPECTED[case], (case, out["reason"], out["measures"]["containment"])
    assert out["profile"] == "text"
    if case == "long":
        assert out["reason"].startswith("text replaced")
    if case == "containment":
        assert "text added around it" in out["reason"]


def _in_a_live_page(page: bytes, seed: int) -> bytes:
    """``page``'s text inside a site's template whose "most popular" list and footer change with
    every download, as a real article page's do."""
    nav = '<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/about">About the project</a></nav>'
    side = f'<aside class="sidebar"><h2>Most popular</h2><p>{textgen.paragraph("cooking", 60, seed)}</p></aside>'
    foot = f"<footer>Copyright {2010 + seed} The Riverside Rights Project.</footer>"
    head, _, rest = page.decode().partition("<body>")
    body, _, tail = rest.partition("</body>")
    return f"{head}<body>{nav}<main>{body}</main>{side}{foot}</body>{tail}".encode()


@pytest.mark.parametrize("case", list(EXPECTED))
def test_the_six_drift_cases_inside_a_page_whose_lists_change(case: str, tmp_path: Path) -> None:
    """The six cases hold on a page like a real one: the text profile reads the main content, so
    a list of 60 words that changes between downloads is neither a paragraph gone (the identical,
    typo and containment cases would read `drifted` on the whole page) nor hides one."""
    a, b = text_pairs()[case]
    (tmp_path / "a.html").write_bytes(_in_a_live_page(a, 1))
    (tmp_path / "b.html").write_bytes(_in_a_live_page(b, 2))
    out = compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), EngineConfig(), profile="text")
    assert out["change"] in EXPECTED[case], (case, out["reason"])


def _reworded(every: int, how: str) -> bytes:
    """BASE with one word in ``every`` mistyped (two letters swapped) or replaced by another word."""
    words = " ".join(BASE).split()
    for i in range(5, len(words), every):
        w = words[i]
        words[i] = (w[:1] + w[2:3] + w[1:2] + w[3:] if len(w) > 3 else w) if how == "typo" else "alternative"
    return textgen.html([" ".join(words)], "A report")


def _one_word(at: int) -> bytes:
    """BASE with its word ``at`` replaced by another word (a synonym's shape)."""
    words = " ".join(BASE).split()
    words[at] = "unexpectedly"
    return textgen.html([" ".join(words)], "A report")


@pytest.mark.parametrize("every", [50, 25, 12])
def test_text_profile_tells_typos_from_rewording_in_batch_compare_and_stream(every: int, tmp_path: Path) -> None:
    """Shingles count a mistyped word like a replaced one: at one word in 25, both lose a fifth of
    the shingles.  The text profile aligns the words (it keeps the baseline's word sequence), so
    typos are minor at any density and the same density of other words is drifted; the same in
    batch, compare and the stream over the real store."""
    cfg = EngineConfig(profile="text")
    base = textgen.html(BASE, "A report")
    (tmp_path / "a.html").write_bytes(base)
    want = {"typo": "minor", "other": "drifted"}
    for how, change in want.items():
        page = _reworded(every, how)
        (tmp_path / "b.html").write_bytes(page)
        cmp = compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), cfg)
        batch = Engine(cfg).scan_history("h", [cap(0, base), cap(1, page)]).verdicts[1]
        with SQLiteStore(tmp_path / f"{how}.db") as store:
            w = Watcher(Engine(cfg), store)
            stream = [w.process(c) for c in (cap(0, base), cap(1, page))][1]
        assert cmp["change"] == batch.change == stream.change == change, (how, every, batch.reason)
        assert batch.reason == stream.reason == cmp["reason"]
        assert ("differ by a typo" in batch.reason) == (how == "typo")
        # the shingle containment alone cannot tell them apart: both are below the "minor" line
        assert batch.measures["containment"].score is not None and batch.measures["containment"].score < 0.9


LONG = textgen.document(["river", "law", "music", "garden"] * 3, words=100)  # 12 paragraphs, 1,200 words


@pytest.mark.parametrize("at", [0, 5, 11])
def test_one_paragraph_replaced_in_a_long_text_drifts(at: int, tmp_path: Path) -> None:
    """A replaced paragraph is drift whatever the page's length: one of twelve keeps containment
    above the 0.90 "minor" line (it read `minor` before), but 100 of the baseline's words in a row
    are gone.  The same in batch, compare and the stream over the real store."""
    base = textgen.html(LONG, "A report")
    edited = textgen.html([*LONG[:at], textgen.paragraph("space", 100, 3), *LONG[at + 1:]], "A report")
    cfg = EngineConfig(profile="text")
    (tmp_path / "a.html").write_bytes(base)
    (tmp_path / "b.html").write_bytes(edited)
    cmp = compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), cfg)
    batch = Engine(cfg).scan_history("h", [cap(0, base), cap(1, edited)]).verdicts[1]
    with SQLiteStore(tmp_path / "s.db") as store:  # the stored baseline keeps its words
        stream = [Watcher(Engine(cfg), store).process(c) for c in (cap(0, base), cap(1, edited))][1]
    assert batch.change == cmp["change"] == stream.change == "drifted", batch.reason
    assert stream.reason == batch.reason
    assert "words of the baseline in a row are gone" in batch.reason
    assert batch.measures["containment"].score is not None and batch.measures["containment"].score >= 0.9


def _with_paragraph(at: int) -> bytes:
    """LONG with a 60-word paragraph of another topic put before its paragraph ``at``."""
    return textgen.html([*LONG[:at], textgen.paragraph("space", 60, 8), *LONG[at:]], "A report")


@pytest.mark.parametrize(("at", "want"), [(0, "drifted"), (6, "drifted"), (11, "drifted"), (12, "minor")])
def test_a_paragraph_inserted_inside_the_text_drifts_one_added_around_it_does_not(at: int, want: str,
                                                                                  tmp_path: Path) -> None:
    """Text added around the original (comments below; the six cases' "containment" adds text above
    and below) leaves the cited text whole: `minor`.  A paragraph put inside it, between the
    headline and the first paragraph included, changes what it says, as a replaced one does:
    `drifted`, though nothing of the baseline is gone (it read "text added around it").  The same
    in batch, compare and the stream over the real store."""
    base = textgen.html(LONG, "A report")
    page = _with_paragraph(at)
    cfg = EngineConfig(profile="text")
    (tmp_path / "a.html").write_bytes(base)
    (tmp_path / "b.html").write_bytes(page)
    cmp = compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), cfg)
    batch = Engine(cfg).scan_history("h", [cap(0, base), cap(1, page)]).verdicts[1]
    with SQLiteStore(tmp_path / "s.db") as store:
        stream = [Watcher(Engine(cfg), store).process(c) for c in (cap(0, base), cap(1, page))][1]
    assert batch.change == cmp["change"] == stream.change == want, batch.reason
    assert batch.reason == stream.reason == cmp["reason"]
    if want == "drifted":
        assert batch.reason.startswith("text drifted: 60 words inserted inside the baseline's text"), batch.reason
    else:
        assert "text added around it" in batch.reason, batch.reason


def test_words_changed_in_place_are_small_edits_not_text_added() -> None:
    """20 of 300 words reworded in place: under the paragraph line and above the "minor" one,
    with a resemblance below 0.90; the page did not grow, so the reason says "small edits" (it
    said "text added around it")."""
    words = textgen.paragraph("law", 300, 2).split()
    words[100:120] = textgen.paragraph("space", 20, 4).rstrip(".").split()
    base = textgen.html([textgen.paragraph("law", 300, 2)], "A report")
    edited = textgen.html([" ".join(words)], "A report")
    v = Engine(EngineConfig(profile="text")).scan_history("h", [cap(0, base), cap(1, edited)]).verdicts[1]
    res = v.measures["resemblance"].score
    assert v.change == "minor" and "small edits" in v.reason, v.reason
    assert res is not None and res < 0.9


def test_lists_that_change_around_an_unchanged_text_are_not_drift() -> None:
    """The text profile reads the page's main content (extract.main_content: auto): a "most
    popular" list that changes wholly around an unchanged article is no drift, as it was on the
    whole page (where the list's 40 words in a row read as a paragraph gone)."""
    def page(seed: int) -> bytes:
        popular = textgen.paragraph("cooking", 40, seed)
        return (f'<html><head><title>A report</title></head><body><h1>A report</h1>'
                f'{"".join(f"<p>{p}</p>" for p in LONG)}'
                f'<aside class="sidebar"><h2>Most popular</h2><p>{popular}</p></aside></body></html>').encode()
    auto = Engine(EngineConfig(profile="text")).scan_history("h", [cap(0, page(1)), cap(1, page(2))]).verdicts[1]
    assert auto.change == "unchanged", auto.reason
    whole = EngineConfig(profile="text", extract=ExtractConfig(main_content=False))
    v = Engine(whole).scan_history("h", [cap(0, page(1)), cap(1, page(2))]).verdicts[1]
    assert v.change == "drifted" and "in a row are gone" in v.reason


def test_a_baseline_read_another_way_is_re_taken_not_compared(tmp_path: Path) -> None:
    """A store that holds text-profile baselines read from the whole page (the default before main
    content) meets the new default: the next fit capture becomes the baseline ("baseline re-taken"),
    where comparing the two readings had made the page drift; the capture after it is compared
    as usual.  The same for a change of tokens.stemming."""
    pages = [_in_a_live_page(textgen.html(LONG, "A report"), i) for i in (1, 2, 3)]  # the list changes
    old = EngineConfig(profile="text", extract=ExtractConfig(main_content=False))
    with SQLiteStore(tmp_path / "s.db") as store:
        first = Watcher(Engine(old), store).process(cap(0, pages[0]))
        w = Watcher(Engine(EngineConfig(profile="text")), store)
        again, after = (w.process(cap(i, pages[i])) for i in (1, 2))
    assert first.change == "baseline"
    assert again.change == "baseline" and again.reason.startswith("baseline re-taken: the text is now read as main")
    assert after.change == "unchanged" and after.baseline_time == again.capture_time
    # what comparing the two readings said: the whole page's list is a paragraph gone
    _, d = Engine(EngineConfig(profile="text")).compare(Engine(old).fingerprint(cap(0, pages[0])),
                                                         Engine(EngineConfig(profile="text")).fingerprint(
                                                             cap(1, pages[1])), URL)
    assert d.change == "drifted"
    stem = EngineConfig(tokens=TokenConfig(stemming=True))
    with SQLiteStore(tmp_path / "t.db") as store:
        Watcher(Engine(EngineConfig()), store).process(cap(0, pages[0]))
        v = Watcher(Engine(stem), store).process(cap(1, pages[1]))
    assert v.change == "baseline" and "stemmed terms" in v.reason


def test_main_content_auto_is_the_text_profiles_alone() -> None:
    auto = ExtractConfig()
    assert auto.main_content == "auto"
    assert auto.main_content_for("text") and not auto.main_content_for("collection")
    assert not auto.main_content_for("doi")
    assert ExtractConfig(main_content=True).main_content_for("collection")
    assert not ExtractConfig(main_content=False).main_content_for("text")


def test_typo_rules() -> None:
    from watcher.profiles import typos_forgiven

    base = ["the", "committee", "recieved", "the", "report", "from", "the", "ministry", "under", "article12b"]
    fixed = ["the", "committee", "received", "the", "report", "form", "the", "ministry", "under", "article13b"]
    aligned = typos_forgiven(base, fixed, 4)
    assert aligned.typos == 2 and aligned.containment < 1.0  # received, form; article12b -> article13b is a fact
    assert aligned.reworded == ()  # a fact in a word with digits is no rewording either
    assert typos_forgiven(base, base, 4) == (0, 1.0, 1.0, (), 0)
    aligned = typos_forgiven(["he", "jumps", "over", "it"], ["he", "jumped", "over", "it"], 4)
    assert aligned.typos == 0 and aligned.reworded == ()  # two edits in a short word: another form, no synonym
    short = ["we", "read", "the", "report", "and", "the", "letter"]
    assert typos_forgiven(short, ["we", "read", "teh", "report", "adn", "the", "letter"], 4).typos == 2
    assert typos_forgiven(short, ["we", "read", "the", "report", "and", "th", "letter"], 4).typos == 1
    assert typos_forgiven(short, ["he", "read", "the", "report", "and", "the", "letter"], 4).typos == 0  # we -> he
    # a character pair of a script without spaces: one character changed is another word
    assert typos_forgiven(["東京", "京都", "都市"], ["東京", "京阪", "阪市"], 1).typos == 0


def test_typos_in_short_words_of_a_short_text_are_minor(tmp_path: Path) -> None:
    """A 34-word paragraph with "the" and "and" mistyped: each breaks five shingles, so containment
    alone read 0.74, `drifted` (three-letter words were never typos)."""
    text = ("The committee met on Tuesday to review the annual budget for the city library system and "
            "members discussed the rising cost of digital subscriptions and the need to expand opening "
            "hours in the northern branches")
    (tmp_path / "a.html").write_bytes(textgen.html([text], "A report"))
    typo = text.replace(" the ", " teh ", 1).replace(" and ", " adn ", 1)
    (tmp_path / "b.html").write_bytes(textgen.html([typo], "A report"))
    out = compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), EngineConfig(), profile="text")
    assert out["change"] == "minor" and "2 words differ by a typo" in out["reason"], out["reason"]


def test_what_counts_as_a_word_reworded() -> None:
    """One word for another in place is rewording; a typo, a function word, a count's unit and a
    list whose items moved are not (on the newspaper pages' 188 re-downloads judged unchanged or
    minor, none has a word so replaced: bench/text_paragraph_eval.py)."""
    from watcher.profiles import typos_forgiven

    def w(text: str) -> list[str]:
        return text.split()

    base = w("the council approved the new budget for the city library three weeks ago")
    syn = w("the council accepted the new budget for the city library three weeks ago")
    assert typos_forgiven(base, syn, 4).reworded == (("approved", "accepted"),)
    stops = frozenset({"the", "a", "for"})
    assert typos_forgiven(base, [*base[:3], "a", *base[4:]], 4, stops).reworded == ()  # the -> a
    assert typos_forgiven(base, [*base[:4], "nwe", *base[5:]], 4).reworded == ()  # a typo of a short word
    counted = w("updated 3 hours ago by the desk")
    assert typos_forgiven(counted, w("updated 1 day ago by the desk"), 4).reworded == ()
    rotated = w("most read salt mill pepper mill oak board")
    assert typos_forgiven(rotated, w("most read pepper mill salt mill oak board"), 4).reworded == ()


def test_a_common_word_replaced_is_rewording_a_function_word_is_not() -> None:
    """The stop list's first 50 words are function words; the next 150 already hold common words a
    synonym replaces ("made", "new"): those count (with the whole head of 200 they did not)."""
    sentence = "The council made a new plan for the old library in the spring."
    base = textgen.html([*LONG[:6], sentence, *LONG[6:]], "A report")
    engine = Engine(EngineConfig(profile="text"))

    def verdict(edited: str) -> tuple[str, str]:
        page = textgen.html([*LONG[:6], edited, *LONG[6:]], "A report")
        v = engine.scan_history("h", [cap(0, base), cap(1, page)]).verdicts[1]
        return v.change, v.reason

    change, reason = verdict(sentence.replace("made", "drafted"))
    assert change == "drifted" and "'made' -> 'drafted'" in reason, reason
    change, reason = verdict(sentence.replace("for the old", "for an old"))  # the -> an
    assert change in ("unchanged", "minor"), reason


@pytest.mark.parametrize("where", [0, 600, 1199])
def test_one_word_replaced_by_a_synonym_in_a_long_text_drifts(where: int, tmp_path: Path) -> None:
    """One synonym in 1,200 words moves the shingles by less than the "unchanged" line (0.98), yet
    the sentence no longer says what was cited: the text profile aligns the words and calls it
    `drifted`, naming the word; a typo at the same place stays `unchanged` or `minor`.  The same
    in batch, compare and the stream over the real store."""
    words = " ".join(LONG).split()
    base = textgen.html(LONG, "A report")
    cfg = EngineConfig(profile="text")
    (tmp_path / "a.html").write_bytes(base)
    for how, want in (("synonym", {"drifted"}), ("typo", {"unchanged", "minor"})):
        edited = list(words)
        w = edited[where].rstrip(".")
        edited[where] = "unexpectedly" if how == "synonym" else w[:1] + w[2:3] + w[1:2] + w[3:]
        page = textgen.html([" ".join(edited)], "A report")
        (tmp_path / "b.html").write_bytes(page)
        cmp = compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), cfg)
        batch = Engine(cfg).scan_history("h", [cap(0, base), cap(1, page)]).verdicts[1]
        with SQLiteStore(tmp_path / f"{how}.db") as store:
            stream = [Watcher(Engine(cfg), store).process(c) for c in (cap(0, base), cap(1, page))][1]
        assert batch.change == cmp["change"] == stream.change and batch.change in want, (how, batch.reason)
        assert batch.reason == stream.reason == cmp["reason"]
        if how == "synonym":
            assert batch.reason.startswith(f"text reworded: '{w.lower()}' -> 'unexpectedly'"), batch.reason
            cont = batch.measures["containment"].score
            assert cont is not None and cont >= 0.98  # the shingles alone call it unchanged


def test_another_article_of_the_site_is_replaced_text_whatever_the_shared_words() -> None:
    """Most of the text gone (containment < 0.20) under a title that names another subject is
    another text, however many of the site's words it shares (the cosine kept such pairs
    `drifted`: 4 of the newspaper pages' 77 pairs of two articles).  Under the same subject line
    the same words in other sentences are a rewrite, `drifted`, and the reason says so (it said
    "part of the text was replaced")."""
    def page(seed: int, title: str) -> bytes:
        return textgen.html(textgen.document(["law", "river"], words=200, seed=seed), f"{title} | Riverside News")
    url = "http://www.riverside-news.org/2012/03/court-rules.html"
    engine = Engine(EngineConfig(profile="text"))
    base = page(1, "Court rules on river rights")
    other = engine.scan_history("h", [cap(0, base, url=url), cap(1, page(5, "Parliament debates the city budget"),
                                                                   url=url)]).verdicts[1]
    assert other.change == "off-topic" and "another subject (title words kept" in other.reason, other.reason
    cos = other.measures["cosine"].score
    assert cos is not None and cos >= 0.3  # the cosine alone would have kept it
    same = engine.scan_history("h", [cap(0, base, url=url), cap(1, page(5, "Court rules on river rights"),
                                                                  url=url)]).verdicts[1]
    assert same.change == "drifted" and same.reason.startswith("text rewritten: containment 0 < 0.20"), same.reason


def test_text_added_below_an_unchanged_text_says_so() -> None:
    """All of the baseline kept and a few lines appended (a comment): "text added around it", not
    "small edits"."""
    base = textgen.html(LONG, "A report")
    grown = textgen.html([*LONG, "Comments: a reader wrote that the library hours were extended."], "A report")
    v = Engine(EngineConfig(profile="text")).scan_history("h", [cap(0, base), cap(1, grown)]).verdicts[1]
    assert v.change == "minor" and "text added around it" in v.reason, v.reason  # it said "small edits"


def test_compare_scan_and_stream_agree_on_a_pair(tmp_path: Path) -> None:
    a = textgen.html(BASE)
    b = textgen.html([*BASE[:2], textgen.paragraph("space", 250, 3), BASE[3]])
    (tmp_path / "a.html").write_bytes(a)
    (tmp_path / "b.html").write_bytes(b)
    cmp = compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), EngineConfig(), url=URL)
    batch = Engine(EngineConfig()).scan_history("h", [cap(0, a), cap(1, b)]).verdicts[1]
    with SQLiteStore(tmp_path / "s.db") as store:
        stream = [Watcher(Engine(EngineConfig()), store).process(c) for c in (cap(0, a), cap(1, b))][1]
    assert cmp["change"] == batch.change == stream.change == "drifted"
    assert cmp["measures"]["cosine"]["score"] == batch.measures["cosine"].score == stream.measures["cosine"].score
    assert cmp["measures"]["containment"]["score"] == batch.measures["containment"].score
    assert batch.reason == stream.reason


@pytest.mark.parametrize("status", [301, 404, 503])
def test_redirects_and_errors_are_never_baselines(status: int) -> None:
    moved = b"<html><head><title>301 Moved Permanently</title></head><body><h1>Moved Permanently</h1>" \
            b"<p>The document has moved <a href='https://example.org/donate/'>here</a>.</p></body></html>"
    page = textgen.html(BASE)
    for policy in ("first", "first-valid", "rolling", "pinned"):
        r = Engine(EngineConfig(baseline=BaselineConfig(policy=policy))).scan_history(  # type: ignore[arg-type]
            "h", [cap(0, moved, status=status), cap(1, page), cap(2, page)])
        assert [v.change for v in r.verdicts][1:] == ["baseline", "unchanged"], policy
        assert r.verdicts[0].baseline_time is None and r.verdicts[2].baseline_time == T0 + timedelta(days=30)


def test_a_measure_whose_feature_the_baseline_lacks_is_na() -> None:
    eng = Engine(EngineConfig(report_measures=("tf_simhash", "containment")))
    a = eng.fingerprint(cap(0, textgen.html(BASE)))
    b = eng.fingerprint(cap(1, textgen.html([*BASE[:3], textgen.paragraph("law", 250, 5)])))
    assert "tf_simhash" in a.features
    blank = dataclasses.replace(a, simhash_tf=0, features=a.features - {"tf_simhash"})
    results, _ = eng.compare(blank, b)
    assert results["tf_simhash"].score is None and results["tf_simhash"].status == "n/a"
    results, _ = eng.compare(a, b)
    assert results["tf_simhash"].score is not None and results["tf_simhash"].score < 30
    # a baseline in state form keeps a shingle sample: containment stays measured, near the exact value
    exact = eng.compare(a, b)[0]["containment"].score
    sampled = eng.compare(state_form(a), b)[0]["containment"].score
    assert exact is not None and sampled is not None and abs(exact - sampled) < 0.15


def _history(n: int = 12) -> list[Capture]:
    rng = random.Random(5)
    out = [cap(0, b"<html><title>Moved</title><body>moved</body></html>", status=301)]
    for i in range(1, n):
        kind = rng.random()
        if kind < 0.2:
            body = b"<html><head><title>This domain is for sale</title></head><body>Buy this domain</body></html>"
        elif kind < 0.5:
            body = textgen.html([*BASE[:3], textgen.paragraph("garden", 250, i)])
        else:
            body = textgen.html(textgen.document(["space", "cooking"], words=200, seed=i), "Rocket shop")
        out.append(cap(i, body))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stream_in_any_order_ends_where_batch_ends(seed: int, tmp_path: Path) -> None:
    caps = [cap(1, textgen.html(BASE)), *(_history()[2:])]
    caps.insert(0, _history()[0])
    batch = {v.verdict_id: v for v in Engine(EngineConfig()).scan_history("k", caps).verdicts}
    order = list(caps)
    random.Random(seed).shuffle(order)
    with SQLiteStore(tmp_path / "s.db") as store:
        w = Watcher(Engine(EngineConfig()), store)
        newest = {}
        corrected = 0
        for c in order:
            out = w.handle(dataclasses.replace(c, history="k"))
            newest[out.verdict.verdict_id] = out.verdict
            for v in out.corrections:
                corrected += 1
                assert v.version > 1
                newest[v.verdict_id] = v
        stored = {v.verdict_id: v for v in store.recent_verdicts("k", 100)}
    assert set(newest) == set(batch)
    for vid, b in batch.items():
        for got in (newest[vid], stored[vid]):
            assert (got.status, got.change, got.reason, got.baseline_time) == \
                   (b.status, b.change, b.reason, b.baseline_time), (vid, got.reason, b.reason)
    assert corrected >= 0


def test_a_late_capture_is_never_scored_against_a_later_baseline(tmp_path: Path) -> None:
    page, other = textgen.html(BASE), textgen.html(textgen.document(["space", "cooking"], 200, 3), "Rocket shop")
    with SQLiteStore(tmp_path / "s.db") as store:
        w = Watcher(Engine(EngineConfig()), store)
        later = w.handle(cap(5, other))
        assert later.verdict.change == "baseline"
        early = w.handle(cap(1, page))  # captured before the baseline, arrives after it
        assert early.verdict.change == "baseline" and early.verdict.baseline_time == T0 + timedelta(days=30)
        assert [(v.verdict_id, v.status, v.version) for v in early.corrections] == \
               [(later.verdict.verdict_id, "off-topic", 2)]
        assert store.get_verdict(later.verdict.verdict_id).version == 2  # type: ignore[union-attr]


def test_pinned_baseline_in_the_stream_as_in_batch(tmp_path: Path) -> None:
    a = textgen.html(BASE)
    b = textgen.html([*BASE[:3], textgen.paragraph("space", 250, 1)])
    c = textgen.html([*BASE[:2], textgen.paragraph("space", 250, 1), textgen.paragraph("cooking", 250, 2)])
    caps = [cap(0, a), cap(1, b), cap(2, c)]
    cfg = EngineConfig(baseline=BaselineConfig(policy="pinned", pinned={"k": caps[1].timestamp.strftime(
        "%Y%m%d%H%M%S")}))
    batch = Engine(cfg).scan_history("k", caps).verdicts
    assert batch[2].baseline_time == caps[1].timestamp
    with SQLiteStore(tmp_path / "s.db") as store:
        w = Watcher(Engine(cfg), store)
        got = {}
        for c_ in (caps[0], caps[2], caps[1]):  # the pinned capture arrives last
            out = w.handle(dataclasses.replace(c_, history="k"))
            got[out.verdict.verdict_id] = out.verdict
            got.update({v.verdict_id: v for v in out.corrections})
    assert [(got[v.verdict_id].change, got[v.verdict_id].baseline_time) for v in batch] == \
           [(v.change, v.baseline_time) for v in batch]


def test_same_payload_again_is_scored_alike_in_batch_and_stream(tmp_path: Path) -> None:
    """Captures A, parked, A, parked: the last parked capture is off topic in both paths."""
    parked = b"<html><head><title>This domain is for sale</title></head><body>Buy this domain</body></html>"
    a = textgen.html(BASE)
    caps = [cap(0, a), cap(1, parked), cap(2, a), cap(3, parked)]
    batch = Engine(EngineConfig()).scan_history("k", caps).verdicts
    with SQLiteStore(tmp_path / "s.db") as store:
        w = Watcher(Engine(EngineConfig()), store)
        stream = [w.process(dataclasses.replace(c, history="k")) for c in caps]
    assert [(v.status, v.change) for v in batch] == [(v.status, v.change) for v in stream]
    assert batch[3].status == "off-topic" and batch[2].change == "unchanged"
    assert payload_digest(a) == batch[2].digest


def test_state_is_a_baseline_in_compact_form(tmp_path: Path) -> None:
    eng = Engine(EngineConfig())
    state = HistoryState()
    _, state = eng.score_next("k", state, cap(0, textgen.html(BASE)), eng.fingerprint(cap(0, textgen.html(BASE))))
    assert state.baseline is not None
    fp = state.baseline.fingerprint
    assert fp.shingles is None and fp.tokens is None and len(fp.shingle_sample) == 48 * 8
    assert "shingles" not in fp.features and "sample" in fp.features and len(fp.term_freqs) <= 64


def test_a_capture_scored_without_fetch_is_rescored_from_its_whole_fingerprint(tmp_path: Path) -> None:
    """B, then B again by digest only (no fetch), then an earlier A: B's second capture is re-scored
    against A exactly as batch scores it (its whole fingerprint, not the baseline's compact form)."""
    a = textgen.html(BASE)
    b = textgen.html([*BASE[:2], textgen.paragraph("space", 250, 3), textgen.paragraph("cooking", 250, 4)])
    caps = [cap(1, a), cap(2, b), cap(3, b)]
    batch = Engine(EngineConfig()).scan_history("k", caps).verdicts
    with SQLiteStore(tmp_path / "s.db") as store:
        w = Watcher(Engine(EngineConfig()), store)
        got = {}
        for c in (caps[1], dataclasses.replace(caps[2], content=None, digest=payload_digest(b)), caps[0]):
            out = w.handle(dataclasses.replace(c, history="k"))
            got[out.verdict.verdict_id] = out.verdict
            got.update({v.verdict_id: v for v in out.corrections})
    for v in batch:
        s = got[v.verdict_id]
        assert (s.change, s.reason, s.measures.get("containment")) == \
               (v.change, v.reason, v.measures.get("containment"))


def test_captures_scored_before_any_baseline_are_rescored_when_an_earlier_one_arrives(tmp_path: Path) -> None:
    stub = b"<html><head><meta http-equiv=refresh content='0;url=http://elsewhere.example.net/'></head></html>"
    caps = [cap(0, textgen.html(BASE)), cap(1, stub)]
    batch = Engine(EngineConfig()).scan_history("k", caps).verdicts
    with SQLiteStore(tmp_path / "s.db") as store:
        w = Watcher(Engine(EngineConfig()), store)
        first = w.handle(dataclasses.replace(caps[1], history="k"))
        assert first.verdict.change == "empty"
        late = w.handle(dataclasses.replace(caps[0], history="k"))
    assert [(v.status, v.change) for v in late.corrections] == [(batch[1].status, batch[1].change)]
    assert batch[1].status == "off-topic"


def test_a_capture_without_a_title_is_no_evidence_of_a_lost_identity() -> None:
    """Frames, script-built pages and bot walls often have no <title>: the identity check needs a
    title on both sides (on the gold data it flagged three on-topic captures and caught none)."""
    base = textgen.html(textgen.document(["law", "river"], 250, 1), "Riverside Rights Project")
    other_text = textgen.document(["music", "garden"], 250, 9)
    eng = Engine(EngineConfig())
    titled = eng.scan_history("k", [cap(0, base), cap(1, textgen.html(other_text, "Garden Music Weekly"))])
    untitled = eng.scan_history("k", [cap(0, base), cap(1, textgen.html(other_text, ""))])
    assert "identity" in titled.verdicts[1].checks
    assert "identity" not in untitled.verdicts[1].checks and "identity" not in untitled.verdicts[1].reason
    # the same holds for a deep page's subject: no title, no "page replaced" from the title
    deep = "http://example.org/news/2013/01/live-blog-protests.html"
    page = eng.scan_history("k", [cap(0, base, url=deep), cap(1, textgen.html(other_text, ""), url=deep)])
    assert "replaced" not in page.verdicts[1].checks
    assert title_subject("live: protests | ahram online", "") is None


def test_the_scholarly_record_is_read_only_for_the_doi_profile() -> None:
    """A fifth of a fingerprint's cost, and only the doi profile compares it."""
    from tests import doi_pages as dp

    page = dp.highwire(dp.article(3), 0).encode()
    eng = Engine(EngineConfig())
    c = cap(0, page, url="https://journals.example.org/content/1/2/3")
    assert eng.fingerprint(c).record is None  # the configured profile: collection
    assert eng.fingerprint(c, "text").record is None
    rec = eng.fingerprint(c, "doi").record
    assert rec is not None and rec.title == dp.article(3).title
    doi_engine = Engine(EngineConfig(profile="doi"))
    assert doi_engine.fingerprint(c).record is not None


def test_compare_reads_the_pair_as_the_address_says(tmp_path: Path) -> None:
    """What a page stands for depends on its address: `compare --url` gives it, so a pair judged by
    compare is judged as scan judges it under that address (a home page showing another story is on
    topic; the same pair under an article's address is a replaced page)."""
    site = "Riverside Rights"
    a = textgen.html([*textgen.document(["law", "river"], 250, 1), "Riverside Rights news reports"],
                     f"Court hearing on the dam | {site}")
    b = textgen.html([*textgen.document(["law", "music"], 250, 9), "Riverside Rights news reports"],
                     f"Jazz night for the detainees | {site}")
    (tmp_path / "a.html").write_bytes(a)
    (tmp_path / "b.html").write_bytes(b)
    deep = "http://www.riverside-rights.org/news/2012/03/court-hearing-on-the-dam.html"
    eng = Engine(EngineConfig())
    for url in (URL, deep):
        cmp = compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), EngineConfig(), url=url)
        batch = eng.scan_history("h", [cap(0, a, url=url), cap(1, b, url=url)]).verdicts[1]
        assert (cmp["overall"], cmp["reason"]) == (batch.status, batch.reason)
    assert compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), EngineConfig(), url=URL)["overall"] \
        == "on-topic"
    assert compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), EngineConfig(), url=deep)["overall"] \
        == "off-topic"


