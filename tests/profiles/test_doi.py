"""The scholarly record and the doi profile, on generated landing pages of
several publisher layouts (tests/fixtures/doi_pages.py), compared as fresh captures and
against baselines that went through the store's codec."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from tests.fixtures import doi_pages as dp
from watcher.config import DoiThresholds, EngineConfig
from watcher.doi.profile import decide_doi, title_similarity
from watcher.extract.record import extract_record
from watcher.fingerprint import fingerprint
from watcher.model import Capture, Fingerprint
from watcher.store.codec import decode_fingerprint, encode_fingerprint

CFG = EngineConfig()
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def fp(page: str | bytes, url: str = "https://pub.example/doi/10.5000/x", status: int | None = 200,
       ct: str = "text/html") -> Fingerprint:
    data = page.encode() if isinstance(page, str) else page
    return fingerprint(Capture(url=url, timestamp=T0, content=data, content_type=ct, status=status), CFG)


def stored(f: Fingerprint) -> Fingerprint:
    """The baseline as the store hands it back (sketch form: no text, no shingle sets)."""
    return decode_fingerprint(encode_fingerprint(f, keep_text=False, keep_shingles=False))


@pytest.mark.parametrize("layout", sorted(dp.LAYOUTS))
def test_record_of_each_layout(layout: str) -> None:
    a = dp.article(3, full_text=dp.FULL_TEXT[layout])
    rec = extract_record(dp.LAYOUTS[layout](a, 0))
    assert rec is not None and rec.has_metadata
    assert rec.title == a.title
    assert rec.doi == a.doi
    assert {x.split()[-1] for x in rec.authors} == {x.split()[-1] for x in a.authors}
    assert a.abstract[:200] in rec.abstract or rec.abstract[:200] in a.abstract
    assert rec.date is not None and rec.date.replace("/", "-").startswith(a.date)
    if a.body:
        assert len(rec.paragraphs) >= len(a.body)
    assert not any("views" in s for s in rec.sources)


@pytest.mark.parametrize("layout", sorted(name for name in dp.LAYOUTS if dp.FULL_TEXT[name]))
def test_record_of_a_page_wrapped_in_one_form(layout: str) -> None:
    """ASP.NET serves every page inside one ``<form>``: the record's paragraphs are the same as
    the unwrapped page's (boilerplate removal dropped the whole page with the form before)."""
    a = dp.article(3, full_text=True)
    page = dp.LAYOUTS[layout](a, 0)
    head, sep, rest = page.partition("<body")
    open_end = rest.index(">") + 1
    wrapped = (head + sep + rest[:open_end] + '<form method="post" action="./Article.aspx" id="aspnetForm">'
               + rest[open_end:].replace("</body>", "</form></body>"))
    plain, rec = extract_record(page), extract_record(wrapped)
    assert plain is not None and rec is not None and len(plain.paragraphs) >= len(a.body)
    assert rec.paragraphs == plain.paragraphs


def test_record_vocabularies() -> None:
    a = dp.article(4)
    dc_only = dp.page(dp.dc_meta(a, upper=False), f"<main><h1>{dp.e(a.title)}</h1><p>{dp.e(a.abstract)}</p></main>",
                      a.title)
    rec = extract_record(dc_only)
    assert rec is not None and rec.sources == ("dc",) and rec.doi == a.doi and rec.title == a.title
    ld_only = dp.page([dp.jsonld(a, "Dataset")], "<div><p>Files</p></div>", "x")
    rec = extract_record(ld_only)
    assert rec is not None and rec.sources == ("schema.org",) and rec.schema_types == ("Dataset",)
    assert rec.authors == a.authors and rec.abstract == a.abstract
    # og: alone never makes a page scholarly, and a plain page gets no record in its fingerprint.
    og_only = dp.page(dp.og_meta(a), "<p>Hello</p>", "x")
    rec = extract_record(og_only)
    assert rec is not None and not rec.has_metadata
    plain = fp("<html><head><title>Shop</title></head><body><p>Buy shoes today</p></body></html>")
    assert plain.record is None


