"""Every example the feedback shows for a planted bug of another course runs as that course's
student runs it: a fresh ``python`` in the folder the course's package sits in, against the
planted engine, and prints something else than the course's reference prints for it (or
fails, or hangs where the reference finishes); or its feedback says that, run alone, it prints
what the reference prints (what went wrong is not among what it prints), exactly where it
does. The snippets are in the course's own words: needle's ``Tensor``, MiniTorch's
``Scalar``, TinyTorch's methods, 11-785's tape (``grader.language.tape_snippets``). This
course's own bugs replay in ``tests/grading/test_replayed_snippets.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.language import profiles
from grader.layout import COURSES
from tests.helpers.grading import COURSE_ENGINES, course_grade
from tests.helpers.planted import Bug, plant
from tests.helpers.processes import unexplained
from tests.seed_sweep import bugs_of

pytestmark = pytest.mark.slow


KNOWN = {
    "needle-hw1-needle.backward:visited-kept-between-calls": "needle.backward's second walk",
}
"""Planted bugs one of whose shown examples prints in a fresh interpreter what the reference
prints, and does not say so (found by this test, not fixed yet): strict, so a fix is
noticed."""


def _case(course: str, bug: Bug) -> object:
    label = f"{course}-{bug.label}"
    known = KNOWN.get(label)
    marks = [pytest.mark.xfail(strict=True, reason=f"example of {known}")] if known else []
    return pytest.param(course, bug, id=label, marks=marks)


def package_folder(course: str, engine: Path) -> Path:
    """Where a student runs a snippet: the folder the course's package sits in."""
    (own,) = profiles.load(COURSES / course / "profile.yaml").assignments.values()
    folder = getattr(own.api, "folder", "")
    return engine / folder if folder else engine


@pytest.mark.parametrize(
    ("course", "bug"),
    [
        _case(course, bug)
        for course in COURSE_ENGINES
        if course != "course"
        for bug in bugs_of(course)
    ],
)
def test_every_example_shown_for_a_courses_planted_bug_replays(tmp_path, course: str, bug: Bug):
    reference = COURSES / course / "reference"
    submission = plant(tmp_path, bug, reference=reference)
    report = course_grade(course, submission)
    # A composite whose dependency fails (``fix_first``) shows that bug again on a whole graph:
    # on an engine whose ``_prev`` is a set (Karpathy's), a graph's order, and so whether a
    # walk listing a shared node twice goes wrong on it, follows the nodes' addresses, which
    # differ from one interpreter to the next; the item's own examples are replayed here.
    shown = [
        (f"{item['id']} {failure['test']}", failure["snippet"], failure["details"])
        for item in report.items
        if not item["fix_first"]
        for failure in item["failures"]
        if failure["snippet"]
    ]
    assert shown, "the bug shows no example"
    planted, original = package_folder(course, submission), package_folder(course, reference)
    problems = []
    for where, snippet, details in shown:
        problem = unexplained(snippet, details, planted, original)
        if problem:
            problems.append(f"{where}: {problem}\n{snippet}")
    assert not problems, "\n\n".join(problems)
