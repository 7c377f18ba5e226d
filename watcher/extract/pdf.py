"""Text of a PDF capture, with its decoded size bounded like an HTML body's.

Why bounded: PDF streams are compressed (Flate, LZW, run-length...) just
like content-coded bodies, so a 1 MB file can hold 250 MB of page content.
pypdf's own limits (75 MB of output per stream, then ``LimitReachedError``)
are lowered to ``max_bytes`` for the duration of one extraction, and the
text stops growing at ``max_bytes`` characters.  A page over a limit is
skipped and the result noted ``truncated``; a PDF left with no text but
over-limit pages is a failure, never an empty page that could become a
baseline.
"""

from __future__ import annotations

import io
import logging
from typing import NamedTuple

from .html import normalise_ws

log = logging.getLogger(__name__)

# pypdf limits that bound decoded bytes, all set to max_bytes.
_LIMITS = ("zlib_maximum_output_length", "lzw_maximum_output_length", "run_length_maximum_output_length",
           "brotli_maximum_output_length", "array_based_stream_maximum_output_length",
           "jbig2_maximum_output_length", "maximum_declared_stream_length", "stream_decoding_work_maximum_length",
           "image_maximum_buffer_size")


class PdfText(NamedTuple):
    """``failure`` (None when readable) says why there is no text; ``truncated``:
    some page or the text went over ``max_bytes``."""

    text: str
    title: str
    truncated: bool = False
    failure: str | None = None


def pdf_text(content: bytes, max_pages: int, max_bytes: int = 20_000_000) -> PdfText:
    """Text and title of the first ``max_pages`` pages.  Never raises on bad input."""
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import LimitReachedError, PdfReadError, PyPdfError

    try:
        with apply_configuration(None, **{name: max_bytes for name in _LIMITS}):
            reader = PdfReader(io.BytesIO(content), strict=False)
            title = ""
            try:
                meta = reader.metadata
                title = str(meta.title) if meta is not None and meta.title else ""
            except (PyPdfError, ValueError, TypeError, KeyError):
                title = ""
            parts: list[str] = []
            size = 0
            over = 0
            for page in reader.pages[:max_pages]:
                try:
                    text = page.extract_text() or ""
                except LimitReachedError as exc:
                    over += 1
                    log.info("PDF page over the decoding cap (extract.max_bytes): %s", exc)
                    continue
                except (PdfReadError, ValueError, TypeError, KeyError, AttributeError, IndexError):
                    continue
                parts.append(text[: max(0, max_bytes - size)])
                size += len(text)
                if size >= max_bytes:
                    over += 1
                    break
    except (PyPdfError, ValueError, TypeError, KeyError, OSError, AttributeError, IndexError,
            RecursionError, ZeroDivisionError, MemoryError) as exc:
        log.debug("pypdf could not read a PDF: %s", exc)
        return PdfText("", "", failure=f"unreadable PDF ({type(exc).__name__}: {str(exc)[:120]})")
    text = normalise_ws("\n".join(parts))
    if over and not text:
        return PdfText("", title, True, f"PDF streams inflate past {max_bytes} bytes (truncated)")
    return PdfText(text, title, truncated=bool(over))
