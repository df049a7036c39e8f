"""The grading options are one record: what a command line gives ``GradeOptions`` is what the
grading process reads back, and an option declared as a field (the import budget) reaches the
session with nothing else to write."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from grader.grading.options import IN_MEMORY, from_pytest
from grader.language.assignments import MICROGRAD
from grader.run.api import GradeOptions, pytest_command
from grader.run.arguments import grade_options
from grader.workflows.cli import parser
from tests.fake_worker import FakeWorker, session
from tests.planted import REFERENCE

pytest_plugins = ["pytester"]


def grading_process_options(pytester: pytest.Pytester, options: GradeOptions) -> GradeOptions:
    """The record the plugin rebuilds from the grading process's command line."""
    command = pytest_command(MICROGRAD, options, pytester.path / "results.json", slot=3)
    arguments = command[command.index("pytest") + 2 :]  # after the suite
    config = pytester.parseconfig(*arguments)
    rebuilt = from_pytest(config)
    assert rebuilt is not None
    return rebuilt


@pytest.mark.parametrize(
    "options",
    [
        GradeOptions(REFERENCE),
        GradeOptions(
            REFERENCE,
            seed=5,
            only=("micrograd.topo", "micrograd.ops"),
            torch=False,
            reference=None,
            sandbox="none",
            memory_mb=1024,
            replay=IN_MEMORY,
            import_budget=12.5,
        ),
    ],
    ids=["defaults", "every-option"],
)
def test_the_grading_process_reads_back_the_options_it_was_given(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, options: GradeOptions
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert grading_process_options(pytester, options) == replace(
        options, assignment="micrograd", slot=3
    )


def test_no_submission_is_no_grading_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert from_pytest(pytester.parseconfig("-p", "grader.grading.plugin")) is None


def command_line(*arguments: str) -> GradeOptions:
    args = parser().parse_args(["grade", "--submission", str(REFERENCE), *arguments])
    return grade_options(args, Path(args.submission))


def test_import_budget_on_the_command_line() -> None:
    assert command_line().import_budget is None
    assert command_line("--import-budget", "30").import_budget == 30.0
    for nonsense in ("0", "-1", "soon"):
        with pytest.raises(SystemExit):
            command_line("--import-budget", nonsense)


@pytest.mark.parametrize(("import_budget", "limit"), [(None, 2.0), (30.0, 30.0)])
def test_the_import_budget_limits_importing_the_submission(
    import_budget: float | None, limit: float
) -> None:
    """Importing gets the option's seconds, by default twice the item's request budget
    (``micrograd.topo``: 1 s); the requests after it keep the item's."""
    budgets: list[float] = []

    class Measured(FakeWorker):
        def request(self, message: dict[str, Any], budget: float) -> dict[str, Any]:
            budgets.append(budget)
            return super().request(message, budget)

    grading = session("micrograd.topo", worker=Measured)
    grading.import_budget = import_budget
    grading.ask("micrograd", "load", {}, "")
    assert budgets == [limit, 1.0]
