"""``grades.csv``: one row per student, importable into a learning-management system gradebook.

Every cell that starts like a spreadsheet formula (``=``, ``+``, ``-``, ``@``, a tab or a
carriage return) is prefixed with a quote, so a student id such as ``=HYPERLINK(...)`` stays
text when the file is opened in a spreadsheet (OWASP's "CSV injection" advice).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from grader.grading.rubric import Item
from grader.report.formats import StudentResult

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(value: str) -> str:
    """``value``, made inert for spreadsheets."""
    return "'" + value if value.startswith(FORMULA_START) else value


def _number(value: float) -> str:
    return f"{value:g}"


def gradebook_csv(results: Sequence[StudentResult], items: Sequence[Item]) -> str:
    """The CSV text: student, total, max, one column per rubric item (blank when that item
    was not graded), and notes. A student the grader failed on has blank scores."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([escape_cell(cell) for cell in
                     ["student", "total", "max", *(item.id for item in items), "notes"]])
    for result in results:
        report = result.report
        scores = {i["id"]: i["score"] for i in report.items} if report else {}
        notes = "; ".join([*result.notes, *([f"grader error: {result.error}"]
                                             if result.error else [])])
        row = [result.student,
               _number(report.score) if report else "",
               _number(report.max_score) if report else "",
               *(_number(scores[i.id]) if i.id in scores else "" for i in items),
               notes]
        writer.writerow([escape_cell(cell) for cell in row])
    return out.getvalue()
