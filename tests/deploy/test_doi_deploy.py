"""The DOI monitor's Prometheus rules (promtool) and Grafana dashboard: they
name only metrics the monitor exports; and the monitor in the shipped deployments (compose and
Kubernetes): run, scraped, alerted on, its dashboard provisioned, a runbook per alert."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from watcher.config import Config, load_config
from watcher.doi.metrics import DoiMetrics
from watcher.doi.schedule import PG_JOBSTORE, jobstore_url
from watcher.errors import ConfigError
from watcher.store import open_store

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
PROM = DEPLOY / "prometheus"
PROMTOOL = shutil.which("promtool")
METRIC_RE = re.compile(r"\bdriftline_doi_[a-z0-9_]+")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian package prometheus)")


def exported() -> set[str]:
    names: set[str] = set()
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


# -- the DOI monitor in the shipped deployments --------------------------------------------------
# Why: the monitor, its rules and its dashboard existed, but neither stack ran `driftline doi run`,
# Prometheus loaded rules.yml only and scraped no monitor: the DOI dashboard and alerts had no data.

K8S = DEPLOY / "k8s"
RUNBOOK_PREFIX = "https://github.com/driftline/driftline/blob/main/deploy/runbooks/"
KUBECTL = shutil.which("kubectl")


def _yaml_docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _doi_k8s() -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for f in sorted((K8S / "doi").glob("*.yaml")) for o in _yaml_docs(f)}


def _by_name(directory: Path, name: str) -> dict[str, dict[str, Any]]:
    return {o["kind"]: o for f in sorted(directory.glob("*.yaml")) for o in _yaml_docs(f)
            if o.get("metadata", {}).get("name") == name}


def _doi_alerts() -> list[dict[str, Any]]:
    doc = yaml.safe_load((PROM / "doi_rules.yml").read_text())
    return [r for g in doc["groups"] for r in g["rules"] if "alert" in r]


def _compose() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    return doc


def _mounts(svc: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Container path -> (source, mode) of a compose service's volumes."""
    out = {}
    for v in svc.get("volumes", []):
        parts = v.split(":")
        out[parts[1]] = (parts[0], parts[2] if len(parts) > 2 else "rw")
    return out


def _config(environ: dict[str, str], path: Path | None = None) -> Config:
    return load_config(path, environ=environ)


def test_compose_runs_the_doi_monitor_with_its_state_on_a_volume() -> None:
    doc = _compose()
    services = doc["services"]
    doi = services["doi"]
    assert doi["command"] == ["doi", "run"]
    assert "container_name" not in doi and "deploy" not in doi  # one container: its scheduler is not shared
    assert doi["build"] == services["driftline"]["build"] and doi["image"] == services["driftline"]["image"]
    env = {k: str(v) for k, v in doi["environment"].items()}
    cfg = _config(env)
    assert cfg.kafka.bootstrap_servers == "kafka:9092" and cfg.kafka.embedded_broker is False
    assert cfg.doi.status_host == "0.0.0.0"  # Prometheus is another container
    assert str(cfg.doi.status_port) in doi["expose"] and "ports" not in doi  # not published
    # The store, the job store beside it and the WARCs are all on the named volume.
    mounts = _mounts(doi)
    volume_path = next(p for p, (src, _) in mounts.items() if src in doc["volumes"])
    assert mounts[volume_path][0] == "doi-data" and cfg.store.backend == "sqlite"
    assert cfg.store.path.startswith(volume_path + "/") and cfg.doi.warc_dir.startswith(volume_path + "/")
    assert jobstore_url(cfg.store) == f"sqlite:///{cfg.store.path}.jobs"
    # The consumers read the monitor's capture events and the WARCs those name, from the same volume.
    consumer = services["driftline"]
    ccfg = _config({k: str(v) for k, v in consumer["environment"].items()}, DEPLOY.parent / "config.yaml")
    assert ccfg.doi.events_topic in ccfg.kafka.input_topics
    cmounts = _mounts(consumer)
    where = next(p for p, (src, _) in cmounts.items() if src == "doi-data")
    assert cmounts[where][1] == "ro"
    assert Path(ccfg.doi.warc_dir).relative_to(where) == Path(cfg.doi.warc_dir).relative_to(volume_path)
    # Healthy = its scheduler runs: the healthcheck asks /readyz on the status port.
    assert f"127.0.0.1:{cfg.doi.status_port}/readyz" in " ".join(doi["healthcheck"]["test"])
    assert doi["depends_on"]["kafka"]["condition"] == "service_healthy"


