"""A host name that does not resolve is its own outcome (``dns_error``), not a server's failure.

Real resolution: ``.invalid`` names never resolve (RFC 6761), so the system resolver answers "not known" at once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client import generate_latest

from watcher.config import LiveFetchConfig, load_config
from watcher.doi.lists import DoiEntry
from watcher.doi.metrics import DoiMetrics
from watcher.doi.schedule import check_all, open_monitor
from watcher.doi.status import status_rows
from watcher.errors import AcquireError
from watcher.metrics import Metrics
from watcher.net.http import HttpFetcher
from watcher.net.netguard import AddressPolicy

UNRESOLVABLE = "http://no-such-host.driftline.invalid/"


async def test_the_fetcher_names_a_dns_failure() -> None:
    fetcher = HttpFetcher(LiveFetchConfig(), AddressPolicy())
    try:
        with pytest.raises(AcquireError) as info:
            await fetcher.fetch(UNRESOLVABLE + "page")
    finally:
        await fetcher.close()
    assert info.value.reason == "dns" and "cannot resolve" in str(info.value)


async def test_a_doi_whose_host_does_not_resolve_reads_dns_error(tmp_path: Path) -> None:
    cfg = load_config(overrides={
        "store": {"backend": "sqlite", "path": str(tmp_path / "doi.db")}, "render": {"enabled": False},
        "doi": {"resolver_url": UNRESOLVABLE, "warc_dir": str(tmp_path / "warcs"), "retries": 0,
                "per_host_delay_s": 0.0, "jitter_s": 0.0, "status_port": 0, "mailto": "ops@example.org"}})
    metrics = DoiMetrics()
    async with open_monitor(cfg, metrics=metrics) as mon:
        mon.registry.add([DoiEntry("10.5555/dns", "A title")])
        [result] = await check_all(mon)
        rows = status_rows(mon.registry)
    assert result.outcome == "dns_error", (result.outcome, result.reason)
    assert "dns" in result.reason
    assert [r["outcome"] for r in rows] == ["dns_error"]
    text = generate_latest(metrics.registry).decode()
    assert 'driftline_doi_checks_total{outcome="dns_error"} 1.0' in text


def test_outcome_and_failure_labels_are_pre_registered() -> None:
    doi = generate_latest(DoiMetrics().registry).decode()
    assert 'driftline_doi_checks_total{outcome="dns_error"} 0.0' in doi
    assert 'driftline_doi_checks_total{outcome="server_error"} 0.0' in doi
    assert 'driftline_doi_alerts_total{kind="dns_error"} 0.0' in doi
    stream = generate_latest(Metrics(process_metrics=False).registry).decode()
    assert 'driftline_events_failed_total{reason="dns"} 0.0' in stream
