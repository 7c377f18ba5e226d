"""Deployment artefacts: Prometheus rules (promtool), compose and k8s YAML, the Grafana
dashboard, and a real Prometheus scraping a real prometheus-client endpoint."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import free_port, stop_process
from tests.fixtures.prometheus import PROMETHEUS, start_prometheus, walk_exprs
from watcher.config import env_overrides, load_config

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
PROM = DEPLOY / "prometheus"
PROMTOOL = shutil.which("promtool")

COUNTERS = {
    "driftline_events_consumed_total",
    "driftline_records_processed_total",
    "driftline_render_fallbacks_total",
    "driftline_events_skipped_total",
    "driftline_events_failed_total",
    "driftline_dead_letter_total",
    "driftline_verdicts_total",
    "driftline_alerts_total",
    "driftline_recommendations_total",
    "driftline_crawl_log_gaps_total",
    "driftline_crawl_log_gap_bytes_total",
}
HISTOGRAMS = {
    "driftline_measure_score",
    "driftline_measure_bits",
    "driftline_measure_items",
    "driftline_stage_seconds",
    "driftline_processing_seconds",
    "driftline_fetch_seconds",
    "driftline_render_seconds",
}
GAUGES = {"driftline_consumer_lag", "driftline_consumer_lag_seconds", "driftline_assigned_partitions",
          "driftline_urls_off_topic", "driftline_in_flight", "driftline_up", "driftline_build_info",
          "driftline_process_tree_resident_memory_bytes", "driftline_process_tree_pss_bytes",
          "driftline_process_tree_processes", "driftline_seeds_low_yield", "driftline_seeds_tracked"}
# gauge histograms over seeds (watcher.seeds.stream): _bucket, _gcount and _gsum
GAUGE_HISTOGRAMS = {"driftline_seed_yield", "driftline_seed_change_rate"}
KNOWN = (COUNTERS | GAUGES | {h + s for h in HISTOGRAMS for s in ("_bucket", "_sum", "_count")}
         | {h + s for h in GAUGE_HISTOGRAMS for s in ("_bucket", "_gsum", "_gcount")})
METRIC_RE = re.compile(r"\bdriftline_[a-z0-9_]+")

needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian package prometheus)")


def metric_names(expr: str) -> set[str]:
    return set(METRIC_RE.findall(expr))


# -- Prometheus rules -------------------------------------------------------


@needs_promtool
def test_promtool_check_rules() -> None:
    assert PROMTOOL is not None
    res = subprocess.run([PROMTOOL, "check", "rules", "rules.yml"], cwd=PROM, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SUCCESS" in res.stdout


@needs_promtool
def test_promtool_rule_unit_tests() -> None:
    assert PROMTOOL is not None
    res = subprocess.run([PROMTOOL, "test", "rules", "rules_test.yml"], cwd=PROM, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


@needs_promtool
def test_promtool_check_config() -> None:
    assert PROMTOOL is not None
    res = subprocess.run([PROMTOOL, "check", "config", "prometheus.yml"], cwd=PROM, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_rules_cover_required_alerts_and_known_metrics() -> None:
    doc = yaml.safe_load((PROM / "rules.yml").read_text())
    rules = [r for g in doc["groups"] for r in g["rules"]]
    alerts = {r["alert"] for r in rules if "alert" in r}
    assert {
        "DriftlineConsumerLagHigh",
        "DriftlineConsumerLagGrowing",
        "DriftlineDeadLetters",
        "DriftlineCrawlLogGap",
        "DriftlineOffTopicSpike",
        "DriftlineRenderFailures",
        "DriftlineNoEventsConsumed",
    } <= alerts
    for r in rules:
        unknown = metric_names(r["expr"]) - KNOWN
        assert not unknown, f"{r.get('alert') or r.get('record')}: unknown metrics {unknown}"
    tested = yaml.safe_load((PROM / "rules_test.yml").read_text())
    covered = {a["alertname"] for t in tested["tests"] for a in t.get("alert_rule_test", [])}
    assert alerts <= covered, f"alerts without a unit test: {alerts - covered}"


def _alert_rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load((PROM / "rules.yml").read_text())
    return [r for g in doc["groups"] for r in g["rules"] if "alert" in r]


def test_every_alert_links_an_existing_runbook() -> None:
    prefix = "https://github.com/driftline/driftline/blob/main/deploy/runbooks/"
    for rule in _alert_rules():
        url = rule["annotations"].get("runbook_url", "")
        assert url.startswith(prefix), f"{rule['alert']}: runbook_url {url!r}"
        page = DEPLOY / "runbooks" / url.removeprefix(prefix)
        assert page.is_file(), f"{rule['alert']}: {page} missing"
        assert rule["alert"] in page.read_text().splitlines()[0], f"{page.name} does not head {rule['alert']}"
        assert rule["alert"] in (DEPLOY / "runbooks" / "README.md").read_text()


def test_rules_aggregate_replicated_gauges_with_max() -> None:
    """The group's lag and the store's off-topic count are exported by every
    replica: summing them over replicas multiplies them by the pod count."""
    doc = yaml.safe_load((PROM / "rules.yml").read_text())
    dash = json.loads((DEPLOY / "grafana" / "driftline.json").read_text())
    exprs = [r["expr"] for g in doc["groups"] for r in g["rules"]] + list(_walk_exprs(dash["panels"]))
    for e in exprs:
        flat = " ".join(e.split())
        for m in re.finditer(r"(\w+(?: by \([^)]*\))?) \((?:deriv\()?driftline_(consumer_lag|urls_off_topic)\b", flat):
            assert m.group(1).startswith("max"), f"{m.group(2)} aggregated with {m.group(1)}: {flat}"
        assert "driftline_urls_off_topic" not in flat or "max(" in flat, flat


def test_down_alert_matches_compose_servicemonitor_and_annotation_jobs() -> None:
    down = next(r for r in _alert_rules() if r["alert"] == "DriftlineDown")
    assert 'job=~"driftline.*"' in down["expr"] and 'service=~"driftline.*"' in down["expr"]
    assert 'app_kubernetes_io_name="driftline"' in down["expr"]
    assert "absent(" in down["expr"]
    prom = yaml.safe_load((PROM / "prometheus.yml").read_text())
    assert re.fullmatch("driftline.*", next(j["job_name"] for j in prom["scrape_configs"]
                                            if "dns_sd_configs" in j or "static_configs" in j))
    svc = k8s_objects()["Service"]
    assert re.fullmatch("driftline.*", svc["metadata"]["name"])
    assert svc["metadata"]["labels"]["app.kubernetes.io/name"] == "driftline"
    mon = _monitoring()["ServiceMonitor"]
    assert re.fullmatch("driftline.*", svc["metadata"]["labels"][mon["spec"]["jobLabel"]])


# -- docker compose ---------------------------------------------------------


def test_compose_replicas_are_found_by_dns_service_discovery() -> None:
    """One static target behind a scaled service scrapes a random replica each
    time; DNS discovery gives one target per container."""
    prom = yaml.safe_load((PROM / "prometheus.yml").read_text())
    job = next(j for j in prom["scrape_configs"] if j["job_name"] == "driftline")
    assert "static_configs" not in job
    sd = job["dns_sd_configs"][0]
    services = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]
    assert sd["names"] == ["driftline"] and "driftline" in services
    assert sd["type"] == "A" and sd["port"] == 9308
    assert "9308" in services["driftline"]["expose"]
    assert "container_name" not in services["driftline"]  # a fixed name forbids --scale


def test_compose_parses_and_mounts_exist() -> None:
    doc = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    services = doc["services"]
    assert {"kafka", "driftline", "prometheus", "grafana"} <= set(services)
    kafka_env = services["kafka"]["environment"]
    assert "controller" in kafka_env["KAFKA_PROCESS_ROLES"]  # KRaft: no ZooKeeper
    assert "zookeeper" not in json.dumps(doc).lower()
    assert services["driftline"]["command"] == ["run"]
    for name, svc in services.items():
        for vol in svc.get("volumes", []):
            src = vol.split(":", 1)[0]
            if src.startswith("."):
                path = (DEPLOY / src).resolve()
                if name == "driftline" and src.endswith("config.yaml"):
                    continue  # the project's config.yaml (owned by the lead) may not exist yet
                assert path.exists(), f"{name}: bind mount source {src} missing"
    assert (DEPLOY / services["driftline"]["build"]["dockerfile"].removeprefix("deploy/")).exists()


def test_compose_driftline_environment_is_valid_config() -> None:
    env = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]["driftline"]["environment"]
    cfg = load_config(environ={k: str(v) for k, v in env.items()}, overrides={})
    assert cfg.kafka.bootstrap_servers == "kafka:9092"
    assert cfg.kafka.embedded_broker is False
    assert cfg.metrics.host == "0.0.0.0" and cfg.metrics.port == 9308
    assert env_overrides(env)["store"]["path"] == "/data/driftline.db"


_COMPOSE_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}")


class ComposeVariableError(Exception):
    pass


def _interpolate(node: Any, env: dict[str, str]) -> Any:
    """Compose's variable interpolation (``${VAR}``, ``${VAR:-default}``,
    ``${VAR:?message}``) on the parsed file's values, as ``docker compose``
    does it (comments are not interpolated)."""
    if isinstance(node, dict):
        return {k: _interpolate(v, env) for k, v in node.items()}
    if isinstance(node, list):
        return [_interpolate(v, env) for v in node]
    if not isinstance(node, str):
        return node

    def one(m: re.Match[str]) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3)
        value = env.get(name)
        missing = value is None or (value == "" and op is not None and op.startswith(":"))
        if op is not None and op.endswith("?") and missing:
            raise ComposeVariableError(f"required variable {name} is missing a value: {arg}")
        if op is not None and op.endswith("-") and missing:
            return arg
        return value or ""

    return _COMPOSE_VAR.sub(one, node.replace("$$", "\0")).replace("\0", "$")


def _compose(env: dict[str, str]) -> dict[str, Any]:
    doc: dict[str, Any] = _interpolate(yaml.safe_load((DEPLOY / "docker-compose.yml").read_text()), env)
    return doc


def _published(doc: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    """Per service: (host address, host port) of every published port."""
    out: dict[str, list[tuple[str, int]]] = {}
    for name, svc in doc["services"].items():
        for spec in svc.get("ports", []):
            parts = str(spec).split(":")
            assert len(parts) == 3, f"{name}: port {spec!r} names no host address (publishes on all interfaces)"
            out.setdefault(name, []).append((parts[0], int(parts[1])))
    return out


def test_compose_publishes_on_loopback_unless_widened() -> None:
    """Kafka and Prometheus have no authentication in the stack: published on
    every interface they were open to the network.  Loopback by default; one
    documented variable widens it."""
    published = _published(_compose({"GRAFANA_ADMIN_PASSWORD": "x"}))
    assert set(published) == {"kafka", "prometheus", "grafana"}  # driftline's /metrics stays on the compose network
    assert {p for ports in published.values() for p in ports} == {
        ("127.0.0.1", 29092), ("127.0.0.1", 9090), ("127.0.0.1", 3000)}
    wide = _published(_compose({"GRAFANA_ADMIN_PASSWORD": "x", "DRIFTLINE_PUBLISH_ADDRESS": "0.0.0.0",
                                "DRIFTLINE_KAFKA_ADVERTISED_HOST": "crawlhost"}))
    assert {addr for ports in wide.values() for addr, _ in ports} == {"0.0.0.0"}
    text = (DEPLOY / "docker-compose.yml").read_text()
    assert "DRIFTLINE_PUBLISH_ADDRESS" in text.split("services:")[0]  # documented in the header
    kafka = _compose({"GRAFANA_ADMIN_PASSWORD": "x", "DRIFTLINE_KAFKA_ADVERTISED_HOST": "crawlhost"})
    assert "HOST://crawlhost:29092" in kafka["services"]["kafka"]["environment"]["KAFKA_ADVERTISED_LISTENERS"]


def test_compose_has_no_default_password_and_fails_clearly_without_one() -> None:
    with pytest.raises(ComposeVariableError, match=r"GRAFANA_ADMIN_PASSWORD.*deploy/\.env"):
        _compose({})
    with pytest.raises(ComposeVariableError, match="GRAFANA_ADMIN_PASSWORD"):
        _compose({"GRAFANA_ADMIN_PASSWORD": ""})
    doc = _compose({"GRAFANA_ADMIN_PASSWORD": "s3cret-from-env"})
    assert doc["services"]["grafana"]["environment"]["GF_SECURITY_ADMIN_PASSWORD"] == "s3cret-from-env"
    raw = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    secretish = re.compile(r"PASSWORD|SECRET|TOKEN|DSN|SASL", re.I)
    for name, svc in raw["services"].items():
        env = svc.get("environment", {})
        assert isinstance(env, dict), name
        for key, value in env.items():
            if secretish.search(key):
                assert re.fullmatch(r"\$\{[A-Z_]+:\?[^}]+\}", str(value)), f"{name}: {key} has a literal value"
    example = (DEPLOY / ".env.example").read_text()
    assert re.search(r"^GRAFANA_ADMIN_PASSWORD=$", example, re.M)  # a blank to fill in, not a default
    used = {m[0] for m in _COMPOSE_VAR.findall(json.dumps(raw))}
    documented = set(re.findall(r"^#?([A-Z_]+)=", example, re.M))
    assert used == documented, f"variables of the compose file vs deploy/.env.example: {used ^ documented}"
    ignored = subprocess.run(["git", "check-ignore", "-q", "deploy/.env"], cwd=DEPLOY.parent)
    assert ignored.returncode == 0, "deploy/.env (the filled-in secrets) is not gitignored"


def test_grafana_provisioning_parses() -> None:
    ds = yaml.safe_load((DEPLOY / "grafana/provisioning/datasources/prometheus.yml").read_text())
    assert ds["datasources"][0]["uid"] == "prometheus"
    prov = yaml.safe_load((DEPLOY / "grafana/provisioning/dashboards/driftline.yml").read_text())
    assert prov["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"


# -- Kubernetes -------------------------------------------------------------


def k8s_objects() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for f in sorted((DEPLOY / "k8s").glob("*.yaml")):
        for obj in yaml.safe_load_all(f.read_text()):
            if obj:
                out[obj["kind"]] = obj
    return out


def test_k8s_manifests() -> None:
    objs = k8s_objects()
    assert {"Deployment", "ConfigMap", "Service", "Kustomization"} <= set(objs)
    kust = objs["Kustomization"]
    for res in kust["resources"]:
        assert (DEPLOY / "k8s" / res).exists()
    dep = objs["Deployment"]["spec"]
    assert dep["replicas"] >= 2
    pod = dep["template"]["spec"]
    assert pod["terminationGracePeriodSeconds"] >= 30
    c = pod["containers"][0]
    assert c["ports"][0]["containerPort"] == 9308
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert dep["selector"]["matchLabels"].items() <= dep["template"]["metadata"]["labels"].items()
    svc = objs["Service"]
    assert svc["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
    assert svc["metadata"]["annotations"]["prometheus.io/port"] == "9308"
    assert svc["spec"]["ports"][0]["port"] == 9308
    assert svc["spec"]["selector"].items() <= dep["template"]["metadata"]["labels"].items()
    mounted = {v["name"]: v for v in pod["volumes"]}
    assert mounted["config"]["configMap"]["name"] == objs["ConfigMap"]["metadata"]["name"]


def _monitoring() -> dict[str, dict[str, Any]]:
    """The consumers' monitoring objects by kind (the DOI monitor's, named driftline-doi, are
    tests/deploy/test_doi_deploy.py's)."""
    out: dict[str, dict[str, Any]] = {}
    for f in sorted((DEPLOY / "k8s" / "monitoring").glob("*.yaml")):
        for obj in yaml.safe_load_all(f.read_text()):
            if obj and obj.get("metadata", {}).get("name") != "driftline-doi":
                out[obj["kind"]] = obj
    return out


