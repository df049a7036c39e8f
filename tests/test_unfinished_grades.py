"""A grade without a result for every selected item is an error, never a zero (issue 37).

Each way a grading run can end short of its items is simulated without grading anything: a
fake runner writes the results file a grading run would (stopped early, an item no test
reached, read half-written, from the wrong assignment), and a fake batch hands over the entry
a grading would. ``grade`` must raise ``GraderFailure``; a batch must write the row as an
error (blank items, blank total), count it failed, keep it out of the ledger and grade it
again on the next run."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from grader.batch import batch
from grader.batch.batch import BatchOptions, Job
from grader.batch.ledger import Ledger
from grader.batch.progress import Tracker
from grader.grading.completeness import unfinished
from grader.grading.rubric import Item, load
from grader.grading.scoring import NEVER_RAN, ItemResult
from grader.layout import DEFAULT_RUBRIC
from grader.report.document import GradeReport
from grader.report.formats import StudentResult
from grader.run.api import GradeOptions, GraderFailure, Runner, grade
from tests.grading import REFERENCE

ONLY = ("micrograd.ops.add", "micrograd.ops.exp")
RUBRIC = load(DEFAULT_RUBRIC)
SELECTED = RUBRIC.selected_items({"micrograd"}, ONLY)
OPTIONS = GradeOptions(REFERENCE, assignment="micrograd", only=ONLY)


def result(item: Item, **changes: Any) -> dict[str, Any]:
    """``item`` passed, as a grading run's results file holds it, with ``changes``."""
    passed = ItemResult(
        id=item.id,
        assignment=item.assignment,
        title=item.title,
        score=item.points,
        max_score=item.points,
        extra_credit=item.extra_credit,
        visibility=item.visibility,
        status="passed",
        bugs=[],
        feedback="",
    )
    return {**passed.to_json(), **changes}


WHOLE = [result(item) for item in SELECTED]
ADD, EXP = WHOLE
BABYGRAD = result(RUBRIC.by_id["babygrad.ops.add"])


def results_file(items: list[Any]) -> str:
    return json.dumps(
        {
            "items": items,
            "not_importable": {},
            "oracles": ["reference"],
            "protections": [],
            "internal_errors": [],
            "checks": 1,
        }
    )


def writing(text: str) -> Runner:
    """A grading run that exits 0 having written ``text`` as its results file."""

    def run(command: list[str], workdir: Path) -> tuple[int, str]:
        Path(command[command.index("--grader-results") + 1]).write_text(text)
        return 0, ""

    return run


def test_a_whole_results_file_is_a_score():
    report = grade(OPTIONS, writing(results_file(WHOLE)))
    assert report.score == report.max_score == 2 * ADD["max_score"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (results_file([ADD]), "no result for micrograd.ops.exp"),
        (results_file([]), "no result for micrograd.ops.add, micrograd.ops.exp"),
        (
            results_file([ADD, result(SELECTED[1], score=0.0, status="error", reason=NEVER_RAN)]),
            "no grading test ran for micrograd.ops.exp",
        ),
        (results_file([ADD, EXP, EXP]), "more than one result for micrograd.ops.exp"),
        (results_file([ADD, BABYGRAD]), "not graded here: babygrad.ops.add"),
        (results_file([ADD, EXP, "x"]), r"results that are not items: 1\)"),
        (results_file(WHOLE)[:100], "broken results file"),
        ("[]", "without its results"),
        (json.dumps({"items": WHOLE}), "without its results"),
    ],
    ids=["stopped", "empty", "never-ran", "twice", "foreign", "junk", "half", "list", "keys"],
)
def test_a_results_file_short_of_its_items_is_a_grader_failure(text, says):
    with pytest.raises(GraderFailure, match=says):
        grade(OPTIONS, writing(text))


def test_unfinished_says_nothing_of_a_whole_grade():
    assert unfinished(WHOLE, SELECTED) == ""
    assert unfinished(list(reversed(WHOLE)), SELECTED) == ""
    assert unfinished([ADD], SELECTED) == "no result for micrograd.ops.exp"


