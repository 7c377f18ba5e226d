"""The one scoring step: batch, stream and compare agree; causal state; profiles; baselines.

Real engine, real SQLite store; documents made here (tests/fixtures/textgen.py).
"""

from __future__ import annotations

import dataclasses
import random
from datetime import timedelta
from pathlib import Path

import pytest

from tests.fixtures import textgen
from tests.fixtures.captures import BASE, T0, URL, cap
from watcher.compare import compare_files
from watcher.config import BaselineConfig, EngineConfig
from watcher.engine import Engine
from watcher.model import Capture, payload_digest
from watcher.profiles.subject import title_subject
from watcher.state import HistoryState, state_form
from watcher.store import SQLiteStore
from watcher.watch import Watcher


def test_compare_scan_and_stream_agree_on_a_pair(tmp_path: Path) -> None:
    a = textgen.html(BASE)
    b = textgen.html([*BASE[:2], textgen.paragraph("space", 250, 3), BASE[3]])
    (tmp_path / "a.html").write_bytes(a)
    (tmp_path / "b.html").write_bytes(b)
    cmp = compare_files(str(tmp_path / "a.html"), str(tmp_path / "b.html"), EngineConfig(), url=URL)
    batch = Engine(EngineConfig()).scan_history("h", [cap(0, a), cap(1, b)]).verdicts[1]
    with SQLiteStore(tmp_path / "s.db") as store:
        stream = [Watcher(Engine(EngineConfig()), store).score(c).verdict for c in (cap(0, a), cap(1, b))][1]
    assert cmp["change"] == batch.change == stream.change == "drifted"
    assert cmp["measures"]["cosine"]["score"] == batch.measures["cosine"].score == stream.measures["cosine"].score
    assert cmp["measures"]["containment"]["score"] == batch.measures["containment"].score
    assert batch.reason == stream.reason


def _judged_between_baselines(caps: list[Capture], db: Path, want: str, why: str) -> None:
    """The middle of three captures, between two copies of the baseline, is judged ``want`` with ``why``
    in its reason, alike in batch and in the stream over the real SQLite store, and the baseline stays."""
    batch = Engine(EngineConfig()).scan_history("h", caps).verdicts
    with SQLiteStore(db) as store:
        stream = [Watcher(Engine(EngineConfig()), store).score(c).verdict for c in caps]
    assert [(v.status, v.reason) for v in stream] == [(v.status, v.reason) for v in batch]
    assert batch[1].status == want and why in batch[1].reason, (caps[1].url, caps[1].status, batch[1].reason)
    assert batch[2].change == "unchanged"  # the baseline stays


MOVED = b"<html><head><title>301 Moved Permanently</title></head><body><h1>Moved Permanently</h1>" \
        b"<p>The document has moved <a href='https://www.riverside-rights.org/'>here</a>.</p></body></html>"


def test_an_http_redirect_after_the_baseline_is_judged_by_its_target_not_its_body(tmp_path: Path) -> None:
    """A redirect's body is the server's note, not the page.  Judged as a page, a home page that
    moved to https or www read "site identity lost" at every later crawl (a crawl-stop alert each
    time); the redirect is read as a stub is: same site, no verdict; another site, or an article
    sent to the front page, off topic.  So is a redirect stored bare or with a binary body (crawlers
    often keep a 301 with no body): before, it read "no content" whatever its target.  Batch and
    the stream over the real SQLite store agree."""
    deep = "http://www.riverside-rights.org/news/2012/03/court-hearing-on-the-dam.html"
    page = textgen.html(BASE, "Riverside Rights Project")
    gif = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,"
    cases = [  # (seed, HTTP status, Location, body, verdict status, reason fragment)
        (URL, 301, "https://www.riverside-rights.org/", MOVED, "empty", "HTTP 301 redirect to https://www.riverside"),
        (URL, 302, "/en/", MOVED, "empty", "(same site)"),
        (URL, 301, None, MOVED, "empty", "no target recorded"),
        (URL, 301, "http://casino-bonus.example.com/", MOVED, "off-topic", "redirects to another site"),
        (deep, 302, "http://www.riverside-rights.org/", MOVED, "off-topic", "home page"),
        (deep, 301, "/news/2012/03/dam-hearing.html", MOVED, "empty", "(same site)"),
        (URL, 301, "http://casino-bonus.example.com/", b"", "off-topic", "redirects to another site"),
        (deep, 302, "http://www.riverside-rights.org/", gif, "off-topic", "home page"),
        (URL, 301, "https://www.riverside-rights.org/", b"", "empty", "HTTP 301 redirect to https://www.riverside"),
        (URL, 301, None, b"", "empty", "no content"),
    ]
    for i, (seed, status, location, body, want, why) in enumerate(cases):
        headers = {"Location": location} if location else {}
        moved = cap(1, body, url=seed, status=status, headers=headers)
        if body == gif:
            moved = dataclasses.replace(moved, content_type="image/gif")
        _judged_between_baselines([cap(0, page, url=seed), moved, cap(2, page, url=seed)], tmp_path / f"s{i}.db",
                                  want, why)
        if body == gif:
            assert Engine(EngineConfig()).fingerprint(moved).kind == "binary"


