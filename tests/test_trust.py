"""A reference is an oracle only once it earns every point of its own rubric: a broken one stops
the command with one error for the instructor, before anyone is graded against it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.grading import rubric as rubric_module
from grader.grading.options import GradeOptions
from grader.layout import DEFAULT_RUBRIC
from grader.run import trust
from tests.grading import REFERENCE, REPO
from tests.planted import TANH_DERIVATIVE, apply

RUBRIC = rubric_module.load(DEFAULT_RUBRIC)
pytestmark = pytest.mark.slow  # each check grades a whole reference once


@pytest.fixture
def checked(tmp_path, monkeypatch) -> Path:
    """A check cache of the test's own: what another test verified does not count here."""
    monkeypatch.setattr(trust, "CHECKED", tmp_path / "checked")
    return tmp_path / "checked"


def broken_reference(tmp_path: Path) -> Path:
    reference = tmp_path / "reference"
    shutil.copytree(REFERENCE, reference, ignore=shutil.ignore_patterns("__pycache__"))
    apply(reference, TANH_DERIVATIVE)
    return reference


def test_a_reference_that_fails_its_rubric_stops_the_grade_naming_the_item(tmp_path, checked):
    options = GradeOptions(submission=REFERENCE, reference=broken_reference(tmp_path))
    with pytest.raises(trust.ReferenceFailure) as failure:
        trust.verify_reference(options, RUBRIC)
    said = str(failure.value)
    assert "micrograd.ops.tanh" in said and "instructor" in said and "Value(" in said
    assert not checked.exists() or not list(checked.iterdir())


def test_a_passing_reference_is_checked_once_per_digest(checked, monkeypatch):
    options = GradeOptions(submission=REFERENCE, reference=REFERENCE)
    trust.verify_reference(options, RUBRIC)
    assert len(list(checked.iterdir())) == 1

    def no_second_grade(*args, **kwargs):
        raise AssertionError("a checked reference was graded again")

    monkeypatch.setattr(trust, "grade", no_second_grade)
    trust.verify_reference(options, RUBRIC)


def test_the_command_line_says_it_to_the_instructor_in_one_line(tmp_path):
    """Through ``python -m grader grade`` (a fresh process, the machine's own cache: the broken
    reference's digest was never checked anywhere)."""
    done = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "--submission", str(REFERENCE),
         "--reference", str(broken_reference(tmp_path)), "--assignment", "micrograd"],
        cwd=REPO, capture_output=True, text=True, env={"COLUMNS": "400", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("configuration error: the reference") and "tanh" in first
    assert "not your fault" not in done.stdout and "Traceback" not in done.stdout + done.stderr
