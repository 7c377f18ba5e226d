"""The review page in a real browser: Debian's Chromium through Playwright drives list, filter, open,
label by keyboard, pin a baseline, restart the server, label still there, export -- on data the test
makes, and on a subset of the gold standard where ../shared is present.  The server is the real
``driftline review`` command in a process of its own; every request the browser makes is counted, and
none may leave loopback.  Screenshots go to $DRIFTLINE_ARTEFACTS (else the test's tmp_path)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.conftest import REPO_ROOT
from tests.fixtures.reviewdata import make_gold, scan_to

pytestmark = pytest.mark.browser


def artefacts(tmp_path: Path) -> Path:
    out = Path(os.environ.get("DRIFTLINE_ARTEFACTS") or tmp_path / "artefacts")
    out.mkdir(parents=True, exist_ok=True)
    return out


@contextmanager
def review_server(*args: str) -> Iterator[str]:
    """``driftline review ARGS --port 0`` in its own process; yields its URL (from the start line)."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("DRIFTLINE__REVIEW__TOKEN", None)
    proc = subprocess.Popen([sys.executable, "-m", "watcher.cli", "--log-level", "WARNING", "review", *args,
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=REPO_ROOT)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "serving" not in line:
            proc.kill()
            raise AssertionError(f"review did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
        assert line.startswith("driftline review: store ")
        yield line.rsplit(" ", 1)[1].strip()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextmanager
def browser(chromium_path: Path) -> Iterator[tuple[Any, list[str]]]:
    """A Chromium page, and the list of every request that reached the network layer for a host outside
    loopback (each is aborted there, and counted).  A request the page's Content-Security-Policy
    refuses never reaches it: Chromium blocks it in the renderer (Playwright reports it failed, "csp")."""
    from playwright.sync_api import sync_playwright

    outside: list[str] = []
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(chromium_path), headless=True,
                               args=["--no-sandbox"] if os.geteuid() == 0 else [])
        try:
            context = b.new_context(viewport={"width": 1400, "height": 1000})

            def route(r: Any) -> None:
                if urlsplit(r.request.url).hostname in ("127.0.0.1", "localhost"):
                    r.continue_()
                else:
                    outside.append(r.request.url)
                    r.abort()

            context.route("**/*", route)
            yield context.new_page(), outside
        finally:
            b.close()


def _export(store: Path, out: Path) -> list[list[str]]:
    from watcher.cli import main

    assert main(["--log-level", "WARNING", "labels", "export", "--store", str(store), "-o", str(out)]) == 0
    return [r.split("\t") for r in out.read_text().splitlines()]


def test_curator_loop_in_a_real_browser(chromium_path: Path, tmp_path: Path) -> None:
    result = scan_to(make_gold(tmp_path), tmp_path / "result.json")
    store = Path(f"{result}.review.sqlite")
    shots = artefacts(tmp_path)
    with review_server(str(result)) as url, browser(chromium_path) as (page, outside):
        page.goto(url)
        rows = page.locator("tr[data-verdict-id]")
        assert rows.count() == 8
        assert "reviewed" in page.locator("header").inner_text()
        page.screenshot(path=str(shots / "review-queue.png"), full_page=True)
        # filter: off-topic only (the state is in the URL)
        page.select_option("select[name=change]", "off-topic")
        page.click("form.filters button[type=submit]")
        page.wait_for_url("**change=off-topic**")
        assert rows.count() == 2
        # keyboard: j to the second row, Enter opens it, x labels it off topic
        page.keyboard.press("j")
        assert "sel=" in page.url
        second = rows.nth(1).get_attribute("data-verdict-id")
        page.keyboard.press("Enter")
        page.wait_for_url(f"**/v/{second}**")
        assert "change=off-topic" in page.url  # the queue's state travels with the detail view
        assert "<script>alert(1)</script>" in page.locator("#text-capture").inner_text()  # shown as text
        page.keyboard.press("x")
        page.wait_for_selector('#verdict button[data-label="off-topic"].on')
        page.keyboard.press("n")
        page.keyboard.type("parked since 2012")
        page.keyboard.press("Enter")
        page.wait_for_selector(".note")
        # both captures rendered from the archive (the server's own Chromium), shown as images
        page.locator(".shots img").last.scroll_into_view_if_needed()
        page.wait_for_function("() => Array.from(document.querySelectorAll('.shots img'))"
                               ".every(i => i.complete && i.naturalWidth > 100)", timeout=60_000)
        page.screenshot(path=str(shots / "review-detail.png"), full_page=True)
        # k goes back to the first off-topic capture of the filtered queue
        with page.expect_navigation():
            page.keyboard.press("k")
        assert second not in page.url and "change=off-topic" in page.url
        # pin: the site's 2011 capture (timeline cell 2) becomes the baseline
        page.locator(".strip a.cell").nth(1).click()
        page.wait_for_selector("#pin")
        page.click("#pin")
        page.wait_for_selector("#verdict h1 .badge.cls-baseline")
        assert "version 2" in page.locator("#verdict .reason").inner_text()
        assert outside == []
    # the server restarted: the label is still there
    with review_server(str(result)) as url, browser(chromium_path) as (page, outside):
        page.goto(f"{url}v/{second}")
        assert page.locator('#verdict button[data-label="off-topic"]').get_attribute("aria-pressed") == "true"
        assert "parked since 2012" in page.locator("#verdict").inner_text()
        page.goto(f"{url}?reviewed=yes")
        assert page.locator("tr[data-verdict-id]").count() == 1
        assert outside == []
    rows_out = _export(store, tmp_path / "labels.tsv")
    assert rows_out[0] == ["id", "date", "URI", "label"]
    assert len(rows_out) == 2 and rows_out[1][0] == "2" and rows_out[1][3] == "0"


@pytest.mark.shared
def test_curator_loop_on_a_gold_subset(chromium_path: Path, gold_dir: Path, tmp_path: Path) -> None:
    """Twelve TimeMaps of the gold standard: the curator labels every off-topic verdict of the queue's
    first page by keyboard as the gold file says; the export then equals the gold labels of those
    captures."""
    import shutil

    from watcher.sources.gold import read_labels

    rows = read_labels(gold_dir)
    ids = sorted({r.id for r in rows}, key=int)[:12]
    sub = tmp_path / "gold"
    (sub / "html").mkdir(parents=True)
    lines = ["id\tdate\tURI\tlabel"]
    for r in rows:
        if r.id in ids:
            lines.append(f"{r.id}\t{r.date}\t{r.uri}\t{r.label}")
    for i in ids:
        shutil.copytree(gold_dir / "html" / i, sub / "html" / i)
    (sub / "labels.tsv").write_text("\n".join(lines) + "\n")
    truth = {(r.id, r.date): r.label for r in rows if r.id in ids}
    result = scan_to(sub, tmp_path / "gold.json")
    with review_server(str(result)) as url, browser(chromium_path) as (page, outside):
        page.goto(f"{url}?change=off-topic")
        n = page.locator("tr[data-verdict-id]").count()
        assert n > 0
        labelled = 0
        for k in range(min(n, 10)):
            row = page.locator("tr[data-verdict-id]").nth(k)
            row.locator("td.ts").click()
            vid = row.get_attribute("data-verdict-id")
            page.keyboard.press("x" if _gold_label(truth, row) == 0 else "o")
            page.wait_for_selector(f'#labels-{vid} button.on')
            labelled += 1
        page.screenshot(path=str(artefacts(tmp_path) / "review-gold.png"), full_page=True)
        assert outside == []
    out = _export(Path(f"{result}.review.sqlite"), tmp_path / "labels.tsv")
    assert len(out) == labelled + 1
    for tid, date, _uri, label in out[1:]:
        assert truth[(tid, date)] == int(label)


def _gold_label(truth: dict[tuple[str, str], int], row: Any) -> int:
    """The gold label of a queue row (its history ``gold:<id>`` and 14-digit time are on the row)."""
    history, ts = row.get_attribute("data-history"), row.get_attribute("data-ts")
    assert history and history.startswith("gold:") and ts
    return truth[(history[5:], ts)]