def wayback_notice(status: int, target: str, when: str = "20130301000000") -> bytes:
    """A Wayback replay of a redirect, as the Internet Archive's and OpenWayback's replays write it:
    downloaded without running its script (a gold directory's memento), this is the capture."""
    replay = f"/web/{when}/{target}"
    js = replay.replace("/", "\\/")
    return f"""<!DOCTYPE html><html lang="en"><head><title></title>
<script src="//archive.org/includes/athena.js" type="text/javascript"></script></head><body>
<div id="positionHome"><section><div id="logoHome"><a href="/web/"><h1><span>Internet Archive's Wayback
Machine</span></h1></a></div></section><section><div id="error">
<script type="text/javascript">function go() {{ document.location.href = "{js}"; }}
window.setTimeout("go()",5000);</script>
<p class="code">Loading...</p>
<p class="code shift target">{URL} | 10:00:00 Mar 1, 2013</p>
<p class="code shift red">Got an HTTP {status} response at crawl time</p>
<p class="code">Redirecting to...</p>
<p class="code shift target">{target}</p>
<p class="impatient"><a href="{replay}">Impatient?</a></p>
</div></section></div>
<footer><div id="footer"><p>The Wayback Machine is an initiative of the Internet Archive, a 501(c)(3)
non-profit, building a digital library of Internet sites and other cultural artifacts in digital
form. Other projects include Open Library and archive-it.org.</p></div></footer></body></html>""".encode()


def test_a_replayed_redirect_notice_is_the_redirect_not_a_page(tmp_path: Path) -> None:
    """A memento of a redirect, downloaded from a Wayback replay without running its script, is the
    archive's notice ("Got an HTTP 301 response at crawl time ... Impatient?"). Judged as a page it
    read off topic (its words are the archive's: tfintersection 0), so a home page that moved to
    https was off topic at every later capture; it is the redirect the crawler recorded, judged by
    its target as an HTTP redirect is, and never a baseline.  An article that quotes the line is
    still a page."""
    deep = "http://www.riverside-rights.org/news/2012/03/court-hearing-on-the-dam.html"
    page = textgen.html(BASE, "Riverside Rights Project")
    cases = [  # (seed, status, target, verdict status, reason fragment)
        (URL, 301, "https://www.riverside-rights.org/", "empty", "HTTP 301 redirect to https://www.riverside"),
        (URL, 302, "http://casino-bonus.example.com/", "off-topic", "redirects to another site"),
        (deep, 302, "http://www.riverside-rights.org/", "off-topic", "home page"),
        (deep, 301, "http://www.riverside-rights.org/news/2012/03/dam-hearing.html", "empty", "(same site)"),
    ]
    for i, (seed, status, target, want, why) in enumerate(cases):
        _judged_between_baselines([cap(0, page, url=seed), cap(1, wayback_notice(status, target), url=seed),
                                   cap(2, page, url=seed)], tmp_path / f"s{i}.db", want, why)
    # OpenWayback's hop to the nearest capture ("Loading ... as close to the date ... Impatient?"): a stub
    hop = textgen.html(["Welcome to OpenWayback.", "Loading...", URL, "as close to the date:",
                        "March 2, 2013 12:00:00 AM GMT", "as is available.."], "OpenWayback").replace(
        b"</body>", f'<p class="impatient"><a href="/2358/20130302000000/{URL}">Impatient?</a></p></body>'.encode())
    r = Engine(EngineConfig()).scan_history("h", [cap(0, page), cap(1, hop), cap(2, page)]).verdicts
    assert r[1].status == "empty" and r[1].reason.startswith("redirect stub to " + URL), r[1].reason
    # never a baseline: the first real page is
    first = Engine(EngineConfig()).scan_history("h", [cap(0, wayback_notice(301, "https://www.riverside-rights.org/")),
                                                      cap(1, page), cap(2, page)]).verdicts
    assert [v.change for v in first] == ["empty", "baseline", "unchanged"], [v.reason for v in first]
    # an article about the Wayback Machine that quotes the notice's line is a page
    quoted = textgen.html([*BASE[:3], "Replays say: Got an HTTP 302 response at crawl time. Redirecting to..."])
    fp = Engine(EngineConfig()).fingerprint(cap(1, quoted))
    assert fp.kind == "html" and fp.redirect is None and fp.http_status == 200


