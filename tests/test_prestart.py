"""A grade's grading process starts before the command does anything else: only for a grade,
handed over once, and gone without a word when the command stops before it has runs."""

from __future__ import annotations

import subprocess

import pytest

from grader.run import prestart
from tests.grading import REFERENCE, grade_command


@pytest.fixture
def started(monkeypatch):
    """``prestart``'s processes, this test's alone."""
    processes: list[subprocess.Popen[str]] = []
    monkeypatch.setattr(prestart, "_started", processes)
    yield processes
    prestart._close()


@pytest.mark.parametrize(
    ("argv", "starts"),
    [
        (["grade", "--submission", "x"], True),
        (["--no-torch", "check-reference"], True),
        (["grade", "--help"], False),
        (["batch", "uploads", "--out", "o"], False),
        ([], False),
    ],
)
def test_only_a_grade_starts_its_grading_process_ahead(started, argv, starts):
    prestart.begin(argv)
    assert len(started) == starts


def test_the_process_started_ahead_is_taken_once_then_a_new_one_is_started(started):
    prestart.begin(["grade"])
    (ahead,) = started
    taken = prestart.take()
    assert taken is ahead and started == []
    another = prestart.take()
    assert another is not ahead
    for process in (taken, another):
        assert process.communicate("") == ("", "")
        assert process.returncode == 0


def test_a_process_nobody_took_exits_quietly_when_the_command_ends(started):
    prestart.begin(["grade"])
    (ahead,) = started
    prestart._close()
    assert ahead.returncode == 0  # its output unread: said empty by the test above


def test_a_grade_that_stops_early_says_why_and_leaves_nothing_running(tmp_path):
    run = grade_command("--submission", REFERENCE, "--only", "no.such.item")
    assert run.returncode == 2
    assert "--only no.such.item selects no rubric item" in run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
