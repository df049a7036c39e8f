"""Regrades an instructor can trust (issue 23): a batch's ledger key covers everything a grade
depends on, so a changed grader, reference or rubric regrades; a rerun says whose grade moved
(``changes.csv``, the summary, the terminal); ``grades.csv`` says how far each upload was graded.

A class of five (correct, a tanh bug, a syntax error, a refused zip, an empty folder) is graded
once; every rerun starts from a copy of that run's output folder, old ledger included."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import shutil
import signal
import zipfile
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import pytest
from rich.console import Console

from grader.batch import batch
from grader.batch.batch import BatchOptions
from grader.batch.ledger import Key
from grader.grading.rubric import load
from grader.grading.scoring import ItemResult, rescored
from grader.report.document import GradeReport
from grader.report.formats import Change, StudentResult
from grader.report.formats.gradebook import changed_grades, changes_csv, gradebook_csv
from grader.run import trust
from grader.run.api import GradeOptions
from grader.run.submissions import Upload
from tests.helpers.grading import REFERENCE
from tests.helpers.killed_batch import run_killed
from tests.helpers.planted import MICRO

pytestmark = pytest.mark.xdist_group("regrade")  # one class, graded once
slow = pytest.mark.slow

ONLY = ("micrograd.ops.add", "micrograd.ops.tanh")
SLOT = 70
SECRET_SEED = 864213579  # distinctive: must never appear in the ledger
GRADING = GradeOptions(Path(), seed=SECRET_SEED, only=ONLY, slot=SLOT)
ENGINE = (REFERENCE / MICRO).read_text()
TANH = ("1.0 - t * t", "1.0 - t")
SYNTAX = ("def __add__(self, other):", "def __add__(self, other)")
STATUSES = {
    "alice": "graded",
    "bob": "graded",
    "carol": "import failed",
    "dave": "refused upload",
    "erin": "nothing to grade",
}
TOTALS = {"alice": "12", "bob": "6", "carol": "0", "dave": "0", "erin": "0"}


def edited(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def build_class(root: Path) -> None:
    write(root / "alice" / MICRO, ENGINE)
    write(root / "bob" / MICRO, edited(ENGINE, *TANH))
    write(root / "carol" / MICRO, edited(ENGINE, *SYNTAX))
    root.mkdir(exist_ok=True)
    with zipfile.ZipFile(root / "dave.zip", "w") as archive:
        archive.writestr("../../evil.py", "print('pwned')")
        archive.writestr(MICRO, ENGINE)
    (root / "erin").mkdir()


@pytest.fixture(scope="session")  # once per run: see tests/conftest.py
def first_run(tmp_path_factory) -> tuple[BatchOptions, batch.BatchResult]:
    root = tmp_path_factory.mktemp("regrade")
    build_class(root / "uploads")
    options = BatchOptions(root / "uploads", root / "out", GRADING, jobs=2)
    return options, batch.run(options, Console(quiet=True))


def rows(out: Path, name: str = "grades.csv") -> dict[str, dict[str, str]]:
    with (out / name).open(newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def copy_of_output(options: BatchOptions, tmp_path: Path, **grading: object) -> BatchOptions:
    """``options`` writing into a copy of the first run's output folder (ledger, grades.csv),
    with ``grading`` changed."""
    out = tmp_path / "out"
    shutil.copytree(options.out, out)
    return dataclasses.replace(
        options, out=out, grading=dataclasses.replace(options.grading, **grading)
    )


def rubric_with_tanh(tmp_path: Path, points: int = 6, examples: int = 20) -> Path:
    """The rubric with tanh worth ``points``, graded on ``examples`` examples."""
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(
        edited(
            GRADING.rubric.read_text(),
            "id: micrograd.ops.tanh\n    title: tanh, forward and backward\n    points: 6\n"
            "    examples: 20\n",
            f"id: micrograd.ops.tanh\n    title: tanh, forward and backward\n"
            f"    points: {points}\n    examples: {examples}\n",
        )
    )
    return rubric


# --------------------------------------------------------------------------- the first run


@slow
def test_a_status_per_student_and_no_comparison_on_a_first_run(first_run):
    options, outcome = first_run
    assert (outcome.graded, outcome.reused, outcome.failed) == (5, 0, 0)
    table = rows(options.out)
    assert {s: r["status"] for s, r in table.items()} == STATUSES
    assert {s: r["total"] for s, r in table.items()} == TOTALS
    assert "escapes the folder" in table["dave"]["notes"]
    assert outcome.changes is None and not (options.out / "changes.csv").exists()
    assert "What changed" not in (options.out / "summary.html").read_text()
    ledger = "".join(p.read_text() for p in (options.out / "ledger").glob("*"))
    assert str(SECRET_SEED) not in ledger


@slow
def test_an_unchanged_rerun_reuses_every_grade_and_says_none_moved(first_run, tmp_path):
    options, _ = first_run
    again = copy_of_output(options, tmp_path)
    outcome = batch.run(again, Console(quiet=True))
    assert (outcome.graded, outcome.reused, outcome.changes) == (0, 5, [])
    assert (again.out / "previous" / "grades.csv").read_text() == (
        options.out / "grades.csv"
    ).read_text()
    assert rows(again.out, "changes.csv") == {}
    assert "No grade changed since the last run." in (again.out / "summary.html").read_text()
    assert batch.changes_line([], again.out / "changes.csv") == (
        "no grade changed since the last run"
    )


# --------------------------------------------------------------------------- what the key covers


@slow
def test_a_changed_grader_source_regrades_everything(first_run, tmp_path, monkeypatch):
    options, _ = first_run
    monkeypatch.setattr(batch, "grader_digest", lambda: "a fixed check")
    again = copy_of_output(options, tmp_path)
    outcome = batch.run(again, Console(quiet=True))
    assert (outcome.graded, outcome.reused, outcome.failed) == (5, 0, 0)
    assert outcome.changes == []  # the "fix" changed no verdict
    assert rows(again.out) == rows(options.out)


@slow
def test_a_changed_reference_regrades_and_reports_who_moved(first_run, tmp_path, monkeypatch):
    """The reference made to agree with bob's bug: bob's tanh now matches the expected answer,
    and alice's correct answer is never failed (no second oracle confirms the reference). The
    batch's own check would refuse this reference (tests/run/test_trust.py): it is wrong on purpose,
    to move a grade, so the check is skipped here."""
    monkeypatch.setattr(batch, "verify_reference", lambda options, rubric: None)
    options, _ = first_run
    reference = tmp_path / "reference"
    shutil.copytree(REFERENCE, reference, ignore=shutil.ignore_patterns("__pycache__"))
    write(reference / MICRO, edited(ENGINE, *TANH))
    again = copy_of_output(options, tmp_path, reference=reference)
    outcome = batch.run(again, Console(quiet=True))
    assert (outcome.graded, outcome.reused, outcome.failed) == (5, 0, 0)
    assert outcome.changes == [Change("bob", "6", "12", (("micrograd.ops.tanh", "0", "6"),))]


def batch_command(options: BatchOptions, out: Path, rubric: Path) -> int:
    """``python -m grader batch`` on the first run's class into ``out`` with ``rubric``."""
    parser = argparse.ArgumentParser()
    batch.add_arguments(parser)
    arguments = [str(options.submissions), "--out", str(out), "-j", "2"]
    arguments += ["--seed", str(SECRET_SEED), "--slot", str(SLOT), "--rubric", str(rubric)]
    return batch.main(parser.parse_args([*arguments, *(f"--only={item}" for item in ONLY)]))


