"""The suite's kept grades (``tests.helpers.memo``): a grade is worked out once per key, and
an upload's key follows its files, not the folder that holds them."""

from __future__ import annotations

import shutil

import pytest

from grader.layout import COURSES
from tests.helpers import memo
from tests.helpers.grading import course_digest


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


def test_a_course_whose_profile_alone_changed_is_another_course(tmp_path):
    """A test copies a course and changes its profile alone (what the starter gives): the
    grade of the copy is not the shipped course's."""
    course = tmp_path / "needle-hw1"
    shutil.copytree(COURSES / "needle-hw1", course, ignore=shutil.ignore_patterns("reference"))
    shipped = course_digest(COURSES / "needle-hw1" / "rubric.yaml")
    assert course_digest(course / "rubric.yaml") == shipped
    profile = course / "profile.yaml"
    profile.write_text(profile.read_text() + "\n# told otherwise\n")
    assert course_digest(course / "rubric.yaml") != shipped
    assert course_digest(tmp_path / "nowhere.yaml") is None
