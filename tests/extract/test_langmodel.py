"""The unpacked language model kept in the cache folder (watcher.langmodel): the identifier built
from it is the library's own, a damaged file is unpacked again, an unwritable folder costs only time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from py3langid.langid import MODEL_FILE, LanguageIdentifier

from watcher import langmodel

TEXTS = ("The court heard the appeal of the detained journalists on Monday.",
         "أصدرت المنظمة اليوم تقريرا عن أوضاع المعتقلين في السجون",
         "Организация опубликовала сегодня доклад о положении заключённых",
         "该组织今天发布了一份关于监狱中被拘留者状况的报告")


@pytest.fixture(scope="module")
def library() -> LanguageIdentifier:
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _same(a: LanguageIdentifier, b: LanguageIdentifier) -> None:
    assert np.array_equal(a.nb_ptc, b.nb_ptc) and a.nb_ptc.dtype == b.nb_ptc.dtype
    assert np.array_equal(a.nb_pc, b.nb_pc) and list(a.nb_classes) == list(b.nb_classes)
    assert bytes(a.tk_nextmove) == bytes(b.tk_nextmove) and a.tk_nextmove.typecode == b.tk_nextmove.typecode
    assert list(a.tk_output) == list(b.tk_output)
    for text in TEXTS:
        assert a.classify(text) == b.classify(text)


def test_the_cached_model_is_the_librarys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          library: LanguageIdentifier) -> None:
    monkeypatch.setenv("DRIFTLINE_CACHE_DIR", str(tmp_path / "cache"))
    first = langmodel.load_identifier()  # unpacks into the folder
    kept = list((tmp_path / "cache").glob("py3langid-*.npz"))
    assert len(kept) == 1 and kept[0].stat().st_size > 10_000_000
    assert not list((tmp_path / "cache").glob(".py3langid-*")), "a temporary file was left behind"
    _same(first, library)
    _same(langmodel.load_identifier(), library)  # read from the folder


def test_a_damaged_cache_file_is_unpacked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               library: LanguageIdentifier) -> None:
    monkeypatch.setenv("DRIFTLINE_CACHE_DIR", str(tmp_path))
    langmodel.load_identifier()
    (kept,) = tmp_path.glob("py3langid-*.npz")
    size = kept.stat().st_size
    with kept.open("r+b") as fh:
        fh.truncate(size // 3)  # cut short, as a full disk would leave it
    _same(langmodel.load_identifier(), library)
    assert kept.stat().st_size == size


def test_an_unwritable_cache_folder_costs_only_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    library: LanguageIdentifier) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the folder would go: no process (root included) can make it")
    monkeypatch.setenv("DRIFTLINE_CACHE_DIR", str(blocker / "driftline"))
    _same(langmodel.load_identifier(), library)
    assert blocker.read_text().startswith("a file")


def test_cache_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DRIFTLINE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert langmodel.cache_dir() == tmp_path / "driftline"
