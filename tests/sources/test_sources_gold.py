"""Gold-standard directories (labels.tsv + html/<id>/<date>.html)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from watcher.config import Config
from watcher.sources import detect_input, iter_histories

CFG = Config()
URI = "http://wayback.archive-it.org/1068/{d}/http://www.example.org/"


def make_gold(root: Path) -> Path:
    rows = [("7", "20100101000000", "1"), ("7", "20110101000000", "0"), ("7", "20110101000000", "0"),
            ("3", "20090101000000", "1"), ("3", "20090601000000", "1"), ("7", "20120101000000", "1")]
    root.mkdir()
    lines = ["id\tdate\tURI\tlabel"] + [f"{i}\t{d}\t{URI.format(d=d)}\t{lab}" for i, d, lab in rows]
    (root / "labels.tsv").write_text("\n".join(lines) + "\n")
    for i, d, _ in rows:
        (root / "html" / i).mkdir(parents=True, exist_ok=True)
        (root / "html" / i / f"{d}.html").write_bytes(b"" if d == "20120101000000" else f"<p>{i} {d}</p>".encode())
    (root / "html" / "3" / "20090601000000.html").unlink()  # a labelled capture without its file
    return root


def test_gold_directory(tmp_path: Path) -> None:
    gold = make_gold(tmp_path / "gold")
    assert detect_input(str(gold)) == "gold"
    it = iter_histories([str(gold)], CFG)
    hs = list(it)
    assert [h for h, _ in hs] == ["gold:3", "gold:7"]  # numeric id order
    seven = dict(hs)["gold:7"]
    assert len(seven) == 3  # the repeated row is read once
    assert [c.label for c in seven] == [1, 0, 1]
    assert seven[0].url == "http://www.example.org/"
    assert seven[0].uri_m == URI.format(d="20100101000000")
    assert seven[0].timestamp == datetime(2010, 1, 1, tzinfo=UTC)
    assert seven[0].history == "gold:7" and seven[0].content == b"<p>7 20100101000000</p>"
    assert seven[2].content == b""  # an empty file is empty content, not a missing one
    three = dict(hs)["gold:3"]
    assert three[1].content is None and three[1].error == "missing_file"
    assert it.uri_t["gold:7"] == "gold:7"


def test_shared_gold_standard(gold_dir: Path) -> None:
    hs = list(iter_histories([str(gold_dir)], CFG))
    caps = [c for _, cs in hs for c in cs]
    assert len(hs) == 199
    assert len(caps) == 2302  # 2,304 rows, two repeated
    assert sum(1 for c in caps if c.content == b"") == 120
    assert sum(1 for c in caps if c.label == 0) == 94
    assert all(c.uri_m and c.uri_m.startswith("http://wayback.archive-it.org/1068/") for c in caps)


def test_a_labels_file_saved_by_a_spreadsheet_reads_the_same(tmp_path: Path) -> None:
    """A BOM, CRLF line ends, a capitalised or padded header, a blank line and columns in
    another order are the same labels; the first two made the file "lack column id"."""
    gold = make_gold(tmp_path / "gold")
    plain = [(c.history, c.timestamp, c.label, c.uri_m) for _, cs in iter_histories([str(gold)], CFG) for c in cs]
    rows = (gold / "labels.tsv").read_text().splitlines()
    body = ["\t".join((r.split("\t")[3], r.split("\t")[0], r.split("\t")[2], r.split("\t")[1])) for r in rows[1:]]
    text = "\r\n".join(["Label\t ID \tUri\tDate", *body[:2], "", *body[2:]]) + "\r\n\r\n"
    (gold / "labels.tsv").write_bytes(b"\xef\xbb\xbf" + text.encode())
    again = [(c.history, c.timestamp, c.label, c.uri_m) for _, cs in iter_histories([str(gold)], CFG) for c in cs]
    assert again == plain and len(plain) == 5