def test_a_replay_that_has_no_capture_is_no_content_not_a_page(tmp_path: Path) -> None:
    """A replay's own page where it has nothing to show (a memento excluded since, a failed
    download: "Hrm. The Wayback Machine has not archived that URL.") holds the archive's words:
    judged as a page it read off topic, and as the first capture it became the baseline.  It is no
    content, as an empty download is; an article that quotes the line is still a page."""
    page = textgen.html(BASE, "Riverside Rights Project")
    for i, line in enumerate(("The Wayback Machine has not archived that URL.",
                              "Wayback Machine doesn't have that page archived.",
                              "Sorry. This URL has been excluded from the Wayback Machine.",
                              "Resource Not In Archive. The Resource you requested is not in this archive.",
                              "URL Not Found. The url http://example.org/ could not be found in this collection.")):
        notice = textgen.html(["Hrm.", line, "Click here to search for all archived pages under example.org/."],
                              "Wayback Machine")
        caps = [cap(0, notice), cap(1, page), cap(2, notice), cap(3, page)]
        r = Engine(EngineConfig()).scan_history("h", caps)
        with SQLiteStore(tmp_path / f"s{i}.db") as store:  # the stream over the real store says the same
            stream = [Watcher(Engine(EngineConfig()), store).score(c).verdict for c in caps]
        assert [(v.status, v.reason) for v in stream] == [(v.status, v.reason) for v in r.verdicts]
        statuses = [v.status for v in r.verdicts]
        assert statuses == ["empty", "on-topic", "empty", "on-topic"], [v.reason for v in r.verdicts]
        assert r.verdicts[1].change == "baseline" and "the replay has no capture" in r.verdicts[2].reason
    quoted = textgen.html([*BASE, "The Wayback Machine has not archived that URL, the editor wrote."])
    assert Engine(EngineConfig()).fingerprint(cap(1, quoted)).kind == "html"


@pytest.mark.parametrize("status", [301, 404, 503])
def test_redirects_and_errors_are_never_baselines(status: int) -> None:
    moved = b"<html><head><title>301 Moved Permanently</title></head><body><h1>Moved Permanently</h1>" \
            b"<p>The document has moved <a href='https://example.org/donate/'>here</a>.</p></body></html>"
    page = textgen.html(BASE)
    for policy in ("first", "first-valid", "rolling", "pinned"):
        r = Engine(EngineConfig(baseline=BaselineConfig(policy=policy))).scan_history(
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
            out = w.score(dataclasses.replace(c, history="k"))
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
        later = w.score(cap(5, other))
        assert later.verdict.change == "baseline"
        early = w.score(cap(1, page))  # captured before the baseline, arrives after it
        assert early.verdict.change == "baseline" and early.verdict.baseline_time == T0 + timedelta(days=30)
        assert [(v.verdict_id, v.status, v.version) for v in early.corrections] == \
               [(later.verdict.verdict_id, "off-topic", 2)]
        stored = store.get_verdict(later.verdict.verdict_id)
        assert stored is not None and stored.version == 2


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
            out = w.score(dataclasses.replace(c_, history="k"))
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
        stream = [w.score(dataclasses.replace(c, history="k")).verdict for c in caps]
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
            out = w.score(dataclasses.replace(c, history="k"))
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
        first = w.score(dataclasses.replace(caps[1], history="k"))
        assert first.verdict.change == "empty"
        late = w.score(dataclasses.replace(caps[0], history="k"))
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
    from tests.fixtures import doi_pages as dp

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