def test_compose_prometheus_loads_the_doi_rules_and_scrapes_the_monitor() -> None:
    services = _compose()["services"]
    prom_cfg = yaml.safe_load((PROM / "prometheus.yml").read_text())
    assert {"rules.yml", "doi_rules.yml"} <= set(prom_cfg["rule_files"])
    mounted = {dst: src for dst, (src, _) in _mounts(services["prometheus"]).items()}
    for rule_file in prom_cfg["rule_files"]:  # relative to the config file, as in the repository
        assert mounted[f"/etc/prometheus/{rule_file}"] == f"./prometheus/{rule_file}"
    job = next(j for j in prom_cfg["scrape_configs"] if j["job_name"] == "driftline-doi")
    env = {k: str(v) for k, v in services["doi"]["environment"].items()}
    assert job["static_configs"] == [{"targets": [f"doi:{_config(env).doi.status_port}"]}]
    assert job.get("metrics_path", "/metrics") == "/metrics"
    # The job's name is what every DOI alert's target selector matches, and what DriftlineDown leaves out.
    down = next(r for r in _doi_alerts() if r["alert"] == "DriftlineDoiDown")
    assert re.search(r'job=~"driftline-doi\.\*"', down["expr"])
    consumers_down = next(r for g in yaml.safe_load((PROM / "rules.yml").read_text())["groups"]
                          for r in g["rules"] if r.get("alert") == "DriftlineDown")
    assert 'job!~"driftline-doi.*"' in consumers_down["expr"]


