"""``python -m consumers [--config FILE] [--once]``: the streaming app without the CLI.

Same as ``driftline run``; kept so a deployment (or a test) can start the
consumer with nothing but the package installed.
"""

from __future__ import annotations

import argparse
import sys

from watcher.config import load_config
from watcher.errors import ConfigError
from watcher.logging_setup import setup_logging

from .app import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m consumers", description=__doc__)
    parser.add_argument("--config", help="config.yaml (default: $DRIFTLINE_CONFIG or the shipped one)")
    parser.add_argument("--once", action="store_true", help="exit when every input message is processed")
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        print(f"driftline: {exc}", file=sys.stderr)
        return 2
    setup_logging(cfg.log_level, cfg.log_format)
    return run(cfg, once=args.once)


if __name__ == "__main__":
    raise SystemExit(main())
