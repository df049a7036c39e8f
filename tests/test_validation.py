"""Validation that names the cause, for a course author: an audit of a reference without
solution regions stops with why, instead of reporting 0 holes over 0 mutants."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rich.console import Console

from grader.audit import audit
from grader.layout import COURSES
from grader.run.api import GradeOptions, UsageFailure
from grader.worker.runner import describe


def test_an_audit_of_a_reference_without_solution_regions_says_why(tmp_path: Path):
    course = COURSES / "cmu-11785-autograd"
    reference = tmp_path / "reference"
    shutil.copytree(course / "reference", reference)
    for path in reference.rglob("*.py"):
        lines = path.read_text().splitlines(keepends=True)
        path.write_text("".join(line for line in lines if "SOLUTION" not in line))
    options = audit.AuditOptions(
        out=tmp_path / "audit",
        jobs=1,
        grading=GradeOptions(submission=Path(), rubric=course / "rubric.yaml", reference=reference),
    )
    with pytest.raises(UsageFailure, match=r"reference has no solution regions: the audit"):
        audit.run(options, Console(quiet=True))


class Autograd:
    def backward(self, divergence):
        raise NotImplementedError()


def test_a_bare_not_implemented_error_names_the_function(tmp_path: Path):
    try:
        Autograd().backward(None)
    except NotImplementedError as exc:
        described = describe(exc, tmp_path)
    assert described["message"] == "not implemented: Autograd.backward"
    assert described["status"] == "missing"
