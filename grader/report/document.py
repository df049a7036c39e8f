"""What a grading run tells people: the terminal report and the ``--json`` document."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

STATUS_STYLE = {"passed": "green", "partial": "yellow", "failed": "red", "error": "red",
                "timeout": "magenta", "missing": "dim", "not_gradable": "dim"}


@dataclass
class GradeReport:
    """The merged result of one grading run (every selected item of every assignment)."""

    assignment: str
    seed: int | str
    items: list[dict[str, Any]]
    oracles: list[str]
    protections: list[str]
    duration_s: float
    notices: list[str] = field(default_factory=list)
    checks: int = 0
    """How many probes the student's engine answered (graphs, ops, walks)."""
    not_submitted: dict[str, str] = field(default_factory=dict)
    """Assignments absent from the submission, with what was looked for. Their items are in
    ``items`` (0 points, ``missing``) for the gradebooks; the reports say it in one line."""

    @property
    def assignments(self) -> list[str]:
        """The assignments graded, in report order."""
        return sorted({i["assignment"] for i in self.items})

    def items_of(self, assignment: str) -> list[dict[str, Any]]:
        return [i for i in self.items if i["assignment"] == assignment]

    def absent(self, assignment: str) -> str | None:
        """The one line for an assignment that was not submitted, else None."""
        why = self.not_submitted.get(assignment)
        return f"{assignment}: {why}" if why else None

    @property
    def failures(self) -> list[dict[str, Any]]:
        """The items whose feedback the reports show (not those of an absent assignment)."""
        return [i for i in self.items if i["status"] != "passed" and i["feedback"]
                and i["assignment"] not in self.not_submitted]

    @property
    def score(self) -> float:
        return round(sum(i["score"] for i in self.items), 4)

    @property
    def max_score(self) -> float:
        return round(sum(i["max_score"] for i in self.items if not i["extra_credit"]), 4)

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
            "items": [{key: item[key] for key in (
                "id", "assignment", "title", "score", "max_score", "extra_credit",
                "visibility", "status", "bugs", "feedback")} for item in self.items],
        }


def _points(value: float) -> str:
    return f"{value:g}"


def render(report: GradeReport, titles: dict[str, str], console: Console,
           notes: Sequence[str] = ()) -> None:
    """The report in the terminal; ``notes``: where the engines were found in the upload."""
    for note in notes:
        console.print(f"[dim]upload:[/dim] {escape(note)}")
    for notice in report.notices:
        console.print(f"[yellow]note:[/yellow] {escape(notice)}")
    if report.oracles:
        console.print(f"Checked against: {', '.join(report.oracles)}")
    for assignment in report.assignments:
        absent = report.absent(assignment)
        if absent:
            console.print(f"[bold]{escape(absent)}[/bold]")
            continue
        mine = report.items_of(assignment)
        table = Table(title=escape(titles.get(assignment, assignment)), title_justify="left")
        table.add_column("item")
        table.add_column("points", justify="right")
        table.add_column("status")
        table.add_column("reason", overflow="fold")
        for item in mine:
            extra = " (extra)" if item["extra_credit"] else ""
            style = STATUS_STYLE.get(item["status"], "")
            table.add_row(item["id"], f"{_points(item['score'])}/{_points(item['max_score'])}"
                          f"{extra}", f"[{style}]{item['status']}[/{style}]",
                          escape(item.get("reason", "")))
        console.print(table)
        score = sum(i["score"] for i in mine)
        maximum = sum(i["max_score"] for i in mine if not i["extra_credit"])
        console.print(f"[bold]{assignment}: {_points(round(score, 4))}/{_points(maximum)}[/bold]")
    for item in report.failures:
        console.rule(f"{item['id']} ({item['status']})")
        console.print(escape(item["feedback"]), highlight=False)
    console.rule()
    console.print(f"[bold]Total: {_points(report.score)}/{_points(report.max_score)}[/bold]"
                  f"  ({report.duration_s:.1f} s)")
