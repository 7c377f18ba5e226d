"""Entry point for ``spark-submit`` (and ``python -m watcher.spark``): ``driftline spark``'s arguments.

``spark-submit`` runs a Python *file*: ``python -m watcher.spark --driver-file`` prints this
file's path, so a cluster submission reads
``spark-submit --master yarn "$(python -m watcher.spark --driver-file)" INPUT... -o OUT``;
the master and resources then come from ``spark-submit`` (no ``--master`` here).
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--driver-file"]:
        sys.stdout.write(__file__ + "\n")
        return 0
    from watcher.cli import main as cli_main

    # driftline's global options (-c FILE, --log-level LEVEL) go before the command
    front: list[str] = []
    while args and args[0] in ("-c", "--config", "--log-level") and len(args) > 1:
        front += args[:2]
        args = args[2:]
    return cli_main([*front, "spark", *args])


if __name__ == "__main__":
    sys.exit(main())
