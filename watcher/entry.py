"""The ``driftline`` command's entry point: ``--version`` answered before the engine is imported.

Why: ``driftline --version`` imported the whole command line (the config model, pydantic, the text
pipeline) to print one line, 2.2 s on a quiet machine; a script asking which version is installed
should not pay for that.  Everything else goes to :func:`watcher.cli.main`, which prints the same
line for ``--version`` among other options.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from . import __version__


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        sys.stdout.write(f"driftline {__version__}\n")
        return 0
    from .cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
