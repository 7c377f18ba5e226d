"""DOI normalisation and validation.

Why normalise: the same DOI arrives as ``doi:10.1000/ABC``,
``https://doi.org/10.1000/abc``, ``http://dx.doi.org/10.1000%2Fabc`` or with
stray whitespace and trailing punctuation from a spreadsheet.  DOIs are
case-insensitive (DOI Handbook 3.4: ASCII letters are matched without regard
to case), so the registry keys one canonical form: lower case, no scheme or
resolver prefix, percent-decoding undone, surrounding punctuation stripped.

Validation follows Crossref's advice for matching modern DOIs
(``^10.\\d{4,9}/[-._;()/:A-Z0-9]+$``) loosened to any printable non-space
suffix, because DataCite and older Crossref DOIs contain ``<``, ``>``, ``[``
and the like; what is refused is what cannot be a DOI at all (no ``10.``
prefix, a registrant code that is not digits and dots, an empty suffix,
spaces or control characters inside).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from ..errors import DoiError

_PREFIXES = re.compile(
    r"^(?:doi:\s*|info:doi/|urn:doi:|https?://(?:dx\.|www\.)?doi\.org/|https?://hdl\.handle\.net/|"
    r"https?://doi\.[a-z0-9.-]+/)",
    re.I,
)
_DOI = re.compile(r"^10\.\d{4,9}(?:\.\d+)*/\S+$")
_TRAILING = ".,;:\"'"
_CLOSERS = {")": "(", "]": "[", ">": "<", "}": "{"}
MAX_DOI_CHARS = 1000


def normalise_doi(raw: str) -> str:
    """The canonical form of ``raw`` (lower case, bare ``10.x/y``).

    Raises :class:`~watcher.errors.DoiError` (reason ``invalid_doi``) with the
    offending text when ``raw`` is not a DOI.
    """
    text = (raw or "").strip().lstrip("<([{\"'").strip()
    for _ in range(3):  # "doi: https://doi.org/10..." and similar doubled prefixes
        stripped = _PREFIXES.sub("", text, count=1).strip()
        if stripped == text:
            break
        text = stripped
    if "%" in text:
        text = unquote(text)
    text = _strip_trailing(text).lower()
    if not text:
        raise DoiError(f"not a DOI: {raw!r} (empty)")
    if len(text) > MAX_DOI_CHARS:
        raise DoiError(f"not a DOI: {raw[:60]!r}... (over {MAX_DOI_CHARS} characters)")
    if any(ord(ch) < 32 or ch.isspace() for ch in text):
        raise DoiError(f"not a DOI: {raw!r} (contains spaces or control characters)")
    if not _DOI.match(text):
        raise DoiError(f"not a DOI: {raw!r} (a DOI is 10.<registrant>/<suffix>)")
    return text


def _strip_trailing(text: str) -> str:
    """Drop sentence punctuation after a DOI, and closing brackets that close
    nothing in it (``(see 10.1000/x)``), keeping balanced ones (``10.1002/(sici)1097``
    and ``10.1000/abc(1)`` are real DOIs)."""
    while text:
        last = text[-1]
        if last in _TRAILING or (last in _CLOSERS and text.count(last) > text.count(_CLOSERS[last])):
            text = text[:-1]
        else:
            break
    return text.strip()


def doi_url(doi: str, resolver_url: str) -> str:
    """``resolver_url`` + the DOI, with the characters a URL path cannot hold escaped
    (as doi.org's own links do: ``/`` kept, ``#``, ``?``, ``%`` and spaces escaped)."""
    from urllib.parse import quote

    return resolver_url.rstrip("/") + "/" + quote(doi, safe="/;:()[]<>@!$&'*+,=.-_~")
