"""Per-seed crawl guidance: Badness, the boilerplate share, the report from verdicts, and
`driftline seeds` over a scan result and over every store backend."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jsonschema
import pytest

from watcher.cli import main
from watcher.config import Config, StoreConfig, load_config
from watcher.extract.html import read_html
from watcher.model import ChangeClass, TopicStatus, Verdict
from watcher.quality import badness, new_text_bytes
from watcher.seeds.report import report, reports, text_changed
from watcher.seeds.settings import SeedsConfig
from watcher.store import open_store
from watcher.text import tokens

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "watcher/schemas/seed-report.schema.json")
                    .read_text(encoding="utf-8"))
PROSE = ("It was a long winter for the families of the prisoners. Most of them had not heard from their sons "
         "and daughters for months, and a few had been told nothing at all. When the letter came in March, it said "
         "that the court would hear the case in June, and that the lawyers could visit the prison once a week. "
         "I remember that my mother read it twice before she put it down on the table and went out to tell the "
         "neighbours. We knew that it was only a first step, but for a moment it felt as if something had changed. ")
LINKS = ("Home About Contact Login Register Search Archive Newsletter Subscribe Privacy Terms Cookies Sitemap "
         "Careers Press Advertise Shop Events Podcasts Video Photos Weather Sports Business Markets Tech Science ")
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def test_badness_is_low_for_prose_and_high_for_link_lists() -> None:
    prose = badness(tokens(PROSE * 3), "en")
    links = badness(tokens(LINKS * 10), "en")
    assert prose is not None and links is not None
    assert prose + 0.3 < links
    assert badness(tokens(PROSE), None) is None  # no language, no profile
    assert badness(tokens("这是一个中文句子"), "zh") is None  # written without spaces: no word profile
    assert badness([], "en") is None


def test_badness_on_real_article_bodies_and_their_links(shared_data: Path, tmp_path: Path) -> None:
    """Article bodies (the articles-181 ground truth) read as prose, the same pages' link texts do not."""
    import gzip
    import statistics
    import tarfile

    import lxml.html

    from watcher import lang

    with tarfile.open(shared_data / "pages" / "articles-181.tar") as tar:
        tar.extractall(tmp_path, filter="data")
    root = next(tmp_path.rglob("ground-truth.json")).parent
    truth = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
    bodies, links = [], []
    for key, item in truth.items():
        body, page = item.get("articleBody") or "", root / "html" / f"{key}.html.gz"
        if not body or not page.exists():
            continue
        language = lang.detect(body)
        tree = lxml.html.fromstring(gzip.decompress(page.read_bytes()))
        b = badness(tokens(body), language)
        ln = badness(tokens(" ".join(a.text_content() for a in tree.iter("a"))), language)
        if b is not None and ln is not None:
            bodies.append(b)
            links.append(ln)
    assert len(bodies) > 150
    assert statistics.median(bodies) < 0.8 < statistics.median(links)
    assert sum(b < ln for b, ln in zip(bodies, links, strict=True)) / len(bodies) > 0.8


def test_badness_profiles_are_wordfreqs() -> None:
    wordfreq = pytest.importorskip("wordfreq")
    from watcher.seeds.wordlists import DATA, build

    shipped = json.loads(DATA.read_text(encoding="utf-8"))
    assert shipped == json.loads(json.dumps(build())), "regenerate with python -m watcher.seeds.wordlists"
    assert shipped["languages"]["en"]["the"] == pytest.approx(wordfreq.word_frequency("the", "en"), rel=1e-3)


def test_boilerplate_share_reads_links_and_page_furniture() -> None:
    nav = "".join(f'<li><a href="/{i}">{w}</a></li>' for i, w in enumerate(LINKS.split()))
    menu_page = f"<html><body><nav><ul>{nav}</ul></nav><p>Short note.</p><footer>© 2024 Site</footer></body></html>"
    article = f"<html><body><header><a href='/'>Site</a></header><article><p>{PROSE}</p></article></body></html>"
    share_menu = read_html(menu_page).boilerplate_share
    share_article = read_html(article).boilerplate_share
    assert share_menu is not None and share_article is not None
    assert share_menu > 0.8 and share_article < 0.1
    assert read_html("<html><body></body></html>").boilerplate_share is None


def test_new_text_bytes_counts_what_the_reference_lacked() -> None:
    assert new_text_bytes(1000, 200, None, None) == 1000  # first capture: all of it
    assert new_text_bytes(1000, 200, 200, 1.0) == 0  # the same shingles
    assert new_text_bytes(1000, 200, 100, 1.0) == 500  # doubled: half is new
    assert new_text_bytes(0, 0, 100, 0.0) == 0


