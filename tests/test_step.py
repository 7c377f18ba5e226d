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
from watcher.config import BaselineConfig, EngineConfig
from watcher.engine import Engine
from watcher.model import Capture, payload_digest
from watcher.profiles import seed_kind, title_subject
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


def _reworded(every: int, how: str) -> bytes:
    """BASE with one word in ``every`` mistyped (two letters swapped) or replaced by another word."""
    words = " ".join(BASE).split()
    for i in range(5, len(words), every):
        w = words[i]
        words[i] = (w[:1] + w[2:3] + w[1:2] + w[3:] if len(w) > 3 else w) if how == "typo" else "alternative"
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


def test_typo_rules() -> None:
    from watcher.profiles import typos_forgiven

    base = ["the", "committee", "recieved", "the", "report", "from", "the", "ministry", "under", "article12b"]
    fixed = ["the", "committee", "received", "the", "report", "form", "the", "ministry", "under", "article13b"]
    n, cont, _ = typos_forgiven(base, fixed, 4)
    assert n == 2 and cont < 1.0  # received, form (letters swapped); article12b -> article13b changes a fact
    assert typos_forgiven(base, base, 4) == (0, 1.0, 1.0)
    n, _, _ = typos_forgiven(["he", "jumps", "over", "it"], ["he", "jumped", "over", "it"], 4)
    assert n == 0  # two edits in a short word: another word form, not a typo


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


def _subject(base_title: str, cur_title: str, host: str = "") -> float | None:
    """title_subject over the title keys the fingerprints derive (normalised once per fingerprint)."""
    eng = Engine(EngineConfig())
    keys = [eng.fingerprint(cap(0, textgen.html(["a few words of text"], t))).title_key if t else ""
            for t in (base_title, cur_title)]
    return title_subject(keys[0], keys[1], host)


def test_seed_kinds_and_title_subjects() -> None:
    assert seed_kind("http://example.org/") == seed_kind("http://example.org/index.html") == "site"
    assert seed_kind("http://example.org/en/") == "site"
    assert seed_kind("http://example.org/news/2013/01/live-blog-protests.html") == "page"
    # sections and blogs one segment deep stand for the organisation
    for site in ("http://example.org/news", "http://desdecuba.com/generaciony/", "http://pdhj.org/wp/",
                 "http://example.org/about-us", "http://example.org/index.php?lang=en",
                 "http://www.amnesty.nl/?PHPSESSID=cdad403a170c2c68d3476c491279bcf9"):
        assert seed_kind(site) == "site", site
    # a profile on a platform stands for its owner, as a home page does; one video, photo or post does not
    for profile in ("http://www.facebook.com/pages/We-are-all-Khaled-Said/477907592765",
                    "https://www.facebook.com/groups/egyptrev/", "http://www.facebook.com/profile.php?id=100001234567",
                    "http://www.youtube.com/user/AlJazeeraEnglish", "http://www.flickr.com/photos/3arabawy/",
                    "https://www.youtube.com/channel/UCNye-wNBqNL5ZzHSJj3l8Bg/videos", "http://twitter.com/Ghonim",
                    "http://www.facebook.com/elshaheeed.co.uk", "https://www.facebook.com/ahmed.maher.5/"):
        assert seed_kind(profile) == "site", profile
    for item in ("http://www.flickr.com/photos/3arabawy/5395001234/", "http://twitter.com/Ghonim/status/123456789",
                 "http://example.org/pages/a/1234", "http://www.facebook.com/event.php?eid=1234",
                 "https://www.facebook.com/elshaheeed.co.uk/posts/123456"):
        assert seed_kind(item) == "page", item
    # an article at the root, by slug or number, or by a numeric id in the query
    for page in ("http://example.org/live-blog-egypt-protests", "http://example.org/12345",
                 "http://example.org/live_updates_from_tahrir.html", "http://example.org/?p=4321",
                 "http://example.org/index.php?option=com_content&id=77", "http://example.org/news.aspx?NewsID=123",
                 "http://www.youtube.com/watch?v=dQw4w9WgXcQ"):
        assert seed_kind(page) == "page", page
    assert _subject("Live: protests in Tahrir | Ahram Online", "Syria talks stall | Ahram Online") < 0.5
    assert _subject("Live: protests in Tahrir | Ahram Online", "Live: protests in Tahrir - Ahram Online") > 0.9
    # script-aware, as the text is: alef and hamza forms, taa marbuta, full-width letters are one title
    assert _subject("مسيرة إلى ميدان التحرير | الأهرام", "مسيره الي ميدان التحرير | الاهرام") == 1.0
    assert _subject("Ｒｉｖｅｒ ｎｅｗｓ | Site", "River News | Site") == 1.0
    # the first segment of its own is the subject: section names padded in do not make two headlines match
    star = "Ebola: healthcare worker in Glasgow contracts Ebola | Latest News | Breaking News UK | Daily Star"
    other = "Helen Wood cheating boyfriend | Celebs | Showbiz and TV | Latest Celeb Gossip and Celeb News | Daily Star"
    subject = _subject(star, other)
    assert subject is not None and subject < 0.5
    # the headline is the longest segment of its own, wherever the template puts it: a changed
    # section before an edited headline is the same subject, another headline is not
    assert _subject("News | Egypt protests turn violent | Site",
                    "World | Egypt protests turned violent, police say | Site", "site.org") > 0.5
    assert _subject("News | Egypt protests turn violent | Site", "World | Syria talks stall in Geneva | Site",
                    "site.org") < 0.5
    # a headline kept under a new title template (the site's name respelled, a section added) is no
    # evidence of another subject; the baseline's subject gone from the title is
    jazeera = "english.aljazeera.net"
    assert _subject("Egypt protests - Al Jazeera English", "Egypt protests | News | Al Jazeera", jazeera) is None
    assert _subject("Egypt protests - Al Jazeera English", "Al Jazeera", jazeera) == 0.0
    assert _subject("Egypt protests - Al Jazeera English", "Middle East | Al Jazeera", jazeera) < 0.5
    assert _subject("PERRIS: Woman ordered hit on father of her child, police say - Press Enterprise",
                    "Lake Elsinore : Press Enterprise", "www.pe.com") < 0.5