def test_k8s_prometheusrule_and_servicemonitor() -> None:
    objs = _monitoring()
    assert {"PrometheusRule", "ServiceMonitor", "Kustomization"} <= set(objs)
    for res in objs["Kustomization"]["resources"]:
        assert (DEPLOY / "k8s" / "monitoring" / res).exists()
    for kind in ("PrometheusRule", "ServiceMonitor"):
        assert objs[kind]["apiVersion"] == "monitoring.coreos.com/v1"
        assert objs[kind]["metadata"]["name"]
    # The PrometheusRule carries exactly the groups promtool checks and tests.
    rules = yaml.safe_load((PROM / "rules.yml").read_text())
    assert objs["PrometheusRule"]["spec"]["groups"] == rules["groups"]
    # The ServiceMonitor selects the metrics Service and names its port.
    mon, svc = objs["ServiceMonitor"]["spec"], k8s_objects()["Service"]
    assert mon["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    assert {e["port"] for e in mon["endpoints"]} <= {p["name"] for p in svc["spec"]["ports"]}
    assert all(e["path"] == "/metrics" for e in mon["endpoints"])
    assert mon["jobLabel"] in svc["metadata"]["labels"]
    # Not in the base kustomization: clusters without the operator's CRDs apply deploy/k8s alone.
    base = k8s_objects()["Kustomization"]["resources"]
    assert not any("monitoring" in r for r in base)


@needs_promtool
def test_prometheusrule_groups_pass_promtool(tmp_path: Path) -> None:
    assert PROMTOOL is not None
    groups = _monitoring()["PrometheusRule"]["spec"]["groups"]
    (tmp_path / "rules.yml").write_text(yaml.safe_dump({"groups": groups}))
    res = subprocess.run([PROMTOOL, "check", "rules", "rules.yml"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_k8s_configmap_is_valid_config(tmp_path: Path) -> None:
    text = k8s_objects()["ConfigMap"]["data"]["config.yaml"]
    path = tmp_path / "config.yaml"
    path.write_text(text)
    cfg = load_config(path, environ={})
    assert cfg.kafka.embedded_broker is False
    assert cfg.metrics.port == 9308 and cfg.metrics.host == "0.0.0.0"
    assert cfg.store.backend == "sqlite"


# -- Grafana dashboard ------------------------------------------------------


def _walk_exprs(node: Any) -> Iterator[str]:
    return walk_exprs(node, ("expr", "definition", "query"))


def test_dashboard_queries_only_known_metrics() -> None:
    dash = json.loads((DEPLOY / "grafana" / "driftline.json").read_text())
    assert dash["uid"] == "driftline"
    exprs = list(_walk_exprs(dash))
    used: set[str] = set()
    for e in exprs:
        used |= metric_names(e)
    assert used, "dashboard queries no driftline metric"
    assert not used - KNOWN, f"dashboard queries unknown metrics: {used - KNOWN}"
    # the panels the brief asks for
    titles = " | ".join(p["title"].lower() for p in dash["panels"])
    for word in ("status", "change", "score", "p95", "lag", "off topic", "dead letter", "recommendation"):
        assert word in titles, f"no panel about {word!r}"
    ids = [p["id"] for p in dash["panels"]]
    assert len(ids) == len(set(ids))
    for p in dash["panels"]:
        if p["type"] != "row":
            assert p["targets"], p["title"]
    for metric in ("driftline_verdicts_total", "driftline_consumer_lag", "driftline_dead_letter_total"):
        assert metric in used
    # A bounded collection variable, used by the verdict and alert panels.
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    assert "driftline_verdicts_total, collection" in variables["collection"]["definition"]
    for p in dash["panels"]:
        for t in p.get("targets", []):
            if "driftline_verdicts_total" in t["expr"] or "driftline_alerts_total" in t["expr"]:
                assert 'collection=~"$collection"' in t["expr"], p["title"]
    # One unit per panel: no seconds and rates on one axis; scores per measure kind.
    for p in dash["panels"]:
        exprs = [t["expr"] for t in p.get("targets", [])]
        unit = p.get("fieldConfig", {}).get("defaults", {}).get("unit")
        if unit == "s":
            assert all("histogram_quantile" in e or "_seconds" in e for e in exprs), p["title"]
            assert not any("_count[" in e and "histogram_quantile" not in e for e in exprs), p["title"]
        kinds = {k for k in ("measure_score", "measure_bits", "measure_items") if any(k in e for e in exprs)}
        assert len(kinds) <= 1, f"{p['title']} mixes score scales {kinds}"


# -- a real Prometheus scraping a real exporter -----------------------------


def _get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as resp:
        data = json.loads(resp.read())
    assert isinstance(data, dict), data  # the Prometheus HTTP API answers with a JSON object
    return data


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus)")
def test_prometheus_scrapes_driftline_metrics_and_loads_rules(tmp_path: Path) -> None:
    from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

    assert PROMETHEUS is not None
    reg = CollectorRegistry()
    Gauge("driftline_up", "1 while the process runs", registry=reg).set(1)
    verdicts = Counter("driftline_verdicts", "verdicts", ["status", "change"], registry=reg)
    verdicts.labels("off-topic", "off-topic").inc(3)
    exporter_port = free_port()
    server, thread = start_http_server(exporter_port, addr="127.0.0.1", registry=reg)
    prom_port = free_port()
    shutil.copy(PROM / "rules.yml", tmp_path / "rules.yml")
    (tmp_path / "prometheus.yml").write_text(
        yaml.safe_dump(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": ["rules.yml"],
                "scrape_configs": [
                    {"job_name": "driftline", "static_configs": [{"targets": [f"127.0.0.1:{exporter_port}"]}]}
                ],
            }
        )
    )
    proc = start_prometheus(tmp_path / "prometheus.yml", tmp_path, prom_port)
    base = f"http://127.0.0.1:{prom_port}"
    try:
        deadline = time.monotonic() + 45
        value: list[Any] = []
        while time.monotonic() < deadline:
            try:
                q = urllib.parse.quote('driftline_verdicts_total{status="off-topic"}')
                res = _get_json(f"{base}/api/v1/query?query={q}")["data"]["result"]
                if res:
                    value = res
                    break
            except OSError:
                pass
            assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()[-2000:]
            time.sleep(0.5)
        assert value, "Prometheus never scraped driftline_verdicts_total"
        assert value[0]["metric"]["job"] == "driftline"
        assert float(value[0]["value"][1]) == 3.0
        up = _get_json(f"{base}/api/v1/query?query=driftline_up")["data"]["result"]
        assert float(up[0]["value"][1]) == 1.0
        groups = _get_json(f"{base}/api/v1/rules")["data"]["groups"]
        assert {g["name"] for g in groups} == {"driftline.recording", "driftline.alerts"}
        names = {r["name"] for g in groups for r in g["rules"]}
        assert "DriftlineDeadLetters" in names and "driftline:off_topic_share:ratio15m" in names
    finally:
        stop_process(proc, 15)
        server.shutdown()
        thread.join(timeout=5)
