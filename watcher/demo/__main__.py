"""``python -m watcher.demo``: the demo without the CLI."""

import sys

from .run import main

sys.exit(main())
