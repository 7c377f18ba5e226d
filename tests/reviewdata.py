"""Review test data: a small gold directory (two sites, one going off topic, one with markup-like
text), scanned with ``driftline scan`` -- real verdicts, real locators, no network."""

from __future__ import annotations

from pathlib import Path

DATES = ("20100101000000", "20110101000000", "20120101000000", "20130101000000")
TOPIC = ("human rights watch reports on freedom of speech torture prisoners justice courts lawyers defenders "
         "asylum refugees tribunal evidence ") * 6
HOSTILE = "Buy now <script>alert(1)</script> <img src=x onerror=alert(2)> cheap hosting casino"


def page(title: str, body: str, extra: str = "") -> str:
    from html import escape

    return (f"<html><head><title>{escape(title)}</title>{extra}</head><body><h1>{escape(title)}</h1>"
            f"<p>{escape(body)}</p></body></html>")


def make_gold(root: Path, sites: int = 2) -> Path:
    """``root/gold``: site 1 stays on topic (a word changes per year); site 2 is parked from 2012 on,
    with text that looks like markup.  Every page links an image on the live web (never fetched)."""
    gold = root / "gold"
    rows = ["id\tdate\tURI\tlabel"]
    for tid in range(1, sites + 1):
        url = f"http://site{tid}.example.org/"
        for i, date in enumerate(DATES):
            off = tid == 2 and i >= 2
            live = '<link rel="stylesheet" href="http://live.example.com/x.css">'
            html = page("Domain for sale", "This domain is for sale. " + HOSTILE, live) if off else \
                page(f"Rights group {tid}", f"{TOPIC} update {i} year {2010 + i}", live)
            d = gold / "html" / str(tid)
            d.mkdir(parents=True, exist_ok=True)
            (d / f"{date}.html").write_text(html, encoding="utf-8")
            rows.append(f"{tid}\t{date}\thttp://wayback.example/{date}/{url}\t{0 if off else 1}")
    (gold / "labels.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return gold


def scan_to(gold: Path, out: Path) -> Path:
    from watcher.cli import main

    assert main(["--log-level", "WARNING", "scan", str(gold), "-o", str(out), "-j", "1", "--no-progress"]) == 0
    return out
