"""What grades become for the places people read them: gradebooks, LMSs, CI, feedback.

Each module turns grading results into one format and does nothing else; the callers decide
where the text goes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from grader.grading.completeness import unfinished
from grader.grading.rubric import Item
from grader.grading.scoring import ItemResult
from grader.report.document import GradeReport

IMPORT_REASON = re.compile(r"while importing: |[A-Za-z_]\w*: ")
"""How a failed import's reason starts (``grading.session._import``): a crash or hang while
importing, or the exception the import raised (``SyntaxError: ...``)."""


def import_failure(items: Sequence[ItemResult]) -> str | None:
    """The status (``error`` or ``timeout``) the items of one assignment failed with because
    its import failed, else None. A failed import fails every test of the assignment at once
    with the import's reason and no counterexample, whereas a probe's own exception always
    comes with a runnable snippet, and a crash or hang in a probe costs only its item."""
    failures = [f for i in items for f in i.failures]
    if (
        not items
        or not failures
        or any(i.status not in ("error", "timeout") or not i.failures for i in items)
    ):
        return None
    reasons = {f["reason"] for f in failures}
    if len(reasons) != 1 or any(f["snippet"] or f["details"] for f in failures):
        return None
    (reason,) = reasons
    if not IMPORT_REASON.match(reason):
        return None
    return "timeout" if all(i.status == "timeout" for i in items) else "error"


@dataclass(frozen=True)
class StudentResult:
    """One student's line in a batch: the report, or why the grader could not make one."""

    student: str
    report: GradeReport | None
    notes: tuple[str, ...] = ()
    error: str = ""
    refused: str = ""
    """Why the upload was refused whole (``submissions.prepare``), else ""."""
    rescored: bool = False
    """Its stored grade was rescored at the rubric's new points, with no grading run."""

    @property
    def status(self) -> str:
        """How far the upload was graded, for the gradebook's ``status`` column: a student
        whose upload could not be graded is never a bare 0."""
        if self.report is None:
            return "grader error"
        if self.refused:
            return "refused upload"
        report = self.report
        submitted = [v for v in report.views if v.assignment not in report.not_submitted]
        if not submitted:
            return "nothing to grade"
        broken = {v.assignment: why for v in submitted if (why := import_failure(v.items))}
        if broken:
            word = "timed out" if set(broken.values()) == {"timeout"} else "import failed"
            return word if len(broken) == len(submitted) else f"{word}: {', '.join(broken)}"
        return "graded"

    def checked(self, selected: Sequence[Item]) -> StudentResult:
        """This result, or a grader error when its report lacks a result for one of the
        ``selected`` items: a grade the grader did not finish is never written as a score."""
        why = unfinished(self.report.items, selected) if self.report is not None else ""
        return replace(self, report=None, error=f"unfinished grade: {why}") if why else self


@dataclass(frozen=True)
class Change:
    """A student whose grade moved between two runs of a batch (``changes.csv``)."""

    student: str
    old_total: str
    new_total: str
    items: tuple[tuple[str, str, str], ...] = ()
    """``(item, old score, new score)`` for each item whose score moved; "" is not graded."""

    @property
    def flipped(self) -> str:
        """The moved items as ``item: old -> new``, one after the other."""
        return "; ".join(
            f"{item}: {old or 'not graded'} -> {new or 'not graded'}"
            for item, old, new in self.items
        )
