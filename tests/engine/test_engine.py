"""The engine over whole histories: baselines, change classes, reasons."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Unpack

from tests.fixtures import textgen
from tests.fixtures.captures import CaptureExtras
from watcher.config import BaselineConfig, EngineConfig, PolicyConfig
from watcher.engine import Engine
from watcher.model import Capture, HistoryResult, payload_digest

T0 = datetime(2021, 1, 1, tzinfo=UTC)
BASE = textgen.document(["river", "law", "music", "garden"])
PARKED = (b"<html><head><title>riverside-rights.org - this domain is for sale</title></head><body>"
          b"<h1>This domain may be for sale</h1><p>Buy this domain. Related searches: loans, insurance.</p>"
          b"</body></html>")


def cap(i: int, content: bytes | None, **kw: Unpack[CaptureExtras]) -> Capture:
    return Capture(url="http://www.riverside-rights.org/", timestamp=T0 + timedelta(days=30 * i), content=content,
                   uri_m=f"urn:test:{i}", **kw)


def scan(caps: list[Capture], cfg: EngineConfig | None = None) -> HistoryResult:
    return Engine(EngineConfig() if cfg is None else cfg).scan_history("org,riverside-rights)/", caps)


def test_history_change_classes_and_reasons() -> None:
    base = textgen.html(BASE)
    grown = textgen.html([*BASE, "Comments: great work, thanks for the update on the river project."])
    rewritten = textgen.html(textgen.document(["space", "cooking", "space", "cooking"], seed=9), "Rocket Kitchen")
    r = scan([cap(0, base), cap(1, base), cap(2, grown), cap(3, PARKED), cap(4, rewritten), cap(5, b"")])
    changes = [v.change for v in r.verdicts]
    statuses = [v.status for v in r.verdicts]
    assert changes == ["baseline", "unchanged", "minor", "off-topic", "off-topic", "empty"]
    # the empty capture says nothing about topic: it keeps its own status (and raises no alert)
    assert statuses == ["on-topic", "on-topic", "on-topic", "off-topic", "off-topic", "empty"]
    assert r.verdicts[5].reason.startswith("no content") and r.verdicts[5].checks == ()
    assert "page kind parked" in r.verdicts[3].reason
    assert r.verdicts[3].page_kind == "parked"
    assert "tfintersection 0" in r.verdicts[4].reason or "site identity lost" in r.verdicts[4].reason
    assert r.behaviour == "Step Function On"
    assert r.first_drift == T0 + timedelta(days=90)
    assert r.off_topic_share == 0.4  # 2 of the 5 judged (the empty one is not judged)
    # every verdict names its baseline and has a deterministic id
    assert all(v.baseline_time == T0 for v in r.verdicts)
    again = scan([cap(0, base), cap(1, base), cap(2, grown), cap(3, PARKED), cap(4, rewritten), cap(5, b"")])
    assert [v.verdict_id for v in again.verdicts] == [v.verdict_id for v in r.verdicts]


def test_one_paragraph_replaced_is_drifted_not_off_topic() -> None:
    base = textgen.html(BASE)
    edited = textgen.html([*BASE[:3], textgen.paragraph("space", 200, 99)])
    v = scan([cap(0, base), cap(1, edited)]).verdicts[1]
    assert (v.status, v.change) == ("on-topic", "drifted")
    assert "containment 0." in v.reason and "text changed" in v.reason


def test_revisit_without_payload_gets_the_verdict_of_the_payload_it_repeats() -> None:
    # A revisit repeats its payload's verdict: the state it is scored against (the baseline, what the
    # history remembers) is the same as the capture it repeats was scored against.
    base = textgen.html(BASE)
    other = textgen.html([*BASE[:3], textgen.paragraph("space", 200, 5)])
    revisit = cap(2, None, digest=payload_digest(other), is_revisit=True)
    r = scan([cap(0, base), cap(1, other), revisit])
    assert r.verdicts[2].change == r.verdicts[1].change == "drifted"
    assert r.verdicts[2].status == r.verdicts[1].status
    assert r.verdicts[2].reason == r.verdicts[1].reason
    assert r.verdicts[2].measures == r.verdicts[1].measures


def test_empty_first_capture_does_not_become_the_baseline() -> None:
    base = textgen.html(BASE)
    r = scan([cap(0, b""), cap(1, base), cap(2, PARKED)])
    assert [v.change for v in r.verdicts] == ["empty", "baseline", "off-topic"]


def test_first_valid_policy_skips_an_error_page_first_capture() -> None:
    base = textgen.html(BASE)
    caps = [cap(0, PARKED), cap(1, base), cap(2, base)]
    first = scan(caps)
    # Under every policy an off-topic page kind is never a baseline (a parked page as baseline
    # would make every real page after it "off topic").
    assert [v.change for v in first.verdicts] == ["off-topic", "baseline", "unchanged"]
    valid = scan(caps, EngineConfig(baseline=BaselineConfig(policy="first-valid")))
    assert [v.change for v in valid.verdicts] == ["off-topic", "baseline", "unchanged"]
    assert valid.behaviour == "Step Function Off"


def test_pinned_and_rolling_baselines() -> None:
    a = textgen.html(BASE)
    b = textgen.html([*BASE[:3], textgen.paragraph("space", 200, 1)])
    c = textgen.html([*BASE[:2], textgen.paragraph("space", 200, 1), textgen.paragraph("cooking", 200, 2)])
    pinned = scan([cap(0, a), cap(1, b), cap(2, c)], EngineConfig(
        baseline=BaselineConfig(policy="pinned", pinned={"org,riverside-rights)/": "20210131000000"})))
    assert pinned.verdicts[1].change == "baseline"
    rolling = scan([cap(0, a), cap(1, b), cap(2, c)], EngineConfig(baseline=BaselineConfig(policy="rolling")))
    assert rolling.verdicts[2].baseline_time == T0 + timedelta(days=30)


def test_site_moved_away_by_script_redirect_is_off_topic() -> None:
    base = textgen.html(BASE)
    moved = b"<html><body><script>window.location.href='http://other-organisation.example/'</script></body></html>"
    v = scan([cap(0, base), cap(1, moved)]).verdicts[1]
    assert v.status == "off-topic" and "another site" in v.reason
    refresh = b'<html><head><meta http-equiv="refresh" content="0; url=/home.html"></head></html>'
    v = scan([cap(0, base), cap(1, refresh)]).verdicts[1]
    assert v.status == "empty" and "redirect stub" in v.reason
    # a replay's rewritten refresh names the address it stands for, not the archive's host
    replayed = (b'<html><head><meta http-equiv="refresh" content="0; url=http://wayback.archive-it.org/1068/'
                b'20120302210503/http://www.riverside-rights.org/home.html"></head></html>')
    v = scan([cap(0, base), cap(1, replayed)]).verdicts[1]
    assert v.status == "empty" and v.reason.startswith("redirect stub to http://www.riverside-rights.org/home.html")


def test_language_of_the_page_is_reported() -> None:
    fr = ("<html><head><title>Droits humains</title></head><body><p>" +
          "La commission nationale des droits de l'homme publie son rapport annuel sur la détention. " * 5 +
          "</p></body></html>").encode()
    r = scan([cap(0, fr)])
    assert r.verdicts[0].language == "fr"


def test_policies_k_of_n_and_all() -> None:
    base = textgen.html(BASE)
    thin = textgen.html([BASE[0][:200]])  # most words gone, same topic words partly kept
    m = {"wordcount": -0.5, "cosine": 0.99, "jaccard": 0.999}  # two of three flag
    anyp = scan([cap(0, base), cap(1, thin)], EngineConfig(measures=m, site_identity=False)).verdicts[1]
    allp = scan([cap(0, base), cap(1, thin)], EngineConfig(measures=m, site_identity=False,
                                                           policy=PolicyConfig(kind="all"))).verdicts[1]
    k2 = scan([cap(0, base), cap(1, thin)], EngineConfig(measures=m, site_identity=False,
                                                         policy=PolicyConfig(kind="k-of-n", k=2))).verdicts[1]
    assert [n for n in m if anyp.measures[n].status == "off-topic"] == ["wordcount", "cosine"]
    assert (anyp.status, allp.status, k2.status) == ("off-topic", "on-topic", "off-topic")
    k3 = scan([cap(0, base), cap(1, thin)], EngineConfig(measures=m, site_identity=False,
                                                         policy=PolicyConfig(kind="k-of-n", k=3))).verdicts[1]
    weighted = scan([cap(0, base), cap(1, thin)], EngineConfig(
        measures=m, site_identity=False, policy=PolicyConfig(kind="weighted", weights={"jaccard": 10.0}))).verdicts[1]
    assert (k3.status, weighted.status) == ("on-topic", "on-topic")


def test_a_deep_page_redirected_to_the_home_page_is_gone() -> None:
    """An article that now sends its readers to the front page was removed; one that redirects to
    another article address has moved, and the content is not in this capture."""
    deep = "http://www.riverside-rights.org/news/2012/03/court-hearing-on-the-dam.html"

    def at(i: int, content: bytes, url: str) -> Capture:
        return dataclasses.replace(cap(i, content), url=url)

    base = textgen.html(BASE, "Court hearing on the dam | Riverside Rights")
    home = b'<html><head><meta http-equiv="refresh" content="0; url=/"></head></html>'
    moved = b'<html><head><meta http-equiv="refresh" content="0; url=/news/2012/03/dam-hearing.html"></head></html>'
    v = scan([at(0, base, deep), at(1, home, deep)]).verdicts[1]
    assert v.status == "off-topic" and "home page" in v.reason and "redirect" in v.checks
    v = scan([at(0, base, deep), at(1, moved, deep)]).verdicts[1]
    assert v.status == "empty" and "redirect stub" in v.reason
    # a home page seed redirected to its own root (/ -> /index.html) is not "gone"
    v = scan([cap(0, base), cap(1, b'<html><head><meta http-equiv="refresh" content="0; url=/index.html">'
                                  b'</head></html>')]).verdicts[1]
    assert v.status == "empty"


NOFRAMES = b"<noframes><body><p>This page uses frames, but your browser does not support them.</p></body></noframes>"


def frameset(sizes: bytes, *srcs: bytes, title: bytes = b"Riverside Rights") -> bytes:
    frames = b"".join(b'<frame name="f%d" src="%s">' % (i, s) for i, s in enumerate(srcs))
    return b"<html><head><title>%s</title></head><frameset %s>%s%s</frameset></html>" % (title, sizes, frames,
                                                                                          NOFRAMES)


def test_a_frameset_is_judged_by_its_main_frame_as_a_redirect_is() -> None:
    """A frameset's content is in its frames, captured under their own addresses: a replay shows
    them, so the frameset is a redirect stub to its main frame (shared gold: nmjd.org's framesets
    labelled on topic; codepu.cl framing a blog on another host labelled off topic)."""
    base = textgen.html(BASE)
    own = frameset(b'rows="120,*"', b"top.htm", b"main.htm")
    v = scan([cap(0, base), cap(1, own)]).verdicts[1]
    assert v.status == "empty" and v.reason.endswith("redirect stub to http://www.riverside-rights.org/main.htm "
                                                     "(same site): its content is not in this capture")
    # masked forwarding: the whole window is another site's page
    masked = frameset(b'rows="100%,*"', b"http://casino-offers.example/landing")
    v = scan([cap(0, base), cap(1, masked)]).verdicts[1]
    assert v.status == "off-topic" and "another site: http://casino-offers.example/landing" in v.reason
    # a narrow frame from another host beside the site's own main frame is not the page
    side = frameset(b'cols="150,*"', b"http://counter.example/widget", b"main.htm")
    assert scan([cap(0, base), cap(1, side)]).verdicts[1].status == "empty"
    # an archive's rewritten frame address is read as the address it stands for
    rewritten = frameset(b'rows="100%"', b"/1068/20120302210503/http://casino-offers.example/")
    v = scan([cap(0, base), cap(1, rewritten)]).verdicts[1]
    assert v.status == "off-topic" and "another site: http://casino-offers.example/" in v.reason
    # never a baseline: the first real page is
    r = scan([cap(0, own), cap(1, base), cap(2, base)])
    assert [v.change for v in r.verdicts] == ["empty", "baseline", "unchanged"]
    # a frameset whose <noframes> holds the page is judged on those words
    full = (b"<html><head><title>Riverside Rights</title></head><frameset rows='*'><frame src='main.htm'>"
            b"<noframes><body>" + textgen.html(BASE).split(b"<body>", 1)[1] + b"</noframes></frameset></html>")
    assert scan([cap(0, base), cap(1, full)]).verdicts[1].status == "on-topic"


def test_the_main_frame_is_the_one_that_takes_the_window() -> None:
    from watcher.extract.html import frames_of, parse_tree

    nested = (b'<html><frameset rows="142,*" cols="*"><frame src="top.htm"><frameset cols="128,*" rows="*">'
              b'<frame src="left.htm"><frameset cols="*,150"><frame src="main.htm"><frame src="right.htm">'
              b'</frameset></frameset></frameset></html>').decode()
    root = parse_tree(nested)
    assert root is not None and frames_of(root)[0] == "main.htm"
    blank = parse_tree('<html><frameset rows="*,20%"><frame src="about:blank"><frame src="menu.htm"></frameset></html>')
    assert blank is not None and frames_of(blank) == ["menu.htm"]
    page = parse_tree('<html><body><p>Text</p><iframe src="http://video.example/embed"></iframe></body></html>')
    assert page is not None and frames_of(page) == []
