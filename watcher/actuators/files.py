"""Guidance written to files for the next crawl (no live crawler needed).

Two files, each rewritten atomically (a temporary file, then a rename, so a
crawler or launcher reading it never sees half a file) and keyed so the
newest advice for a seed replaces the older one:

* the Heritrix *precedence file*: "URI precedence" lines, the input of
  ``org.archive.crawler.frontier.precedence.PrecedenceLoader`` (``URI
  [whitespace] precedence``; a URI without a scheme gets ``http://``), which
  loads them into the URI-history database a ``PreloadedUriPrecedencePolicy``
  reads in the next crawl.  A larger precedence is crawled later.
* the *recrawl schedule*: a TSV of ``seed``, ``surt``,
  ``recrawl_interval_days``, ``recommendation_id`` and ``issued_at``, for
  whatever launches the next crawl of each seed.  None of Heritrix 3, Brozzler
  or Browsertrix has a per-seed revisit interval of its own to set.
"""

from __future__ import annotations

import logging
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .common import ActionRequest, ActionResult, ActuatorError
from .settings import ActuatorConfig

if TYPE_CHECKING:
    from ..recommend import Recommendation

log = logging.getLogger(__name__)

RECRAWL_HEADER = "seed\tsurt\trecrawl_interval_days\trecommendation_id\tissued_at"


def _clean(field: str) -> str:
    """One TSV / whitespace-separated field: no tab, newline or space inside."""
    if any(c in field for c in "\t\r\n "):
        raise ActuatorError(f"cannot write {field!r} to a line-based file", reason="bad_field")
    return field


def precedence_request(rec: Recommendation, cfg: ActuatorConfig) -> ActionRequest:
    """The precedence line for the recommendation's seed."""
    if not cfg.heritrix_precedence_file:
        raise ActuatorError("heritrix_guidance is precedence-file but actuator.heritrix_precedence_file is not set",
                            reason="no_file")
    line = f"{_clean(rec.seed)} {cfg.heritrix_overlay_value}"
    return ActionRequest(kind="file", path=cfg.heritrix_precedence_file, lines=(line,))


def recrawl_request(rec: Recommendation, cfg: ActuatorConfig) -> ActionRequest:
    """The recrawl-schedule row for the recommendation's seed (``path`` None: log only)."""
    if rec.recrawl_interval_days is None:
        raise ActuatorError(f"recommendation {rec.id} carries no recrawl interval", reason="no_interval")
    issued = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    row = "\t".join((_clean(rec.seed), _clean(rec.surt_prefix), f"{rec.recrawl_interval_days:.3f}", rec.id, issued))
    return ActionRequest(kind="file", path=cfg.recrawl_schedule_file, lines=(row,))


def write_request(actuator: str, rec: Recommendation, req: ActionRequest, dry_run: bool) -> ActionResult:
    """Write (or, in dry run or with no path, log) one file request."""
    action = str(getattr(rec, "action", ""))
    if dry_run or req.path is None:
        why = "dry run" if dry_run else "no file configured"
        log.info("actuator %s (%s %s, recommendation %s): would %s", why, actuator, action, rec.id, req.describe())
        return ActionResult(rec.id, actuator, action, dry_run=dry_run, applied=False, request=req)
    path = Path(req.path)
    merge_lines(path, req.lines, key_fields=1, header=RECRAWL_HEADER if action == "recrawl-interval" else None)
    log.warning("actuator: %s %s written to %s for recommendation %s", actuator, action, path, rec.id)
    return ActionResult(rec.id, actuator, action, dry_run=False, applied=True, request=req, output=str(path))


def merge_lines(path: Path, lines: tuple[str, ...], *, key_fields: int, header: str | None) -> None:
    """Rewrite ``path`` with ``lines`` replacing the lines of the same key, atomically."""

    def key(line: str) -> str:
        return " ".join(line.split()[:key_fields])

    rows: dict[str, str] = {}
    try:
        existing = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        existing = []
    except OSError as exc:
        raise ActuatorError(f"cannot read {path}: {exc}", reason="file") from exc
    for line in existing:
        if line.strip() and line != header and not line.startswith("#"):
            rows[key(line)] = line
    for line in lines:
        rows[key(line)] = line
    body = ([header] if header else []) + list(rows.values())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(body) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        raise ActuatorError(f"cannot write {path}: {exc}", reason="file") from exc
