"""The DOI monitor's Prometheus rules (promtool) and Grafana dashboard: they
name only metrics the monitor exports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from watcher.doi.metrics import DoiMetrics

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
PROM = DEPLOY / "prometheus"
PROMTOOL = shutil.which("promtool")
METRIC_RE = re.compile(r"\bdriftline_doi_[a-z0-9_]+")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian package prometheus)")


def exported() -> set[str]:
    names = set()
    for fam in DoiMetrics().registry.collect():
        names.update(s.name for s in fam.samples)
        names.add(fam.name)
        if fam.type == "counter":  # labelled counters have no samples before their first increment
            names.add(fam.name + "_total")
        if fam.type == "histogram":
            names.update(fam.name + x for x in ("_bucket", "_sum", "_count"))
    return names


@needs_promtool
def test_promtool_checks_and_unit_tests_the_doi_rules() -> None:
    assert PROMTOOL is not None
    res = subprocess.run([PROMTOOL, "check", "rules", "doi_rules.yml"], cwd=PROM, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    res = subprocess.run([PROMTOOL, "test", "rules", "doi_rules_test.yml"], cwd=PROM, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_rules_and_dashboard_name_exported_metrics() -> None:
    known = exported()
    assert {"driftline_doi_checks_total", "driftline_doi_drifted", "driftline_doi_blocked",
            "driftline_doi_resolution_seconds_bucket"} <= known
    rules = [r for g in yaml.safe_load((PROM / "doi_rules.yml").read_text())["groups"] for r in g["rules"]]
    assert {"DriftlineDoiDrifted", "DriftlineDoiBlockedMany", "DriftlineDoiNoChecks"} <= {r.get("alert") for r in rules}
    dash = json.loads((DEPLOY / "grafana" / "doi.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]] + [r["expr"] for r in rules]
    used = {m for e in exprs for m in METRIC_RE.findall(e)}
    assert used and used <= known, used - known
    assert len({p["id"] for p in dash["panels"]}) == len(dash["panels"])
