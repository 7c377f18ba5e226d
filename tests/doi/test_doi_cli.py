"""``driftline doi``: the store it uses is named, read-only commands never create one, and removing a DOI that
is not watched fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from watcher.cli import main


def test_read_only_commands_never_create_a_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DRIFTLINE__STORE__PATH", raising=False)
    for command in (["doi", "list"], ["doi", "status"], ["doi", "remove", "10.1000/x"]):
        assert main(command) != 0, command
        err = capsys.readouterr().err
        assert f"no DOI store at {tmp_path / 'driftline.db'}" in err, err
        assert f"doi store: SQLite {tmp_path / 'driftline.db'}" in err
    assert list(tmp_path.iterdir()) == []


def test_the_store_used_is_named_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "sub" / "reg.db"
    db.parent.mkdir()
    monkeypatch.setenv("DRIFTLINE__STORE__PATH", str(db))
    assert main(["doi", "add", "10.1000/A"]) == 0
    out, err = capsys.readouterr()
    assert "1 added" in out and err.splitlines() == [f"doi store: SQLite {db}"]
    assert main(["doi", "list", "-f", "csv"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[1].startswith("10.1000/a,") and err.splitlines() == [f"doi store: SQLite {db}"]


def test_removing_an_unwatched_doi_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DRIFTLINE__STORE__PATH", str(tmp_path / "reg.db"))
    assert main(["doi", "add", "10.1000/A", "10.1000/B"]) == 0
    capsys.readouterr()
    assert main(["doi", "remove", "10.1000/a", "10.1000/nope"]) == 1
    out, err = capsys.readouterr()
    assert "1 removed" in out and "not watched: 10.1000/nope" in err
    assert main(["doi", "remove", "10.1000/b"]) == 0
    assert "1 removed" in capsys.readouterr().out
    assert main(["doi", "remove", "10.1000/b"]) == 1
    assert "not watched: 10.1000/b" in capsys.readouterr().err
