"""``python -m grader watch``: re-grade on every save and say only what changed.

A student fixing tanh wants to know within seconds whether it passes now and whether something
else broke, not to reread the whole report. The submission is any upload ``grade`` takes (a
folder, ``.py``, ``.ipynb`` or ``.zip``); each save prepares it again as ``grade`` does,
re-grades just the assignments whose prepared files changed and prints the items that now pass
or now fail. File events come from ``watchfiles`` (inotify where there is one), not from a
polling loop of ours.

Every grade of a watch forks the same warm grading processes (``grader.batch.lane``, one per
assignment, kept until Ctrl-C), as a batch's uploads do: after the first grade, a save costs
the grade's own work, not Python, pytest, Hypothesis and numpy started again. A lane's grade is
a fresh process's (``tests/batch/test_lane.py``).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import watchfiles
from rich.console import Console
from rich.markup import escape

from grader.batch.lane import Lanes
from grader.grading import rubric as rubric_module
from grader.grading.scoring import ItemResult
from grader.language.assignments import Assignment
from grader.report.view import AssignmentView, item_points, points
from grader.run.api import (
    EXIT_OK,
    EXIT_USAGE,
    GradeOptions,
    GraderFailure,
    grade,
    selected_assignments,
)
from grader.run.arguments import (
    SUBMISSION_HELP,
    add_grading_options,
    exit_code,
    grade_options,
    submission_upload,
)
from grader.run.submissions import Prepared, Upload, as_handed_in, fingerprints, prepared
from grader.run.trust import verify_reference

TICK_MS = 500
"""The watcher wakes this often without a change: the first wake starts the first grade, so a
save made while it runs is already seen; later wakes only let Ctrl-C through."""

Items = dict[str, ItemResult]
Fingerprints = dict[str, str | None]


def changed_assignments(
    before: Fingerprints, after: Fingerprints, watched: Iterable[str]
) -> list[str]:
    """The watched assignments whose prepared files differ between two preparations."""
    return [assignment for assignment in watched if before[assignment] != after[assignment]]


def watch_target(upload: Upload) -> tuple[Path, Callable[[watchfiles.Change, str], bool], bool]:
    """What to watch for ``upload``: the folder, a filter, recursively or not. A folder: its
    ``.py`` and ``.ipynb`` files. A single file: its own folder, not recursively, for that file
    alone (an editor that saves by renaming replaces the file, so the file itself cannot be
    watched)."""
    if upload.kind == "folder":
        return upload.path, watchfiles.PythonFilter(extra_extensions=(".ipynb",)), True
    target = str(upload.path)
    return upload.path.parent, lambda _change, path: path == target, False


def diff(before: Items, after: Items) -> list[str]:
    """Rich-markup lines for the items whose status or score changed since ``before``."""
    lines = []
    for ident, item in after.items():
        old = before.get(ident)
        if old and (old.status, old.score) == (item.status, item.score):
            continue
        reason = f": {escape(item.reason)}" if item.reason else ""
        if item.status == "passed":
            lines.append(f"[green]+ {ident} now passes[/green] {item_points(item)}")
        elif old is None or old.status == "passed":
            lines.append(f"[red]- {ident} now {item.status}{reason}[/red] {item_points(item)}")
        else:
            lines.append(
                f"[yellow]~ {ident} {old.status} -> {item.status}{reason}"
                f"[/yellow] {item_points(item)}"
            )
    return lines


def totals(items: Items, assignments: Iterable[str]) -> str:
    """``micrograd 83/100`` for each of ``assignments``."""
    views = (
        AssignmentView(a, tuple(i for i in items.values() if i.assignment == a))
        for a in assignments
    )
    return ", ".join(f"{v.assignment} {points(v.score)}/{points(v.maximum)}" for v in views)


def _grade(options: GradeOptions, folder: Path, scope: str, lanes: Lanes) -> Items:
    report = grade(dataclasses.replace(options, submission=folder, assignment=scope), lanes)
    return {item.id: item for item in report.results}


def _scope(assignments: list[str]) -> str:
    return assignments[0] if len(assignments) == 1 else "all"


def _print_notes(notes: list[str], console: Console) -> None:
    for note in notes:
        console.print(f"[dim]upload: {escape(note)}[/dim]")


def _first_grade(
    options: GradeOptions,
    found: Prepared,
    course: Sequence[Assignment],
    console: Console,
    lanes: Lanes,
) -> Items:
    report = as_handed_in(
        grade(dataclasses.replace(options, submission=found.folder), lanes), found, course
    )
    items = {item.id: item for item in report.results}
    _print_notes(found.notes, console)
    console.print(f"[bold]{totals(items, report.assignments)}[/bold]")
    for assignment in report.assignments:
        absent = report.absent(assignment)
        if absent:
            console.print(f"  [dim]{escape(absent)}[/dim]")
    for item in items.values():
        if item.status != "passed" and item.assignment not in report.not_submitted:
            console.print(f"  [red]{item.id}[/red] {item.status}: {escape(item.reason)}")
    console.print(f"watching {escape(str(options.submission))} (Ctrl-C to stop)")
    return items


def run(options: GradeOptions, upload: Upload, console: Console) -> None:
    """Grade, then on each save prepare the upload again and re-grade the assignments whose
    prepared files changed, until Ctrl-C. A save that changes no engine (a notebook's outputs,
    a file that is not carried) re-grades nothing."""
    rubric = rubric_module.load(options.rubric)
    course = selected_assignments(options, rubric)  # as grade: only what is graded is found
    with Lanes(max(1, len(course)), options.sandbox) as lanes:
        verify_reference(options, rubric, lanes)
        _watch(options, upload, course, console, lanes)


def _watch(
    options: GradeOptions,
    upload: Upload,
    course: Sequence[Assignment],
    console: Console,
    lanes: Lanes,
) -> None:
    """``run``'s loop: every grade forked by ``lanes``."""
    order = [a.name for a in course]
    items: Items | None = None
    notes: list[str] = []
    before: Fingerprints = {}
    folder, watch_filter, recursive = watch_target(upload)
    for changes in watchfiles.watch(
        folder,
        watch_filter=watch_filter,
        recursive=recursive,
        rust_timeout=TICK_MS,
        yield_on_timeout=True,
        raise_interrupt=True,
    ):
        if items is not None and not changes:
            continue
        with prepared(upload, course, sandbox=options.sandbox, slot=options.slot) as found:
            after = fingerprints(found.folder, course)
            if items is None:
                items, notes, before = (
                    _first_grade(options, found, course, console, lanes),
                    found.notes,
                    after,
                )
                continue
            if found.notes != notes:
                _print_notes(found.notes, console)
                notes = found.notes
            watched = sorted({i.assignment for i in items.values()}, key=order.index)
            assignments = changed_assignments(before, after, watched)
            before = after
            if not assignments:
                continue
            saved = ", ".join(sorted(Path(p).name for _, p in changes))
            console.print(f"[dim]{escape(saved)} saved: re-grading {', '.join(assignments)}[/dim]")
            try:
                graded = _grade(options, found.folder, _scope(assignments), lanes)
            except GraderFailure as exc:
                console.print(f"[red]grader failure (not your fault):[/red] {escape(str(exc))}")
                continue
        lines = diff(items, graded) or ["no item changed"]
        items.update(graded)
        for line in lines:
            console.print(f"  {line}")
        console.print(f"[bold]{totals(items, assignments)}[/bold]")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--submission", required=True, help=SUBMISSION_HELP)
    add_grading_options(parser)


def main(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    upload = submission_upload(args.submission, console)
    if upload is None:
        return EXIT_USAGE
    options = grade_options(args, upload.path)
    try:
        return exit_code(console, lambda: run(options, upload, console) or EXIT_OK)
    except KeyboardInterrupt:
        console.print("stopped")
        return EXIT_OK
