"""Helpers for the project's own tests: plant bugs in copies of the reference
(``tests.helpers.planted``), grade them."""

from __future__ import annotations

import atexit
import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from grader.batch.lane import Lanes
from grader.grading import rubric as rubric_module
from grader.grading.options import IN_MEMORY
from grader.language import profiles
from grader.layout import COURSES, DEFAULT_REFERENCE, DEFAULT_RUBRIC
from grader.report.document import GradeReport
from grader.run.api import GradeOptions, grade
from tests.helpers import ENGINES, memo
from tests.helpers.planted import REFERENCE, Bug, Edit, plant

REPO = REFERENCE.parent
EXERCISES = REPO / "exercises"
CORRECT_ENGINES = {
    "reference": REFERENCE,
    "notes_style": ENGINES / "notes_style",
    "value_equality": ENGINES / "value_equality",
}
"""Correct engines written unlike each other (``tests/engines/*`` say how)."""
MAY_LOSE = {"notes_style": {"micrograd.deep"}}
"""By design: the notes' recursive build_topo cannot walk the extra-credit 100,000-node chain."""


def runs_in_this_course(test: Any) -> bool:
    """Whether a grading run of this course runs a suite's test: its profile has all the test
    needs (the suites also hold tests of other courses' ops, such as needle's swap_axes)."""
    (rubric,) = [mark for mark in test.pytestmark if mark.name == "rubric"]
    api = profiles.course().of(rubric.args[0].split(".", 1)[0])
    return all(api.has(need) for need in rubric.kwargs.get("needs", ()))


def planted(tmp_path: Path, replacements: dict[str, list[tuple[str, str]]]) -> Path:
    """``tests.planted.plant`` with the edits given as ``{file: [(old, new), ...]}`` (file
    relative to reference/); each ``old`` must occur exactly once."""
    return plant(
        tmp_path,
        *(Edit(file, old, new) for file, pairs in replacements.items() for old, new in pairs),
    )


@functools.cache
def lanes() -> Lanes:
    """This test process's warm lanes, one per assignment, as a batch grades: the suite grades
    hundreds of submissions, and most of their passing tests replay from the lanes' memory."""
    pool = Lanes(2)
    atexit.register(pool.__exit__)
    return pool


def grade_report(
    submission: Path,
    *,
    assignment: str = "all",
    only: list[str] | None = None,
    seed: int | None = None,
    reference: Path | None = DEFAULT_REFERENCE,
    torch: bool = True,
    sandbox: str = "auto",
    replay: Path | str | None = IN_MEMORY,
    rubric: Path = DEFAULT_RUBRIC,
) -> GradeReport:
    """Grade ``submission`` as a batch does (in a warm lane, replaying from its memory; the
    tests of replay and of lanes prove that is the grade of a fresh process without replay).
    ``reference=None`` and ``torch=False`` choose the oracle configuration (both: finite
    differences alone, as the student release without torch); ``replay``: also a recordings
    folder, or None: every test runs under Hypothesis. A grade that replays from the lanes'
    memory is graded once per run (``tests.helpers.memo``)."""
    options = GradeOptions(
        submission=submission,
        assignment=assignment,
        seed=seed,
        only=tuple(only or ()),
        reference=reference,
        torch=torch,
        sandbox=sandbox,
        replay=replay,
        rubric=rubric,
    )
    course = course_digest(rubric)
    if replay != IN_MEMORY or course is None:
        return grade(options, lanes())
    key = memo.key_of(submission, assignment, seed, options.only, reference, torch, sandbox, course)
    return memo.kept(key, lambda: grade(options, lanes()))


def course_digest(rubric: Path) -> str | None:
    """What a grade reads of its course: the rubric, its profile and the profile's adapters
    (a test may copy a course and change its profile alone); None for a rubric that does not
    load, whose grade is left to say so."""
    try:
        return rubric_module.load(rubric).digest
    except (rubric_module.RubricError, OSError):
        return None


def planted_grade(
    submission: Path, bugs: list[Bug] | tuple[Bug, ...], *, replay: Path | str | None = IN_MEMORY
) -> GradeReport:
    """A submission carrying ``bugs`` (one per assignment at most) graded whole: every item of
    the assignments they are in. ``tests/grading/test_blame.py`` and
    ``tests/grading/test_replayed_snippets.py`` both read this grade of each planted pair,
    the same options giving the same grade once per run (``tests.helpers.memo``)."""
    (assignment, *more) = sorted({bug.item.split(".")[0] for bug in bugs})
    return grade_report(submission, assignment="all" if more else assignment, replay=replay)


def grade_command(
    *arguments: str | Path, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m grader grade`` with ``arguments``, as a student runs it, in a terminal 200
    columns wide (the console wraps at its width: a test reads whole lines)."""
    return subprocess.run(
        [sys.executable, "-m", "grader", "grade", *map(str, arguments)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "200"},
    )


def graded_by_command(
    submission: Path, out: Path, *arguments: str | Path
) -> tuple[str, dict[str, Any]]:
    """``grade --submission SUBMISSION --json OUT ARGUMENTS``, which must exit 0: what it
    printed, and the JSON document it wrote."""
    run = grade_command("--submission", submission, "--json", out, *arguments)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout, json.loads(out.read_text())


def comparable(report: GradeReport) -> dict[str, Any]:
    """A report's JSON without what may differ between two grades of one submission: how long
    it took."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if "duration" not in k}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(report.to_json())


def grade_items(submission: Path, **options: Any) -> dict[str, dict]:
    """``grade_report``'s items, by id."""
    return {item["id"]: item for item in grade_report(submission, **options).items}


COURSE_ENGINES = {
    "karpathy-micrograd": {
        "reference": COURSES / "karpathy-micrograd" / "reference",
        "other": ENGINES / "karpathy-micrograd" / "other",
        "lecture": ENGINES / "karpathy-micrograd" / "lecture",
        "lecture-relu": ENGINES / "karpathy-micrograd" / "lecture-relu",
        "this course's reference": COURSES.parent / "reference",
    },
    "needle-hw1": {
        "reference": COURSES / "needle-hw1" / "reference",
        "other": ENGINES / "needle-hw1" / "layout2022",
    },
    "minitorch-module1": {
        "reference": COURSES / "minitorch-module1" / "reference",
        "other": ENGINES / "minitorch-module1" / "other",
        "layout2021": ENGINES / "minitorch-module1" / "layout2021",
        "layout2020": ENGINES / "minitorch-module1" / "layout2020",
    },
    "babygrad-book": {
        "reference": COURSES / "babygrad-book" / "reference",
        "other": ENGINES / "babygrad-book" / "author",
    },
    "tinytorch-autograd": {
        "reference": COURSES / "tinytorch-autograd" / "reference",
        "backward-reduces": ENGINES / "tinytorch-autograd" / "backward-reduces",
    },
    "cmu-11785-autograd": {
        "reference": COURSES / "cmu-11785-autograd" / "reference",
        "other": ENGINES / "cmu-11785-autograd" / "other",
        "hw1-layout": ENGINES / "cmu-11785-autograd" / "hw1-layout",
    },
}
"""Each course's correct engines: its reference and one written differently (``other``)."""


def course_grade(course: str, submission: Path, **options: Any) -> GradeReport:
    """``submission`` graded by ``course``'s rubric against its reference."""
    return grade_report(
        submission,
        rubric=COURSES / course / "rubric.yaml",
        reference=COURSES / course / "reference",
        **options,
    )