def no_grading(*args: object, **kwargs: object) -> None:
    raise AssertionError("a grading run or a worker was started")


@slow
def test_a_points_only_change_rescores_what_is_stored_and_says_why(
    first_run, tmp_path, capsys, monkeypatch
):
    """tanh made worth 12: no upload is graded (no lane, no grading run, no worker: the
    reference's check is remembered without points too), only alice's grade moves (bob fails
    tanh, the others score 0), and the terminal says what moved in the rubric."""
    options, _ = first_run
    again = copy_of_output(options, tmp_path)
    monkeypatch.setattr(batch, "grade_upload", no_grading)
    monkeypatch.setattr(
        batch, "Lanes", lambda count, sandbox: count and no_grading() or nullcontext()
    )
    monkeypatch.setattr(trust, "grade", no_grading)
    assert batch_command(options, again.out, rubric_with_tanh(tmp_path, points=12)) == 0
    said = " ".join(capsys.readouterr().err.split())
    assert "0 graded, 5 from the ledger, 5 of them rescored, 0 failed" in said
    assert "rubric: micrograd.ops.tanh 6 → 12; max 12 → 18" in said
    assert "1 grade changed since the last run" in said
    assert rows(again.out, "changes.csv") == {
        "alice": {
            "student": "alice",
            "old total": "12",
            "new total": "18",
            "items changed": "micrograd.ops.tanh: 6 -> 12",
        }
    }
    summary = (again.out / "summary.html").read_text()
    assert "What changed since the last run" in summary
    assert "rubric: micrograd.ops.tanh 6 → 12; max 12 → 18" in summary
    assert {s: r["status"] for s, r in rows(again.out).items()} == STATUSES
    assert rows(again.out)["alice"]["micrograd.ops.tanh"] == "12"


