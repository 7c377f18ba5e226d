"""``driftline guide``: guidance recommendations from a seed report file, and (if configured) the actuator.

Why a command: a batch scan gets the same seed report as the streaming
watcher (``driftline seeds -f json``), and a crawl engineer between two
crawls wants the same advice, and the same way of telling the crawler,
without running Kafka.  It prints one recommendation a line (the message of
the recommendations topic) and hands each to the configured actuator when
``--act`` is given; the actuator keeps its own ``kind``, ``act_on`` and
``dry_run`` (a dry run by default), so ``--act`` alone never changes a crawl.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DriftlineError
from ..seeds.report import SeedReport
from .guidance import guidance_for

if TYPE_CHECKING:
    from ..config import Config
    from ..recommend import Recommendation

log = logging.getLogger(__name__)

_EXAMPLES = """examples:
  driftline seeds store.sqlite -f json > seeds.json && driftline guide seeds.json
  driftline guide seeds.json --job weekly-ngo --crawler heritrix --act    # dry run unless actuator.dry_run: false
  DRIFTLINE__ACTUATOR__KIND=browsertrix driftline guide seeds.json --act -o recs.jsonl
"""
def read_seed_rows(text: str, source: str) -> list[SeedReport]:
    """A JSON list of seed objects, or one object a line (JSONL)."""
    stripped = text.strip()
    try:
        items: Any = json.loads(stripped) if stripped.startswith("[") else [
            json.loads(line) for line in stripped.split("\n") if line.strip()]  # not splitlines(): see evaluate.py
    except ValueError as exc:
        raise DriftlineError(f"{source}: not JSON or JSONL: {exc}", reason="bad_input") from None
    if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
        raise DriftlineError(f"{source}: expected a list of seed objects", reason="bad_input")
    return [SeedReport.from_dict(item, f"{source}: item {n}") for n, item in enumerate(items, 1)]


def add_parser(sub: Any) -> None:
    """Register ``driftline guide`` on the main parser's subparsers."""
    text = "guidance (deprioritise a seed, recrawl interval) from a seed report file; --act tells the crawler"
    g: argparse.ArgumentParser = sub.add_parser("guide", help=text, description=text, epilog=_EXAMPLES,
                                                formatter_class=argparse.RawDescriptionHelpFormatter)
    g.add_argument("seeds", metavar="SEEDS", help="seed reports: the JSON (or JSONL) of 'driftline seeds -f json', "
                   "'-' for stdin")
    g.add_argument("--job", metavar="JOB", help="the crawl job the seeds belong to (Heritrix job name)")
    g.add_argument("--crawler", choices=["heritrix", "brozzler", "browsertrix"],
                   help="the crawler, for the advice's wording (default: all three)")
    g.add_argument("--act", action="store_true", help="hand each recommendation to the configured actuator "
                   "(actuator.kind, act_on, dry_run: a dry run by default)")
    g.add_argument("-o", "--output", metavar="FILE", help="write the recommendations here (default: stdout)")
    g.set_defaults(func=run)


def run(args: argparse.Namespace, cfg: Config) -> int:
    source = "stdin" if args.seeds == "-" else args.seeds
    text = sys.stdin.read() if args.seeds == "-" else Path(args.seeds).read_text(encoding="utf-8")
    recs = [rec for row in read_seed_rows(text, source)
            if (rec := guidance_for(row, cfg.actuator, job=args.job, crawler=args.crawler)) is not None]
    lines = "".join(rec.to_json() + "\n" for rec in recs)
    if args.output:
        Path(args.output).write_text(lines, encoding="utf-8")
    else:
        sys.stdout.write(lines)
    if args.act:
        from .factory import make_actuator  # the crawlers' HTTP clients: only --act needs them

        actuator = make_actuator(cfg.actuator)
        _say_what_act_does(cfg, recs, actuator is not None)
        if actuator is not None:
            asyncio.run(_act(actuator, recs))
    log.info("guide: %d recommendations from %s", len(recs), source)
    return 0


def _say_what_act_does(cfg: Config, recs: Sequence[Recommendation], configured: bool) -> None:
    """Say, before acting, what ``--act`` will do with these recommendations and why not more.

    Why: ``act_on`` defaults to ``[stop-seed]``, which ``guide`` never produces, so ``--act`` with a
    kind set said nothing at all, and with none it said only that nothing was told.  Now the actions
    left out are named with the key that admits them, and a dry run logs each call it would make."""
    a = cfg.actuator
    counts = Counter(str(getattr(rec, "action", "stop-seed")) for rec in recs)
    left_out = {action: n for action, n in counts.items() if action not in a.act_on}
    if not configured:
        log.warning("guide --act: actuator.kind is none: nothing told to a crawler (set actuator.kind to heritrix, "
                    "brozzler or browsertrix; each recommendation's what_to_do says the call to make by hand)")
    if left_out:
        wanted = sorted({*a.act_on, *left_out})
        log.warning("guide --act: %s not acted on: actuator.act_on is [%s]; to act on them set actuator.act_on, "
                    "e.g. DRIFTLINE__ACTUATOR__ACT_ON='[%s]'",
                    ", ".join(f"{n} {action}" for action, n in sorted(left_out.items())), ", ".join(a.act_on),
                    ", ".join(wanted))
    acted = sum(n for action, n in counts.items() if action not in left_out)
    if configured and acted:
        if a.dry_run:
            log.info("guide --act: dry run (actuator.dry_run is true): the %d %s call(s) below are shown, not "
                        "sent; DRIFTLINE__ACTUATOR__DRY_RUN=false sends them", acted, a.kind)
        else:
            log.info("guide --act: telling %s about %d recommendation(s)", a.kind, acted)


async def _act(actuator: Any, recs: Sequence[Recommendation]) -> None:
    from .common import apply_recommendation

    for rec in recs:
        await apply_recommendation(actuator, rec)
