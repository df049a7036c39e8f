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

from grader.report.document import GradeReport

BACKTICKS = re.compile(r"`+")


def cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell."""
    return html.escape(" ".join(text.split())).replace("|", "\\|")


def fenced(text: str, language: str = "text") -> str:
    """``text`` as a literal block, whatever backticks it holds."""
    longest = max((len(run) for run in BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def points(value: float) -> str:
    return f"{value:g}"


def item_table(items: Sequence[dict]) -> list[str]:
    """The score table of ``items`` as Markdown lines."""
    lines = ["| item | points | status | reason |", "| --- | ---: | --- | --- |"]
    for item in items:
        extra = " (extra)" if item["extra_credit"] else ""
        lines.append(f"| {cell(item['id'])} | {points(item['score'])}/"
                     f"{points(item['max_score'])}{extra} | {cell(item['status'])} | "
                     f"{cell(item.get('reason', ''))} |")
    return lines


def feedback(report: GradeReport, titles: dict[str, str], notes: Sequence[str] = ()) -> str:
    """The whole report: found files, a table per assignment (one line for an assignment not
    submitted), then each failure's feedback."""
    lines = [f"# Grade: {points(report.score)}/{points(report.max_score)}", ""]
    lines += [f"- {cell(note)}" for note in notes] + ([""] if notes else [])
    lines += [f"- note: {cell(n)}" for n in report.notices]
    lines += [f"Checked against: {', '.join(report.oracles)}", ""] if report.oracles else []
    for assignment in report.assignments:
        absent = report.absent(assignment)
        if absent:
            lines += [f"## {cell(absent)}", ""]
            continue
        mine = report.items_of(assignment)
        score = round(sum(i["score"] for i in mine), 4)
        maximum = round(sum(i["max_score"] for i in mine if not i["extra_credit"]), 4)
        lines += [f"## {cell(titles.get(assignment, assignment))}: {points(score)}/"
                  f"{points(maximum)}", "", *item_table(mine), ""]
    if report.failures:
        lines += ["## Feedback", ""]
    for item in report.failures:
        lines += [f"### {cell(item['id'])} ({cell(item['status'])})", "",
                  fenced(item["feedback"]), ""]
    return "\n".join(lines)
