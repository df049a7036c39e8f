"""``grades.csv``: one row per student, importable into a learning-management system gradebook.

Every cell that starts like a spreadsheet formula (``=``, ``+``, ``-``, ``@``, a tab or a
carriage return) is prefixed with a quote, so a student id such as ``=HYPERLINK(...)`` stays
text when the file is opened in a spreadsheet (OWASP's "CSV injection" advice).

A rerun of a batch compares its rows with the last run's ``grades.csv`` (``changed_grades``):
``changes.csv`` lists each student whose total or an item's score moved.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from grader.grading.rubric import Item
from grader.language.editions import NOT_IN_EDITION
from grader.report.formats import Change, StudentResult
from grader.report.view import points

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NOT_SCORES = frozenset({"student", "total", "max", "status", "notes"})
"""The columns of ``grades.csv`` that are not an item's score."""


def escape_cell(value: str) -> str:
    """``value``, made inert for spreadsheets."""
    return "'" + value if value.startswith(FORMULA_START) else value


def _row(result: StudentResult, items: Sequence[Item]) -> list[str]:
    """One student's cells, escaped."""
    report = result.report
    scores = {r.id: r.score for r in report.results if r.status != NOT_IN_EDITION} if report else {}
    notes = "; ".join([*result.notes, *([f"grader error: {result.error}"] if result.error else [])])
    row = [
        result.student,
        points(report.score) if report else "",
        points(report.max_score) if report else "",
        *(points(scores[i.id]) if i.id in scores else "" for i in items),
        result.status,
        notes,
    ]
    return [escape_cell(cell) for cell in row]


def _header(items: Sequence[Item]) -> list[str]:
    return [
        escape_cell(cell)
        for cell in ["student", "total", "max", *(item.id for item in items), "status", "notes"]
    ]


def gradebook_csv(results: Sequence[StudentResult], items: Sequence[Item]) -> str:
    """The CSV text: student, total, max, one column per rubric item (blank when that item
    was not graded, or is not in the student's edition), status (how far the upload was
    graded: ``StudentResult.status``), and notes. A student the grader failed on has blank
    scores."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(_header(items))
    writer.writerows(_row(result, items) for result in results)
    return out.getvalue()


def changed_grades(
    last: str, results: Sequence[StudentResult], items: Sequence[Item]
) -> list[Change]:
    """The students of ``results`` whose total or an item's score differs from their row in
    ``last`` (an earlier ``grades.csv``, of this or an older format), in ``results``' order.
    A student ``last`` lacks has no earlier grade to compare, so is not listed."""
    header = _header(items)
    before = {row.get("student"): row for row in csv.DictReader(io.StringIO(last))}
    changes = []
    for result in results:
        old = before.get(escape_cell(result.student))
        if old is None:
            continue
        new = dict(zip(header, _row(result, items), strict=True))
        columns = [
            c for c in dict.fromkeys([*header, *old]) if isinstance(c, str) and c not in NOT_SCORES
        ]
        moved = tuple(
            (c, old.get(c) or "", new.get(c, ""))
            for c in columns
            if (old.get(c) or "") != new.get(c, "")
        )
        if moved or (old.get("total") or "") != new["total"]:
            changes.append(Change(result.student, old.get("total") or "", new["total"], moved))
    return changes


def changes_csv(changes: Sequence[Change]) -> str:
    """``changes.csv``: student, old total, new total, and the items that moved (``item: old
    -> new``); a header alone when no grade moved."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["student", "old total", "new total", "items changed"])
    writer.writerows(
        [escape_cell(cell) for cell in (c.student, c.old_total, c.new_total, c.flipped)]
        for c in changes
    )
    return out.getvalue()