def _v(i: int, *, day: float, change: ChangeClass = "unchanged", status: TopicStatus = "on-topic",
       simhash: str = "0" * 16, digest: str | None = None, seed: str = "http://example.org/", words: int = 300,
       page_kind: str | None = None, text_bytes: int = 2000, new_text: int = 0, bad: float | None = 0.7) -> Verdict:
    return Verdict(
        verdict_id=f"v{seed}{i}", history=seed.split("//")[1].rstrip("/"), url=seed,
        capture_time=T0 + timedelta(days=day), uri_m=None, digest=digest or f"d{i}", baseline_time=None,
        baseline_uri_m=None, measures={}, status=status, change=change, reason="", page_kind=page_kind,
        language="en", byte_count=10_000, word_count=words, seed=seed, text_bytes=text_bytes,
        new_text_bytes=new_text, badness=bad, boilerplate_share=0.3, text_simhash=simhash,
    )


def test_text_change_is_the_simhash_moving_more_than_three_bits() -> None:
    a = _v(0, day=0, simhash="00000000000000ff")
    assert not text_changed(a, _v(1, day=1, simhash="00000000000000f8"), 3)  # 3 bits: chrome, a minor edit
    assert text_changed(a, _v(1, day=1, simhash="00000000000000f0"), 3)
    assert not text_changed(a, _v(1, day=1, simhash="0000000000000000", digest="d0"), 3)  # same payload
    # without SimHashes the change class says it
    assert text_changed(_v(0, day=0, simhash=""), _v(1, day=1, simhash="", change="drifted"), 3)
    assert not text_changed(_v(0, day=0, simhash=""), _v(1, day=1, simhash="", change="minor"), 3)


def test_report_of_one_seed() -> None:
    cfg = SeedsConfig()
    vs = [
        _v(0, day=0, change="baseline", status="baseline", simhash="0000000000000000"),
        _v(1, day=7, simhash="000000000000ffff", change="drifted", new_text=800),
        _v(2, day=14, simhash="000000000000ffff", digest="d1"),  # the same payload as capture 1
        _v(3, day=21, change="error", status="error", words=0, bad=None),
        _v(4, day=28, change="blocked", status="off-topic", page_kind="bot-challenge"),
        _v(5, day=35, simhash="00000000ffff0000", change="off-topic", status="off-topic", new_text=1500),
    ]
    r = report("http://example.org/", vs, cfg)
    d = r.to_dict()
    jsonschema.validate(d, SCHEMA)
    assert d["captures"] == 6
    # the baseline, the drifted and the unchanged capture are on topic with content
    assert d["yield"] == pytest.approx(3 / 6, abs=1e-4)
    assert d["blocked_share"] == pytest.approx(1 / 6, abs=1e-4) and d["error_share"] == pytest.approx(1 / 6, abs=1e-4)
    # first capture's text, then the two captures whose text changed since the previous valid one
    assert d["new_text_per_byte"] == pytest.approx((2000 + 800 + 1500) / 60_000, rel=1e-4)
    # valid observations at days 0, 7, 14, 35: changes in two of three intervals
    assert d["change_rate_per_day"] is not None and d["change_rate_low"] <= d["change_rate_per_day"]
    assert d["change_rate_per_day"] <= d["change_rate_high"]
    assert cfg.recrawl_min_days <= d["recrawl_interval_days"] <= cfg.recrawl_max_days
    assert d["badness"] == pytest.approx(0.7)


def test_one_capture_has_no_change_rate() -> None:
    d = report("http://example.org/", [_v(0, day=0)], SeedsConfig()).to_dict()
    jsonschema.validate(d, SCHEMA)
    assert d["change_rate_per_day"] is None and d["recrawl_interval_days"] is None and d["captures"] == 1


def test_reports_per_seed_and_per_host() -> None:
    vs = [_v(i, day=i, seed="http://a.example.org/") for i in range(3)]
    vs += [_v(i, day=i, seed="http://a.example.org/news/") for i in range(2)]
    vs += [_v(i, day=i, seed="http://b.example.net/") for i in range(2)]
    per_seed = reports(vs, SeedsConfig())
    assert sorted(r.seed for r in per_seed) == ["http://a.example.org/", "http://a.example.org/news/",
                                                "http://b.example.net/"]
    per_host = reports(vs, SeedsConfig(), by="surt")
    assert sorted((r.surt, r.captures) for r in per_host) == [("http://(net,example,b,", 2),
                                                             ("http://(org,example,a,", 5)]


def _history(store_cfg: StoreConfig) -> list[Verdict]:
    store = open_store(store_cfg)
    vs = [_v(i, day=i * 3, simhash=f"{(1 << (8 * (i % 3))) - 1:016x}") for i in range(5)]
    try:
        for v in vs:
            store.put_verdict(v)
        listed = list(store.all_verdicts())
    finally:
        store.close()
    return listed


def test_every_store_lists_its_verdicts_in_order(tmp_path: Path) -> None:
    for backend in ("sqlite", "memory"):
        listed = _history(StoreConfig(backend=backend, path=str(tmp_path / "s.db")))
        assert [v.verdict_id for v in listed] == [f"vhttp://example.org/{i}" for i in range(5)], backend
        assert listed[2].text_simhash == "000000000000ffff"


