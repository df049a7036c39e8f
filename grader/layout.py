"""Where the grader's own files live, and which of them a student's code must never see."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
"""The ``grader`` package: readable inside every sandboxed worker, minus ``SECRET``."""
REPO = PACKAGE.parent
"""The checkout (or the student release) that holds the package, the rubric and the stubs."""
SUITES = PACKAGE / "grading" / "suites"
"""The grading tests: pytest runs them in the trusted parent."""
TEMPLATES = PACKAGE / "release" / "templates"
"""The files a release writes for students, Gradescope and GitHub Classroom."""


@functools.cache
def grader_digest() -> str:
    """The grader's own source: a change to a strategy or a suite changes what is drawn, and a
    fixed check changes grades."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


THIS_COURSE = "course"
"""This course's name among the courses: in a checkout its profile is in ``courses/course/``
and its rubric and reference stay at the top; an installed package lays it out as any other."""
IN_CHECKOUT = (REPO / "courses").is_dir()
"""Run from a checkout (or a student release, or an editable install), not an installed wheel."""
SHIPPED = PACKAGE / "courses"
"""Where an installed package carries every course it was built with, each laid out as
``<name>/{profile.yaml, rubric.yaml, reference/}`` (written by the build step in setup.py)."""
COURSES = REPO / "courses" if IN_CHECKOUT else SHIPPED
"""Every course's folder: profile.yaml, rubric.yaml, reference/, audit-judgements.yaml."""


def course_root(name: str) -> Path:
    """The folder that holds course ``name``'s ``rubric.yaml`` and ``reference/``: a shipped
    course's name, or else the path of a course folder of one's own, laid out as they are."""
    if name == THIS_COURSE and IN_CHECKOUT:
        return REPO
    if name == THIS_COURSE or (COURSES / name / "rubric.yaml").is_file():
        return COURSES / name
    return Path(name).resolve()


def shipped_courses() -> list[str]:
    """The courses that ``--course`` takes by name: this one first, then each with a rubric."""
    others = sorted(f.parent.name for f in COURSES.glob("*/rubric.yaml"))
    return [THIS_COURSE, *(name for name in others if name != THIS_COURSE)]


DEFAULT_RUBRIC = course_root(THIS_COURSE) / "rubric.yaml"
DEFAULT_REFERENCE = course_root(THIS_COURSE) / "reference"
DEFAULT_PROFILE = COURSES / THIS_COURSE / "profile.yaml"


def needs_checkout(what: str) -> str | None:
    """One line for a command asked outside a checkout for ``what`` only a checkout has (the
    stubs, the student release, the project's tests), or None inside one."""
    if IN_CHECKOUT:
        return None
    return (
        f"{what} needs a checkout of the autograd-grader repository; the installed package "
        "grades and audits courses, nothing more"
    )


EXERCISES = REPO / "exercises"
SECRET = (SUITES, PACKAGE / "oracles", DEFAULT_REFERENCE, COURSES)
"""Masked in every worker (bwrap) or blocked from import (fallback): the grading tests, the
oracles and the reference solutions (other courses' too). A grade adds the reference it was
given and PyTorch."""


def worker_readable() -> list[Path]:
    """What a sandboxed worker may read, less ``SECRET``: the environment's prefix, the grader
    package, and the folder numpy comes from where that lies outside the prefix (a venv that
    borrows another's packages through a ``.pth`` file or ``--system-site-packages``). Without
    it, bubblewrap's own check fails to import numpy and the grade runs unconfined."""
    readable = [Path(sys.prefix), PACKAGE]
    numpy = importlib.util.find_spec("numpy")
    if numpy is not None and numpy.origin is not None:
        site = Path(numpy.origin).resolve().parent.parent
        if not any(site.is_relative_to(Path(root).resolve()) for root in readable):
            readable.append(site)
    return readable


REPLAY_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "autograd-grader" / "replay"
)
"""Tests' recorded runs, replayed by the next grade (``grader.grading.replay``): outside
the submission, so nothing a student commits is read as a recording."""
