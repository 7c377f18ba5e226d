"""Every PromQL expression of the shipped rules and dashboard returns data (or a
real zero) against running driftline consumers fed through a real broker and
scraped by a real Prometheus -- before and after a rebalance.

Why: the issue's audit found series that vanished after a rebalance (lag),
counters whose first increment rate() never saw, and rules that matched no
job.  A dashboard panel that shows "No data" or an alert whose selector
matches nothing is a signal that does not stay true.  Recording rules are
checked as evaluated by Prometheus; alert expressions compare against a
threshold and are empty unless firing, so each of their selectors must match
series instead (and the whole expression must evaluate without error).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from consumers.app import ConsumerApp
from consumers.client import produce, read_topic
from tests.conftest import free_port, stop_process
from tests.fixtures.kafka import KafkaNames, heritrix_message, page_html, stream_config, write_warc
from tests.fixtures.prometheus import PROMETHEUS, Prom, _wait, selectors, start_prometheus, walk_exprs
from watcher.broker import EmbeddedBroker

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

pytestmark = [pytest.mark.kafka,
              pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus)")]


def dashboard_exprs() -> list[str]:
    dash = json.loads((DEPLOY / "grafana" / "driftline.json").read_text())
    out = []
    for e in walk_exprs(dash["panels"]):
        out.append(e.replace("$__rate_interval", "1m").replace("$measure", ".*").replace("$collection", ".*"))
    return out


def rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load((DEPLOY / "prometheus" / "rules.yml").read_text())
    return [r for g in doc["groups"] for r in g["rules"]]


def _missing(prom: Prom) -> list[str]:
    """Every expression (or selector) that returns no data."""
    missing: list[str] = []
    for expr in dashboard_exprs():
        if not prom.query(expr):
            missing.append(f"dashboard: {expr}")
    for rule in rules():
        expr = rule["expr"]
        if "record" in rule:
            if not prom.query(rule["record"]):
                missing.append(f"recorded {rule['record']}")
            if not prom.query(expr):
                missing.append(f"record expr {rule['record']}: {expr}")
        else:
            prom.query(expr)  # evaluates without error (empty unless firing)
            for sel in selectors(expr):
                if not prom.query(sel):
                    missing.append(f"{rule['alert']}: {sel}")
    return missing


def _prometheus_config(tmp_path: Path, targets: list[str]) -> Path:
    doc = yaml.safe_load((DEPLOY / "prometheus" / "rules.yml").read_text())
    for g in doc["groups"]:
        g["interval"] = "1s"  # evaluate recording rules at once, not every 30 s
    (tmp_path / "rules.yml").write_text(yaml.safe_dump(doc))
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": ["rules.yml"],
        "scrape_configs": [{"job_name": "driftline", "static_configs": [{"targets": targets}]}],
    }))
    return cfg


async def test_every_rule_and_panel_expression_returns_data(
        kafka_broker: EmbeddedBroker, kafka_names: KafkaNames, tmp_path: Path) -> None:
    warcs = tmp_path / "warcs"
    warcs.mkdir()
    captures = [(f"http://p{i}.example.org/", "20240101000000", page_html(i)) for i in range(6)]
    captures += [(f"http://p{i}.example.org/", "20240201000000", page_html(i, off_topic=(i % 2 == 0)))
                 for i in range(6)]
    refs = write_warc(warcs / "P-00001.warc.gz", captures)
    partitions = 3
    cfgs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        cfgs.append(stream_config(kafka_broker.bootstrap_servers, kafka_names, tmp_path / name,
                                  partitions=partitions, warc_dirs=(str(warcs),),
                                  extra={"metrics": {"enabled": True, "host": "127.0.0.1", "port": free_port(),
                                                     "lag_interval_s": 0.5,
                                                     "collections": ["crawl-a", "crawl-b"]}}))
    boot, k = kafka_broker.bootstrap_servers, cfgs[0].kafka
    crawl = next(iter(k.input_topics))
    targets = [f"127.0.0.1:{c.metrics.port}" for c in cfgs]
    prom_port = free_port()
    config = _prometheus_config(tmp_path, targets)
    proc = start_prometheus(config, tmp_path, prom_port)
    prom = Prom(f"http://127.0.0.1:{prom_port}")
    try:
        async with ConsumerApp(cfgs[0]) as a:
            b = ConsumerApp(cfgs[1])
            await b.start()
            try:
                def both_scraped() -> bool:  # every counter has a sample at 0 before the first event
                    try:
                        up = prom.query('up{job="driftline"} == 1')
                    except OSError:  # Prometheus still starting
                        return False
                    return len(up) == len(targets)

                assert await _wait(both_scraped, 60)
                # the first round: baselines, then drifted/off-topic captures, a skip and a dead letter
                await produce(boot, crawl, [heritrix_message(r, job_name="crawl-a") for r in refs[:6]])
                await read_topic(boot, k.results_topic, expect=6, timeout_s=60)
                await produce(boot, crawl, [heritrix_message(r, job_name="crawl-b") for r in refs[6:]]
                              + [b"not json {", heritrix_message(url="dns:p0.example.org", status_code=1,
                                                                 timestamp="2024-01-01T00:00:00Z")])
                verdicts = await read_topic(boot, k.results_topic, expect=12, timeout_s=60)
                assert await a.wait_caught_up(timeout_s=30) and await b.wait_caught_up(timeout_s=30)
                truth = sum(v["value"]["status"] == "off-topic" for v in verdicts) / len(verdicts)
                assert 0 < truth < 1

                def complete() -> bool:
                    try:
                        return not _missing(prom)
                    except OSError:
                        return False

                assert proc.poll() is None
                if not await _wait(complete, 60):
                    pytest.fail("no data before the rebalance:\n" + "\n".join(_missing(prom)))
                lag = prom.query('count(driftline:consumer_lag:by_partition{stage="scorer"})')
                assert float(lag[0]["value"][1]) == partitions
                # The dashboard's 1 h off-topic share tells the truth: every series existed
                # at 0 before its first increment (the audit read 0.43 for a true 0.33).
                share = prom.query('sum(increase(driftline_verdicts_total{status="off-topic"}[1h]))'
                                   ' / sum(increase(driftline_verdicts_total[1h]))')
                assert abs(float(share[0]["value"][1]) - truth) < 0.03, (share, truth)
                total = prom.query("sum(driftline_verdicts_total)")
                assert float(total[0]["value"][1]) == len(verdicts)
            finally:
                await b.stop()  # a rebalance: b's partitions move to a; b's target goes down
            await produce(boot, crawl, [heritrix_message(r, job_name="crawl-a", timestamp="2024-03-01T00:00:00Z")
                                        for r in refs[:3]])
            await read_topic(boot, k.results_topic, expect=15, timeout_s=60)
            assert await a.wait_caught_up(timeout_s=30)

            def only_a_scraped() -> bool:
                up = {r["metric"]["instance"]: r["value"][1] for r in prom.query('up{job="driftline"}')}
                return up.get(targets[0]) == "1" and up.get(targets[1]) == "0"

            assert await _wait(only_a_scraped, 30)
            # The lag of every partition is still exported, now by a alone.
            def all_partitions_from_a() -> bool:
                q = f'count(driftline_consumer_lag{{stage="scorer",instance="{targets[0]}"}})'
                res = prom.query(q)
                return bool(res) and float(res[0]["value"][1]) == partitions

            assert await _wait(all_partitions_from_a, 30)
            missing = await asyncio.to_thread(_missing, prom)
            assert not missing, "no data after the rebalance:\n" + "\n".join(missing)
            assert a.scorer is not None and len(a.scorer.assignment()) == partitions
    finally:
        stop_process(proc, 15)
