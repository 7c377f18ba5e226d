"""A real Prometheus scraping ``driftline demo``'s consumer shows the crawl-guidance panels of
deploy/grafana/driftline.json with numbers: the seed yield and the seed change rate over seeds.

Why: the change-rate panel ('Seed change rate over seeds') was empty in the demo although its
seeds change.  The metric is made from the latest seed report of each history, and a report was
only made when one was due for publication (at most one per history every
``seeds.publish_interval_s``, 60 s): the demo's five fortnightly crawls arrive within seconds, so
every seed's only report was made at its first capture, which has no interval to estimate a change
rate from.  Every bucket stayed 0 and ``histogram_quantile`` answered NaN: a panel with no line
(the yield, known from one capture, had one)."""

from __future__ import annotations

import asyncio
import io
import json
import math
from pathlib import Path

import pytest
import yaml

from tests.conftest import free_port, stop_process
from tests.fixtures.prometheus import PROMETHEUS, Prom, _wait, start_prometheus
from watcher.config import Config, load_config
from watcher.demo.run import demo
from watcher.seeds.report import SeedReport, report
from watcher.store import open_store

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

pytestmark = [pytest.mark.kafka,
              pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus)")]


def seed_panels() -> dict[str, list[str]]:
    dash = json.loads((DEPLOY / "grafana" / "driftline.json").read_text())
    return {p["title"]: [t["expr"] for t in p["targets"]] for p in dash["panels"]
            if p["title"].startswith(("Seed change rate over seeds", "Seed yield over seeds"))}


def final_reports(cfg: Config, db: Path) -> list[SeedReport]:
    """Every crawled history's report over its stored verdicts (the DOI part's histories aside)."""
    store = open_store(cfg.store.model_copy(update={"backend": "sqlite", "path": str(db)}))
    try:
        histories = {v.history for v in store.all_verdicts() if not v.history.startswith("doi:")}
        out = []
        for h in sorted(histories):
            vs = store.recent_verdicts(h, cfg.seeds.history_verdicts)
            first = min(vs, key=lambda v: v.capture_time)
            out.append(report(first.seed or first.url, vs, cfg.seeds))
        return out
    finally:
        store.close()


def values(prom: Prom, expr: str) -> list[float]:
    return [float(r["value"][1]) for r in prom.query(expr)]


async def test_demo_fills_the_seed_yield_and_change_rate_panels(tmp_path: Path) -> None:
    panels = seed_panels()
    assert len(panels) == 2, panels
    port = free_port()
    cfg = load_config(environ={}, overrides={"metrics": {"enabled": True, "host": "127.0.0.1", "port": port},
                                             "doi": {"status_port": 0}})
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [{"job_name": "driftline", "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}],
    }))
    prom_port = free_port()
    proc = start_prometheus(tmp_path / "prometheus.yml", tmp_path, prom_port)
    prom = Prom(f"http://127.0.0.1:{prom_port}")
    stop = asyncio.Event()
    out = io.StringIO()
    run = asyncio.create_task(demo(cfg, once=False, out=out, workdir=tmp_path / "demo", stop=stop, pace_s=0.0))
    try:
        def waiting() -> bool:  # the demo has scored every capture and waits for Ctrl-C
            return "Press Ctrl-C to stop." in out.getvalue()

        assert await _wait(lambda: waiting() or run.done(), 240), out.getvalue()[-3000:]
        assert not run.done(), out.getvalue()[-3000:]
        assert "Every seed behaved as designed." in out.getvalue()

        def tracked() -> float:
            try:
                return max(values(prom, "sum(driftline_seeds_tracked)") or [0.0])
            except OSError:
                return 0.0

        assert await _wait(lambda: tracked() == 6, 60), tracked()  # six seeds, each with a report

        def shown() -> dict[str, list[float]]:
            return {title: [v for e in exprs for v in values(prom, e)] for title, exprs in panels.items()}

        def every_line_drawn() -> bool:
            return all(vs and all(math.isfinite(v) for v in vs) for vs in shown().values())

        if not await _wait(every_line_drawn, 60):
            pytest.fail(f"a seed panel has no line: {shown()}")
        # Five captures a fortnight apart: the seeds whose text changes have a rate above 0 per day,
        # the steady ones 0; the p90 over six seeds is one of the changing ones.
        rate = next(vs for title, vs in shown().items() if title.startswith("Seed change rate"))
        assert rate[-1] > 0, rate
        # The distributions are those of every seed's report over all its verdicts, as the store
        # holds them (the report of the first capture alone read every seed's yield as ~1).
        reps = final_reports(cfg, tmp_path / "demo" / "demo.db")
        assert len(reps) == 6
        low = sum(1 for r in reps if r.yield_ is not None and r.yield_ < cfg.seeds.low_yield)
        rates = sum(r.change_rate_per_day or 0.0 for r in reps)
        assert 0 < low < 6 and rates > 0

        def same_as_the_store() -> bool:
            return (values(prom, "sum(driftline_seeds_low_yield)") == [float(low)]
                    and math.isclose(values(prom, "sum(driftline_seed_change_rate_gsum)")[0], rates, rel_tol=1e-6))

        assert await _wait(same_as_the_store, 30), (low, rates, values(prom, "sum(driftline_seeds_low_yield)"),
                                                    values(prom, "sum(driftline_seed_change_rate_gsum)"))
    finally:
        stop.set()
        await asyncio.wait_for(run, 60)
        stop_process(proc, 15)