def test_record_survives_the_codec_compactly() -> None:
    a = dp.article(5)
    f = fp(dp.highwire(a, 0))
    assert f.record is not None and f.record.main_shingles
    blob = encode_fingerprint(f, keep_text=False, keep_shingles=False)
    back = decode_fingerprint(blob)
    assert back.record is not None
    assert back.record.main_shingles is None  # the full set stays with fresh captures
    assert back.record.paragraphs == f.record.paragraphs and back.record.main_sample == f.record.main_sample
    assert (back.record.title, back.record.authors, back.record.doi) == (a.title, a.authors, a.doi)
    assert len(blob) < 30_000


def _redesign_pairs(seeds: range) -> list[tuple[str, str, str, dp.Article]]:
    out = []
    for seed in seeds:
        for name, layout in dp.LAYOUTS.items():
            a = dp.article(seed, full_text=dp.FULL_TEXT[name])
            base = layout(a, 0)
            out += [(f"{name} v{v}", base, layout(a, v), a) for v in (1, 2, 3)]
            out += [(f"{name}->{other}", base, dp.LAYOUTS[other](a, 1), a) for other in dp.LAYOUTS if other != name]
    return out


def test_redesigns_that_keep_the_record_are_unchanged_or_layout() -> None:
    pairs = _redesign_pairs(range(3))
    got: Counter[str] = Counter()
    wrong = []
    for what, base, cur, a in pairs:
        b, c = fp(base), fp(cur)
        for baseline in (b, stored(b)):
            d = decide_doi(baseline, c, CFG, a.title)
            got[d.change] += 1
            if d.change not in ("unchanged", "layout"):
                wrong.append((what, d.reason))
    share = (got["unchanged"] + got["layout"]) / sum(got.values())
    assert share >= 0.95, (share, wrong[:5])
    assert got["unchanged"] > 0 and got["layout"] > 0


def test_challenge_and_cookie_walls_are_always_blocked() -> None:
    for seed in range(3):
        for name, layout in dp.LAYOUTS.items():
            a = dp.article(seed, full_text=dp.FULL_TEXT[name])
            base = fp(layout(a, 0))
            for v in range(3):
                d = decide_doi(base, fp(dp.challenge(v), status=403 if v == 1 else 503 if v == 0 else 200), CFG,
                               a.title)
                assert d.change == "blocked", (name, v, d)
                assert "bot challenge" in d.reason
            d = decide_doi(stored(base), fp(dp.consent_wall(seed)), CFG, a.title)
            assert d.change == "blocked" and "cookie wall" in d.reason


def test_a_different_article_is_always_replaced() -> None:
    for seed in range(4):
        for name, layout in dp.LAYOUTS.items():
            a = dp.article(seed, full_text=dp.FULL_TEXT[name])
            other = dp.article(seed + 700, full_text=dp.FULL_TEXT[name], journal=seed)
            base = fp(layout(a, 0))
            for cur in (layout(other, 0), layout(other, 2), dp.homepage(seed)):
                d = decide_doi(stored(base), fp(cur), CFG, a.title)
                assert d.change == "replaced", (name, d)
                assert d.status == "off-topic"


def test_growing_comments_stay_unchanged() -> None:
    for name, layout in dp.LAYOUTS.items():
        a = dp.article(8, full_text=dp.FULL_TEXT[name])
        base = fp(layout(dp.with_comments(a, 1), 0))
        d = decide_doi(stored(base), fp(layout(dp.with_comments(a, 12), 0)), CFG, a.title)
        assert d.change == "unchanged", (name, d)