@slow
def test_a_change_to_what_is_graded_regrades(first_run, tmp_path, capsys):
    """tanh graded on one more example: every upload is graded again, and no grade moves."""
    options, _ = first_run
    again = copy_of_output(options, tmp_path)
    assert batch_command(options, again.out, rubric_with_tanh(tmp_path, examples=21)) == 0
    said = " ".join(capsys.readouterr().err.split())
    assert "5 graded, 0 from the ledger, 0 failed" in said and "rubric:" not in said
    assert "no grade changed since the last run" in said


@slow
def test_a_killed_rerun_resumes_with_nothing_lost(first_run, tmp_path):
    """A rerun after a rubric change, killed once it has stored a new grade: the rerun after
    it grades only the rest, and compares with the last finished run's grades."""
    options, _ = first_run
    again = copy_of_output(
        options, tmp_path, rubric=rubric_with_tanh(tmp_path, points=12, examples=21)
    )
    old = {p.name for p in (again.out / "ledger").glob("*.json")}
    arguments = [str(options.submissions), "--out", str(again.out), "-j", "1"]
    arguments += ["--seed", str(SECRET_SEED), "--slot", str(SLOT)]
    arguments += ["--rubric", str(again.grading.rubric), *(f"--only={i}" for i in ONLY)]
    log = tmp_path / "stderr.txt"
    with log.open("w") as stderr:
        assert run_killed(1, arguments, stderr) == -signal.SIGKILL, log.read_text()
    done = len({p.name for p in (again.out / "ledger").glob("*.json")} - old)
    assert done == 1
    assert (again.out / "grades.csv").read_text() == (options.out / "grades.csv").read_text()
    resumed = batch.run(again, Console(quiet=True))
    assert (resumed.graded, resumed.reused) == (5 - done, done)
    assert [c.student for c in resumed.changes] == ["alice"]
    assert {s: r["total"] for s, r in rows(again.out).items()} == {**TOTALS, "alice": "18"}


def key_digests(root: Path) -> Callable[..., str]:
    """Alice's ledger key digest for ``GRADING`` with ``changes``."""
    rubric = load(GRADING.rubric)
    write(root / "alice" / MICRO, ENGINE)
    upload = Upload("alice", root / "alice", "folder")

    def digest(**changes: object) -> str:
        grading = dataclasses.replace(GRADING, **changes)
        options = BatchOptions(root, root / "out", grading)
        return batch.keys(options, [upload], rubric)["alice"].digest

    return digest


