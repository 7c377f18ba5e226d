"""The deploy assets checked against real schemas and a real PromQL parser,
offline: every Kubernetes manifest (and the Secret kustomize generates) by
``kubernetes-validate --strict`` with the schemas it ships, the Secrets'
wiring into driftline's config, and every Grafana query by ``promtool``.

Why: a manifest with a misspelt field is applied without complaint by a
lenient client and silently does nothing (a probe, a limit, a secret never
set); a dashboard query that does not parse shows "No data" forever.  The
running-Prometheus test (test_ops_prometheus.py) proves the queries return
data; this one covers every query of both dashboards, the DOI one included.
"""

from __future__ import annotations

import base64
import copy
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from watcher.config import is_secret_key, load_config
from watcher.errors import ConfigError
from watcher.kafkasec import kafka_security_options
from watcher.store import open_store

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"
PROMTOOL = shutil.which("promtool")
# The oldest Kubernetes release still commonly run, and the newest the package ships.
K8S_VERSIONS = ("1.29.0", str(kubernetes_validate.latest_version()))
# Kinds kubernetes-validate has no schema for: kustomize's own file and the Prometheus
# Operator's CRDs (test_deploy.py checks their structure; promtool checks the rules).
NO_SCHEMA = {("kustomize.config.k8s.io/v1beta1", "Kustomization"), ("monitoring.coreos.com/v1", "PrometheusRule"),
             ("monitoring.coreos.com/v1", "ServiceMonitor")}


def _docs(directory: Path) -> list[tuple[Path, dict[str, Any]]]:
    return [(f, obj) for f in sorted(directory.glob("*.yaml")) for obj in yaml.safe_load_all(f.read_text()) if obj]


def _objects() -> dict[str, dict[str, Any]]:
    return {obj["kind"]: obj for _, obj in _docs(K8S)}


def _example_secret(with_keys: bool = True) -> dict[str, Any]:
    """The Secret kustomize's secretGenerator makes from secrets.env, here from the
    template with its placeholder lines uncommented (``with_keys=False``: none)."""
    gen = _objects()["Kustomization"]["secretGenerator"]
    assert [g["name"] for g in gen] == ["driftline-secrets"] and gen[0]["envs"] == ["secrets.env"]
    data: dict[str, str] = {}
    for line in (K8S / "secrets.env.example").read_text().splitlines():
        m = re.fullmatch(r"#?([a-z][a-z0-9-]*)=(.+)", line.strip())
        if m and with_keys:
            data[m.group(1)] = base64.b64encode(m.group(2).encode()).decode()
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": gen[0]["name"], "labels": {"app.kubernetes.io/part-of": "driftline"}}, "data": data}


def _validate(obj: dict[str, Any]) -> None:
    for version in K8S_VERSIONS:
        kubernetes_validate.validate(obj, version, strict=True)


