"""A PDF is a container of compressed streams: its decoded size is bounded like an HTML body's."""

from __future__ import annotations

import resource
import zlib
from datetime import UTC, datetime

from tests.fixtures.pdfgen import assemble_pdf
from watcher.config import EngineConfig
from watcher.engine import Engine
from watcher.model import Capture

T = datetime(2024, 1, 1, tzinfo=UTC)
TEXT = b"BT /F1 12 Tf 72 720 Td (Rainfall and river discharge in the upper valley basin) Tj ET\n"


def pdf_with_pages(streams: list[bytes]) -> bytes:
    """A valid PDF with one page per Flate-compressed content stream."""
    n = len(streams)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    font = 3 + 2 * n
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode()]
    for i, data in enumerate(streams):
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {4 + 2 * i} 0 R "
                    f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode())
        objs.append(b"<< /Length " + str(len(data)).encode() + b" /Filter /FlateDecode >>\nstream\n" + data
                    + b"\nendstream")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return assemble_pdf(objs)


def flate_bomb(mib: int) -> bytes:
    """A content stream: one line of text, then ``mib`` MiB of spaces."""
    c = zlib.compressobj(1)
    return b"".join([c.compress(TEXT)] + [c.compress(b" " * (1 << 20)) for _ in range(mib)] + [c.flush()])


def test_250_mb_flate_pdf_is_an_error_in_bounded_memory() -> None:
    bomb = pdf_with_pages([flate_bomb(250)])
    assert len(bomb) < 2_000_000
    eng = Engine(EngineConfig())
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fp = eng.fingerprint(Capture(url="https://doi.example/10.1/x", timestamp=T, content=bomb))
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert fp.kind == "pdf" and fp.word_count == 0
    assert fp.error is not None and fp.error.startswith("extract_failed") and "truncated" in fp.error
    assert grown_mib < 120, grown_mib  # pypdf alone went to 75 MB of output per stream, then raised
    # Never a baseline: the next readable capture is.
    good = pdf_with_pages([zlib.compress(TEXT)])
    res = eng.scan_history("h", [Capture(url="https://doi.example/10.1/x", timestamp=T, content=bomb),
                                 Capture(url="https://doi.example/10.1/x", timestamp=T.replace(month=2),
                                         content=good)])
    assert [(v.status, v.change) for v in res.verdicts] == [("error", "error"), ("on-topic", "baseline")]


def test_pdf_with_one_page_over_the_cap_keeps_the_rest_noted_truncated() -> None:
    pdf = pdf_with_pages([zlib.compress(TEXT), flate_bomb(30)])
    fp = Engine(EngineConfig()).fingerprint(Capture(url="https://doi.example/10.1/y", timestamp=T, content=pdf))
    assert fp.kind == "pdf" and "discharge" in fp.term_freqs
    assert fp.error == "truncated"
