"""The one build step a declarative pyproject cannot say: an installed package grades on its
own, so the wheel carries every course of the tree it is built from. Each folder of
``courses/`` is copied into the package as ``grader/courses/<name>/``; this course's rubric and
reference, which stay at the top of a checkout, join its profile in ``grader/courses/course/``.
A course folder that lacks a file it needs stops the build, naming the folder (an instructor's
Gradescope image then fails to build, instead of every student's grade failing later)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from grader.layout import THIS_COURSE  # noqa: E402  (layout imports nothing of its own)

DEBRIS = shutil.ignore_patterns("__pycache__", "*.pyc")


def ship_courses(tree: Path, target: Path) -> list[str]:
    """Copy ``tree``'s courses into ``target``, one folder each; the names shipped."""
    for folder in sorted((tree / "courses").iterdir()):
        if folder.is_dir():
            shutil.copytree(folder, target / folder.name, ignore=DEBRIS, dirs_exist_ok=True)
    if (tree / "rubric.yaml").is_file():
        (target / THIS_COURSE).mkdir(parents=True, exist_ok=True)
        shutil.copy2(tree / "rubric.yaml", target / THIS_COURSE / "rubric.yaml")
    if (tree / "reference").is_dir():
        reference = target / THIS_COURSE / "reference"
        shutil.copytree(tree / "reference", reference, ignore=DEBRIS, dirs_exist_ok=True)
    for course in sorted(target.iterdir()):
        needs = ["profile.yaml"] + (["rubric.yaml"] if (course / "reference").is_dir() else [])
        missing = [name for name in needs if not (course / name).is_file()]
        if missing:
            raise SystemExit(f"course folder {tree / 'courses' / course.name}: no {missing[0]}")
    return sorted(course.name for course in target.iterdir())


class BuildWithCourses(build_py):
    """build_py, then the courses; an editable install reads them from the checkout."""

    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):
            ship_courses(HERE, Path(self.build_lib) / "grader" / "courses")


if __name__ == "__main__":  # as every build front end runs it; tests import ship_courses
    setup(cmdclass={"build_py": BuildWithCourses})
