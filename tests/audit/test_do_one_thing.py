"""Partial work earns only what it shows: for each solution region of each course's reference
(this course's and every course under ``courses/``), the stubs with that region alone written
(the audit's do-one-thing variants) earn, above the stubs' own grade, at most what the region's
items allow (``docs/items.md``). Graded as the audit grades them: a batch in warm lanes, every
item but ``*.graphs``."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from grader.audit import audit
from grader.audit.mutants import DO_ONE_THING, regions
from grader.grading import rubric as rubric_module
from grader.grading.options import IN_MEMORY
from grader.layout import COURSES, DEFAULT_REFERENCE, DEFAULT_RUBRIC
from grader.report.formats.audit import OWN_SHARE
from grader.run.api import GradeOptions

pytestmark = pytest.mark.slow

AUDITED = {
    "course": (DEFAULT_RUBRIC, DEFAULT_REFERENCE),
    **{
        folder.name: (folder / "rubric.yaml", folder / "reference")
        for folder in sorted(COURSES.iterdir())
        if (folder / "reference").is_dir()
    },
}


@pytest.mark.parametrize("course", AUDITED)
def test_the_stubs_and_one_region_earn_only_what_its_items_allow(tmp_path: Path, course: str):
    rubric_path, reference = AUDITED[course]
    options = audit.AuditOptions(
        out=tmp_path,
        operators=(DO_ONE_THING,),
        jobs=2,
        grading=GradeOptions(
            submission=Path(),
            rubric=rubric_path,
            reference=reference,
            replay=IN_MEMORY,
            slot=audit.DEFAULT_SLOT,
        ),
    )
    rubric = rubric_module.load(rubric_path)
    every = regions(reference)
    chosen = audit.candidates(options)
    assert [m.region for m in chosen] == every and {m.kind for m in chosen} == {DO_ONE_THING}
    grades = audit.grade_all(options, chosen, rubric, Console(quiet=True))
    stubs = {assignment: mine[audit.STUBS] for assignment, mine in grades.items()}
    for assignment, grade in stubs.items():
        assert isinstance(grade, audit.GradeReport), f"{assignment}: {grade}"
    verdicts = audit.judge_one_thing(
        chosen, grades, every, {item.id: item.points for item in rubric.items}
    )
    problems = [
        f"{v.id} ({v.description}): {v.verdict}: {v.note}"
        for v in verdicts
        if v.verdict != OWN_SHARE
    ]
    assert not problems, "\n".join(problems)