def test_a_deep_page_replaced_by_another_article_of_the_site_is_off_topic() -> None:
    site = "Ahram Online"
    art1 = textgen.html([*textgen.document(["law", "river"], 250, 1), "Ahram Online news politics sport"],
                        f"Live blog: court hearing on the river dam | {site}")
    art1b = textgen.html([*textgen.document(["law", "river"], 250, 1), "Ahram Online news politics sport",
                          "Update: the hearing resumed."], f"Live blog: court hearing on the river dam | {site}")
    art2 = textgen.html([*textgen.document(["music", "garden"], 250, 9), "Ahram Online news politics sport"],
                        f"Jazz festival opens in the botanical garden | {site}")
    deep = "http://english.ahram.org.eg/NewsContent/1/64/12345/Egypt/Politics-/Live-blog.aspx"
    eng = Engine(EngineConfig())
    r = eng.scan_history("k", [cap(0, art1, url=deep), cap(1, art1b, url=deep), cap(2, art2, url=deep)])
    assert [v.status for v in r.verdicts] == ["on-topic", "on-topic", "off-topic"]
    assert "page replaced" in r.verdicts[2].reason and "replaced" in r.verdicts[2].checks
    # the same change on a home page is a site showing new stories: on topic
    h1 = art1.replace(b"Live blog: court hearing on the river dam | Ahram Online", b"Ahram Online - Home")
    h2 = textgen.html([*textgen.document(["law", "music"], 250, 9), "Ahram Online news politics sport"],
                      "Ahram Online - Home")  # other stories, some on the same beat
    home = eng.scan_history("k", [cap(0, h1), cap(1, h2)])
    assert home.verdicts[1].status == "on-topic" and home.verdicts[1].reason.startswith("on topic (home page")


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
    assert _subject("Live: protests | Ahram Online", "") is None


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


