"""A new profile is one module plus one registry line: the test suite registers its own
(``tests/fixtures/length_profile.py``) and the configuration, the command line, the alert
defaults, batch and the stream all take it."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.fixtures import textgen
from watcher import profiles
from watcher.config import Config, EngineConfig
from watcher.engine import Engine
from watcher.errors import ConfigError
from watcher.model import Capture
from watcher.profiles.base import Profile
from watcher.store.sqlite import SQLiteStore
from watcher.watch import Watcher

URL = "http://www.riverside-rights.org/"
T0 = datetime(2021, 1, 1, tzinfo=UTC)
TEXT = ["The Riverside Rights Project documents detention and torture along the river valley and "
        "supports the families of prisoners with legal aid, reports and monitoring of trials."] * 6


def cap(i: int, paragraphs: list[str] | None) -> Capture:
    body = b"" if paragraphs is None else textgen.html(paragraphs, "Riverside")
    return Capture(url=URL, timestamp=T0 + timedelta(days=30 * i), content=body)


@pytest.fixture
def length_profile() -> Iterator[Profile]:
    profiles.register("length", "tests.fixtures.length_profile:PROFILE")  # the one registry line
    try:
        yield profiles.get("length")
    finally:
        profiles.unregister("length")


def test_the_shipped_profiles_meet_the_protocol() -> None:
    assert profiles.names() == ("collection", "text", "doi")
    for name in profiles.names():
        p: Profile = profiles.get(name)
        assert p.name == name and p.alert_classes


def test_a_registered_profile_is_configured_alerted_and_offered_on_the_command_line(
        length_profile: Profile) -> None:
    cfg = Config.model_validate({"engine": {"profile": "length"}, "kafka": {"topic_profiles": {"crawl": "length"}}})
    assert cfg.engine.profile == "length" and cfg.kafka.topic_profiles["crawl"] == "length"
    assert cfg.alerts.alerts_on("length", None) == {"off-topic", "drifted"}  # its own default
    assert cfg.alerts.alerts_on("collection", None) == {"off-topic"}
    from watcher.cli import build_parser

    args = build_parser().parse_args(["scan", "--profile", "length", "x.warc.gz"])
    assert isinstance(args, argparse.Namespace) and args.profile == "length"


def test_an_unknown_profile_is_refused_at_start_up_naming_the_key(tmp_path: Path) -> None:
    from watcher.config import load_config

    path = tmp_path / "c.yaml"
    path.write_text("engine:\n  profile: length\n")
    with pytest.raises(ConfigError) as err:
        load_config(path, environ={})
    assert "engine.profile" in str(err.value) and "collection" in str(err.value)


def test_batch_and_stream_take_a_registered_profile(length_profile: Profile, tmp_path: Path) -> None:
    caps = [cap(0, TEXT), cap(1, TEXT[:5]), cap(2, TEXT[:2]), cap(3, None)]
    eng = Engine(EngineConfig(profile="length"))
    got = eng.scan_history("k", caps)
    assert [(v.status, v.change, v.profile) for v in got.verdicts] == [
        ("on-topic", "baseline", "length"), ("on-topic", "drifted", "length"), ("off-topic", "off-topic", "length"),
        ("empty", "empty", "length")]  # the shared checks: no content says nothing
    with SQLiteStore(tmp_path / "s.db") as store:
        w = Watcher(Engine(EngineConfig()), store)
        streamed = [w.score(c, w.job_for(c, "length")).verdict for c in caps]
    assert [(v.status, v.change, v.reason) for v in streamed] == [(v.status, v.change, v.reason) for v in got.verdicts]