def test_a_changed_paragraph_or_abstract_is_drifted() -> None:
    for name, layout in dp.LAYOUTS.items():
        a = dp.article(9, full_text=dp.FULL_TEXT[name])
        base = stored(fp(layout(a, 0)))
        if a.body:
            d = decide_doi(base, fp(layout(dp.replace_paragraph(a, 3), 0)), CFG, a.title)
            assert d.change == "drifted" and "1 of" in d.reason and "paragraph" in d.reason, (name, d)
            # ...also when the page was redesigned at the same time
            d = decide_doi(base, fp(layout(dp.replace_paragraph(a, 3), 2)), CFG, a.title)
            assert d.change == "drifted", (name, d)
        d = decide_doi(base, fp(layout(dp.edit_abstract(a), 0)), CFG, a.title)
        assert d.change == "drifted" and "abstract edited" in d.reason, (name, d)


def test_dropped_authors_and_lost_doi_are_drifted() -> None:
    from dataclasses import replace

    a = dp.article(10)
    base = stored(fp(dp.highwire(a, 0)))
    fewer = replace(a, authors=a.authors[:1])
    d = decide_doi(base, fp(dp.highwire(fewer, 0)), CFG, a.title)
    assert d.change == "drifted" and "authors dropped" in d.reason
    d = decide_doi(base, fp(dp.highwire(replace(a, doi="10.9999/other"), 1)), CFG, a.title, doi=a.doi)
    assert d.change == "drifted" and f"{a.doi} no longer on the page" in d.reason
    # A DOI the baseline never showed cannot have gone from the page: evidence, not drift.
    d = decide_doi(base, fp(dp.highwire(a, 1)), CFG, a.title, doi="10.9999/other")
    assert d.change in ("unchanged", "layout"), d
    assert "does not show its DOI 10.9999/other, nor did the baseline" in d.reason


def test_gone_moved_and_server_errors() -> None:
    a = dp.article(11)
    base = stored(fp(dp.atypon(a, 0)))
    assert decide_doi(base, fp(dp.not_found(0), status=404), CFG, a.title).change == "gone"
    assert decide_doi(base, fp(dp.not_found(1), status=200), CFG, a.title).change == "gone"  # soft 404
    d = decide_doi(base, fp(dp.parked(0), url="http://pub-example.com/"), CFG, a.title)
    assert d.change == "gone" and "parked" in d.reason
    assert decide_doi(base, fp(b"", status=410), CFG, a.title).change == "gone"
    d = decide_doi(base, fp("<html><title>502 Bad Gateway</title><body>bad gateway</body></html>", status=502), CFG)
    assert d.change == "error"
    d = decide_doi(base, fp(dp.atypon(a, 3), url="https://platform.example.net/doi/x"), CFG, a.title)
    assert d.change == "moved" and "pub.example -> platform.example.net" in d.reason


def test_pdf_landing_pages() -> None:
    a = dp.article(12)
    base = fp(dp.article_pdf(a), ct="application/pdf")
    assert base.kind == "pdf"
    assert decide_doi(base, fp(dp.article_pdf(a), ct="application/pdf"), CFG).change == "unchanged"
    d = decide_doi(base, fp(dp.article_pdf(a, revision=1), ct="application/pdf"), CFG)
    assert d.change == "layout" and "checksum changed" in d.reason
    d = decide_doi(base, fp(dp.article_pdf(dp.replace_paragraph(a, 1)), ct="application/pdf"), CFG)
    assert d.change == "drifted", d
    d = decide_doi(base, fp(dp.article_pdf(dp.article(99)), ct="application/pdf"), CFG)
    assert d.change == "replaced", d


def test_title_similarity_and_expected_title() -> None:
    assert title_similarity("The Effect of X on Y", "the effect of x on y.") == 1.0
    assert title_similarity("The Effect of X on Y", "Unrelated words entirely here") < 0.5
    a = dp.article(13)
    base = fp(dp.ojs(a, 0))
    # The registered title wins over the baseline's: a baseline captured after a swap is still caught.
    d = decide_doi(base, fp(dp.ojs(a, 1)), CFG, expected_title="A completely different registered title",
                   params=DoiThresholds(), doi="10.1/none")
    assert d.change == "replaced"
