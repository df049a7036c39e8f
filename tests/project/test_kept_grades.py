"""The suite's kept grades (``tests.helpers.memo``): a grade is worked out once per key, and
an upload's key follows its files, not the folder that holds them."""

from __future__ import annotations

import shutil

import pytest

from tests.helpers import memo


@pytest.fixture
def kept_in(tmp_path, monkeypatch):
    monkeypatch.setattr(memo, "folder", tmp_path / "kept")
    return tmp_path


def test_a_key_is_worked_out_once(kept_in):
    calls = []

    def work():
        calls.append(1)
        return {"score": len(calls)}

    assert memo.kept("a", work) == {"score": 1}
    assert memo.kept("a", work) == {"score": 1}
    assert memo.kept("b", work) == {"score": 2}
    assert len(calls) == 2


def test_a_failed_grade_is_not_kept(kept_in):
    def fails():
        raise RuntimeError("the grade broke")

    with pytest.raises(RuntimeError):
        memo.kept("a", fails)
    assert memo.kept("a", lambda: "graded") == "graded"


def test_without_a_folder_nothing_is_kept(monkeypatch):
    monkeypatch.setattr(memo, "folder", None)
    values = iter([1, 2])
    assert [memo.kept("a", lambda: next(values)) for _ in range(2)] == [1, 2]


def test_an_uploads_key_follows_its_files_not_its_folder(tmp_path):
    upload = tmp_path / "one" / "engine"
    (upload / "pkg" / "__pycache__").mkdir(parents=True)
    (upload / "pkg" / "engine.py").write_text("x = 1\n")
    moved = tmp_path / "two" / "engine"
    shutil.copytree(upload, moved)
    (moved / "pkg" / "__pycache__" / "engine.pyc").write_bytes(b"compiled")
    assert memo.key_of(upload, "all", None) == memo.key_of(moved, "all", None)
    assert memo.key_of(upload, "all", None) != memo.key_of(upload, "all", 7)
    (moved / "pkg" / "engine.py").write_text("x = 2\n")
    assert memo.key_of(upload, "all", None) != memo.key_of(moved, "all", None)
    (moved / "pkg" / "engine.py").write_text("x = 1\n")
    (moved / "pkg" / "more.py").write_text("")
    assert memo.key_of(upload, "all", None) != memo.key_of(moved, "all", None)
