"""Grade one submission folder: the options that decide a grade, and the run that makes it.

Each assignment is graded by its own trusted pytest run (so both cores work), with plugin
autoloading off, our own ini and rootdir, isolated mode (no current directory or user site on
``sys.path``), in a private directory. The runs of one grade are forks of one trusted process
that starts Python, pytest, the plugin and the suites once (``in_one_process``). The submission
folder is never on its path. An assignment the folder lacks scores 0, item by item, without
starting a worker for it.

Exit codes, shared by every command: 0 graded (whatever the score); 1 graded but below
``--fail-under``; 2 usage or configuration error; 3 the grader itself failed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from grader.grading import rubric as rubric_module
from grader.grading.completeness import unfinished
from grader.grading.options import GradeOptions, pytest_arguments, suite_arguments
from grader.grading.rubric import Item
from grader.grading.scoring import ItemResult
from grader.language.assignments import Assignment
from grader.layout import SUITES
from grader.report.document import GradeReport
from grader.run import prestart
from grader.run.prestart import grading_environment
from grader.run.submissions import not_submitted, submitted
from grader.sandbox.sanitize import last_line

EXIT_OK, EXIT_BELOW, EXIT_USAGE, EXIT_GRADER = 0, 1, 2, 3


class GraderFailure(Exception):
    """The grader could not produce a grade (exit code 3)."""


class UsageFailure(Exception):
    """The command line or the configuration is wrong (exit code 2)."""


def pytest_command(
    assignment: Assignment, options: GradeOptions, results: Path, slot: int
) -> list[str]:
    """The grading process for one assignment: pytest on the suite of its API
    (``Assignment.suite``), with our plugin and settings, and the options as the plugin reads
    them back (``grader.grading.options``)."""
    return [
        sys.executable,
        "-I",
        "-m",
        "pytest",
        str(SUITES / assignment.suite),
        *suite_arguments(SUITES),
        "--confcutdir",
        str(SUITES),
        "-q",
        "--no-header",
        "--assert=plain",  # the checks raise their own verdicts: rewriting asserts is waste
        "--tb=native",  # nobody reads a failing test's pytest traceback: the cheapest one
        "-p",
        "no:unraisableexception",  # its garbage collections at exit cost 0.1 s a run
        "-o",
        "console_output_style=classic",
        "--grader-results",
        str(results),
        *pytest_arguments(
            replace(
                options,
                assignment=assignment.name,
                slot=slot,
                reference=given_reference(options.reference),
            )
        ),
    ]


def given_reference(reference: Path | None) -> Path | None:
    """The reference a grade is given: none unless it is a folder (a student release has none),
    so it never starts an oracle that cannot load."""
    return reference if reference is not None and reference.is_dir() else None


Runner = Callable[[list[str], Path], tuple[int, str]]
"""Runs a grading pytest command in a working directory: its exit code and output."""


def pytest_words(command: list[str]) -> list[str]:
    """A grading command's arguments to pytest, for a process that runs pytest in itself."""
    return command[command.index("pytest") + 1 :]


