"""What a grading run tells people: the terminal report and the ``--json`` document."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from grader.grading.scoring import ItemResult
from grader.report.view import AssignmentView, item_points, points

STATUS_STYLE = {
    "passed": "green",
    "partial": "yellow",
    "failed": "red",
    "error": "red",
    "timeout": "magenta",
    "missing": "dim",
    "not_gradable": "dim",
    "not_in_edition": "dim",
}

SNIPPET_CAPTION = "Smallest example (runnable):"
"""The line ``feedback_text`` puts before each runnable snippet, which it fences as Markdown."""


def unfenced(feedback: str) -> str:
    """``feedback`` as the terminal shows it: each runnable snippet as plain lines a student
    can copy, without the ```` ```python ```` fence the Markdown and JSON reports keep (a
    terminal prints it as it is)."""
    lines: list[str] = []
    inside = False
    for line in feedback.split("\n"):
        if line == "```python" and lines and lines[-1] == SNIPPET_CAPTION:
            inside = True
        elif inside and line == "```":
            inside = False
        else:
            lines.append(line)
    return "\n".join(lines)


@dataclass
class GradeReport:
    """The merged result of one grading run (every selected item of every assignment)."""

    assignment: str
    seed: int | str
    items: list[dict[str, Any]]
    """Each item's JSON form (``ItemResult.to_json``), as the grading processes, the ledger
    and a Dask worker hand it over; the reports read it as objects (``results``, ``views``)."""
    oracles: list[str]
    protections: list[str]
    duration_s: float
    notices: list[str] = field(default_factory=list)
    checks: int = 0
    """How many probes the student's engine answered (graphs, ops, walks)."""
    not_submitted: dict[str, str] = field(default_factory=dict)
    """Assignments absent from the submission, with what was looked for. Their items are in
    ``items`` (0 points, ``missing``) for the gradebooks; the reports say it in one line."""
    not_importable: dict[str, str] = field(default_factory=dict)
    """Assignments whose engine could not be imported, with why and the fix: one line in
    every report, not one per test."""

    @property
    def results(self) -> list[ItemResult]:
        """The items as objects, in report order."""
        return [ItemResult.from_json(item) for item in self.items]

    @property
    def assignments(self) -> list[str]:
        """The assignments graded, in report order."""
        return sorted({result.assignment for result in self.results})

    @property
    def views(self) -> list[AssignmentView]:
        """One view per assignment graded, in report order."""
        results = self.results
        return [
            AssignmentView(assignment, tuple(r for r in results if r.assignment == assignment))
            for assignment in sorted({r.assignment for r in results})
        ]

    @property
    def total(self) -> AssignmentView:
        """Every item together: the report's score and maximum."""
        return AssignmentView(self.assignment, tuple(self.results))

    def absent(self, assignment: str) -> str | None:
        """The one line for an assignment that was not submitted or could not be imported,
        else None."""
        why = self.not_submitted.get(assignment) or self.not_importable.get(assignment)
        return f"{assignment}: {why}" if why else None

    @property
    def failures(self) -> list[ItemResult]:
        """The items whose feedback the reports show (not those of an assignment said in one
        line: absent, or not importable)."""
        return [
            r
            for r in self.results
            if r.status != "passed" and r.feedback and self.absent(r.assignment) is None
        ]

    @property
    def score(self) -> float:
        return self.total.score

    @property
    def max_score(self) -> float:
        return self.total.maximum

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": 1,
            "assignment": self.assignment,
            "seed": self.seed,
            "score": self.score,
            "max_score": self.max_score,
            "duration_s": round(self.duration_s, 3),
            "oracles": self.oracles,
            "protections": self.protections,
            "not_submitted": self.not_submitted,
            "not_importable": self.not_importable,
            "items": [
                {
                    key: item[key]
                    for key in (
                        "id",
                        "assignment",
                        "title",
                        "score",
                        "max_score",
                        "extra_credit",
                        "visibility",
                        "status",
                        "bugs",
                        "feedback",
                    )
                }
                for item in self.items
            ],
        }


def render(
    report: GradeReport, titles: dict[str, str], console: Console, notes: Sequence[str] = ()
) -> None:
    """The report in the terminal; ``notes``: where the engines were found in the upload."""
    for note in notes:
        console.print(f"[dim]upload:[/dim] {escape(note)}")
    for notice in report.notices:
        console.print(f"[yellow]note:[/yellow] {escape(notice)}")
    if report.oracles:
        console.print(f"Checked against: {', '.join(report.oracles)}")
    unconfined = [line for line in report.protections if line.startswith("NO sandbox")]
    if unconfined:  # said where it is read: a grade that silently lost its sandbox is a hole
        console.print(f"[yellow]note:[/yellow] {escape(unconfined[0])}")
    for view in report.views:
        absent = report.absent(view.assignment)
        if absent:
            console.print(f"[bold]{escape(absent)}[/bold]")
            continue
        table = Table(
            title=escape(titles.get(view.assignment, view.assignment)), title_justify="left"
        )
        table.add_column("item")
        table.add_column("points", justify="right")
        table.add_column("status")
        table.add_column("reason", overflow="fold")
        for item in view.items:
            style = STATUS_STYLE.get(item.status, "")
            table.add_row(
                item.id, item_points(item), f"[{style}]{item.status}[/{style}]", escape(item.reason)
            )
        console.print(table)
        console.print(
            f"[bold]{view.assignment}: {points(view.score)}/{points(view.unrounded_maximum)}[/bold]"
        )
    for item in report.failures:
        console.rule(f"{item.id} ({item.status})")
        console.print(escape(unfenced(item.feedback)), highlight=False)
    console.rule()
    console.print(
        f"[bold]Total: {points(report.score)}/{points(report.max_score)}[/bold]"
        f"  ({report.duration_s:.1f} s)"
    )
