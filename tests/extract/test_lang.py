"""Language identification: driftline's vectorised walk of py3langid's automaton gives the
library's own answer and probability, to the last bit, on real pages in many languages."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from watcher import lang
from watcher.extract.html import read_html

# One paragraph in each of several scripts and languages (written for this test), and text that
# holds no feature or only a few: the fallbacks of the walk.
TEXTS = [
    "The council met on Tuesday to hear the appeal of the families who lost their homes in the flood.",
    "اجتمع المجلس يوم الثلاثاء للنظر في استئناف العائلات التي فقدت منازلها في الفيضان الأخير.",
    "Совет собрался во вторник, чтобы рассмотреть апелляцию семей, потерявших дома во время наводнения.",
    "Der Rat trat am Dienstag zusammen, um die Berufung der Familien zu hören, die ihr Zuhause verloren.",
    "Le conseil s'est réuni mardi pour entendre l'appel des familles qui ont perdu leur maison.",
    "El consejo se reunió el martes para escuchar la apelación de las familias que perdieron sus casas.",
    "理事会周二开会，听取在洪水中失去家园的家庭的上诉。",
    "評議会は火曜日に会合を開き、洪水で家を失った家族の訴えを聞いた。",
    "परिषद ने मंगलवार को उन परिवारों की अपील सुनी जिन्होंने बाढ़ में अपने घर खो दिए।",
    "ΤΟ ΣΥΜΒΟΥΛΙΟ ΣΥΝΕΔΡΙΑΣΕ ΤΗΝ ΤΡΙΤΗ ΓΙΑ ΝΑ ΑΚΟΥΣΕΙ ΤΗΝ ΕΦΕΣΗ ΤΩΝ ΟΙΚΟΓΕΝΕΙΩΝ ΠΟΥ ΕΧΑΣΑΝ ΤΑ ΣΠΙΤΙΑ",
    "a", "", "12345 67890 .,;: !!!", "\u0130stanbul \u0130zmir",
]


def _library() -> Any:
    """py3langid's own model (the library is untyped)."""
    return lang.identifier().lib


def test_the_automaton_reaches_every_state_within_the_window() -> None:
    """The walk reads each position's state off its last WINDOW bytes: exact only while every state
    of the model's automaton lies at most WINDOW bytes from its start (a newer model with longer
    n-grams fails here, not in a verdict)."""
    ident = lang.identifier()
    assert ident._fast
    nxt, row = ident._next, ident._row
    seen = np.zeros(len(row), dtype=bool)
    seen[0] = True
    frontier, depth = np.array([0]), 0
    while True:
        reached = np.unique(nxt[(row[frontier][:, None] + np.arange(256)).ravel()])
        reached = reached[~seen[reached]]
        if not len(reached):
            break
        depth += 1
        seen[reached] = True
        frontier = reached
    assert seen.all()
    assert depth <= lang.WINDOW


def _read(tf: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    f = tf.extractfile(member)
    assert f is not None, member.name  # a regular file always has its bytes
    return f.read()


@pytest.mark.parametrize("text", TEXTS)
def test_the_walk_gives_the_library_s_answer(text: str) -> None:
    assert lang.identifier().classify(text) == _library().classify(text)


def test_the_walk_gives_the_library_s_answer_on_real_pages(shared_data: Path) -> None:
    with tarfile.open(shared_data / "pages" / "newspaper-pages.tar.gz") as tf:
        pages = [_read(tf, m) for m in tf.getmembers() if m.isfile() and m.name.endswith(".html")]
    assert len(pages) > 400
    seen = set()
    for raw in pages:
        text = read_html(raw.decode("utf-8", "replace")).text
        sample = lang.sample_of(text)
        ours = lang.identifier().classify(sample)
        assert ours == _library().classify(sample)
        seen.add(ours[0])
    assert len(seen) >= 10  # the pages' many languages, not one
