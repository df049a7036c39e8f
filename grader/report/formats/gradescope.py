"""Gradescope's ``results.json``: every rubric item is a test, always, in rubric order.

An item that errored, timed out or was never graded is present with ``score: 0`` and the
reason (gradescope-utils' habit of dropping such tests is what students complain about).
Hidden and after-due-date items are ``after_due_date`` tests; the top-level output then says
that some results appear only later, instead of implying that everything passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jsonschema

from grader.grading.rubric import Item
from grader.grading.scoring import ItemResult
from grader.language.editions import NOT_IN_EDITION
from grader.report.document import GradeReport
from grader.report.formats.markdown import fenced

VISIBILITIES = ["hidden", "after_due_date", "after_published", "visible"]
SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "score",
        "execution_time",
        "output",
        "output_format",
        "visibility",
        "stdout_visibility",
        "tests",
    ],
    "properties": {
        "score": {"type": "number", "minimum": 0},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "visibility": {"enum": VISIBILITIES},
        "stdout_visibility": {"enum": VISIBILITIES},
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "name",
                    "number",
                    "score",
                    "max_score",
                    "status",
                    "output",
                    "output_format",
                    "visibility",
                ],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "number": {"type": "string", "pattern": r"^\d+$"},
                    "score": {"type": "number", "minimum": 0},
                    "max_score": {"type": "number", "minimum": 0},
                    "status": {"enum": ["passed", "failed"]},
                    "output": {"type": "string"},
                    "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
                    "visibility": {"enum": VISIBILITIES},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}


def _test(number: int, item: Item, graded: ItemResult | None, fallback: str) -> dict[str, Any]:
    """One item as a Gradescope test; one the submission's edition does not have is 0 of 0,
    not failed, and says so."""
    if graded is None:
        score, status, output = 0.0, "failed", f"Not graded: {fallback}"
    else:
        score = graded.score
        status = "passed" if graded.status in ("passed", NOT_IN_EDITION) else "failed"
        output = (
            ""
            if graded.status == "passed"
            else "\n\n".join(
                part
                for part in (
                    f"**{graded.status}**: {graded.reason}",
                    fenced(graded.feedback) if graded.feedback else "",
                )
                if part
            )
        )
    return {
        "name": f"{item.id}: {item.title}",
        "number": str(number),
        "score": score,
        "max_score": item.points if graded is None else graded.max_score,
        "status": status,
        "output": output,
        "output_format": "md",
        "visibility": "visible" if item.visibility == "visible" else "after_due_date",
        "tags": [item.assignment, *(["extra credit"] if item.extra_credit else [])],
    }


def results(
    items: Sequence[Item],
    report: GradeReport | None,
    execution_time: float,
    notes: Sequence[str] = (),
    failure: str = "",
) -> dict[str, Any]:
    """The document for ``report`` (None when grading failed: ``failure`` says why)."""
    graded = {r.id: r for r in report.results} if report else {}
    fallback = failure or "this item was not part of the grading run"
    tests = [_test(n, item, graded.get(item.id), fallback) for n, item in enumerate(items, start=1)]
    later = sum(t["visibility"] != "visible" for t in tests)
    output = [f"- upload: {note}" for note in notes]
    if failure:
        output.append(f"**The grader failed (not your fault):** {failure}")
    if later:
        output.append(f"{later} more item(s) are graded now and shown after the due date.")
    document = {
        "score": round(sum(t["score"] for t in tests), 4),
        "execution_time": round(execution_time, 3),
        "output": "\n".join(output),
        "output_format": "md",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }
    jsonschema.validate(document, SCHEMA)
    return document


def misconfigured(execution_time: float) -> dict[str, Any]:
    """The document when the autograder cannot find its own course: no score to give, one line
    for the student (the instructor reads why in the autograder's output)."""
    document = {
        "score": 0,
        "execution_time": round(execution_time, 3),
        "output": "**The autograder is misconfigured (not your fault):** your instructor "
        "has to fix it; your submission was not graded.",
        "output_format": "md",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
    }
    jsonschema.validate(document, SCHEMA)
    return document
