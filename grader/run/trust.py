"""A course's reference is an oracle only once it has passed its own rubric.

Before a command grades with a reference, the reference itself is graded on the rubric with
PyTorch and finite differences as the oracles (the rubric's seed, every item). A reference that
loses a point is the instructor's to fix: the command stops with one error addressed to them
(exit 2), naming the item and the example, before any student is graded against it. A check
that passed is remembered by digest (the rubric, the reference's files, the grader's source),
so it costs one grade per reference and machine; ``setup.sh`` runs it when Gradescope builds the
image, where an instructor reads its failure.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from grader.atomic import write_atomically
from grader.grading import rubric as rubric_module
from grader.grading.options import GradeOptions
from grader.grading.scoring import ItemResult
from grader.layout import REPLAY_CACHE, grader_digest
from grader.run.api import Runner, UsageFailure, given_reference, grade
from grader.run.submissions import Upload, prepared

CHECKED = REPLAY_CACHE.parent / "references"
"""One empty file per reference that passed its rubric, named by the digest it passed at."""
EXAMPLE_LINES = 12


class ReferenceFailure(UsageFailure):
    """The reference fails its own rubric: a configuration error, the instructor's to fix."""


def digest(rubric: rubric_module.Rubric, reference: Path) -> str:
    """What a check's verdict depends on: what the rubric grades (with its profile; not its
    points, which a full score earns whatever they are), the reference's files, the grader's
    source."""
    hashed = hashlib.sha256(f"{rubric.graded_digest}\0{grader_digest()}\0".encode())
    for path in sorted(reference.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            hashed.update(str(path.relative_to(reference)).encode() + b"\0" + path.read_bytes())
    return hashed.hexdigest()


def verify_reference(
    options: GradeOptions, rubric: rubric_module.Rubric, runner: Runner | None = None
) -> None:
    """Raise ``ReferenceFailure`` unless the reference ``options`` give (if any) earns every
    point of ``rubric`` (``options.rubric``, as the caller loaded it) without itself as an
    oracle."""
    reference = given_reference(options.reference)
    if reference is None:
        return
    passed = CHECKED / digest(rubric, reference)
    if passed.is_file():
        return
    itself = dataclasses.replace(
        options, reference=None, seed=None, assignment="all", only=(), replay=None
    )
    upload = Upload("reference", reference, "folder")
    with prepared(upload, rubric.profile.graded, sandbox=options.sandbox) as found:
        report = grade(dataclasses.replace(itself, submission=found.folder), runner)
    lost = [item for item in report.results if item.score < item.max_score]
    if lost:
        raise ReferenceFailure(_explained(reference, rubric, lost[0]))
    write_atomically(passed, "")


def _explained(reference: Path, rubric: rubric_module.Rubric, item: ItemResult) -> str:
    example = "\n".join(item.feedback.splitlines()[:EXAMPLE_LINES])
    return (
        f"the reference {reference} fails its own rubric ({rubric.path}, course "
        f"{rubric.profile.name}, "
        f"seed {rubric.seed}) on {item.id}: {item.reason}. An instructor must fix the "
        f"reference before it grades anyone; the example:\n{example}"
    )
