"""Markdown feedback: the terminal report's content for a file, a Gradescope page or a CI
job summary.

Everything a submission can influence (exception messages, printed output inside feedback)
is either escaped in table cells or shown inside a code fence longer than any run of
backticks it contains, so it cannot restyle the page or inject HTML.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from grader.grading.scoring import ItemResult
from grader.report.document import GradeReport
from grader.report.view import item_points, points

BACKTICKS = re.compile(r"`+")


def cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return html.escape(" ".join(text.split())).replace("|", "\\|")


def fenced(text: str, language: str = "text") -> str:
    """``text`` as a literal block, whatever backticks it holds."""
    longest = max((len(run) for run in BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def item_table(items: Sequence[ItemResult]) -> list[str]:
    """The score table of ``items`` as Markdown lines."""
    lines = ["| item | points | status | reason |", "| --- | ---: | --- | --- |"]
    lines += [
        f"| {cell(item.id)} | {item_points(item)} | {cell(item.status)} | {cell(item.reason)} |"
        for item in items
    ]
    return lines


def feedback(report: GradeReport, titles: dict[str, str], notes: Sequence[str] = ()) -> str:
    """The whole report: found files, a table per assignment (one line for an assignment not
    submitted), then each failure's feedback."""
    lines = [f"# Grade: {points(report.score)}/{points(report.max_score)}", ""]
    lines += [f"- upload: {cell(note)}" for note in notes] + ([""] if notes else [])
    lines += [f"- note: {cell(n)}" for n in report.notices]
    lines += [f"Checked against: {', '.join(report.oracles)}", ""] if report.oracles else []
    for view in report.views:
        absent = report.absent(view.assignment)
        if absent:
            lines += [f"## {cell(absent)}", ""]
            continue
        lines += [
            f"## {cell(titles.get(view.assignment, view.assignment))}: "
            f"{points(view.score)}/{points(view.maximum)}",
            "",
            *item_table(view.items),
            "",
        ]
    failures = report.failures
    if failures:
        lines += ["## Feedback", ""]
    for item in failures:
        lines += [f"### {cell(item.id)} ({cell(item.status)})", "", fenced(item.feedback), ""]
    return "\n".join(lines)