def in_subprocess(command: list[str], workdir: Path) -> tuple[int, str]:
    """A fresh Python process per grading run (``grader.batch.lane``: a warm one)."""
    proc = subprocess.run(
        command,
        cwd=workdir,
        env=grading_environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    return proc.returncode, proc.stdout + proc.stderr


def in_one_process(commands: list[list[str]], workdir: Path) -> list[tuple[int, str]]:
    """The grading commands of one grade, run at once as forks of one trusted process
    (``grader.batch.lane.serve_once``; the one ``python -m grader`` started first, where it
    did: ``grader.run.prestart``): each run's exit code and output, as ``in_subprocess``
    gives them."""
    runs = [
        {"args": pytest_words(command), "cwd": str(workdir), "output": f"run{n}.out"}
        for n, command in enumerate(commands)
    ]
    process = prestart.take()
    stdout, stderr = process.communicate(json.dumps(runs))
    try:
        codes = [int(code) for code in json.loads(stdout)]
    except (ValueError, TypeError):
        return [(process.returncode or 3, stdout + stderr)] * len(commands)
    outputs = [workdir / run["output"] for run in runs]
    return [
        (code, output.read_text(errors="replace") if output.is_file() else "")
        for code, output in zip(codes, outputs, strict=True)
    ]


RESULTS = frozenset(
    {"items", "not_importable", "oracles", "protections", "internal_errors", "checks"}
)
"""What a grading run's results file holds (``plugin.pytest_sessionfinish``) and ``grade``
reads."""


def run_assignments(
    assignments: list[Assignment], options: GradeOptions, workdir: Path, runner: Runner | None
) -> dict[str, dict[str, Any]]:
    """Each assignment's results, its run started in parallel with the others: by ``runner``
    (a thread each), or, without one, as forks of one process (``in_one_process``)."""
    commands = [
        pytest_command(a, options, workdir / f"{a.name}.json", options.slot + n)
        for n, a in enumerate(assignments)
    ]
    if runner is None:
        ran = in_one_process(commands, workdir)
    else:
        with ThreadPoolExecutor(2) as pool:
            ran = list(pool.map(runner, commands, [workdir] * len(commands)))
    return {
        a.name: _results(a, workdir / f"{a.name}.json", *outcome)
        for a, outcome in zip(assignments, ran, strict=True)
    }


def _results(assignment: Assignment, results: Path, returncode: int, output: str) -> dict[str, Any]:
    """The results file a grading run of ``assignment`` left, checked, or why there is none."""
    if returncode == 4:
        raise UsageFailure(_last_error(output))
    if returncode not in (0, 1) or not results.is_file():
        raise GraderFailure(
            f"grading {assignment.name} failed (pytest exit {returncode}): {_last_error(output)}"
        )
    try:
        payload = json.loads(results.read_text())
    except ValueError as exc:
        raise GraderFailure(
            f"grading {assignment.name} left a broken results file: {exc}"
        ) from None
    if not isinstance(payload, dict) or not RESULTS.issubset(payload):
        raise GraderFailure(f"grading {assignment.name} left a results file without its results")
    if payload["internal_errors"]:
        raise GraderFailure(
            f"grading {assignment.name} hit an internal error: {payload['internal_errors'][0]}"
        )
    return payload


def _last_error(text: str) -> str:
    """The line of pytest's output that says what went wrong."""
    return last_line(text, 500, prefer="error") or "no output"


def selected_assignments(options: GradeOptions, rubric: rubric_module.Rubric) -> list[Assignment]:
    """The rubric's course's assignments (``--assignment``: the one it names) with an item
    ``--only`` selects; each ``--only`` must select one."""
    course = rubric.profile.graded
    if options.assignment not in ("all", *(a.name for a in course)):
        raise UsageFailure(
            f"--assignment {options.assignment}: the course of {rubric.path} grades "
            f"{', '.join(a.name for a in course)} (or all)"
        )
    chosen = [a for a in course if options.assignment in ("all", a.name)]
    items = [i for i in rubric.items if i.assignment in {a.name for a in chosen}]
    for only in options.only:
        if not any(rubric_module.selected(i.id, (only,)) for i in items):
            raise UsageFailure(f"--only {only} selects no rubric item")
    return [
        a
        for a in chosen
        if any(i.assignment == a.name and rubric_module.selected(i.id, options.only) for i in items)
    ]


def selected_items(options: GradeOptions, rubric: rubric_module.Rubric) -> list[Item]:
    """The items a grade of ``options`` scores, each exactly once (``completeness``)."""
    assignments = {a.name for a in selected_assignments(options, rubric)}
    return rubric.selected_items(assignments, options.only)


def grade(options: GradeOptions, runner: Runner | None = None) -> GradeReport:
    """Grade the selected assignments in parallel (``run_assignments``); the results files are
    ours alone. A report without a result for every selected item is a ``GraderFailure``, never
    a score."""
    rubric = rubric_module.load(options.rubric)
    selected = selected_assignments(options, rubric)
    absent = {a.name: not_submitted(a) for a in selected if not submitted(options.submission, a)}
    present = [a for a in selected if a.name not in absent]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="grader-") as tmp:
        payloads = run_assignments(present, options, Path(tmp), runner) if present else {}
    first = next(iter(payloads.values()), {"oracles": [], "protections": []})
    notice = oracle_notice(first["oracles"], options.torch) if payloads else None
    items = [
        item
        for a in selected
        for item in (
            payloads[a.name]["items"]
            if a.name in payloads
            else _absent_items(rubric, a, options.only)
        )
    ]
    why = unfinished(items, rubric.selected_items({a.name for a in selected}, options.only))
    if why:
        raise GraderFailure(f"the grading runs left the grade unfinished ({why})"[:500])
    return GradeReport(
        assignment=options.assignment,
        seed="secret" if options.seed is not None else rubric.seed,
        items=[{**item, "title": checked_title(item["title"], first["oracles"])} for item in items],
        oracles=first["oracles"],
        protections=first["protections"],
        duration_s=time.monotonic() - started,
        notices=[notice] if notice else [],
        checks=sum(payload["checks"] for payload in payloads.values()),
        not_submitted=absent,
        not_importable={
            a: line
            for payload in payloads.values()
            for a, line in payload["not_importable"].items()
        },
    )


ORACLES = "the oracles"
"""A rubric title's words for what its item's results are compared with: a report names the
run's oracles there instead (``checked_title``)."""
ORACLE_NAMES = {"reference": "the reference", "pytorch": "PyTorch"}


def checked_title(title: str, oracles: Sequence[str]) -> str:
    """``title`` naming the oracles this run checked against (``micrograd.graphs``: "random
    whole graphs of every op match finite differences" where neither PyTorch nor a reference
    was there), never one that did not check."""
    if not oracles or ORACLES not in title:
        return title
    names = [ORACLE_NAMES.get(oracle, oracle) for oracle in oracles]
    spelled = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return title.replace(ORACLES, spelled)


def _absent_items(
    rubric: rubric_module.Rubric, assignment: Assignment, only: tuple[str, ...]
) -> list[dict[str, Any]]:
    """The selected items of an assignment that was not submitted: 0 points, ``missing``,
    decided here without starting a worker."""
    why = not_submitted(assignment)
    return [
        ItemResult(
            id=i.id,
            assignment=assignment.name,
            title=i.title,
            score=0.0,
            max_score=i.points,
            extra_credit=i.extra_credit,
            visibility=i.visibility,
            status="missing",
            bugs=[],
            feedback=why,
            reason=why,
        ).to_json()
        for i in rubric.selected_items({assignment.name}, only)
    ]


def oracle_notice(oracles: list[str], torch_allowed: bool) -> str | None:
    """One line when PyTorch is not among the oracles, saying what the grade rests on."""
    if "pytorch" in oracles:
        return None
    why = "PyTorch is not installed" if torch_allowed else "PyTorch is turned off (--no-torch)"
    if len(oracles) == 1:
        return (
            f"{why} and there is no reference solution: graded on a single oracle, "
            f"{oracles[0]}, with no second oracle to confirm a verdict."
        )
    return f"{why}: checking against {' and '.join(oracles)} only."
