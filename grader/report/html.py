"""The grade report as one self-contained HTML page a student can open anywhere.

Everything is inline (CSS, the Graphviz SVG pictures) and nothing is fetched when the page is
viewed, so it works from an e-mail attachment or a course platform's file view. Batch grading
writes the same page per student with ``write_html_report``. The page is rendered from
``grader/report/templates/report.html.j2`` with every value escaped (``grader.report.pages``):
what a submission controls (a function's name, an exception's message, an uploaded file's
name) shows as text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from markupsafe import Markup

from grader.atomic import write_atomically
from grader.grading.scoring import ItemResult, fix_first_line, graded_any, not_gradable_note
from grader.report.document import GradeReport
from grader.report.drawing import WRONG_FILL, WRONG_LINE, Picture, draw
from grader.report.pages import ENVIRONMENT
from grader.report.view import item_points, points

STATUS_COLOUR = {
    "passed": "#2e7d32",
    "partial": "#b26a00",
    "failed": "#c62828",
    "error": "#c62828",
    "timeout": "#8e24aa",
    "missing": "#757575",
    "not_gradable": "#757575",
    "not_in_edition": "#757575",
}
"""Badge colours; the test finds the rendered table by the ``passed`` one."""


def anchor(item_id: str) -> str:
    """An HTML id (and SVG id prefix) for an item: ids are dotted, SVG ids must be names."""
    return "item-" + re.sub(r"[^A-Za-z0-9_-]", "-", item_id)


@dataclass(frozen=True)
class FailureView:
    """One failing item's article: the item, and what its page shows beside its fields."""

    item: ItemResult
    fix_first: str
    picture: Picture | None
    waiting: list[str]
    """What the feedback says of the tests that could not be graded."""


def _picture(item: ItemResult) -> Picture | None:
    """The item's counterexample drawn. Graphviz's SVG is markup the grader made from labels
    it escaped (``drawing``): it goes into the page as it is."""
    if not item.figure:
        return None
    picture = draw(item.figure, anchor(item.id))
    return Picture(Markup(picture.svg) if picture.svg is not None else None, picture.lines)


def _failure(item: ItemResult) -> FailureView:
    return FailureView(
        item,
        fix_first_line(item.fix_first) if item.fix_first else "",
        _picture(item),
        not_gradable_note(item.not_gradable, graded_any(item)),
    )


def render_html(report: GradeReport, titles: dict[str, str], notes: Sequence[str] = ()) -> str:
    """The whole page: totals, one score table per assignment (one line for an assignment not
    submitted), then every failure. ``notes``: where the engines were found in the upload."""
    return ENVIRONMENT.get_template("report.html.j2").render(
        report=report,
        notes=notes,
        views=report.views,
        titles=titles,
        failures=[_failure(item) for item in report.failures],
        points=points,
        item_points=item_points,
        anchor=anchor,
        status_colour=STATUS_COLOUR,
        wrong_fill=WRONG_FILL,
        wrong_line=WRONG_LINE,
    )


def write_html_report(
    report: GradeReport, titles: dict[str, str], path: Path, notes: Sequence[str] = ()
) -> None:
    """Write the page in one step (readers never see half a file)."""
    write_atomically(path, render_html(report, titles, notes))
