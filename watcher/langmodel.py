"""py3langid's model, decompressed once per machine instead of once per process.

Why: the model ships as an LZMA-compressed ``.npz`` (4.5 MB, 68 MB unpacked), and unpacking it
took 0.35 s of every process that identifies a language: every ``driftline`` command that reads
a page, every scan worker started by spawn, every Spark executor's Python worker.  The unpacked
``.npz`` is kept in the user's cache folder (``$DRIFTLINE_CACHE_DIR``, else
``$XDG_CACHE_HOME/driftline``, else ``~/.cache/driftline``) under a name that holds py3langid's
version and the model file's size and modification time, so an upgrade makes a new one; reading
it takes 0.05-0.1 s.  It is written to a temporary name and renamed, so a reader never sees half
a file; a folder that cannot be written (a read-only home in a container) or a damaged file
costs only the old decompression, logged at DEBUG, never an error.  The arrays are the
library's own: the same ``.npz`` read the way ``py3langid.modelio.load_model`` reads it.
"""

from __future__ import annotations

import contextlib
import logging
import lzma
import os
import shutil
import tempfile
import zipfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


def cache_dir() -> Path:
    """Where the unpacked model is kept (see the module doc)."""
    explicit = os.environ.get("DRIFTLINE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "driftline"


def _read(path: Path) -> tuple[Any, ...]:
    """The model's six parts from an unpacked ``.npz``, as ``py3langid.modelio.load_model`` returns them."""
    from py3langid import modelio

    with np.load(path, allow_pickle=False) as data:
        return (data["ptc"], data["pc"], data["classes"].tolist(), modelio._to_array(data["nextmove"]),
                modelio._to_array(data["nextmove_row"]), data["out_feat"].tolist())


def load_identifier() -> Any:
    """py3langid's ``LanguageIdentifier`` (probabilities normalised), built as
    ``LanguageIdentifier.from_model_file`` builds it, from the cached unpacked model when there is one."""
    from py3langid import modelio
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    packed = Path(MODEL_FILE) if Path(MODEL_FILE).is_absolute() else Path(MODEL_DIR) / MODEL_FILE
    st = packed.stat()
    cached = cache_dir() / f"py3langid-{version('py3langid')}-{st.st_size}-{st.st_mtime_ns}.npz"
    parts: tuple[Any, ...] | None = None
    if cached.is_file():
        try:
            parts = _read(cached)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            # a damaged file (cut short by a full disk, say): unpacked again over it
            log.debug("cached language model %s unreadable (%r); unpacking it again", cached, exc)
    if parts is None:
        parts = _unpack(packed, cached)
    if parts is None:
        parts = modelio.load_model(packed)
    ptc, pc, classes, nextmove, row, output = parts
    return LanguageIdentifier(np.asarray(ptc), np.asarray(pc), classes, nextmove, output, norm_probs=True,
                              tk_row=row)


def _unpack(packed: Path, cached: Path) -> tuple[Any, ...] | None:
    """Unpack the model to ``cached`` (temporary name, then renamed) and read it; ``None`` when the
    folder cannot be written."""
    tmp: str | None = None
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cached.parent, prefix=".py3langid-", suffix=".npz")
        with os.fdopen(fd, "wb") as out, lzma.open(packed) as src:
            shutil.copyfileobj(src, out, 1 << 20)
        os.replace(tmp, cached)
        tmp = None
        return _read(cached)
    except OSError as exc:
        log.debug("cannot keep the unpacked language model in %s (%r); unpacking it in memory", cached.parent, exc)
        return None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
