"""Helpers for the project's own tests: plant bugs in copies of the reference, grade them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from grader.layout import DEFAULT_REFERENCE
from grader.report.document import GradeReport
from grader.workflows.api import GradeOptions, grade

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "reference"
EXERCISES = REPO / "exercises"
ENGINES = Path(__file__).resolve().parent / "engines"


def planted(tmp_path: Path, replacements: dict[str, list[tuple[str, str]]]) -> Path:
    """A copy of the reference with each ``(old, new)`` replacement applied to the given file
    (relative to reference/); every ``old`` must occur, so a planted bug cannot silently
    vanish when the reference is edited."""
    target = tmp_path / "submission"
    shutil.copytree(REFERENCE, target, ignore=shutil.ignore_patterns("__pycache__"))
    for relative, pairs in replacements.items():
        path = target / relative
        text = path.read_text()
        for old, new in pairs:
            assert old in text, f"planted bug: {old!r} not found in {relative}"
            text = text.replace(old, new, 1)
        path.write_text(text)
    return target


def grade_report(submission: Path, *, assignment: str = "all", only: list[str] | None = None,
                 seed: int | None = None, reference: Path | None = DEFAULT_REFERENCE,
                 torch: bool = True, sandbox: str = "auto") -> GradeReport:
    """Grade ``submission`` as the CLI does. ``reference=None`` and ``torch=False`` choose the
    oracle configuration (both: finite differences alone, as the student release without
    torch)."""
    return grade(GradeOptions(submission=submission, assignment=assignment, seed=seed,
                              only=tuple(only or ()), reference=reference, torch=torch,
                              sandbox=sandbox))


def grade_items(submission: Path, **options: Any) -> dict[str, dict]:
    """``grade_report``'s items, by id."""
    return {item["id"]: item for item in grade_report(submission, **options).items}
