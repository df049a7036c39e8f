"""What grades become for the places people read them: gradebooks, LMSs, CI, feedback.

Each module turns grading results into one format and does nothing else; the callers decide
where the text goes.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.report.document import GradeReport


@dataclass(frozen=True)
class StudentResult:
    """One student's line in a batch: the report, or why the grader could not make one."""

    student: str
    report: GradeReport | None
    notes: tuple[str, ...] = ()
    error: str = ""
