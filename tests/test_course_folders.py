"""Where a course's files are found: a shipped course by name (in a checkout, or carried by an
installed package), a course folder of one's own by path, and the build step that puts every
course into the package. The installs themselves: tests/test_install.py and
tests/test_gradescope.py."""

from __future__ import annotations

import argparse
import importlib.util
import shutil

import pytest

from grader.grading import rubric as rubric_module
from grader.layout import COURSES, REPO, THIS_COURSE, course_root, shipped_courses
from grader.run.arguments import course
from grader.run.submissions import Upload, prepare, submitted


def _setup_module():
    spec = importlib.util.spec_from_file_location("setup_under_test", REPO / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_shipped_course_and_a_folder_are_told_apart(tmp_path, monkeypatch):
    assert course_root(THIS_COURSE) == REPO
    assert course_root("needle-hw1") == COURSES / "needle-hw1"
    monkeypatch.chdir(tmp_path)
    assert course_root("./mine") == tmp_path / "mine"
    assert course_root("mine") == tmp_path / "mine"
    assert shipped_courses()[0] == THIS_COURSE and "needle-hw1" in shipped_courses()


def test_course_takes_a_name_or_a_folder_with_a_rubric_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert course("karpathy-micrograd") == "karpathy-micrograd"
    with pytest.raises(argparse.ArgumentTypeError, match="no course 'mine'"):
        course("mine")
    shutil.copytree(COURSES / "karpathy-micrograd", tmp_path / "mine")
    assert course("mine") == "mine"


def test_the_profile_beside_a_rubric_is_its_courses_and_must_be_the_one_it_names(tmp_path):
    mine = tmp_path / "mine"
    shutil.copytree(COURSES / "karpathy-micrograd", mine)
    assert rubric_module.load(mine / "rubric.yaml").profile.path == mine / "profile.yaml"
    text = (mine / "rubric.yaml").read_text()
    (mine / "rubric.yaml").write_text(text.replace("profile: karpathy-micrograd", "profile: x"))
    with pytest.raises(rubric_module.RubricError, match=r"rubric.yaml:\d+: the rubric names"):
        rubric_module.load(mine / "rubric.yaml")


def test_the_build_ships_every_course_and_this_one_whole(tmp_path):
    shipped = _setup_module().ship_courses(REPO, tmp_path / "courses")
    assert shipped == sorted(shipped_courses())
    ours = tmp_path / "courses" / THIS_COURSE
    assert (ours / "rubric.yaml").read_bytes() == (REPO / "rubric.yaml").read_bytes()
    assert (ours / "reference" / "micrograd" / "engine.py").is_file()
    assert not list((tmp_path / "courses").rglob("__pycache__"))


@pytest.mark.parametrize("missing", ["profile.yaml", "rubric.yaml"])
def test_the_build_stops_at_a_course_folder_that_lacks_a_file(tmp_path, missing):
    tree = tmp_path / "tree"
    shutil.copytree(COURSES / "karpathy-micrograd", tree / "courses" / "karpathy-micrograd")
    (tree / "courses" / "karpathy-micrograd" / missing).unlink()
    with pytest.raises(SystemExit, match=f"courses/karpathy-micrograd: no {missing}"):
        _setup_module().ship_courses(tree, tmp_path / "out")


def test_a_package_without_a_top_init_is_found_below_its_files(tmp_path):
    """TinyTorch's files sit in ``tinytorch/core/`` with no ``tinytorch/__init__.py``: the
    upload is placed as its package, not as ``core``."""
    rubric = rubric_module.load(COURSES / "tinytorch-autograd" / "rubric.yaml")
    (assignment,) = rubric.profile.graded
    upload = Upload("student", COURSES / "tinytorch-autograd" / "reference", "folder")
    found = prepare(upload, tmp_path / "prepared", rubric.profile.graded, sandbox="none")
    assert found.notes == ["tinytorch: tinytorch/"]
    assert submitted(found.folder, assignment)