def test_a_deep_page_whose_titles_name_only_the_site_is_judged_by_its_text() -> None:
    """Some sites title every page with their name alone: the title is then no evidence of the
    subject, and the text profile's "another text" test decides (containment and cosine both low).
    Measured on the newspaper pages with every title set to the site's name: 19 of 76 pairs of two
    articles caught, 6 of 247 versions flagged (comment feeds and mismatched pages)."""
    from watcher.profiles import _names_site

    host = "english.ahram.org.eg"
    NAV = "Ahram Online news politics sport"  # noqa: N806
    assert _names_site("Ahram Online", host) and _names_site("AlJazeera", "aljazeera.net")
    assert not _names_site("Egypt protests continue", host) and not _names_site("Home", host)
    assert _names_site("Amnesty International", "www.amnesty.org")
    assert not _names_site("Amnesty condemns arrests", "www.amnesty.org")  # a subject that names the site
    assert _names_site("AL.com", "www.al.com") and not _names_site("Lou Holtz was right", "www.al.com")  # the address
    assert _subject("Ahram Online", "Ahram Online", host) is None
    assert _subject("Protests | Ahram Online", "Protests | Ahram Online", host) == 1.0
    deep = f"http://{host}/NewsContent/1/64/12345/Egypt/Politics-/Live-blog.aspx"
    art1 = textgen.html([*textgen.document(["law", "river"], 250, 1), NAV], "Ahram Online")
    art1b = textgen.html([*textgen.document(["law", "river"], 250, 1), NAV, "Update: the hearing resumed."],
                         "Ahram Online")
    art2 = textgen.html([*textgen.document(["music", "garden"], 250, 9), NAV], "Ahram Online")
    eng = Engine(EngineConfig())
    r = eng.scan_history("k", [cap(0, art1, url=deep), cap(1, art1b, url=deep), cap(2, art2, url=deep)])
    assert [v.status for v in r.verdicts] == ["on-topic", "on-topic", "off-topic"]
    assert "another text" in r.verdicts[2].reason and "replaced" in r.verdicts[2].checks
    # a text on the same beat (cosine 0.45) is not "another text"; under the home page's address it is
    # new stories: both on topic
    beat = textgen.html([*textgen.document(["law", "music"], 250, 9), NAV], "Ahram Online")
    same = eng.scan_history("k", [cap(0, art1, url=deep), cap(2, beat, url=deep)]).verdicts[1]
    assert same.status == "on-topic" and "replaced" not in same.checks
    home = eng.scan_history("k", [cap(0, art1, url=f"http://{host}/"), cap(2, beat, url=f"http://{host}/")])
    assert home.verdicts[1].status == "on-topic"


def test_a_replaced_article_under_heavy_boilerplate_is_caught_by_containment() -> None:
    """A page whose menus and link lists outweigh its article keeps a high cosine when the article is
    replaced: a changed subject in the title with containment under 0.80 ("drifted") is enough.  An
    edited headline over the same text is not."""
    deep = "http://news.example.com/2015/01/kwanzaa-at-the-library.html"
    menu = [textgen.paragraph(t, 250, 50 + i) for i, t in enumerate(["space", "cooking", "space", "cooking"])]
    a = textgen.html([*menu, textgen.paragraph("music", 200, 1)], "Kwanzaa is celebrated at the library | News")
    b = textgen.html([*menu, textgen.paragraph("garden", 200, 2)], "Hotel history exhibition opens | News")
    a2 = textgen.html([*menu, textgen.paragraph("music", 200, 1)], "Kwanzaa celebrated at library | News")
    eng = Engine(EngineConfig())
    r = eng.scan_history("k", [cap(0, a, url=deep), cap(1, b, url=deep)]).verdicts[1]
    assert r.measures["cosine"].score is not None and r.measures["cosine"].score >= 0.5
    assert "replaced" in r.checks and "containment" in r.reason
    edited = eng.scan_history("k", [cap(0, a, url=deep), cap(1, a2, url=deep)]).verdicts[1]
    assert edited.status == "on-topic"


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


