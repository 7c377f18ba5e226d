"""Prometheus metrics of the DOI monitor (no DOI or URL labels: bounded cardinality)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram


class DoiMetrics:
    """``driftline_doi_*``; its own registry (tests run several), or a shared one."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        r = self.registry = registry or CollectorRegistry()
        self.checks = Counter("driftline_doi_checks", "DOI checks, per outcome.", ["outcome"], registry=r)
        self.changes = Counter("driftline_doi_changes", "DOI checks, per change class of the doi profile.",
                               ["change"], registry=r)
        self.resolution = Histogram("driftline_doi_resolution_seconds", "Time to resolve a DOI to its landing page.",
                                    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60), registry=r)
        self.alerts = Counter("driftline_doi_alerts", "DOI alerts, per failure kind.", ["kind"], registry=r)
        self.drifted = Gauge("driftline_doi_drifted", "DOIs whose latest check is drifted, replaced, gone or moved.",
                             registry=r)
        self.blocked = Gauge("driftline_doi_blocked", "DOIs whose latest check is blocked.", registry=r)
        self.watched = Gauge("driftline_doi_watched", "DOIs watched.", registry=r)
        from .registry import FAILURE_OUTCOMES
        from .resolve import OUTCOMES

        # every outcome and failure kind exported at 0, so a rate() or an alert rule sees it from the start
        for outcome in OUTCOMES:
            self.checks.labels(outcome=outcome)
        for kind in sorted(FAILURE_OUTCOMES):
            self.alerts.labels(kind=kind)