def test_the_key_covers_the_limits(tmp_path):
    digest = key_digests(tmp_path)
    assert len({digest(), digest(import_budget=30.0), digest(memory_mb=512)}) == 3


def test_the_key_covers_the_grader_the_oracles_and_the_libraries(tmp_path, monkeypatch):
    rubric = load(GRADING.rubric)
    upload = Upload("alice", tmp_path / "alice", "folder")
    digest = key_digests(tmp_path)
    reference = tmp_path / "reference"
    shutil.copytree(REFERENCE, reference, ignore=shutil.ignore_patterns("__pycache__"))
    write(reference / MICRO, ENGINE + "# edited\n")
    digests = {
        digest(),
        digest(reference=None),
        digest(reference=reference),
        digest(torch=False),
        digest(reference=None, torch=False),
    }
    monkeypatch.setattr(batch, "grader_digest", lambda: "another grader")
    digests.add(digest())
    monkeypatch.setattr(batch, "libraries", lambda: ("hypothesis 0", "numpy 0", "python 3"))
    digests.add(digest())
    assert len(digests) == 7
    key = batch.keys(BatchOptions(tmp_path, tmp_path, GRADING), [upload], rubric)["alice"]
    assert "version" not in dataclasses.asdict(key)


class Finished:
    """A job's future that has finished with ``entry``."""

    def __init__(self, entry: dict) -> None:
        self.entry = entry

    def result(self) -> dict:
        return self.entry


def test_a_result_from_another_grader_is_a_failure(tmp_path):
    """A Dask worker still running an older grader (or other libraries) grades for another
    key: its result is not stored."""
    key = Key(
        content="c",
        rubric="r",
        seed=None,
        assignment="all",
        only=(),
        grader="mine",
        reference=None,
        oracles=(),
        libraries=("hypothesis 1",),
        limits=(None, 2048),
    )
    job = batch.Job(Upload("alice", tmp_path, "folder"), key, BatchOptions(tmp_path, tmp_path))
    entry = {"grader": "mine", "libraries": ["hypothesis 1"], "report": {}}
    assert batch._outcome(job, Finished(entry)) == entry
    assert "another grader" in batch._outcome(job, Finished({**entry, "grader": "old"}))["error"]
    assert (
        "hypothesis 2"
        in batch._outcome(job, Finished({**entry, "libraries": ["hypothesis 2"]}))["error"]
    )


# --------------------------------------------------------------------------- statuses, changes


def failing(item_id: str, reason: str, status: str = "error", snippet: str = "") -> dict:
    return {
        "id": item_id,
        "assignment": item_id.split(".")[0],
        "title": item_id,
        "score": 0,
        "max_score": 6,
        "extra_credit": False,
        "visibility": "visible",
        "status": status,
        "bugs": [],
        "feedback": reason,
        "reason": reason,
        "failures": [
            {
                "test": f"test_{item_id}",
                "reason": reason,
                "details": [],
                "snippet": snippet,
                "bugs": [],
            }
        ],
    }


def passing(item_id: str) -> dict:
    return {**failing(item_id, ""), "score": 6, "status": "passed", "failures": []}


def status(*items: dict, not_submitted: dict | None = None, **result: str) -> str:
    report = GradeReport(
        assignment="all",
        seed="secret",
        items=list(items),
        oracles=[],
        protections=[],
        duration_s=0.0,
        not_submitted=not_submitted or {},
    )
    return StudentResult("s", report, **result).status