def test_a_deep_page_titled_with_the_site_name_is_judged_by_its_headline(tmp_path: Path) -> None:
    """Some sites title every page with their name alone but still give each article its own
    ``og:title``: the headline then names the subject, as a title would.  Menus that outweigh the
    article keep the text test ("another text") from seeing the replacement; the headline does.
    Measured on the newspaper pages with every title set to the site's name: 65 of 76 pairs of two
    articles caught (19 without headlines), 9 of 247 versions flagged (6 without; the three more are
    versions whose headline names another story)."""
    host = "english.ahram.org.eg"
    deep = f"http://{host}/NewsContent/1/64/12345/Egypt/Politics-/Live-blog.aspx"
    menu = [textgen.paragraph(t, 250, 50 + i) for i, t in enumerate(["space", "cooking", "space", "cooking"])]

    def page(topic: str, seed: int, headline: str, extra: str = "") -> bytes:
        body = textgen.html([*menu, textgen.paragraph(topic, 200, seed), extra], "Ahram Online")
        og = f'<meta property="og:title" content="{headline}">'.encode()
        return body.replace(b"<title>", og + b"<title>", 1)

    a = page("music", 1, "Live: protests in Tahrir Square")
    a2 = page("music", 1, "Live: protests in Tahrir Square", "Update: the march reached the square.")
    b = page("garden", 2, "Syria talks stall in Geneva")
    eng = Engine(EngineConfig())
    fa = eng.fingerprint(cap(0, a, url=deep))
    assert fa.headline == "Live: protests in Tahrir Square" and fa.title == "Ahram Online"
    caps = [cap(0, a, url=deep), cap(1, a2, url=deep), cap(2, b, url=deep)]
    r = eng.scan_history("k", caps).verdicts
    assert [v.status for v in r] == ["on-topic", "on-topic", "off-topic"]
    assert "replaced" in r[2].checks and "headline words kept" in r[2].reason
    # the stream keeps the baseline's headline in the store and says the same
    with SQLiteStore(tmp_path / "s.db") as store:
        watcher = Watcher(Engine(EngineConfig()), store)
        stream = [watcher.process(c) for c in caps]
    assert [(v.status, v.reason) for v in stream] == [(v.status, v.reason) for v in r]
    # without the headlines the menus hide the replacement from the text test
    plain = eng.scan_history("k", [cap(0, textgen.html([*menu, textgen.paragraph("music", 200, 1)], "Ahram Online"),
                                         url=deep),
                                   cap(2, textgen.html([*menu, textgen.paragraph("garden", 200, 2)], "Ahram Online"),
                                       url=deep)]).verdicts[1]
    assert plain.status == "on-topic"
    # a site that turns to titling every page with its name, keeping og:title: the old title's
    # headline is compared with the new og:title (not with the site's name)
    # (a live blog: its text is new at every capture)
    live = "Live: protests in Tahrir Square"
    titled_a = textgen.html([textgen.paragraph("music", 200, 1)], f"{live} | Ahram Online")
    later = textgen.html([textgen.paragraph("music", 200, 5)], "Ahram Online").replace(
        b"<title>", f'<meta property="og:title" content="{live}"><title>'.encode(), 1)
    other = textgen.html([textgen.paragraph("garden", 200, 2)], "Ahram Online").replace(
        b"<title>", b'<meta property="og:title" content="Syria talks stall in Geneva"><title>', 1)
    retitled = eng.scan_history("k", [cap(0, titled_a, url=deep), cap(1, later, url=deep),
                                      cap(2, other, url=deep)]).verdicts
    assert [v.status for v in retitled] == ["on-topic", "on-topic", "off-topic"], [v.reason for v in retitled]
    # a title that already says the headline keeps none (no bytes spent on it)
    titled = textgen.html(["words of an article"], "Live: protests in Tahrir Square | Ahram Online")
    og = b'<meta property="og:title" content="Live: protests in Tahrir Square">'
    assert eng.fingerprint(cap(0, titled.replace(b"<title>", og + b"<title>", 1), url=deep)).headline == ""


