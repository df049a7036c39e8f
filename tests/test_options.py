"""The grading options are one record: what a command line gives ``GradeOptions`` is what the
grading process reads back."""

from __future__ import annotations

from dataclasses import replace

import pytest

from grader.grading.options import from_pytest
from grader.grading.replay import IN_MEMORY
from grader.workflows.api import GradeOptions, pytest_command
from tests.planted import REFERENCE

pytest_plugins = ["pytester"]


def grading_process_options(pytester: pytest.Pytester, options: GradeOptions) -> GradeOptions:
    """The record the plugin rebuilds from the grading process's command line."""
    command = pytest_command("micrograd", options, pytester.path / "results.json", slot=3)
    arguments = command[command.index("pytest") + 2:]  # after the suite
    config = pytester.parseconfig(*arguments)
    rebuilt = from_pytest(config)
    assert rebuilt is not None
    return rebuilt


@pytest.mark.parametrize("options", [
    GradeOptions(REFERENCE),
    GradeOptions(REFERENCE, seed=5, only=("micrograd.topo", "micrograd.ops"), torch=False,
                 reference=None, sandbox="none", memory_mb=1024, replay=IN_MEMORY),
], ids=["defaults", "every-option"])
def test_the_grading_process_reads_back_the_options_it_was_given(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        options: GradeOptions) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert grading_process_options(pytester, options) == replace(
        options, assignment="micrograd", slot=3)


def test_no_submission_is_no_grading_run(pytester: pytest.Pytester,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert from_pytest(pytester.parseconfig("-p", "grader.grading.plugin")) is None