def test_k8s_manifests_pass_the_kubernetes_schemas_strictly() -> None:
    checked, skipped = [], set()
    for path, obj in _docs(K8S) + _docs(K8S / "monitoring"):
        if (obj["apiVersion"], obj["kind"]) in NO_SCHEMA:
            skipped.add(obj["kind"])
            continue
        try:
            _validate(obj)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{path.name}: {obj['kind']} fails the schema: {exc}")
        checked.append(obj["kind"])
    _validate(_example_secret())
    assert sorted(checked) == ["ConfigMap", "Deployment", "PodDisruptionBudget", "Service"]
    assert skipped == {k for _, k in NO_SCHEMA}
    # Strict means strict: a misspelt field (a secret reference that would be ignored) fails.
    bad = copy.deepcopy(_objects()["Deployment"])
    ref = next(e for e in bad["spec"]["template"]["spec"]["containers"][0]["env"]
               if "secretKeyRef" in e.get("valueFrom", {}))
    ref["valueFrom"]["secretKeyRef"]["optinal"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        _validate(bad)


def _pod_env(secret: dict[str, Any]) -> dict[str, str]:
    """The container's environment as the kubelet builds it from ``secret``."""
    env: dict[str, str] = {}
    for e in _objects()["Deployment"]["spec"]["template"]["spec"]["containers"][0]["env"]:
        if "value" in e:
            env[e["name"]] = str(e["value"])
        elif "secretKeyRef" in e["valueFrom"]:
            ref = e["valueFrom"]["secretKeyRef"]
            assert ref["name"] == secret["metadata"]["name"], e["name"]
            if ref["key"] in secret["data"]:
                env[e["name"]] = base64.b64decode(secret["data"][ref["key"]]).decode()
            else:
                assert ref.get("optional") is True, f"{e['name']}: a missing key would stop the pod silently"
        elif "fieldRef" in e["valueFrom"]:
            env[e["name"]] = "driftline-0"
    return env


def test_k8s_secrets_reach_the_config_from_a_generated_secret_only(tmp_path: Path) -> None:
    objs = _objects()
    container = objs["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    refs = {e["name"]: e["valueFrom"]["secretKeyRef"]["key"] for e in container["env"]
            if "secretKeyRef" in e.get("valueFrom", {})}
    assert refs == {"DRIFTLINE__STORE__DSN": "store-dsn",
                    "DRIFTLINE__KAFKA__SASL_PLAIN_PASSWORD": "kafka-sasl-password"}
    for e in container["env"]:  # no secret config key is ever given a literal value
        if e["name"].startswith("DRIFTLINE__") and is_secret_key(e["name"].rsplit("__", 1)[1]):
            assert "value" not in e, e["name"]
    # The user's secrets.env is never in the repository; the template holds placeholders only.
    root = DEPLOY.parent
    assert subprocess.run(["git", "check-ignore", "-q", "deploy/k8s/secrets.env"], cwd=root).returncode == 0
    tracked = subprocess.run(["git", "ls-files", "deploy/k8s"], cwd=root, capture_output=True, text=True).stdout
    assert "deploy/k8s/secrets.env\n" not in tracked + "\n"
    example = (K8S / "secrets.env.example").read_text()
    assert not re.search(r"^[a-z-]+=", example, re.M), "the template sets a value: comment it out"
    placeholders = dict(re.findall(r"^#([a-z][a-z0-9-]*)=(.*)$", example, re.M))
    assert set(placeholders) == set(refs.values())
    assert all("REPLACE-ME" in v for v in placeholders.values()), placeholders
    # The ConfigMap holds no secret.
    (tmp_path / "config.yaml").write_text(objs["ConfigMap"]["data"]["config.yaml"])
    plain = load_config(tmp_path / "config.yaml", environ={})
    assert plain.store.dsn is None and plain.kafka.sasl_plain_password is None
    # Each Secret key arrives under the name driftline's config reads (not refused as unknown).
    cfg = load_config(tmp_path / "config.yaml", environ=_pod_env(_example_secret()))
    assert cfg.store.dsn is not None and cfg.store.dsn.get_secret_value().startswith("postgresql://driftline:")
    password = cfg.kafka.sasl_plain_password
    assert password is not None and password.get_secret_value() == "REPLACE-ME"
    assert cfg.kafka.client_id == "driftline-$(POD_NAME)"  # (the kubelet expands it; kept verbatim here)
    # A key left out of the Secret: the variable stays unset, and a deployment that needs it
    # stops at start-up with one line naming the variable.
    empty = _pod_env(_example_secret(with_keys=False))
    assert "DRIFTLINE__STORE__DSN" not in empty
    needs_db = load_config(tmp_path / "config.yaml", environ={**empty, "DRIFTLINE__STORE__BACKEND": "postgres"})
    with pytest.raises(ConfigError, match="DRIFTLINE__STORE__DSN"):
        open_store(needs_db.store)
    needs_sasl = load_config(tmp_path / "config.yaml", environ={
        **empty, "DRIFTLINE__KAFKA__SECURITY_PROTOCOL": "SASL_PLAINTEXT", "DRIFTLINE__KAFKA__SASL_PLAIN_USERNAME": "d"})
    with pytest.raises(ConfigError, match="DRIFTLINE__KAFKA__SASL_PLAIN_PASSWORD"):
        kafka_security_options(needs_sasl.kafka)


# -- Grafana dashboards ------------------------------------------------------

GRAFANA_BUILTINS = {"__rate_interval": "1m", "__interval": "1m", "__range": "1h", "__range_s": "3600"}
VAR_RE = re.compile(r"\$\{?(\w+)(?::\w+)?\}?")


def _dashboards() -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text()) for p in sorted((DEPLOY / "grafana").glob("*.json"))}


