"""The class summary as a browser draws it (issue 50): headless Chromium screenshots the page of
a made-up class, and its pixels show the points-lost chart's bars (one per item that lost
points, longest first), the score histogram and the status column's problem rows painted.
``GRADER_SCREENSHOT=summary.png`` keeps the screenshot."""

from __future__ import annotations

import numpy as np

from grader.grading.rubric import load
from grader.layout import DEFAULT_RUBRIC
from grader.report.document import GradeReport
from grader.report.formats import StudentResult
from grader.report.formats.summary import summary_html
from tests.helpers.programs import needs_chromium, painted, screenshot

RUBRIC = load(DEFAULT_RUBRIC)
ITEMS = [i for i in RUBRIC.items if i.id in ("micrograd.ops.add", "micrograd.ops.tanh")]
ITEMS += [i for i in RUBRIC.items if i.id == "babygrad.ops.add"]
WINDOW = (1280, 2400)
LOST, SCORE, PROBLEM = "#d9480f", "#3f72b5", "#b3261e"


def item(item_id: str, points: float, score: float, bugs: tuple[str, ...] = ()) -> dict:
    return {
        "id": item_id,
        "assignment": item_id.split(".")[0],
        "title": item_id,
        "score": score,
        "max_score": points,
        "extra_credit": False,
        "visibility": "visible",
        "status": "passed" if score == points else "failed",
        "bugs": list(bugs) if score < points else [],
        "feedback": "",
        "reason": "",
    }


def student(name: str, tanh: float, add: float, babygrad: float | None) -> StudentResult:
    items = [item("micrograd.ops.add", 6, add), item("micrograd.ops.tanh", 6, tanh, ("tanh",))]
    items.append(item("babygrad.ops.add", 3, babygrad or 0))
    absent = {} if babygrad is not None else {"babygrad": "not submitted"}
    report = GradeReport("all", "secret", items, [], [], 1.0, not_submitted=absent)
    return StudentResult(name, report)


def a_class() -> list[StudentResult]:
    return [
        student("alice", 6, 6, 3),
        student("bob", 0, 6, 3),
        student("carol", 0, 6, None),
        student("dave", 3.4286, 0, 3),
        student("erin", 6, 6, None),
        student("frank", 0, 0, 0),
        StudentResult("gina", None, error="the grading run timed out"),
    ]


@needs_chromium
def test_chromium_draws_the_chart_the_histogram_and_the_status_column(tmp_path):
    page = tmp_path / "summary.html"
    page.write_text(summary_html(a_class(), ITEMS))
    image = screenshot(page, WINDOW)
    lost = painted(image, LOST)
    rows = np.flatnonzero(lost.any(axis=1))
    bars = np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1)
    assert len(bars) == 3, "one bar per item that lost points"
    lengths = [int(lost[bar].sum(axis=1).max()) for bar in bars]
    assert lengths == sorted(lengths, reverse=True) and lengths[-1] > 10, lengths
    assert painted(image, SCORE).sum() > 2000, "the histogram's bars are painted"
    assert painted(image, PROBLEM).sum() > 20, "the status column marks the problem rows"
