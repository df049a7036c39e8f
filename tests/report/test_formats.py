"""Output formats: CSV (formula injection), Markdown, JUnit, Classroom, PNG, HTML, Gradescope."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from grader.grading.rubric import Item, load
from grader.layout import DEFAULT_RUBRIC
from grader.report.document import GradeReport
from grader.report.formats import StudentResult
from grader.report.formats.classroom import notices
from grader.report.formats.gradebook import escape_cell, gradebook_csv
from grader.report.formats.gradescope import SCHEMA, results
from grader.report.formats.junit import junit_xml
from grader.report.formats.markdown import cell, feedback, fenced
from grader.report.formats.summary import counts, summary_html, ticks

RUBRIC = load(DEFAULT_RUBRIC)


def item(
    item_id: str,
    score: float,
    status: str = "passed",
    *,
    feedback_text: str = "",
    reason: str = "",
    bugs: tuple[str, ...] = (),
    points: float = 6,
) -> dict:
    return {
        "id": item_id,
        "assignment": item_id.split(".")[0],
        "title": item_id,
        "score": score,
        "max_score": points,
        "extra_credit": False,
        "visibility": "visible",
        "status": status,
        "bugs": list(bugs),
        "feedback": feedback_text,
        "reason": reason,
    }


def report(*items: dict) -> GradeReport:
    return GradeReport(
        assignment="all",
        seed="secret",
        items=list(items),
        oracles=["reference"],
        protections=[],
        duration_s=1.0,
    )


GOOD = report(item("micrograd.ops.add", 6), item("micrograd.ops.tanh", 6))
BAD = report(
    item("micrograd.ops.add", 6),
    item(
        "micrograd.ops.tanh",
        0,
        "failed",
        reason="wrong | <b>gradient</b>",
        feedback_text="```\n</code><script>alert(1)</script>\x07",
        bugs=("tanh-derivative",),
    ),
)


@pytest.mark.parametrize(
    "value, escaped",
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("alice", "alice"),
        ("a=b", "a=b"),
    ],
)
def test_csv_cells_cannot_be_formulas(value, escaped):
    assert escape_cell(value) == escaped


def test_gradebook_rows_and_blank_ungraded_items():
    items = [
        Item("micrograd.ops.add", "a", 6, ""),
        Item("micrograd.ops.tanh", "t", 6, ""),
        Item("micrograd.topo", "o", 10, ""),
    ]
    text = gradebook_csv(
        [
            StudentResult("=cmd|' /C calc'!A0", BAD, ("micrograd: engine.py",)),
            StudentResult("bob", None, error="-boom"),
        ],
        items,
    )
    table = list(csv.reader(io.StringIO(text)))
    assert table == [
        [
            "student",
            "total",
            "max",
            "micrograd.ops.add",
            "micrograd.ops.tanh",
            "micrograd.topo",
            "status",
            "notes",
        ],
        ["'=cmd|' /C calc'!A0", "6", "12", "6", "0", "", "graded", "micrograd: engine.py"],
        ["bob", "", "", "", "", "", "grader error", "grader error: -boom"],
    ]


def test_markdown_contains_student_text_safely():
    text = feedback(BAD, {"micrograd": "micrograd: scalars"}, ["found: x|y"])
    assert "| micrograd.ops.tanh | 0/6 | failed | wrong \\| &lt;b&gt;gradient&lt;/b&gt; |" in text
    assert "````text\n```\n</code><script>" in text  # a longer fence than any inside
    assert text.startswith("# Grade: 6/12")
    assert "found: x\\|y" in text
    assert fenced("a ````` b").startswith("``````text")
    assert cell("a\nb|c") == "a b\\|c"


def test_junit_has_one_case_per_item():
    root = ET.fromstring(junit_xml(BAD))
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases] == ["micrograd.ops.add", "micrograd.ops.tanh"]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure.get("type") == "failed" and "\x07" not in failure.text
    assert root.get("failures") == "1" and root.get("errors") == "0"
    timeout = ET.fromstring(junit_xml(report(item("micrograd.ops.add", 0, "timeout"))))
    assert timeout.find(".//error").get("type") == "timeout" and timeout.get("errors") == "1"


def test_classroom_notices():
    assert notices(95.5, 100) == (
        "::notice title=Autograding complete::Points 95.5/100\n"
        '::notice title=Autograding report::{"totalPoints":95.5,"maxPoints":100}\n'
    )


def test_histogram_bins_and_axis_ticks():
    assert counts([0, 9.9, 10, 55, 100, 130]) == [2, 1, 0, 0, 0, 1, 0, 0, 0, 2]
    assert [t.value for t in ticks(13, 200, whole=True)] == ["0", "5", "10", "15"]
    assert [t.value for t in ticks(1, 200, whole=True)] == ["0", "1"]
    assert [t.value for t in ticks(2.4, 100)] == ["0", "0.5", "1", "1.5", "2", "2.5"]
    assert ticks(2.4, 100)[-1].at == 100


def test_summary_page():
    absent = GradeReport(
        "all",
        "secret",
        [item("micrograd.ops.add", 0, "missing"), item("micrograd.ops.tanh", 0, "missing")],
        [],
        [],
        0.0,
        not_submitted={"micrograd": "not submitted"},
    )
    partial = report(item("micrograd.ops.add", 6), item("micrograd.ops.tanh", 3.4286, "partial"))
    page = summary_html(
        [
            StudentResult("a", GOOD),
            StudentResult("<b>", BAD),
            StudentResult("c", None, error="<oops>"),
            StudentResult("d", absent),
            StudentResult("e", partial),
        ],
        RUBRIC.items,
    )
    assert "<svg" in page and "data:image/png" not in page and "tanh-derivative" in page
    # over the three who submitted micrograd, not the five: d handed in nothing
    assert '<td class="n">3</td><td class="n">3.1</td><td class="n">33%</td>' in page
    assert "9.4/12" in page and "3.4286" not in page  # rounded
    assert '<td class="status-problem">nothing to grade</td>' in page  # the status column
    assert "3 graded" in page and "1 grader error" in page and "1 nothing to grade" in page
    assert "micrograd.ops.tanh: 2.9 of 6 points lost" in page  # the points-lost chart
    assert "&lt;oops&gt;" in page and "<oops>" not in page and "&lt;b&gt;" in page


def test_gradescope_document_lists_every_item_always():
    graded = report(*(item(i.id, i.points, points=i.points) for i in RUBRIC.items[:3]))
    hidden = [Item("micrograd.secret", "s", 4, "", visibility="after_due_date"), *RUBRIC.items[:3]]
    document = results(hidden, graded, 12.5, ["micrograd: engine.py"])
    jsonschema.validate(document, SCHEMA)
    assert [t["number"] for t in document["tests"]] == ["1", "2", "3", "4"]
    secret = document["tests"][0]
    assert secret["visibility"] == "after_due_date" and secret["score"] == 0
    assert "Not graded" in secret["output"]
    assert "1 more item(s)" in document["output"]
    assert document["score"] == sum(i.points for i in RUBRIC.items[:3])
    failed = results(RUBRIC.items, None, 3.0, failure="pytest exit 3")
    assert len(failed["tests"]) == len(RUBRIC.items) and failed["score"] == 0
    assert all("pytest exit 3" in t["output"] for t in failed["tests"])


def test_gradescope_output_is_markdown_of_the_failure():
    document = results([Item("micrograd.ops.tanh", "t", 6, "")], BAD, 1.0)
    (test,) = document["tests"]
    assert test["status"] == "failed" and test["output_format"] == "md"
    assert test["output"].startswith("**failed**: wrong") and "````text" in test["output"]
