"""What a new user stumbled on running the README's commands and quick starts (issue 35), each
through the real command: one clear line and a non-zero exit where a command cannot do what it
was asked, the key to set named where a setting is missing, and nothing that reads as trouble
when all is well."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import logging
import os
import re
import socket
import sys
from pathlib import Path

import pytest

from tests.fixtures.kafka import write_warc
from watcher.broker import BrokerError, EmbeddedBroker
from watcher.cli import main


def _err_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith("DRIFTLINE__")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("DRIFTLINE__STORE__PATH", str(tmp_path / "driftline.db"))
    return tmp_path


# -- the DOI monitor ------------------------------------------------------------------------------


def test_a_local_resolver_is_refused_at_start_naming_both_keys(in_tmp: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doi", "add", "10.5555/abc"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("DRIFTLINE__DOI__RESOLVER_URL", "http://127.0.0.1:18999/")
    monkeypatch.setenv("DRIFTLINE__KAFKA__EMBEDDED_PORT", "1")  # never reached: refused before any broker
    assert main(["doi", "run", "--once"]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1, lines
    assert "doi.resolver_url" in lines[0] and "acquire.allow_addresses" in lines[0]
    assert "DRIFTLINE__ACQUIRE__ALLOW_ADDRESSES" in lines[0]


def test_a_refused_address_names_the_key_that_admits_it() -> None:
    from watcher.errors import BlockedAddressError
    from watcher.net.netguard import AddressPolicy

    with pytest.raises(BlockedAddressError, match=r"acquire\.allow_addresses.*127\.0\.0\.1/32"):
        AddressPolicy().check_url("http://127.0.0.1:8000/10.5555/x")
    with pytest.raises(BlockedAddressError) as metadata:
        AddressPolicy().check_url("http://169.254.169.254/")
    assert "allow_addresses" not in str(metadata.value)  # never suggested for a cloud metadata address
    AddressPolicy(["127.0.0.1/32"]).check_url("http://127.0.0.1:8000/")  # and the hint works


def test_doi_add_of_a_missing_or_binary_file_is_one_line(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doi", "add", "/nonexistent.csv"]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1 and "/nonexistent.csv: no such file" in lines[0], lines
    binary = in_tmp / "dois.bin"
    binary.write_bytes(bytes(range(256)) * 40)
    assert main(["doi", "add", str(binary)]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1 and "binary content" in lines[0], lines
    assert main(["doi", "add", str(in_tmp)]) == 2
    assert "is a directory" in _err_lines(capsys)[0]
    text = in_tmp / "dois.txt"
    text.write_text("10.5555/one\n10.5555/two\n")
    assert main(["doi", "add", str(text)]) == 0  # a real list still reads


def test_doi_status_keeps_the_whole_reason(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from watcher.doi.cli import _table

    reason = "connect: cannot connect to http://localhost:18999/10.5555/abc: Cannot connect to host localhost:18999 " \
             "[Connect call failed ('127.0.0.1', 18999)]"
    url = "https://example.org/" + "a" * 100
    table = _table([{"doi": "10.5555/abc", "reason": reason, "final_url": url, "failures": 3}],
                   ("doi", "final_url", "reason", "failures"))
    header, row = table.splitlines()
    assert row.endswith(reason)  # whole, and last
    assert header.split() == ["doi", "final_url", "failures", "reason"]
    assert url[:59] + "…" in row and url not in row  # a long URL is cut, and says so


async def test_doi_run_beside_a_broker_on_its_port_uses_it_and_says_so(
        in_tmp: Path, kafka_broker: EmbeddedBroker, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DRIFTLINE__KAFKA__EMBEDDED_PORT", str(kafka_broker.port))
    assert main(["doi", "add", "10.5555/abc"]) == 0
    monkeypatch.setenv("DRIFTLINE__DOI__RESOLVER_URL", "http://192.0.2.1:9/")  # never asked: no DOI is due
    monkeypatch.setenv("DRIFTLINE__ACQUIRE__ALLOW_ADDRESSES", '["192.0.2.0/24"]')
    assert main(["doi", "remove", "10.5555/abc"]) == 0
    capsys.readouterr()
    code = await asyncio.to_thread(main, ["doi", "run", "--once"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"127.0.0.1:{kafka_broker.port} already serves a Kafka broker" in err
    assert "started embedded Tansu broker" not in err
    assert kafka_broker.running  # not stopped by the command that used it


def test_doi_run_on_a_port_held_by_something_else_is_one_line(in_tmp: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setenv("DRIFTLINE__KAFKA__EMBEDDED_PORT", str(taken.getsockname()[1]))
        assert main(["doi", "add", "10.5555/abc"]) == 0
        capsys.readouterr()
        assert main(["doi", "run", "--once"]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1 and "not a Kafka broker" in lines[0] and "kafka.embedded_port" in lines[0], lines


async def test_an_embedded_broker_on_a_held_port_is_refused_not_logged_as_started(
        caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        broker = EmbeddedBroker(taken.getsockname()[1])
        with caplog.at_level(logging.INFO), pytest.raises(BrokerError, match="port is in use"):
            await broker.start()
    assert not broker.running
    assert not any("started embedded" in r.getMessage() for r in caplog.records)


# -- configuration and run ------------------------------------------------------------------------


def test_an_unknown_section_from_the_environment_is_blamed_on_the_variable(
        in_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DRIFTLINE__NOSECTION__X", "1")
    assert main(["doi", "list"]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1 and lines[0].startswith("driftline: error: DRIFTLINE__NOSECTION__X"), lines
    assert "config.yaml" not in lines[0]


def test_run_crawl_log_that_cannot_be_read_is_one_line(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--crawl-log", ".", "--once"]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1 and "is a directory, not a crawl.log file" in lines[0] and "Errno" not in lines[0], lines
    (in_tmp / "crawl.log").write_text("")
    assert main(["run", "--crawl-log", ".", "--once"]) == 2
    assert "did you mean" in _err_lines(capsys)[0]
    assert main(["run", "--crawl-log", "/missing/crawl.log", "--once"]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1 and "no such file" in lines[0], lines


async def test_stopped_after_counts_the_lines_of_the_file(tmp_path: Path) -> None:
    from consumers.crawllog import CrawlLogRunner
    from tests.fixtures.crawllog import collection, follow_config, skipped_lines

    warc, _refs, lines = collection(tmp_path, histories=2, captures=2)
    log = tmp_path / "crawl.log"
    log.write_text("".join([*lines, *skipped_lines()]))
    async with CrawlLogRunner(follow_config(tmp_path, warc), [str(log)]) as runner:
        await runner.run(asyncio.Event(), once=True)
        assert runner.lines == len(lines) + len(skipped_lines())  # not one more (the file's opening)


def test_a_missing_warc_names_the_folders_searched(tmp_path: Path) -> None:
    from watcher.acquire.warc import find_warc
    from watcher.errors import AcquireError

    with pytest.raises(AcquireError, match=r"not found under acquire\.warc_dirs \(none configured\)"):
        find_warc("X.warc.gz", ())
    with pytest.raises(AcquireError, match=f"under acquire.warc_dirs \\({tmp_path}\\)"):
        find_warc("X.warc.gz", (str(tmp_path),))


# -- guide --act ----------------------------------------------------------------------------------


def _seeds_file(folder: Path) -> Path:
    row = {"seed": "http://a.example.org/", "surt": "http://(org,example,a,", "captures": 20, "yield": 0.1,
           "badness": 0.5}
    calm = {"seed": "http://b.example.org/", "surt": "http://(org,example,b,", "captures": 20, "yield": 0.9,
            "change_rate_per_day": 0.1, "change_rate_low": 0.05, "change_rate_high": 0.2,
            "recrawl_interval_days": 14.0}
    keys = ("new_text_per_byte", "badness", "boilerplate_share", "change_rate_per_day", "change_rate_low",
            "change_rate_high", "recrawl_interval_days", "blocked_share", "error_share")
    path = folder / "seeds.json"
    path.write_text(json.dumps([{**dict.fromkeys(keys), **r} for r in (row, calm)]))
    return path


def test_guide_act_says_why_nothing_is_sent(in_tmp: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    seeds = _seeds_file(in_tmp)
    assert main(["guide", str(seeds), "--job", "J", "--crawler", "heritrix", "--act"]) == 0
    err = capsys.readouterr().err
    assert "actuator.kind is none" in err
    assert "1 deprioritise-seed, 1 recrawl-interval not acted on: actuator.act_on is [stop-seed]" in err
    monkeypatch.setenv("DRIFTLINE__ACTUATOR__KIND", "heritrix")
    assert main(["guide", str(seeds), "--job", "J", "--crawler", "heritrix", "--act"]) == 0
    err = capsys.readouterr().err
    assert "not acted on: actuator.act_on is [stop-seed]" in err and "DRIFTLINE__ACTUATOR__ACT_ON" in err


def test_guide_act_dry_run_shows_each_call(in_tmp: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    seeds = _seeds_file(in_tmp)
    monkeypatch.setenv("DRIFTLINE__ACTUATOR__KIND", "heritrix")
    monkeypatch.setenv("DRIFTLINE__ACTUATOR__ACT_ON", "[deprioritise-seed, recrawl-interval]")
    assert main(["guide", str(seeds), "--job", "J", "--crawler", "heritrix", "--act"]) == 0
    err = capsys.readouterr().err
    assert "dry run (actuator.dry_run is true): the 2 heritrix call(s) below are shown, not sent" in err
    assert "would send" in err and "/engine/job/J/script" in err  # the deprioritise call, in full
    assert "would append to a file (none configured" in err  # the recrawl interval's row
    assert "not acted on" not in err


# -- logging --------------------------------------------------------------------------------------


def test_the_log_handler_writes_to_the_stderr_of_the_moment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A handler made while one stderr was current wrote to it after it was closed ("--- Logging
    error ---" blocks in the test output)."""
    from watcher.logging_setup import setup_logging

    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    root = logging.getLogger()
    try:
        setup_logging("INFO")
        logging.getLogger("driftline.test").warning("one")
        first.close()
        second = io.StringIO()
        monkeypatch.setattr(sys, "stderr", second)
        logging.getLogger("driftline.test").warning("two")
        assert "two" in second.getvalue()
    finally:
        for handler in [h for h in root.handlers if h.get_name() == "driftline"]:
            root.removeHandler(handler)


