"""The configuration object: shipped defaults, environment overrides, validation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from watcher.config import DEFAULT_CONFIG, Config, load_config
from watcher.errors import ConfigError


def _keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    out: set[str] = set()
    for name, field in model.model_fields.items():
        out.add(prefix + name)
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out |= _keys(ann, prefix + name + ".")
    return out


def _yaml_keys(tree: dict[str, Any], prefix: str = "") -> set[str]:
    out: set[str] = set()
    for k, v in tree.items():
        out.add(prefix + k)
        if isinstance(v, dict) and k not in ("measures", "weights", "pinned", "input_topics", "brozzler_site_ids",
                                             "changes", "topics", "topic_profiles"):
            out |= _yaml_keys(v, prefix + k + ".")
    return out


def test_shipped_config_yaml_documents_every_setting_and_equals_the_defaults() -> None:
    tree = yaml.safe_load(DEFAULT_CONFIG.read_text())
    assert _yaml_keys(tree) == _keys(Config)
    assert load_config(DEFAULT_CONFIG, environ={}) == Config()


def test_environment_overrides(tmp_path: Path) -> None:
    env = {"DRIFTLINE__KAFKA__BOOTSTRAP_SERVERS": "broker:9092", "DRIFTLINE__ENGINE__EXTRACT__MAIN_CONTENT": "true",
           "DRIFTLINE__METRICS__PORT": "9999", "UNRELATED": "x"}
    cfg = load_config(DEFAULT_CONFIG, environ=env)
    assert cfg.kafka.bootstrap_servers == "broker:9092"
    assert cfg.engine.extract.main_content is True
    assert cfg.metrics.port == 9999


def test_config_is_frozen_and_validated(tmp_path: Path) -> None:
    cfg = load_config(DEFAULT_CONFIG, environ={})
    with pytest.raises(Exception, match="frozen"):
        cfg.log_level = "DEBUG"  # frozen: refused at run time (pydantic's model_config, unseen by mypy)
    bad = tmp_path / "bad.yaml"
    bad.write_text("metrics:\n  port: not-a-port\nstore:\n  colour: blue\n")
    with pytest.raises(ConfigError) as err:
        load_config(bad, environ={})
    assert "port" in str(err.value) and "colour" in str(err.value)
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.yaml", environ={})