def test_a_deep_page_without_title_or_headline_of_its_own_is_judged_by_its_heading(tmp_path: Path) -> None:
    """Pages of the 2010s often declare no headline (no og:title) and some sites title every page
    with their name: the titles are then no evidence, menus hide the replacement from the text
    test, and the page's first-level heading still names the article.  It is weaker evidence than
    a declared headline, so it speaks only where the titles name no subject.  Deep-page collection
    with every title set to the site's name and no og:title: F1 0.502 -> 0.860 (P 0.963)."""
    host = "english.ahram.org.eg"
    deep = f"http://{host}/NewsContent/1/64/12345/Egypt/Politics-/Live-blog.aspx"
    menu = [textgen.paragraph(t, 250, 50 + i) for i, t in enumerate(["space", "cooking", "space", "cooking"])]

    def page(topic: str, seed: int, heading: str, title: str = "Ahram Online", extra: str = "",
             menus: bool = True) -> bytes:
        body = textgen.html([*(menu if menus else []), textgen.paragraph(topic, 200, seed), extra], title)
        # the logo is a first-level heading too, and too short to be a headline
        return body.replace(f"<h1>{title}</h1>".encode(), f"<h1>Ahram</h1><h1>{heading}</h1>".encode(), 1)

    a = page("music", 1, "Live: protests in Tahrir Square")
    a2 = page("music", 1, "Live: protests in Tahrir Square, day two", extra="Update: the march reached the square.")
    b = page("garden", 2, "Syria talks stall in Geneva")
    eng = Engine(EngineConfig())
    fa = eng.fingerprint(cap(0, a, url=deep))
    assert fa.heading == "Live: protests in Tahrir Square" and fa.headline == ""
    caps = [cap(0, a, url=deep), cap(1, a2, url=deep), cap(2, b, url=deep)]
    r = eng.scan_history("k", caps).verdicts
    assert [v.status for v in r] == ["on-topic", "on-topic", "off-topic"]
    assert "replaced" in r[2].checks and "heading words kept" in r[2].reason
    with SQLiteStore(tmp_path / "s.db") as store:  # the baseline's heading survives the store
        watcher = Watcher(Engine(EngineConfig()), store)
        stream = [watcher.process(c) for c in caps]
    assert [(v.status, v.reason) for v in stream] == [(v.status, v.reason) for v in r]
    # a site's name that no rule ties to the address (an Arabic name on a Latin one): the one title
    # over a changed text is no evidence either, and the headings speak
    portal = "بوابة الأخبار"
    ar = [page("music", 1, "Live: protests in Tahrir Square", title=portal),
          page("music", 1, "Live: protests in Tahrir Square, day two", title=portal, extra="Update: the march."),
          page("garden", 2, "Syria talks stall in Geneva", title=portal)]
    r_ar = eng.scan_history("k", [cap(i, p, url=deep) for i, p in enumerate(ar)]).verdicts
    assert [v.status for v in r_ar] == ["on-topic", "on-topic", "off-topic"], [v.reason for v in r_ar]
    assert "heading words kept" in r_ar[2].reason
    # titles that name the subject decide; the heading is not read then
    live = "Live: protests in Tahrir Square | Ahram Online"
    t1 = page("music", 1, "Syria talks stall in Geneva", title=live, menus=False)
    t2 = page("garden", 2, "Crowds gather again at dawn", title=live, menus=False)  # a live blog's new entries
    assert eng.scan_history("k", [cap(0, t1, url=deep), cap(1, t2, url=deep)]).verdicts[1].status == "on-topic"
    # a home page's baseline keeps no heading: it never names a home page's subject
    home = eng.scan_history("k", [cap(0, a), cap(1, b)])
    assert home.verdicts[1].status == "on-topic"
    state = eng.score_next("k", HistoryState(), cap(0, a), eng.fingerprint(cap(0, a)), URL)[1]
    assert state.baseline is not None and state.baseline.fingerprint.heading == ""
    deep_state = eng.score_next("k", HistoryState(), cap(0, a, url=deep), fa, deep)[1]
    assert deep_state.baseline is not None and deep_state.baseline.fingerprint.heading == fa.heading
    # a script inside a heading is not its text
    scripted = a.replace(b"<h1>Live:", b"<h1><script>var ad_slot = 'x';</script>Live:", 1)
    assert scripted != a
    assert eng.fingerprint(cap(0, scripted, url=deep)).heading == "Live: protests in Tahrir Square"