# -- feed and the demo's sample -------------------------------------------------------------------


def _metadata_record(writer: object, url: str, concurrent_to: str, body: str) -> object:
    from warcio.warcwriter import WARCWriter

    assert isinstance(writer, WARCWriter)
    return writer.create_warc_record(url, "metadata", payload=io.BytesIO(body.encode()),
                                     warc_content_type="application/warc-fields",
                                     warc_headers_dict={"WARC-Concurrent-To": concurrent_to})


def test_feed_of_a_heritrix_warc_carries_seed_and_hop_path(tmp_path: Path) -> None:
    """Heritrix's metadata record beside each response says what its crawl.log says: fed through
    ``feed``, a seed's capture counts as a seed, as through ``--crawl-log``."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.warcwriter import WARCWriter

    from tests.fixtures.kafka import page_html
    from tests.fixtures.storecases import make_verdict
    from watcher.config import load_config
    from watcher.events import parse_heritrix_kafka
    from watcher.feed import FeedBuilder
    from watcher.recommend import is_seed

    plain = tmp_path / "plain.warc.gz"
    write_warc(plain, [("http://site.example.org/", "20240101000000", page_html(0, 0)),
                       ("http://site.example.org/about", "20240101000100", page_html(0, 1))])
    with plain.open("rb") as fh:
        ids = [(r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers.get_header("WARC-Record-ID"))
               for r in ArchiveIterator(fh) if r.rec_type == "response"]
    warc = tmp_path / "CRAWL-1.warc.gz"
    with warc.open("wb") as out:
        out.write(plain.read_bytes())
        writer = WARCWriter(out, gzip=True)
        writer.write_record(_metadata_record(writer, ids[0][0], ids[0][1], "seed:\r\nfetchTimeMs: 12\r\n"))
        writer.write_record(_metadata_record(writer, ids[1][0], ids[1][1],
                                             "via: http://site.example.org/\r\nhopsFromSeed: L\r\n"
                                             "sourceTag: http://site.example.org/\r\n"))
    cfg = load_config(environ={"DRIFTLINE__ACQUIRE__WARC_DIRS": f"[{tmp_path}]"})
    msgs = {m["url"]: m for m in (json.loads(x.value) for x in FeedBuilder(cfg, warn=lambda _: None)
                                  .messages([str(warc)]))}
    seed, deep = msgs["http://site.example.org/"], msgs["http://site.example.org/about"]
    assert (seed["seed"], seed["hop_path"]) == ("http://site.example.org/", "")
    assert (deep["seed"], deep["hop_path"], deep["via"]) == ("http://site.example.org/", "L",
                                                             "http://site.example.org/")
    event = parse_heritrix_kafka(seed)
    no_seed = dataclasses.replace(make_verdict(), seed=None)  # the verdict says nothing: the event alone
    assert is_seed(seed["url"], event, no_seed)
    plain_msgs = [json.loads(x.value) for x in FeedBuilder(cfg, warn=lambda _: None).messages([str(plain)])]
    assert all(m["seed"] is None and m["hop_path"] is None for m in plain_msgs)  # a WARC that says nothing


def test_the_demo_sample_is_read_by_scan_and_by_the_crawl_log_path(tmp_path: Path) -> None:
    from watcher.archive.index import index_archive, index_cdx
    from watcher.config import load_config
    from watcher.demo.crawl import build_demo_warc
    from watcher.demo.sample import write_sample
    from watcher.events import parse_crawl_log_line

    crawl = build_demo_warc(tmp_path)
    warc, cdxj, log = write_sample(crawl, tmp_path)
    cfg = load_config(environ={"DRIFTLINE__ACQUIRE__WARC_DIRS": f"[{tmp_path}]"})
    from_warc = sorted((e.url, e.offset, e.kind) for e in index_archive(str(warc), cfg, source="warc"))
    from_cdxj = sorted((e.url, e.offset, e.kind) for e in index_cdx(str(cdxj), cfg, "cdxj"))
    assert from_cdxj == from_warc and len(from_warc) > 20
    lines = log.read_text().splitlines()
    assert len(lines) == len(crawl.events)
    events = [parse_crawl_log_line(line) for line in lines]
    assert sum(1 for e in events if e.seed == e.url) == crawl.scored_events  # each seed's page says it is one


def test_demo_keep_refuses_a_directory_with_something_in_it(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kept = in_tmp / "sample"
    kept.mkdir()
    (kept / "demo.db").write_text("")
    assert main(["demo", "--once", "--keep", str(kept)]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1 and "give a new or empty directory" in lines[0], lines


# -- eval and tune on a crawl ---------------------------------------------------------------------


def _demo_labels(folder: Path) -> tuple[Path, Path]:
    """The demo WARC and labels for its seed pages, as driftline exports them for a WARC scan:
    the original URL and a 14-digit date (each seed's last two captures labelled off topic)."""
    from watcher.demo.crawl import build_demo_warc
    from watcher.model import ts14

    crawl = build_demo_warc(folder)
    rows = [f"{r.url}\t{ts14(r.time)}\t{r.url}\t{0 if r.capture >= 3 else 1}\n"
            for r in crawl.records if r.capture >= 0 and r.url == r.seed and r.record_type == "response"]
    labels = folder / "labels.tsv"
    labels.write_text("id\tdate\tURI\tlabel\n" + "".join(rows))
    return crawl.path, labels


def test_eval_takes_labels_and_a_warc_and_names_them_in_the_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    warc, labels = _demo_labels(tmp_path)
    with caplog.at_level(logging.INFO):
        assert main(["eval", str(labels), str(warc), "-j", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("## Evaluation"))
    assert header == f"## Evaluation of `a scan of {warc}` against `{labels}`"  # no temporary result file
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and "URI-M" in r.getMessage()]


def test_tune_takes_labels_as_eval_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    warc, labels = _demo_labels(tmp_path)
    code = main(["tune", "--labels", str(labels), str(warc), "-j", "1", "--no-progress", "--folds", "2",
                 "--seeds", "0", "-o", str(tmp_path / "overlay.yaml")])
    err = capsys.readouterr().err
    assert "unrecognized arguments" not in err
    assert code == 0 or "too few labels to tune" in err, err  # the labels were read: the folds decide
    assert main(["tune", "--labels", str(labels), str(warc), str(warc)]) == 2
    assert "give one CAPTURES argument" in capsys.readouterr().err


# -- --version ------------------------------------------------------------------------------------


def test_version_is_answered_without_importing_the_engine(repo_root: Path) -> None:
    """A fresh interpreter: ``driftline --version`` through the command's entry point imports no
    config model, no pydantic, no text pipeline (it took 2.2 s); the answer is the package's."""
    import subprocess
    import tomllib

    from watcher import __version__

    root = repo_root
    scripts = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["driftline"] == "watcher.entry:main"
    probe = ("import sys; from watcher.entry import main; code = main(['--version']); "
             "heavy = sorted(m for m in ('watcher.cli', 'watcher.config', 'pydantic') if m in sys.modules); "
             "print(code, heavy)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"driftline {__version__}", "0 []"]


def test_scan_imports_no_network_or_event_library(repo_root: Path, tmp_path: Path) -> None:
    """A scan of a WARC (and its ``--help``) imports neither the HTTP client nor the Kafka client nor the
    event schema's validator: the command line registers every command, and these cost a batch scan
    0.2 s of start-up before its workers could begin (issue 37, start-up)."""
    import subprocess

    warc = tmp_path / "a.warc.gz"
    write_warc(warc, [("http://example.org/", "20210101000000", b"<p>some words here</p>")])
    heavy = ("aiohttp", "aiokafka", "jsonschema", "confluent_kafka", "playwright", "apscheduler", "psycopg")
    for args in (["scan", "--help"], ["scan", str(warc), "-o", str(tmp_path / "out.json"), "--no-progress"]):
        probe = ("import sys, contextlib, io\nfrom watcher.entry import main\n"
                 "with contextlib.redirect_stdout(io.StringIO()):\n"
                 "    try:\n        code = main(sys.argv[1:])\n    except SystemExit as e:\n        code = e.code\n"
                 f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))")
        done = subprocess.run([sys.executable, "-c", probe, *args], cwd=repo_root, capture_output=True, text=True,
                              timeout=120, env={**os.environ, "PYTHONPATH": str(repo_root)})
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == "0 []", (args, done.stdout, done.stderr[-2000:])


# -- the demo's output ----------------------------------------------------------------------------


def test_the_demo_prints_an_alert_under_its_verdict(tmp_path: Path) -> None:
    """Alerts and verdicts come from two topics; an alert read first waits for its verdict's line."""
    from watcher.demo.crawl import build_demo_warc
    from watcher.demo.run import DemoResult, SeedTally, _Printer

    crawl = build_demo_warc(tmp_path)
    seed = crawl.seeds[0]
    out = io.StringIO()
    printer = _Printer(out, DemoResult(crawl=crawl, workdir=tmp_path,
                                       seeds={seed.url: SeedTally(seed.name, seed.url, seed.behaviour)}))
    verdict = {"verdict_id": "v1", "url": seed.url, "capture_time": "2025-09-30T03:00:00Z", "change": "replaced",
               "status": "off-topic", "reason": "page replaced"}
    printer("alert", {**verdict, "type": "alert"})
    printer("alert", {**verdict, "verdict_id": "v2"})  # its verdict never comes
    assert "ALERT" not in out.getvalue()
    printer("verdict", verdict)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and seed.url in lines[0] and "page replaced" in lines[1]  # the verdict first
    assert lines[2] == f"2025-09-30 03:00  ALERT replaced: {seed.url} [content]"
    printer("alert", {**verdict, "verdict_id": "v1"})  # a verdict already printed: at once
    assert out.getvalue().count("ALERT") == 2
    printer.flush()  # before the summary: the one whose verdict never came
    assert out.getvalue().count("ALERT") == 3


# -- links in docs/ -------------------------------------------------------------------------------

_LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_relative_link_in_the_docs_resolves_on_github_too(repo_root: Path) -> None:
    """A link to a page that exists only in the built site (the generated references, runbooks,
    changelog) was dead on GitHub (12 of them).  Each generated page has a stand-in in docs/ that
    points at its source, which the site build replaces (docs/hooks.py)."""
    import importlib.util

    broken = []
    for md in sorted([*(repo_root / "docs").rglob("*.md"), repo_root / "README.md"]):
        for target in _LINK.findall(md.read_text(encoding="utf-8")):
            path = target.split("#", 1)[0]
            if not path or target.startswith(("http://", "https://", "mailto:")):
                continue
            if not (md.parent / path).exists():
                broken.append(f"{md.relative_to(repo_root)}: {target}")
    assert broken == []
    spec = importlib.util.spec_from_file_location("driftline_docs_hooks", repo_root / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    generated = set(hooks.generated_pages())
    stand_ins = {str(p.relative_to(repo_root / "docs")) for p in (repo_root / "docs").rglob("*.md")
                 if p.read_text(encoding="utf-8").startswith("<!-- A stand-in for GitHub")}
    assert stand_ins and stand_ins <= generated  # replaced by the build, never shown as they are