@needs_promtool
def test_promtool_checks_the_shipped_prometheus_config_with_both_rule_files() -> None:
    assert PROMTOOL is not None
    res = subprocess.run([PROMTOOL, "check", "config", "prometheus.yml"], cwd=PROM, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout + res.stderr
    assert "Checking doi_rules.yml" in out and "Checking rules.yml" in out, out


def test_compose_grafana_provisions_the_doi_dashboard() -> None:
    grafana = _compose()["services"]["grafana"]
    prov = yaml.safe_load((DEPLOY / "grafana/provisioning/dashboards/driftline.yml").read_text())
    folder = prov["providers"][0]["options"]["path"]
    mounted = {dst: src for dst, (src, _) in _mounts(grafana).items()}
    for name in ("driftline.json", "doi.json"):
        assert mounted[f"{folder}/{name}"] == f"./grafana/{name}"
        assert (DEPLOY / "grafana" / name).is_file()


def test_k8s_doi_monitor_manifests() -> None:
    objs = _doi_k8s()
    assert set(objs) == {"Kustomization", "Deployment", "Service", "PersistentVolumeClaim"}
    assert all((K8S / "doi" / r).is_file() for r in objs["Kustomization"]["resources"])
    assert "doi" in yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    for kind in ("Deployment", "Service", "PersistentVolumeClaim"):
        for version in ("1.29.0", str(kubernetes_validate.latest_version())):
            kubernetes_validate.validate(objs[kind], version, strict=True)
    dep = objs["Deployment"]["spec"]
    assert dep["replicas"] == 1 and dep["strategy"]["type"] == "Recreate"  # never two schedulers at once
    pod = dep["template"]["spec"]
    labels = dep["template"]["metadata"]["labels"]
    assert dep["selector"]["matchLabels"].items() <= labels.items()
    assert labels["app.kubernetes.io/name"] == "driftline-doi"  # not a consumer for DriftlineDown or the PDB
    c = pod["containers"][0]
    assert c["args"] == ["doi", "run"]
    port = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert c["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    d = objs["PersistentVolumeClaim"]["spec"]
    assert d["accessModes"] == ["ReadWriteOnce"]
    vols = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    claim = objs["PersistentVolumeClaim"]["metadata"]["name"]
    assert vols[mounts["/data"]]["persistentVolumeClaim"]["claimName"] == claim
    # A drain as long as one check's budget (doi.timeout_s x (retries + 1) + backoff) fits the grace period.
    defaults = load_config(environ={}).doi
    budget = defaults.timeout_s * (defaults.retries + 1) + defaults.backoff_s * 2 ** defaults.retries
    assert pod["terminationGracePeriodSeconds"] > budget
    svc = objs["Service"]
    assert svc["spec"]["selector"].items() <= labels.items()
    assert [(p["port"], p["targetPort"]) for p in svc["spec"]["ports"]] == [(port["http"], "http")]
    ann = svc["metadata"]["annotations"]
    assert ann["prometheus.io/scrape"] == "true" and ann["prometheus.io/port"] == str(port["http"])
    consumer = yaml.safe_load((K8S / "service.yaml").read_text())
    assert not consumer["spec"]["selector"].items() <= labels.items()  # the consumers' Service skips it


def _pod_environ(secret: dict[str, str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for e in _doi_k8s()["Deployment"]["spec"]["template"]["spec"]["containers"][0]["env"]:
        if "value" in e:
            env[e["name"]] = str(e["value"])
        else:
            ref = e["valueFrom"]["secretKeyRef"]
            assert ref["name"] == "driftline-secrets" and ref.get("optional") is True, e
            if ref["key"] in secret:
                env[e["name"]] = secret[ref["key"]]
    return env


def test_k8s_doi_monitor_keeps_its_job_store_in_the_postgres_store(tmp_path: Path) -> None:
    """The pod's config as the kubelet builds it (ConfigMap + env + Secret): the store is
    PostgreSQL at store-dsn and the schedule's job store is that database; the status port the
    probes and the Service use is the one the monitor serves, beyond loopback."""
    configmap = yaml.safe_load((K8S / "configmap.yaml").read_text())
    (tmp_path / "config.yaml").write_text(configmap["data"]["config.yaml"])
    dsn = "postgresql://driftline:REPLACE-ME@postgres.db.svc.cluster.local:5432/driftline"
    cfg = load_config(tmp_path / "config.yaml", environ=_pod_environ({"store-dsn": dsn}))
    assert cfg.store.backend == "postgres" and cfg.store.dsn is not None
    assert cfg.store.dsn.get_secret_value() == dsn
    assert cfg.doi.jobstore_url is None and jobstore_url(cfg.store, cfg.doi.jobstore_url) == PG_JOBSTORE
    port = _doi_k8s()["Deployment"]["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"]
    assert cfg.doi.status_port == port and cfg.doi.status_host == "0.0.0.0"
    assert cfg.doi.warc_dir.startswith("/data/")  # the PersistentVolumeClaim's mount
    # Without store-dsn the monitor stops at start-up, naming the variable; the consumers do not need it.
    bare = load_config(tmp_path / "config.yaml", environ=_pod_environ({}))
    with pytest.raises(ConfigError, match="DRIFTLINE__STORE__DSN"):
        open_store(bare.store)
    with pytest.raises(ConfigError, match=r"store\.dsn"):
        jobstore_url(bare.store, bare.doi.jobstore_url)


def test_k8s_monitoring_scrapes_and_alerts_on_the_doi_monitor() -> None:
    mon = K8S / "monitoring"
    kust = yaml.safe_load((mon / "kustomization.yaml").read_text())
    assert all((mon / r).exists() for r in kust["resources"])
    objs = _by_name(mon, "driftline-doi")
    sm, rule = objs["ServiceMonitor"]["spec"], objs["PrometheusRule"]["spec"]
    assert rule["groups"] == yaml.safe_load((PROM / "doi_rules.yml").read_text())["groups"]
    svc = _doi_k8s()["Service"]
    assert sm["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    assert {e["port"] for e in sm["endpoints"]} <= {p["name"] for p in svc["spec"]["ports"]}
    assert all(e["path"] == "/metrics" for e in sm["endpoints"])
    job = svc["metadata"]["labels"][sm["jobLabel"]]
    assert re.fullmatch("driftline-doi.*", job)
    # The consumers' ServiceMonitor does not select the DOI Service (it would scrape it as job=driftline).
    consumers = _by_name(mon, "driftline")["ServiceMonitor"]["spec"]
    assert not consumers["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()


def test_every_alert_has_a_runbook_and_every_runbook_an_alert() -> None:
    rules = [r for f in ("rules.yml", "doi_rules.yml")
             for g in yaml.safe_load((PROM / f).read_text())["groups"] for r in g["rules"] if "alert" in r]
    index = (DEPLOY / "runbooks" / "README.md").read_text()
    pages = set()
    for rule in rules:
        url = rule["annotations"].get("runbook_url", "")
        assert url.startswith(RUNBOOK_PREFIX), f"{rule['alert']}: runbook_url {url!r}"
        page = DEPLOY / "runbooks" / url.removeprefix(RUNBOOK_PREFIX)
        assert page.is_file(), f"{rule['alert']}: {page} missing"
        assert rule["alert"] in page.read_text().splitlines()[0], f"{page.name} does not head {rule['alert']}"
        assert f"| {rule['alert']}" in index or f", {rule['alert']}" in index, f"{rule['alert']} not in README.md"
        pages.add(page.name)
    orphans = {p.name for p in (DEPLOY / "runbooks").glob("Driftline*.md")} - pages
    assert not orphans, f"runbooks of no alert: {orphans}"
    assert {a["alert"] for a in _doi_alerts()} >= {"DriftlineDoiDown", "DriftlineDoiDrifted", "DriftlineDoiNoChecks"}


@pytest.mark.skipif(KUBECTL is None, reason="kubectl (with its built-in kustomize) not installed")
def test_kustomize_builds_the_doi_monitor_and_the_dashboards(tmp_path: Path) -> None:
    """What `kubectl apply -k` applies: the DOI Deployment reads the generated Secret (hashed
    name) and carries the base's image tag; the monitoring kustomization ships both dashboards
    as ConfigMaps for Grafana's sidecar, byte for byte the files compose provisions."""
    assert KUBECTL is not None
    base = tmp_path / "k8s"
    shutil.copytree(K8S, base, ignore=shutil.ignore_patterns("secrets.env"))
    shutil.copytree(DEPLOY / "grafana", tmp_path / "grafana")
    lines = (K8S / "secrets.env.example").read_text().splitlines()
    (base / "secrets.env").write_text("\n".join(re.sub(r"^#([a-z][a-z0-9-]*=)", r"\1", ln) for ln in lines) + "\n")
    res = subprocess.run([KUBECTL, "kustomize", str(base)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    built = [o for o in yaml.safe_load_all(res.stdout) if o]
    secret = next(o for o in built if o["kind"] == "Secret")["metadata"]["name"]
    deployments = {o["metadata"]["name"]: o for o in built if o["kind"] == "Deployment"}
    assert set(deployments) == {"driftline", "driftline-doi"}
    doi = deployments["driftline-doi"]
    c = doi["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == deployments["driftline"]["spec"]["template"]["spec"]["containers"][0]["image"]
    assert {e["valueFrom"]["secretKeyRef"]["name"] for e in c["env"] if "valueFrom" in e} == {secret}
    assert doi["metadata"]["labels"]["app.kubernetes.io/part-of"] == "driftline"
    assert any(o["kind"] == "PersistentVolumeClaim" for o in built)
    res = subprocess.run([KUBECTL, "kustomize", str(base / "monitoring")], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    mon = [o for o in yaml.safe_load_all(res.stdout) if o]
    dashboards = {o["metadata"]["name"]: o for o in mon if o["kind"] == "ConfigMap"}
    assert set(dashboards) == {"driftline-dashboard", "driftline-doi-dashboard"}
    for cm, name in ((dashboards["driftline-dashboard"], "driftline.json"),
                     (dashboards["driftline-doi-dashboard"], "doi.json")):
        assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
        assert cm["data"][name] == (DEPLOY / "grafana" / name).read_text()
        for version in ("1.29.0", str(kubernetes_validate.latest_version())):
            kubernetes_validate.validate(cm, version, strict=True)
    assert {(o["kind"], o["metadata"]["name"]) for o in mon if o["kind"] != "ConfigMap"} == {
        ("ServiceMonitor", "driftline"), ("ServiceMonitor", "driftline-doi"),
        ("PrometheusRule", "driftline"), ("PrometheusRule", "driftline-doi")}


def test_the_image_can_open_the_postgres_store() -> None:
    """The Kubernetes DOI monitor runs on the PostgreSQL store: the image must install psycopg
    (the postgres extra), or the pod stops at its first connection."""
    container = _doi_k8s()["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["DRIFTLINE__STORE__BACKEND"] == "postgres"
    pyproject = (DEPLOY.parent / "pyproject.toml").read_text()
    assert re.search(r'^postgres = \[.*"psycopg', pyproject, re.M)
    installs = [ln for ln in (DEPLOY / "Dockerfile").read_text().splitlines() if "pip install" in ln]
    assert installs and all(re.search(r'pip install "?\.\[[^\]]*postgres', ln) for ln in installs), installs


@pytest.mark.postgres
@pytest.mark.kafka
async def test_the_k8s_doi_pod_config_runs_on_a_real_postgres_store(tmp_path: Path, postgres_dsn: str,
                                                                    kafka_broker: Any, kafka_names: Any) -> None:
    """The config the DOI pod gets (the ConfigMap, the Deployment's env, store-dsn from the Secret)
    run by ``driftline doi run``'s own code against a real PostgreSQL and a real broker: it
    becomes ready (/readyz, the readiness probe), checks the DOI, and its schedule is in the
    store's database (the table doi_jobs), not a file in the pod.  Only what a test must change
    is overlaid: the broker, the resolver on loopback, the port and WARC folder, no browser."""
    import asyncio
    from dataclasses import replace

    import aiohttp
    import psycopg

    from consumers.doi import serve_monitor
    from tests.conftest import free_port
    from tests.fixtures import doi_pages as dp
    from tests.fixtures.doi_server import Page, doi_config, landscape
    from watcher.doi.lists import DoiEntry
    from watcher.doi.registry import open_registry

    configmap = yaml.safe_load((K8S / "configmap.yaml").read_text())
    (tmp_path / "config.yaml").write_text(configmap["data"]["config.yaml"])
    environ = _pod_environ({"store-dsn": postgres_dsn})
    async with landscape() as land:
        land.pages["10.5555/k8s"] = Page(dp.highwire(replace(dp.article(7), doi="10.5555/k8s"), 0))
        test = doi_config(land, tmp_path)
        port = free_port()
        overlay = {"acquire": test["acquire"], "render": test["render"],
                   "doi": {**test["doi"], "status_host": "127.0.0.1", "status_port": port},
                   "kafka": {"bootstrap_servers": kafka_broker.bootstrap_servers, "partitions": 1,
                             "alerts_topic": kafka_names.topic("alerts")}}
        overlay["doi"]["events_topic"] = kafka_names.topic("doi")
        cfg = load_config(tmp_path / "config.yaml", environ=environ, overrides=overlay)
        assert cfg.store.backend == "postgres" and jobstore_url(cfg.store, cfg.doi.jobstore_url) == PG_JOBSTORE
        with open_registry(cfg.store) as reg:
            reg.add([DoiEntry("10.5555/k8s", interval_s=3600)])
        stop = asyncio.Event()
        task = asyncio.create_task(serve_monitor(cfg, stop=stop))
        try:
            async def ready() -> bool:
                try:
                    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/readyz") as r:
                        return r.status == 200
                except aiohttp.ClientError:
                    return False

            def checked() -> bool:
                with open_registry(cfg.store) as reg:
                    return bool(reg.checks("10.5555/k8s"))

            deadline = asyncio.get_running_loop().time() + 90
            while not (await ready() and await asyncio.to_thread(checked)):
                assert not task.done(), task
                assert asyncio.get_running_loop().time() < deadline, "the DOI pod never became ready and checked"
                await asyncio.sleep(0.5)
            with psycopg.connect(postgres_dsn) as conn:
                jobs = [r[0] for r in conn.execute("SELECT id FROM doi_jobs").fetchall()]
            assert jobs == ["doi:10.5555/k8s"]
        finally:
            stop.set()
            assert await asyncio.wait_for(task, 60) == 0
