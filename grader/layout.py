"""Where the grader's own files live, and which of them a student's code must never see."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
"""The ``grader`` package: readable inside every sandboxed worker, minus ``SECRET``."""
REPO = PACKAGE.parent
"""The checkout (or the student release) that holds the package, the rubric and the stubs."""
SUITES = PACKAGE / "grading" / "suites"
"""The grading tests: pytest runs them in the trusted parent."""
TEMPLATES = PACKAGE / "workflows" / "templates"
"""The files a release writes for students, Gradescope and GitHub Classroom."""
DEFAULT_RUBRIC = REPO / "rubric.yaml"
DEFAULT_REFERENCE = REPO / "reference"
COURSES = REPO / "courses"
"""Other courses' APIs, one folder each: profile.yaml, rubric.yaml, reference/."""
THIS_COURSE = "course"
"""This course's name among them: its profile is in ``courses/course/``, its rubric and
reference stay at the top (``DEFAULT_RUBRIC``, ``DEFAULT_REFERENCE``)."""
DEFAULT_PROFILE = COURSES / THIS_COURSE / "profile.yaml"


def course_root(name: str) -> Path:
    """The folder that holds course ``name``'s ``rubric.yaml`` and ``reference/``."""
    return REPO if name == THIS_COURSE else COURSES / name


EXERCISES = REPO / "exercises"
SECRET = (SUITES, PACKAGE / "oracles", DEFAULT_REFERENCE, COURSES)
"""Masked in every worker (bwrap) or blocked from import (fallback): the grading tests, the
oracles and the reference solutions (other courses' too). A grade adds the reference it was
given and PyTorch."""
REPLAY_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "autograd-grader" / "replay"
)
"""Tests' recorded runs, replayed by the next grade (``grader.grading.replay``): outside
the submission, so nothing a student commits is read as a recording."""
