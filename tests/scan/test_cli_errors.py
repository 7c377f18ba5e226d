"""Every option checked, every error one clear line (issue #8).

Each case runs the real command (``main()`` with captured output, or the
``driftline`` module in a subprocess where a pipe or a signal is involved)
and asserts the exit code and the single line it prints.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.fixtures import textgen
from tests.fixtures.scanwarcs import write_warc
from watcher.cli import build_parser, main
from watcher.config import DEFAULT_CONFIG, load_config
from watcher.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
PAGE = textgen.html(textgen.document(["river", "law", "music", "garden"]))


def _err_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


@pytest.fixture
def warc(tmp_path: Path) -> Path:
    path = tmp_path / "crawl.warc.gz"
    t0 = datetime(2020, 1, 1, tzinfo=UTC)
    write_warc(path, [("http://example.org/", t0 + timedelta(days=30 * i), PAGE, {}) for i in range(3)])
    return path


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith("DRIFTLINE"):
            monkeypatch.delenv(key)


@pytest.mark.parametrize(("args", "env", "expected"), [
    (["--policy", "k-of-n:x"], {}, "driftline: error: --policy 'k-of-n:x': expected any, all, weighted or k-of-n:K"),
    (["--policy", "k-of-n:0"], {}, "driftline: error: engine.policy.k=0 (from --policy): expected a value >= 1"),
    (["--policy", "k-of-n:9"], {}, "driftline: error: engine.policy.k=9 (from --policy): expected at most 2, "
                                   "the number of voting measures"),
    (["-j", "0"], {}, "driftline scan: error: argument -j/--workers: expected a whole number >= 1, got 0"),
    (["-j", "-3"], {}, "driftline scan: error: argument -j/--workers: expected a whole number >= 1, got -3"),
    ([], {"DRIFTLINE__SCAN__WORKERS": "-1"}, "driftline: error: DRIFTLINE__SCAN__WORKERS='-1': expected a value >= 0"),
    (["--baseline", "pinned"], {}, "driftline: error: engine.baseline.policy='pinned' (from --baseline): "
                                   "needs engine.baseline.pinned"),
    ([], {"DRIFTLINE__KAFKA__MAX_IN_FLIGHT": "abc"},
     "driftline: error: DRIFTLINE__KAFKA__MAX_IN_FLIGHT='abc': expected an integer"),
    ([], {"DRIFTLINE__METRICS__PORT": "70000"},
     "driftline: error: DRIFTLINE__METRICS__PORT='70000': expected a value <= 65535"),
    ([], {"DRIFTLINE__ENGINE__EXTRACT__MAIN_CONTENT": "sometimes"},  # a union of two types: still one line
     "driftline: error: DRIFTLINE__ENGINE__EXTRACT__MAIN_CONTENT='sometimes': expected auto (the text profile "
     "only), true or false"),
])
def test_bad_option_is_refused_in_one_line(args: list[str], env: dict[str, str], expected: str, warc: Path,
                                           capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    out = tmp_path / "out.json"
    assert main(["scan", str(warc), "-o", str(out), "--no-progress", *args]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 1, lines
    assert lines[0].startswith(expected), lines[0]
    assert not out.exists()


def test_k_of_n_within_the_voting_measures_is_accepted(warc: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    assert main(["--log-level", "ERROR", "scan", str(warc), "-o", str(out), "--no-progress",
                 "--policy", "k-of-n:2"]) == 0
    assert out.exists()


def test_config_file_errors_one_line_each_naming_key_and_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("metrics:\n  port: 0\nkafka:\n  embedded_port: 99999\n  partitions: 0\nrender:\n  timeout_s: 0\n"
                   "engine:\n  extract:\n    fallback_encoding: no-such-codec\n  policy:\n    weighted_threshold: 0\n"
                   "acquire:\n  allow_addresses: [not-a-net]\n  order: [warc, warc]\n"
                   "events:\n  accept_status: [500, 200]\n"
                   "recommend:\n  off_topic_statuses: [bogus]\nstore:\n  colour: blue\n")
    with pytest.raises(ConfigError) as err:
        load_config(bad, environ={})
    problems = err.value.problems
    keys = ["metrics.port", "kafka.embedded_port", "kafka.partitions", "render.timeout_s",
            "engine.extract.fallback_encoding", "engine.policy.weighted_threshold", "acquire.allow_addresses",
            "acquire.order", "events.accept_status", "recommend.off_topic_statuses", "store.colour"]
    assert len(problems) == len(keys), problems
    for key in keys:
        (line,) = [p for p in problems if p.startswith(key + "=") or p.startswith(key + " ")]
        assert f"(in {bad})" in line and "\n" not in line
    assert str(err.value).count("\n") == len(keys) - 1


def test_secret_values_never_echoed(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                    warc: Path, tmp_path: Path) -> None:
    # Secret keys from the environment are taken verbatim (a string, never YAML), so bad secret values
    # come from a file here: structures where strings are expected.
    conf = tmp_path / "bad-secrets.yaml"
    conf.write_text("kafka:\n  sasl_plain_password: [hunter2-secret]\n"
                    "store:\n  dsn: {postgresql://u:hunter3@db/x: 1}\n"
                    "actuator:\n  heritrix_password: [hunter4]\n")
    assert main(["-c", str(conf), "scan", str(warc), "-o", str(tmp_path / "o.json")]) == 2
    lines = _err_lines(capsys)
    assert len(lines) == 3, lines
    text = "\n".join(lines)
    assert "kafka.sasl_plain_password" in text and "store.dsn" in text and "actuator.heritrix_password" in text
    assert "hunter" not in text
    monkeypatch.setenv("DRIFTLINE__KAFKA__SASL_PLAIN_PASSWORD", "[hunter5]")  # verbatim: a valid string
    cfg = load_config(DEFAULT_CONFIG)
    assert cfg.kafka.sasl_plain_password is not None
    assert cfg.kafka.sasl_plain_password.get_secret_value() == "[hunter5]"
    assert "hunter" not in repr(cfg)


def test_numbers_in_env_for_text_keys_are_text() -> None:
    cfg = load_config(DEFAULT_CONFIG, environ={"DRIFTLINE__KAFKA__CLIENT_ID": "42"})
    assert cfg.kafka.client_id == "42"


def test_eval_of_a_binary_result_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "labels.tsv"
    labels.write_text("id\tdate\tURI\tlabel\n1\t20200101000000\thttp://example.org/\t1\n")
    blob = tmp_path / "random.bin"
    blob.write_bytes(bytes(range(256)) * 16)
    assert main(["eval", str(labels), str(blob)]) == 2
    (line,) = _err_lines(capsys)
    assert line == (f"driftline: error: {blob}: not a result file (not UTF-8 text); expected the JSON or JSONL that "
                    "'driftline scan' writes")


def test_eval_with_nothing_matched_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str], warc: Path) -> None:
    result = tmp_path / "result.json"
    assert main(["--log-level", "ERROR", "scan", str(warc), "-o", str(result), "--no-progress"]) == 0
    labels = tmp_path / "labels.tsv"
    labels.write_text("id\tdate\tURI\tlabel\n1\t20200101000000\thttp://other.example/\t1\n")
    assert main(["eval", str(labels), str(result)]) == 2
    (line,) = _err_lines(capsys)
    assert line.startswith("driftline: error: nothing matched: none of the 1 labelled captures has one of the 3 rows")
    empty = tmp_path / "empty.tsv"
    empty.write_text("id\tdate\tURI\tlabel\n")
    assert main(["eval", str(empty), str(result)]) == 2
    (line,) = _err_lines(capsys)
    assert line == f"driftline: error: nothing matched: {empty} holds no labelled rows"


def test_compare_refuses_what_is_not_a_page(tmp_path: Path, warc: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "a.html"
    page.write_bytes(PAGE)
    plain = tmp_path / "crawl.warc"
    plain.write_bytes(b"WARC/1.0\r\nWARC-Type: warcinfo\r\nContent-Length: 0\r\n\r\n\r\n\r\n")
    blob = tmp_path / "b.bin"
    blob.write_bytes(bytes(range(256)) * 4)
    for bad, what in ((warc, "gzip-compressed"), (plain, "a WARC file"), (blob, "binary data")):
        assert main(["compare", str(page), str(bad)]) == 2
        (line,) = _err_lines(capsys)
        assert line.startswith(f"driftline: error: {bad}: not an HTML, text or PDF page: {what}"), line
    assert main(["compare", str(page), str(page)]) == 0


def test_output_into_a_closed_pipe_is_quiet(tmp_path: Path, warc: Path) -> None:
    """``driftline compare A B --json | head`` and ``scan ... | head``: no BrokenPipeError traceback."""
    page = tmp_path / "a.html"
    page.write_bytes(PAGE)
    for args in (["compare", str(page), str(page), "--json"],
                 ["--log-level", "ERROR", "scan", str(warc), "--format", "jsonl", "--no-progress"]):
        cmd = [sys.executable, "-m", "watcher.cli", *args]
        # A pipe whose reader is gone before the command starts (what ``| head`` leaves once head has
        # exited): every write meets a closed pipe, however busy the machine is.  (``| true`` in a
        # shell raced: a ``true`` that had not exited yet let the output into the pipe.)
        reader, writer = os.pipe()
        os.close(reader)
        try:
            done = subprocess.run(cmd, cwd=REPO, stdout=writer, stderr=subprocess.PIPE, text=True, timeout=120,
                                  env={k: v for k, v in os.environ.items() if not k.startswith("DRIFTLINE")})
        finally:
            os.close(writer)
        err = done.stderr
        assert "Traceback" not in err and "BrokenPipe" not in err, err
        assert done.returncode == 141, (done.returncode, err)


def test_result_files_get_the_umask_mode(tmp_path: Path, warc: Path) -> None:
    old = os.umask(0o022)
    try:
        out = tmp_path / "out.json"
        assert main(["--log-level", "ERROR", "scan", str(warc), "-o", str(out), "--no-progress"]) == 0
        assert out.stat().st_mode & 0o777 == 0o644
        os.umask(0o027)
        out2 = tmp_path / "out.csv"
        assert main(["--log-level", "ERROR", "scan", str(warc), "-o", str(out2), "-f", "csv", "--no-progress"]) == 0
        assert out2.stat().st_mode & 0o777 == 0o640
    finally:
        os.umask(old)


def test_every_argument_has_help_and_every_command_examples() -> None:
    """Every command and subcommand (``driftline doi add`` too) has examples and help on every argument."""
    import argparse

    def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        return dict(subs[0].choices) if subs else {}

    top = subcommands(build_parser())
    assert set(top) == {"scan", "eval", "compare", "run", "demo", "doi", "feed", "tail", "guide", "seeds", "review",
                        "labels", "tune", "spark"}
    assert set(subcommands(top["doi"])) == {"add", "remove", "list", "import", "status", "run"}
    seen = []
    todo = [(name, sp) for name, sp in top.items()]
    while todo:
        name, sp = todo.pop()
        seen.append(name)
        assert sp.epilog and sp.epilog.startswith("examples:") and f"driftline {name}" in sp.epilog, name
        assert sp.formatter_class is argparse.RawDescriptionHelpFormatter, name
        assert sp.description, name
        for action in sp._actions:
            assert action.help, f"{name}: {action.dest} has no help text"
        assert "examples:\n  driftline" in sp.format_help(), name
        todo += [(f"{name} {child}", csp) for child, csp in subcommands(sp).items()]
    assert len(seen) == 21


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_has_the_indexed_total_and_an_eta(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t0 = datetime(2020, 1, 1, tzinfo=UTC)
    warc = tmp_path / "many.warc.gz"
    write_warc(warc, [(f"http://example.org/p{h}", t0 + timedelta(days=30 * i), PAGE, {})
                      for h in range(4) for i in range(3)])
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(["--log-level", "ERROR", "scan", str(warc), "-o", str(tmp_path / "o.json"), "-j", "1"]) == 0
    bar = tty.getvalue()
    assert "12/12" in bar, bar  # the total, from the index
    assert "<00:" in bar, bar  # an ETA (time left), which tqdm shows only with a total


def test_summary_log_counts_histories(tmp_path: Path, warc: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    with caplog.at_level(logging.INFO, logger="watcher.output.writers"):
        assert main(["scan", str(warc), "-o", str(tmp_path / "s.tsv"), "-f", "summary", "--no-progress"]) == 0
    assert any("wrote 1 histories as summary" in r.getMessage() for r in caplog.records), caplog.text


def test_unknown_keys_suggest_the_nearest_known_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(DEFAULT_CONFIG, environ={"DRIFTLINE__KAFKA__MAX_INFLIGHT": "3"})
    assert err.value.problems == ["DRIFTLINE__KAFKA__MAX_INFLIGHT: unknown key "
                                  "(did you mean DRIFTLINE__KAFKA__MAX_IN_FLIGHT?)"]
    bad = tmp_path / "c.yaml"
    bad.write_text("metrics:\n  prot: 9400\nstore:\n  colour: blue\n")
    with pytest.raises(ConfigError) as err:
        load_config(bad, environ={})
    prot, colour = sorted(err.value.problems)
    assert prot == f"metrics.prot (in {bad}): unknown key (did you mean metrics.port?)"
    assert colour.startswith(f"store.colour (in {bad}): unknown key (known here: backend, path, dsn, ")


def test_pinned_baselines_need_14_digit_timestamps(tmp_path: Path) -> None:
    cfg = tmp_path / "p.yaml"
    cfg.write_text('engine:\n  baseline:\n    policy: pinned\n    pinned: {"example.org": "2020-01-01"}\n')
    with pytest.raises(ConfigError) as err:
        load_config(cfg, environ={})
    assert err.value.problems == [f"engine.baseline.pinned.example.org='2020-01-01' (in {cfg}): expected a 14-digit "
                                  "timestamp (YYYYMMDDhhmmss, UTC)"]
    cfg.write_text('engine:\n  baseline:\n    policy: pinned\n    pinned: {"example.org": 20200101000000}\n')
    assert load_config(cfg, environ={}).engine.baseline.pinned == {"example.org": "20200101000000"}


def test_unreadable_or_broken_config_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("kafka: [\n")
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\x91\x92\x00\xff" * 10)
    for cfg, expected in ((broken, f"{broken}: not valid YAML at line 2, column 1: expected the node content"),
                          (binary, f"{binary}: not a YAML configuration file (not UTF-8 text)"),
                          (tmp_path, f"{tmp_path}: cannot read the configuration: Is a directory")):
        assert main(["-c", str(cfg), "compare", "a", "b"]) == 2
        (line,) = _err_lines(capsys)
        assert line.startswith(f"driftline: error: {expected}"), line


def test_alert_changes_must_name_known_profiles_and_change_classes() -> None:
    env = {"DRIFTLINE__ALERTS__CHANGES__TEXT": "[drifted, offtopic]"}
    with pytest.raises(ConfigError) as err:
        load_config(DEFAULT_CONFIG, environ=env)
    (line,) = err.value.problems
    assert line.startswith("DRIFTLINE__ALERTS__CHANGES__TEXT (alerts.changes.text.1)='[drifted, offtopic]': "
                           "expected one of 'baseline', 'unchanged', 'minor', 'drifted', 'off-topic'")
    cfg = load_config(DEFAULT_CONFIG, environ={"DRIFTLINE__ALERTS__CHANGES__TEXT": "[drifted]"})
    assert cfg.alerts.alerts_on("text", None) == {"drifted"}
    assert cfg.alerts.alerts_on("collection", None) == {"off-topic"}
