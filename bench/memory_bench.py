"""Peak memory of scoring the worst pages a consumer accepts, against the same process idle.

Why: the byte cap alone does not bound memory -- a 19 MB page of small
elements once drove a consumer to 1.6 GB (inscriptis builds an object per
node).  Each case runs in a fresh process that fingerprints one generated page
under the default configuration (every page below ``extract.max_bytes``); the
peak RSS is printed next to the same process's RSS after imports.

    python bench/memory_bench.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[1])
from datetime import UTC, datetime
from watcher.config import load_config
from watcher.engine import Engine
from watcher.model import Capture
eng = Engine(load_config().engine)
eng.fingerprint(Capture(url="http://x.org/", timestamp=datetime(2020, 1, 1, tzinfo=UTC), content=b"<p>warm up</p>"))
idle = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kind, size = sys.argv[2], int(sys.argv[3])
if kind == "divs":
    unit = b"<div><span>w%d</span></div>"
    page = b"<html><body>" + b"".join(unit % i for i in range(size // 27)) + b"</body></html>"
elif kind == "text":
    page = b"<html><body><p>" + b" ".join(b"word%d" % (i % 50000) for i in range(size // 9)) + b"</p></body></html>"
else:
    page = b"<html><body>" + b"<div>" * (size // 10) + b"deep" + b"</div>" * (size // 10) + b"</body></html>"
fp = eng.fingerprint(Capture(url="http://x.org/", timestamp=datetime(2020, 1, 1, tzinfo=UTC), content=page))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"bytes": len(page), "idle_mb": idle / 1024, "peak_mb": peak / 1024, "words": fp.word_count,
                  "error": fp.error}))
"""


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [19_000_000]
    print("| page (generated) | bytes | words read | idle RSS | peak RSS | noted |")
    print("|---|--:|--:|--:|--:|---|")
    cases = [("divs", n, f"{n / 1e6:.0f} MB of small elements") for n in sizes]
    cases += [("text", sizes[0], f"{sizes[0] / 1e6:.0f} MB of one paragraph"), ("nest", 2_000_000, "200k nested <div>")]
    for kind, size, label in cases:
        out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), kind, str(size)], capture_output=True,
                             text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {label} | {r['bytes']:,} | {r['words']:,} | {r['idle_mb']:.0f} MB | {r['peak_mb']:.0f} MB | "
              f"{r['error'] or ''} |")


if __name__ == "__main__":
    main()
