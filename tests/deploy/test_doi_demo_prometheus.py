"""A real Prometheus scraping the demo's DOI monitor (watcher/demo/doi.py) returns data for every
panel of the DOI dashboard (deploy/grafana/doi.json) and every DOI recording rule
(deploy/prometheus/doi_rules.yml); each alert's selectors match series.

Why: a dashboard a newcomer opens after ``driftline demo`` should show DOI drift, not "No data";
the same check the crawl dashboards have (tests/deploy/test_ops_prometheus.py)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import free_port, stop_process
from tests.fixtures.prometheus import PROMETHEUS, Prom, _wait, selectors, start_prometheus, walk_exprs
from watcher.config import Config
from watcher.demo.doi import DoiDemo

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus)")


def doi_dashboard_exprs() -> list[str]:
    dash = json.loads((DEPLOY / "grafana" / "doi.json").read_text())
    return [e.replace("$__rate_interval", "1m") for e in walk_exprs(dash["panels"])]


def doi_rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load((DEPLOY / "prometheus" / "doi_rules.yml").read_text())
    return [r for g in doc["groups"] for r in g["rules"]]


def missing(prom: Prom) -> list[str]:
    out = []
    for expr in doi_dashboard_exprs():
        res = prom.query(expr)
        if not res or all(r["value"][1] in ("NaN", "+Inf", "-Inf") for r in res):
            out.append(f"dashboard: {expr} -> {res}")
    for rule in doi_rules():
        if "record" in rule:
            res = prom.query(rule["record"])
            if not res or all(r["value"][1] == "NaN" for r in res):
                out.append(f"recorded {rule['record']} -> {res}")
        else:
            prom.query(rule["expr"])  # evaluates without error (empty unless firing)
            out += [f"{rule['alert']}: {sel}" for sel in selectors(rule["expr"]) if not prom.query(sel)]
    return out


async def test_every_doi_panel_and_rule_has_data_from_the_demo(tmp_path: Path) -> None:
    port = free_port()
    cfg = Config.model_validate({"doi": {"status_port": port}})
    rules = yaml.safe_load((DEPLOY / "prometheus" / "doi_rules.yml").read_text())
    for g in rules["groups"]:
        g["interval"] = "1s"
    (tmp_path / "doi_rules.yml").write_text(yaml.safe_dump(rules))
    # The shipped scrape job (deploy/prometheus/prometheus.yml), its target moved to the demo: its
    # name is what the DOI rules' target selectors match (DriftlineDoiDown's up{job=~"driftline-doi.*"}).
    shipped = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    assert "doi_rules.yml" in shipped["rule_files"]
    job = next(j for j in shipped["scrape_configs"] if j["job_name"] == "driftline-doi")
    job["static_configs"] = [{"targets": [f"127.0.0.1:{port}"]}]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"}, "rule_files": ["doi_rules.yml"],
        "scrape_configs": [job],
    }))
    prom_port = free_port()
    proc = start_prometheus(tmp_path / "prometheus.yml", tmp_path, prom_port)
    prom = Prom(f"http://127.0.0.1:{prom_port}")
    try:
        async with DoiDemo(cfg, tmp_path / "demo", io.StringIO()) as demo:
            assert demo.status_url == f"http://127.0.0.1:{port}"

            def scraped() -> bool:
                try:
                    return bool(prom.query('up{job="driftline-doi"} == 1'))
                except OSError:
                    return False

            assert await _wait(scraped, 60), (tmp_path / "prometheus.log").read_text()[-2000:]
            result = await demo.run()
            assert result.as_expected, [(t.story.name, t.changes) for t in result.tallies]
            rechecks = asyncio.create_task(demo.keep_checking(1.0))
            try:
                def complete() -> bool:
                    try:
                        return not missing(prom)
                    except OSError:
                        return False

                if not await _wait(complete, 90):
                    pytest.fail("no data:\n" + "\n".join(missing(prom)))
                def gauges() -> tuple[float, float]:  # the latest scrape may precede the last round
                    return (float(prom.query("driftline_doi_drifted")[0]["value"][1]),
                            float(prom.query("driftline_doi_blocked")[0]["value"][1]))

                # edited abstract, replaced article, lapsed domain; the bot wall
                assert await _wait(lambda: gauges() == (3.0, 1.0), 30), gauges()
            finally:
                rechecks.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await rechecks
    finally:
        stop_process(proc, 15)