@pytest.mark.postgres
def test_postgres_store_lists_its_verdicts(postgres_dsn: str) -> None:
    cfg = StoreConfig.model_validate({"backend": "postgres", "dsn": postgres_dsn})
    listed = _history(cfg)
    assert [v.verdict_id for v in listed] == [f"vhttp://example.org/{i}" for i in range(5)]


def test_cli_reads_a_store_and_a_scan_result_alike(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "d.db"
    _history(StoreConfig(backend="sqlite", path=str(db)))
    assert main(["seeds", str(db), "-f", "json"]) == 0
    from_store = json.loads(capsys.readouterr().out)
    assert len(from_store) == 1 and from_store[0]["captures"] == 5
    for row in from_store:
        jsonschema.validate(row, SCHEMA)
    assert main(["seeds", str(db), "-f", "csv", "--sort", "change-rate"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("seed,surt,captures,yield") and len(lines) == 2
    assert main(["seeds", str(tmp_path / "missing.db")]) == 2
    assert "no such store or scan result" in capsys.readouterr().err


def test_cli_on_a_scan_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A batch scan of a WARC the test writes, read back as json and as jsonl: the same report."""
    from tests.fixtures.kafka import page_html, write_warc

    warc = tmp_path / "crawl.warc.gz"
    url = "http://www.rights.example.org/"
    write_warc(warc, [(url, f"2024{m:02d}01000000", page_html(1, words=200 + 10 * m)) for m in range(1, 6)])
    outs = {}
    for fmt in ("json", "jsonl"):
        result = tmp_path / f"r.{fmt}"
        assert main(["--log-level", "WARNING", "scan", str(warc), "-o", str(result), "-f", fmt, "--no-progress",
                     "-j", "1"]) == 0
        assert main(["seeds", str(result), "-f", "json"]) == 0
        outs[fmt] = json.loads(capsys.readouterr().out)
    assert outs["json"] == outs["jsonl"]
    (row,) = outs["json"]
    jsonschema.validate(row, SCHEMA)
    assert row["captures"] == 5 and row["yield"] == 1.0 and row["badness"] is not None
    assert row["change_rate_per_day"] is not None


def test_config_refuses_bad_bounds() -> None:
    from watcher.errors import ConfigError

    with pytest.raises(ConfigError, match="seeds"):
        load_config(overrides={"seeds": {"recrawl_min_days": 100, "recrawl_max_days": 10}})
    assert isinstance(load_config(), Config)


class _Verdicts:
    """The reporter's read of a history's stored verdicts (``recent_verdicts``), over a list the test grows."""

    def __init__(self) -> None:
        self.rows: list[Verdict] = []
        self.on_read: list[Callable[[], None]] = []

    def recent_verdicts(self, history: str, limit: int) -> list[Verdict]:
        rows = [v for v in self.rows if v.history == history][-limit:]
        while self.on_read:
            self.on_read.pop()()
        return rows


def test_seed_metrics_follow_verdicts_whose_report_was_not_due() -> None:
    """A history's captures arriving within seeds.publish_interval_s (a backfill, the demo) made one
    report, at the first capture, which has no change rate: refresh() remakes it for the metrics from
    every stored verdict, and never replaces a report made meanwhile for a newer verdict."""
    from watcher.seeds.stream import SeedReporter

    now = [0.0]
    rep = SeedReporter(SeedsConfig(publish_interval_s=60.0), clock=lambda: now[0])
    store = _Verdicts()
    hashes = ["0" * 16, "f" * 16, "0" * 16, "f" * 16, "0" * 16, "f" * 16]
    for i in range(5):  # five captures a fortnight apart, the text changing each time, scored within seconds
        store.rows.append(_v(i, day=14 * i, simhash=hashes[i]))
        made = rep.observe(store.rows[-1], store)
        assert (made is not None) == (i == 0)
    [only] = rep.snapshot()
    assert only.captures == 1 and only.change_rate_per_day is None  # what the metrics showed: no rate
    assert rep.refresh() == 1 and rep.refresh() == 0
    [only] = rep.snapshot()
    assert only.captures == 5 and only.change_rate_per_day is not None and only.change_rate_per_day > 0
    # A sixth capture, not due; while its refresh reads the store, a seventh is due and published:
    store.rows.append(_v(5, day=70, simhash=hashes[5]))
    assert rep.observe(store.rows[-1], store) is None

    def published_meanwhile() -> None:
        now[0] += 61.0
        store.rows.append(_v(6, day=84, simhash=hashes[0]))
        assert rep.observe(store.rows[-1], store) is not None

    store.on_read.append(published_meanwhile)
    assert rep.refresh() == 1
    [only] = rep.snapshot()
    assert only.captures == 7  # the published report of the seventh stays the latest, not the refresh's