def _queries(dash: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, PromQL) of every panel target and every query variable, Grafana
    variables replaced as Grafana would (regex variables by ``.*``)."""
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}

    def promql(text: str, where: str) -> str:
        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in GRAFANA_BUILTINS:
                return GRAFANA_BUILTINS[name]
            assert name in variables, f"{where}: ${name} is no variable of the dashboard"
            return ".*"
        return VAR_RE.sub(sub, text)

    out: list[tuple[str, str]] = []
    for panel in dash["panels"]:
        for t in panel.get("targets", []):
            out.append((f"{panel['title']}/{t.get('refId')}", promql(t["expr"], panel["title"])))
    for v in variables.values():
        if v.get("type") != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.fullmatch(r"label_values\((.+),\s*\w+\)", q.strip())
        assert m, f"variable {v['name']}: {q!r} is not label_values(selector, label)"
        out.append((f"${v['name']}", promql(m.group(1), v["name"])))
    return out


def test_dashboards_panels_have_a_prometheus_datasource_and_targets() -> None:
    dashes = _dashboards()
    assert set(dashes) == {"driftline.json", "doi.json"}
    provisioned = yaml.safe_load((DEPLOY / "grafana/provisioning/datasources/prometheus.yml").read_text())
    uids = {d["uid"] for d in provisioned["datasources"] if d["type"] == "prometheus"}
    for name, dash in dashes.items():
        assert dash["uid"] and dash["title"], name
        variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
        ds_var = variables["datasource"]
        assert ds_var["type"] == "datasource" and ds_var["query"] == "prometheus", name
        assert ds_var["current"]["value"] in uids, f"{name}: default datasource is not the provisioned one"
        ids = [p["id"] for p in dash["panels"]]
        assert len(ids) == len(set(ids)), f"{name}: duplicate panel ids"
        for p in dash["panels"]:
            if p["type"] == "row":
                continue
            where = f"{name}: {p['title']}"
            assert p.get("datasource") == {"type": "prometheus", "uid": "${datasource}"}, where
            assert p.get("targets"), f"{where}: no targets"
            refs = [t["refId"] for t in p["targets"]]
            assert len(refs) == len(set(refs)), f"{where}: duplicate refIds"
            for t in p["targets"]:
                assert t.get("expr", "").strip(), f"{where}: empty expression"
                assert t.get("datasource", p["datasource"])["type"] == "prometheus", where


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian package prometheus)")
def test_every_dashboard_query_parses_as_promql(tmp_path: Path) -> None:
    """promtool parses every query as the expression of a recording rule: a
    query that does not parse fails here, not on a wall screen."""
    assert PROMTOOL is not None
    rules, where = [], {}
    for name, dash in _dashboards().items():
        for i, (loc, expr) in enumerate(_queries(dash)):
            record = f"dashboard:{Path(name).stem}:q{i}"
            rules.append({"record": record, "expr": expr})
            where[record] = f"{name}: {loc}"
    assert len(rules) > 40
    (tmp_path / "dash.yml").write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    res = subprocess.run([PROMTOOL, "check", "rules", "dash.yml"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    # ...and promtool does reject a broken one (the check can fail).
    (tmp_path / "bad.yml").write_text(yaml.safe_dump({"groups": [{"name": "bad", "rules": [
        {"record": "dashboard:bad", "expr": "sum(rate(driftline_verdicts_total[1m])"}]}]}))
    res = subprocess.run([PROMTOOL, "check", "rules", "bad.yml"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode != 0


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (with its built-in kustomize) not installed")
def test_kustomize_build_names_the_generated_secret_and_fails_without_secrets_env(tmp_path: Path) -> None:
    """What `kubectl apply -k deploy/k8s` applies: the generated Secret (hashed
    name) is the one the Deployment reads; without secrets.env it stops, naming it."""
    kubectl = shutil.which("kubectl")
    assert kubectl is not None
    base = tmp_path / "k8s"
    shutil.copytree(K8S, base, ignore=shutil.ignore_patterns("secrets.env"))
    res = subprocess.run([kubectl, "kustomize", str(base)], capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "secrets.env" in res.stderr, res.stderr
    lines = (K8S / "secrets.env.example").read_text().splitlines()
    (base / "secrets.env").write_text("\n".join(re.sub(r"^#([a-z][a-z0-9-]*=)", r"\1", ln) for ln in lines) + "\n")
    res = subprocess.run([kubectl, "kustomize", str(base)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    objs = [o for o in yaml.safe_load_all(res.stdout) if o]
    # the consumers, and the DOI monitor (deploy/k8s/doi: its Deployment, Service and WARC volume claim)
    assert sorted((o["kind"], o["metadata"]["name"]) for o in objs) == sorted([
        ("ConfigMap", "driftline-config"), ("Deployment", "driftline"), ("Service", "driftline-metrics"),
        ("PodDisruptionBudget", "driftline"), ("Secret", next(o["metadata"]["name"] for o in objs
                                                            if o["kind"] == "Secret")),
        ("Deployment", "driftline-doi"), ("Service", "driftline-doi"),
        ("PersistentVolumeClaim", "driftline-doi-warcs")])
    for obj in objs:
        _validate(obj)
    secret = next(o for o in objs if o["kind"] == "Secret")
    assert secret["metadata"]["name"].startswith("driftline-secrets-")  # content hash: pods roll on a change
    assert set(secret["data"]) == {"store-dsn", "kafka-sasl-password"}
    for dep in (o for o in objs if o["kind"] == "Deployment"):
        env = dep["spec"]["template"]["spec"]["containers"][0]["env"]
        names = {e["valueFrom"]["secretKeyRef"]["name"] for e in env if "secretKeyRef" in e.get("valueFrom", {})}
        assert names == {secret["metadata"]["name"]}, dep["metadata"]["name"]


def _exported_names() -> set[str]:
    """Every sample name the code exports: the consumer app's registry (with the seed
    distributions it registers) and the DOI monitor's; labelled counters and histograms that
    have no sample yet are named by their family's suffixes."""
    from watcher.doi.metrics import DoiMetrics
    from watcher.metrics import Metrics
    from watcher.seeds.settings import SeedsConfig
    from watcher.seeds.stream import SeedDistribution, SeedReporter

    consumer = Metrics()
    consumer.registry.register(SeedDistribution(SeedReporter(SeedsConfig())))
    names: set[str] = set()
    for registry in (consumer.registry, DoiMetrics().registry):
        for fam in registry.collect():
            names.add(fam.name)
            names.update(s.name for s in fam.samples)
            suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"),
                        "gaugehistogram": ("_bucket", "_gsum", "_gcount")}.get(fam.type, ())
            names.update(fam.name + s for s in suffixes)
    return names


def test_every_dashboard_panel_queries_metrics_the_code_exports() -> None:
    """A panel over a metric nobody exports shows "No data" forever: every driftline_* name in
    both dashboards' queries is a sample name of the code's registries (not of a list kept by hand)."""
    exported = _exported_names()
    assert {"driftline_verdicts_total", "driftline_seed_change_rate_bucket", "driftline_doi_checks_total"} <= exported
    for name, dash in _dashboards().items():
        used = {m for _, q in _queries(dash) for m in re.findall(r"\bdriftline_[a-z0-9_]+", q)}
        assert used, name
        assert used <= exported, f"{name}: no such metric in the code: {sorted(used - exported)}"
