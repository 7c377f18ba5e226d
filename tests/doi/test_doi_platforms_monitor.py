"""The seven platforms' histories served to the DOI monitor itself (a local resolver and publisher,
tests/doi_server.py): every version of every page gets the class ``compare --profile doi`` gives
for it against the first version, including pages that never show their DOI, watched under one
made up for the test."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.fixtures import doi_pages as dp
from tests.fixtures import doi_platforms as pl
from tests.fixtures.doi_server import Page, doi_config, landscape
from watcher.compare import compare_files
from watcher.config import load_config
from watcher.doi.lists import DoiEntry
from watcher.doi.schedule import check_all, open_monitor


def _histories() -> dict[str, list[str]]:
    """DOI -> the pages its landing page serves, round after round."""
    out: dict[str, list[str]] = {}
    for p in pl.PLATFORMS:
        a = pl.article(p, 7)
        out[a.doi] = [pl.page(p, a, 0, box=True), pl.page(p, a, 1), pl.page(p, a, 2, box=True)]
        out[f"10.99999/{p}-never-shown"] = [pl.page(p, a, v, show_doi=False) for v in (0, 1, 2)]
        b = pl.article(p, 8)
        out[b.doi] = [pl.page(p, b, 0), pl.page(p, dp.edit_abstract(b), 1), pl.page(p, pl.article(p, 9), 2),
                      dp.challenge(0)]
    return out


async def test_the_monitor_gives_every_version_the_class_compare_gives(tmp_path: Path) -> None:
    hist = _histories()
    rounds = max(len(v) for v in hist.values())
    seen: dict[str, list[str]] = {d: [] for d in hist}
    async with landscape() as land:
        cfg = load_config(overrides=doi_config(land, tmp_path, head_check=False, timeout_s=30.0))
        async with open_monitor(cfg) as mon:
            mon.registry.add([DoiEntry(d) for d in hist])
            for r in range(rounds):
                if r:
                    await asyncio.sleep(1.1)  # a capture is named to the second: one page twice in a second is one
                for d, pages in hist.items():
                    land.pages[d] = Page(pages[min(r, len(pages) - 1)])
                for res in await check_all(mon):
                    if r < len(hist[res.doi]):
                        seen[res.doi].append(str(res.record["change"]))
        landing = {d: land.landing(d) for d in hist}
    disagree = []
    for d, pages in hist.items():
        assert seen[d][0] == "baseline", (d, seen[d])
        first = tmp_path / "v0.html"
        first.write_text(pages[0])
        for i, page in enumerate(pages[1:], 1):
            cur = tmp_path / f"v{i}.html"
            cur.write_text(page)
            want = compare_files(str(first), str(cur), cfg.engine, profile="doi", url=landing[d])["change"]
            if seen[d][i] != want:
                disagree.append((d, i, seen[d][i], want))
    assert not disagree, disagree
    by_kind = {d: seen[d] for d in hist}
    for p in pl.PLATFORMS:
        kept = by_kind[pl.article(p, 7).doi][1:]
        assert all(c in ("unchanged", "layout") for c in kept), (p, kept)
        assert all(c in ("unchanged", "layout") for c in by_kind[f"10.99999/{p}-never-shown"][1:]), p
        assert by_kind[pl.article(p, 8).doi][1:] == ["drifted", "replaced", "blocked"], p