def student(items: list[dict[str, Any]]) -> StudentResult:
    report = GradeReport("micrograd", "secret", items, ["reference"], [], 0.0)
    return StudentResult("alice", report, ("micrograd: micrograd/engine.py",))


def csv_rows(out: Path) -> list[dict[str, str]]:
    with (out / "grades.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_writer_makes_an_unfinished_grade_an_error_row(tmp_path):
    batch.write_outputs(tmp_path, [student([ADD])], RUBRIC, SELECTED)
    (row,) = csv_rows(tmp_path)
    assert row["total"] == row["max"] == ""
    assert all(row[item.id] == "" for item in RUBRIC.items)
    assert row["status"] == "grader error"
    assert "grader error: unfinished grade: no result for micrograd.ops.exp" in row["notes"]
    assert "micrograd: micrograd/engine.py" in row["notes"]
    assert not (tmp_path / "feedback" / "alice.md").exists()


def test_the_writer_writes_a_whole_grade(tmp_path):
    batch.write_outputs(tmp_path, [student(WHOLE)], RUBRIC, SELECTED)
    (row,) = csv_rows(tmp_path)
    assert row["total"] == row["max"] == "12" and row["status"] == "graded"
    assert row["micrograd.ops.add"] == row["micrograd.ops.exp"] == "6"


def entry(items: list[dict[str, Any]]) -> dict[str, Any]:
    """What ``batch.grade_upload`` hands back for a report of ``items``."""
    report = student(items).report
    return {"notes": ["micrograd: micrograd/engine.py"], "refused": "", "report": vars(report)}


@pytest.fixture
def graded_by(monkeypatch) -> Callable[[list[dict[str, Any]]], list[str]]:
    """Make a batch's grading hand back reports of the given items; returns the students it
    was asked to grade."""
    asked: list[str] = []

    def use(items: list[dict[str, Any]]) -> list[str]:
        def local(
            jobs: list[Job], workers: int, tracker: Tracker
        ) -> Iterator[tuple[Job, dict[str, Any]]]:
            for job in jobs:
                asked.append(job.upload.student)
                yield job, entry(items)

        monkeypatch.setattr(batch, "_local", local)
        return asked

    return use


@pytest.fixture
def options(tmp_path) -> BatchOptions:
    uploads = tmp_path / "uploads"
    shutil.copytree(REFERENCE / "micrograd", uploads / "alice" / "micrograd")
    grading = GradeOptions(Path(), assignment="micrograd", only=ONLY)
    return BatchOptions(uploads, tmp_path / "out", grading, jobs=1)


def test_a_batch_counts_an_unfinished_grade_failed_and_grades_it_again(options, graded_by):
    asked = graded_by([ADD])
    first = batch.run(options, Console(quiet=True))
    assert (first.graded, first.failed, first.reused) == (0, 1, 0)
    (row,) = csv_rows(options.out)
    assert row["total"] == row["micrograd.ops.add"] == "" and row["status"] == "grader error"
    assert "unfinished grade: no result for micrograd.ops.exp" in row["notes"]
    assert not list((options.out / "ledger").glob("*.json"))
    graded_by(WHOLE)
    second = batch.run(options, Console(quiet=True))
    assert (second.graded, second.failed, second.reused) == (1, 0, 0)
    assert asked == ["alice", "alice"]
    (row,) = csv_rows(options.out)
    assert row["total"] == "12" and row["status"] == "graded"


def test_an_unfinished_grade_in_the_ledger_is_graded_again(options, graded_by):
    """A ledger entry an earlier grader stored without every item result is not reused."""
    uploads, _ = batch.discover(options.submissions)
    (key,) = batch.keys(options, uploads, RUBRIC).values()
    Ledger(options.out / "ledger").put(key, entry([ADD]))
    asked = graded_by(WHOLE)
    outcome = batch.run(options, Console(quiet=True))
    assert asked == ["alice"] and (outcome.graded, outcome.reused) == (1, 0)
    (row,) = csv_rows(options.out)
    assert row["total"] == "12" and row["micrograd.ops.exp"] == "6"
