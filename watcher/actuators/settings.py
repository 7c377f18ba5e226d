"""The ``actuator:`` configuration section.

Kept apart from the actuators themselves (and from :mod:`watcher.config`,
which imports it back) so that loading the configuration never loads an
HTTP client or the recommender.  Every actuator is off (``kind: none``) and
in dry run by default: telling a crawler what to do is a curatorial decision
an operator switches on deliberately.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pydantic import Field, SecretStr, field_validator

from ..confbase import Frozen

GuidanceAction = Literal["stop-seed", "deprioritise-seed", "recrawl-interval"]
_BEAN_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")
_SHEET_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ActuatorConfig(Frozen):
    """What driftline may tell a crawler, and how."""

    kind: Literal["none", "heritrix", "brozzler", "browsertrix"] = "none"
    dry_run: bool = True
    # Which recommendation actions the actuator acts on; the others are published, never acted on.
    act_on: tuple[GuidanceAction, ...] = ("stop-seed",)
    heritrix_url: str = "https://localhost:8443"
    heritrix_user: str = "admin"
    heritrix_password: SecretStr = SecretStr("")  # DRIFTLINE__ACTUATOR__HERITRIX_PASSWORD
    heritrix_action: Literal["reject-surt", "pause"] = "reject-surt"
    brozzler_command: str = "brozzler-stop-crawl"
    brozzler_action: Literal["stop-crawl", "scope-block"] = "scope-block"
    # Heritrix serves its REST API over TLS with a self-signed certificate:
    # either point heritrix_ca_file at it, or set heritrix_verify_tls false.
    heritrix_verify_tls: bool = True
    heritrix_ca_file: str | None = None
    heritrix_script_engine: Literal["groovy", "beanshell"] = "groovy"
    heritrix_timeout_s: float = Field(default=30.0, gt=0)
    brozzler_rethinkdb_servers: str | None = None  # e.g. "db1:28015,db2:28015"
    brozzler_rethinkdb_db: str | None = None
    brozzler_timeout_s: float = Field(default=60.0, gt=0)
    # seed URL -> Brozzler site id (a stop-crawl needs the site id; events may carry it in extra.site_id)
    brozzler_site_ids: Mapping[str, str] = Field(default_factory=dict)

    # -- guidance (deprioritise a seed, recrawl interval) -------------------
    # 0.4: inside the 0.25-0.45 that grouped CV chose on the shared gold (bench/guidance_threshold_cv.py).
    deprioritise_below_yield: float = Field(default=0.4, ge=0.0, le=1.0)
    guidance_min_captures: int = Field(default=5, ge=1)
    # Where a recrawl-interval recommendation is written (a TSV the next crawl's launcher reads); null: log only.
    recrawl_schedule_file: str | None = None
    # overlay: pause the job, overlay a sheet on the seed's SURT prefix, unpause.
    # precedence-file: "URI precedence" lines for PrecedenceLoader before the next crawl.
    heritrix_guidance: Literal["overlay", "precedence-file"] = "overlay"
    heritrix_overlay_target: str = "frontier.queuePrecedencePolicy.basePrecedence"
    heritrix_overlay_value: int = Field(default=100, ge=0)
    heritrix_overlay_sheet: str = "driftlineDeprioritised"
    heritrix_precedence_file: str | None = None
    heritrix_pause_timeout_s: float = Field(default=120.0, gt=0)
    heritrix_poll_interval_s: float = Field(default=2.0, gt=0)
    # Brozzler queued pages of a deprioritised site get their priority divided by this.
    brozzler_priority_divisor: int = Field(default=10, ge=2)
    browsertrix_url: str = "https://app.browsertrix.com"
    browsertrix_org_id: str | None = None
    browsertrix_token: SecretStr = SecretStr("")  # DRIFTLINE__ACTUATOR__BROWSERTRIX_TOKEN
    browsertrix_user: str | None = None  # with browsertrix_password: log in for a token instead
    browsertrix_password: SecretStr = SecretStr("")  # DRIFTLINE__ACTUATOR__BROWSERTRIX_PASSWORD
    # seed URL -> the id of the running Browsertrix crawl that covers it (events may carry extra.crawl_id)
    browsertrix_crawl_ids: Mapping[str, str] = Field(default_factory=dict)
    browsertrix_timeout_s: float = Field(default=30.0, gt=0)

    @field_validator("heritrix_overlay_target")
    @classmethod
    def _bean_path(cls, v: str) -> str:
        if not _BEAN_PATH.match(v):
            raise ValueError("expected a Heritrix bean path such as frontier.queuePrecedencePolicy.basePrecedence")
        return v

    @field_validator("heritrix_overlay_sheet")
    @classmethod
    def _sheet(cls, v: str) -> str:
        if not _SHEET_NAME.match(v):
            raise ValueError("expected a sheet name of letters, digits, '_' or '-'")
        return v

    @field_validator("act_on")
    @classmethod
    def _act_on(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v))