def test_statuses():
    syntax = "SyntaxError: expected ':' (engine.py, line 42)"
    hang = "while importing: timed out after 2.0 s of CPU time"
    crash = "exited (exit code 0) without replying"
    assert (
        status(
            passing("micrograd.ops.add"), failing("micrograd.ops.tanh", "wrong", "failed", "x = 1")
        )
        == "graded"
    )
    assert (
        status(failing("micrograd.ops.add", syntax), failing("micrograd.ops.tanh", syntax))
        == "import failed"
    )
    assert (
        status(
            failing("micrograd.ops.add", hang, "timeout"),
            failing("micrograd.ops.tanh", hang, "timeout"),
        )
        == "timed out"
    )
    assert (
        status(passing("micrograd.ops.add"), failing("babygrad.ops.add", syntax))
        == "import failed: babygrad"
    )
    # a crash in one probe costs its item, and an exception in a probe has a counterexample
    assert status(passing("micrograd.ops.add"), failing("micrograd.ops.exp", crash)) == "graded"
    assert (
        status(
            failing("micrograd.ops.add", "ValueError: x", snippet="a = Value(1)"),
            failing("micrograd.ops.exp", "ValueError: x", snippet="a = Value(1)"),
        )
        == "graded"
    )
    absent = failing("micrograd.ops.add", "not submitted", "missing")
    assert status(absent, not_submitted={"micrograd": "not submitted"}) == "nothing to grade"
    assert (
        status(
            absent,
            not_submitted={"micrograd": "not submitted"},
            refused="a member escapes the folder",
        )
        == "refused upload"
    )
    assert StudentResult("s", None, error="boom").status == "grader error"


def test_changes_against_an_older_grades_csv_without_a_status_column():
    rubric = load(GRADING.rubric)
    items = [i for i in rubric.items if i.id in ONLY]
    last = (
        "student,total,max,micrograd.ops.add,micrograd.ops.tanh,notes\n"
        "alice,12,12,6,6,\nbob,6,12,6,0,\n'=x,0,12,0,0,\ngone,6,12,6,0,\n"
    )

    def result(student: str, tanh: float) -> StudentResult:
        graded = [passing("micrograd.ops.add"), {**passing("micrograd.ops.tanh"), "score": tanh}]
        return StudentResult(student, GradeReport("all", "secret", graded, [], [], 0.0))

    now = [
        result("alice", 6),
        result("bob", 6),
        result("=x", 0),
        result("new", 0),
        StudentResult("gone", None, error="boom"),
    ]
    changes = changed_grades(last, now, items)
    assert changes == [
        Change("bob", "6", "12", (("micrograd.ops.tanh", "0", "6"),)),
        Change("=x", "0", "6", (("micrograd.ops.add", "0", "6"),)),
        Change("gone", "6", "", (("micrograd.ops.add", "6", ""), ("micrograd.ops.tanh", "0", ""))),
    ]
    text = changes_csv(changes)
    assert text.splitlines()[0] == "student,old total,new total,items changed"
    assert "'=x,0,6" in text and "micrograd.ops.add: 6 -> not graded" in text
    assert changed_grades(gradebook_csv(now, items), now, items) == []


def test_rescoring_takes_the_share_earned_and_names_what_moved_in_the_rubric():
    partial = ItemResult.from_json({**failing("micrograd.ops.tanh", "wrong"), "credit": 4 / 7})
    partial = dataclasses.replace(partial, status="partial", score=round(6 * 4 / 7, 4))
    assert rescored(partial, 8).score == round(8 * 4 / 7, 4) and rescored(partial, 8).max_score == 8
    assert rescored(partial, 6) is partial  # worth its points already: as stored
    last = {"items": {"micrograd.ops.tanh": 6, "micrograd.ops.add": 6}, "max": 200}
    now = {"items": {"micrograd.ops.tanh": 8, "micrograd.ops.exp": 6}, "max": 202}
    assert batch.rubric_changes(last, now) == (
        "rubric: micrograd.ops.tanh 6 → 8; micrograd.ops.exp added (6); "
        "micrograd.ops.add removed; max 200 → 202"
    )
    assert batch.rubric_changes(now, now) == "" and batch.rubric_changes(None, now) == ""
