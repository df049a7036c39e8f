"""``python -m grader watch``: re-grade on every save and say only what changed.

A student fixing tanh wants to know within seconds whether it passes now and whether something
else broke, not to reread the whole report. Each save re-grades just the assignment whose folder
changed and prints the items that now pass or now fail. File events come from ``watchfiles``
(inotify where there is one), not from a polling loop of ours.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import watchfiles
from rich.console import Console
from rich.markup import escape

from grader.cli import (
    ASSIGNMENTS,
    EXIT_OK,
    EXIT_USAGE,
    GradeOptions,
    GraderFailure,
    add_grading_options,
    exit_code,
    grade,
    grade_options,
)

TICK_MS = 500
"""The watcher wakes this often without a change: the first wake starts the first grade, so a
save made while it runs is already seen; later wakes only let Ctrl-C through."""

Items = dict[str, dict[str, Any]]


def changed_assignments(paths: Iterable[str], submission: Path,
                        watched: Iterable[str]) -> list[str]:
    """The watched assignments whose folder holds one of the changed ``paths``."""
    root = submission.resolve()
    tops = {Path(path).resolve().relative_to(root).parts[0] for path in paths
            if Path(path).resolve().is_relative_to(root)}
    return [assignment for assignment in watched if assignment in tops]


def _points(item: dict[str, Any]) -> str:
    return f"{item['score']:g}/{item['max_score']:g}"


def diff(before: Items, after: Items) -> list[str]:
    """Rich-markup lines for the items whose status or score changed since ``before``."""
    lines = []
    for ident, item in after.items():
        old = before.get(ident)
        if old and (old["status"], old["score"]) == (item["status"], item["score"]):
            continue
        reason = f": {escape(item['reason'])}" if item["reason"] else ""
        if item["status"] == "passed":
            lines.append(f"[green]+ {ident} now passes[/green] {_points(item)}")
        elif old is None or old["status"] == "passed":
            lines.append(f"[red]- {ident} now {item['status']}{reason}[/red] {_points(item)}")
        else:
            lines.append(f"[yellow]~ {ident} {old['status']} -> {item['status']}{reason}"
                         f"[/yellow] {_points(item)}")
    return lines


def totals(items: Items, assignments: Iterable[str]) -> str:
    """``micrograd 83/100`` for each of ``assignments``."""
    parts = []
    for assignment in assignments:
        mine = [i for i in items.values() if i["assignment"] == assignment]
        score = sum(i["score"] for i in mine)
        maximum = sum(i["max_score"] for i in mine if not i["extra_credit"])
        parts.append(f"{assignment} {round(score, 4):g}/{maximum:g}")
    return ", ".join(parts)


def _grade(options: GradeOptions, scope: str) -> Items:
    report = grade(dataclasses.replace(options, assignment=scope))
    return {item["id"]: item for item in report.items}


def _first_grade(options: GradeOptions, console: Console) -> Items:
    items = _grade(options, options.assignment)
    watched = [a for a in ASSIGNMENTS if any(i["assignment"] == a for i in items.values())]
    console.print(f"[bold]{totals(items, watched)}[/bold]")
    for item in items.values():
        if item["status"] != "passed":
            console.print(f"  [red]{item['id']}[/red] {item['status']}: {escape(item['reason'])}")
    console.print(f"watching {escape(str(options.submission))} (Ctrl-C to stop)")
    return items


def run(options: GradeOptions, console: Console) -> None:
    """Grade, then re-grade the changed assignment on each save until Ctrl-C."""
    items: Items | None = None
    for changes in watchfiles.watch(options.submission, watch_filter=watchfiles.PythonFilter(),
                                    rust_timeout=TICK_MS, yield_on_timeout=True,
                                    raise_interrupt=True):
        if items is None:
            items = _first_grade(options, console)
            continue
        watched = sorted({i["assignment"] for i in items.values()}, key=ASSIGNMENTS.index)
        assignments = changed_assignments([path for _, path in changes], options.submission,
                                          watched)
        if not assignments:
            continue
        saved = ", ".join(sorted(Path(p).name for _, p in changes))
        console.print(f"[dim]{escape(saved)} saved: re-grading {', '.join(assignments)}[/dim]")
        try:
            after = _grade(options, assignments[0] if len(assignments) == 1 else "all")
        except GraderFailure as exc:
            console.print(f"[red]grader failure (not your fault):[/red] {escape(str(exc))}")
            continue
        lines = diff(items, after) or ["no item changed"]
        items.update(after)
        for line in lines:
            console.print(f"  {line}")
        console.print(f"[bold]{totals(items, assignments)}[/bold]")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--submission", required=True, help="folder with micrograd/ and/or "
                        "babygrad/")
    add_grading_options(parser)


def main(args: argparse.Namespace) -> int:
    console = Console(highlight=False)
    options = grade_options(args, Path(args.submission))
    if not options.submission.is_dir():
        console.print(f"[red]usage error:[/red] no submission folder {args.submission}")
        return EXIT_USAGE
    try:
        return exit_code(console, lambda: run(options, console) or EXIT_OK)
    except KeyboardInterrupt:
        console.print("stopped")
        return EXIT_OK
