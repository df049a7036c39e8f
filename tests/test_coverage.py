"""Contract coverage (issue 32): every dimension of every item's documented domain is reached at
every seed, by construction (explicit examples: ``grader.grading.strata``), not by luck; a
course's domain narrows its dimensions; planted bugs are killed whatever the seed.

The counts draw the examples without grading (``grader.audit.coverage``): seconds a seed."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis.internal.conjecture import providers

from grader.audit.coverage import measure
from grader.grading import course, strata
from grader.grading import rubric as rubric_module
from grader.grading.options import GradeOptions
from grader.language.coverage import (
    BESIDE_KINK,
    KEPT_BEFORE_SUMMED,
    KEPT_BESIDE_STRETCHED,
    SHARED_ON_SHARED,
)
from grader.layout import DEFAULT_RUBRIC, REPO
from grader.report.formats.audit import AuditReport, audit_html
from grader.run import api
from tests import seed_sweep
from tests.grading import grade_report
from tests.planted import BABYGRAD_BUGS, CATALOGUE, MICROGRAD_BUGS, plant

RUBRICS = {
    "course": DEFAULT_RUBRIC,
    **{p.parent.name: p for p in sorted((REPO / "courses").glob("*/rubric.yaml"))},
}
SEEDS = range(1, 21)
RANKS = {f"rank {r}" for r in range(5)}
AXES = {
    "axes None",
    "axes int",
    "axes negative int",
    "axes tuple of 1",
    "axes tuple of 2",
    "axes tuple of 3",
    "axes mixed signs",
    "axes several negative",
}
PREPENDED = {f"prepended {k}" for k in range(4)}
STRETCHED = {f"stretched axis {i}" for i in range(4)}
KEPT = {KEPT_BESIDE_STRETCHED.format(i) for i in range(4)}


@pytest.fixture(autouse=True)
def _restore_local_constants(monkeypatch) -> None:
    """``measure`` draws as a grading run does; the rest of the process draws as it did."""
    monkeypatch.setattr(providers, "_get_local_constants", providers._get_local_constants)


def _required(course: str) -> dict[str, frozenset[str]]:
    rubric = rubric_module.load(RUBRICS[course])
    return {c.item: c.required for c in measure(rubric, stratified_only=True)}


def test_the_issues_dimensions_are_each_items_contract():
    required = _required("course")
    expected = {
        "babygrad.ops.summation": RANKS | AXES | {KEPT_BEFORE_SUMMED},
        "babygrad.ops.broadcast_to": RANKS | PREPENDED | STRETCHED | KEPT,
        "babygrad.broadcasting": PREPENDED
        | STRETCHED
        | KEPT
        | {"broadcast on the left", "prepended several and stretched"},
        "babygrad.ops.matmul": {
            "batch stretched on both sides",
            "batch on one side",
            "batch of several on one side",
        },
        "babygrad.backward": {
            "frozen leaves",
            "every leaf trainable",
            "random upstream",
            "default upstream",
            "lone leaf",
            "nothing requires grad",
            "deep chain",
            "shared nodes",
            SHARED_ON_SHARED,
        },
        "babygrad.accumulate": {"shared nodes"},
        "babygrad.ops.add_scalar": {"number on the right", "rank 0", "rank 4"},
        "babygrad.ops.relu": {"kink", *BESIDE_KINK},
        "babygrad.ops.abs": {"kink", *BESIDE_KINK},
        "micrograd.ops.relu": {"kink", *BESIDE_KINK},
        "babygrad.tensor_ops": {"number on the left", "number on the right"},
    }
    assert {item: dims - required[item] for item, dims in expected.items()} == dict.fromkeys(
        expected, set()
    )


def test_a_courses_domain_narrows_its_dimensions():
    """needle takes tuples of axes counted from the front (an int only in its forward, never a
    negative one) and never stretches a batch axis; the babygrad book sums over tuples counted
    from the front; neither is asked for what its contract leaves out."""
    needle = _required("needle-hw1")
    negative = {"axes negative int", "axes mixed signs", "axes several negative"}
    assert not negative & needle["needle.ops.summation"]
    # the int reaches its forward alone (domain: forward_axes), as hw1's forward tests pass one
    assert {"axes None", "axes int", "axes tuple of 2", KEPT_BEFORE_SUMMED} <= needle[
        "needle.ops.summation"
    ]
    assert not any("stretched" in d for d in needle["needle.ops.matmul"])
    assert "batch of several on one side" in needle["needle.ops.matmul"]
    book = _required("babygrad-book")
    assert AXES & book["babygrad.ops.summation"] == {
        "axes None",
        "axes tuple of 1",
        "axes tuple of 2",
    }


def test_measuring_another_course_leaves_the_process_drawing_its_own():
    """A measurement in a process that also grades (this suite's workers, an audit) gives the
    process back the profile it drew from: needle's ``swap_axes`` never reaches this course's
    graphs afterwards."""
    before = course.current()
    _required("needle-hw1")
    assert course.current() is before


def test_a_stratified_tests_examples_are_built_once_for_its_ops_and_domain():
    """``strata.explicit`` builds a test's examples once for the ops and domain a course gives
    it, and again only for another's; ``build_ahead`` (a lane, before it forks its runs)
    builds this course's, which a run of this course then finds built."""
    built = []

    def build(had: tuple[str, ...], domain: object) -> list[tuple[str, ...]]:
        built.append(had)
        return [had, ("shown",)]

    @strata.stratified(build, needs=("swap_axes", "transpose"))
    def test_example(example: tuple[str, ...]) -> None:
        """A grading test."""

    suite = ModuleType("suite")
    suite.test_example = test_example
    strata.build_ahead([suite])
    assert built == [("transpose",)]
    with course.using(rubric_module.load(DEFAULT_RUBRIC).profile):
        assert strata.explicit(test_example) == [
            {"example": ("transpose",)},
            {"example": ("shown",)},
        ]
    assert built == [("transpose",)]
    with course.using(rubric_module.load(RUBRICS["needle-hw1"]).profile):
        assert strata.explicit(test_example)[0] == {"example": ("swap_axes",)}
        strata.explicit(test_example)
    assert built == [("transpose",), ("swap_axes",)]


def test_the_audit_shows_the_coverage_table():
    rubric = rubric_module.load(DEFAULT_RUBRIC)
    report = AuditReport([], [i.id for i in rubric.items], coverage=measure(rubric))
    assert not report.unreached
    summation = next(c for c in report.to_json()["coverage"] if c["item"].endswith("summation"))
    assert summation["counts"]["axes several negative"] >= 1
    assert "Contract coverage" in audit_html(report)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("course", sorted(RUBRICS))
def test_every_dimension_is_reached_at_every_seed(course, seed):
    rubric = rubric_module.load(RUBRICS[course])
    unreached = {c.item: c.missing for c in measure(rubric, seed, True) if c.missing}
    assert unreached == {}


SAMPLED = [
    CATALOGUE["babygrad.ops.summation:sorted-reinsertion"],
    CATALOGUE["babygrad.ops.broadcast_to:sums-one-prepended-axis"],
    *random.Random(32).sample(BABYGRAD_BUGS, 2),
    *random.Random(32).sample(MICROGRAD_BUGS, 2),
]
"""The two bugs only the new draws catch, and a seeded sample of the others."""


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_sampled_planted_bugs_are_killed_at_every_seed(tmp_path: Path, seed):
    """Each bug, one submission each, graded on its own item only at ``seed``."""
    survivors = []
    for k, bug in enumerate(SAMPLED):
        submission = plant(tmp_path / str(k), bug)
        report = grade_report(submission, only=[bug.item], seed=seed, replay=None)
        item = next(i for i in report.items if i["id"] == bug.item)
        if item["score"] >= item["max_score"]:
            survivors.append(bug.label)
    assert survivors == []


def test_the_seed_sweep_names_survivors_leaks_and_a_reference_short_of_full_marks():
    """``tests/seed_sweep.py``'s judge, on rows as ``grades.csv`` gives them."""
    bug = CATALOGUE["babygrad.ops.summation:sorted-reinsertion"]
    other = CATALOGUE["micrograd.ops.tanh:one-minus-t"]
    columns = ("babygrad.ops.summation", "micrograd.ops.tanh", "babygrad.graphs")

    def row(total: str, *scores: str) -> dict[str, str]:
        cells = dict(zip(columns, scores, strict=True))
        return {"student": "x", "total": total, "max": "9", **cells, "notes": ""}

    rows = {
        seed_sweep.REFERENCE_UPLOAD: row("10", "3", "3", "3"),  # 1 of extra credit
        seed_sweep.upload_name(bug): row("3", "0", "3", "0"),
        seed_sweep.upload_name(other): row("3", "3", "3", "3"),
    }
    planted = {seed_sweep.upload_name(b): b for b in (bug, other)}
    points = dict.fromkeys(columns, 3)
    assert seed_sweep.verdicts(rows, planted, points) == [f"{other.label}: survives"]
    rows[seed_sweep.upload_name(bug)]["micrograd.ops.tanh"] = "1"
    rows[seed_sweep.REFERENCE_UPLOAD]["total"] = "8"
    assert seed_sweep.verdicts(rows, planted, points) == [
        "reference: 8 of 9",
        f"{bug.label}: also costs micrograd.ops.tanh",
        f"{other.label}: survives",
    ]


def test_the_seed_sweep_judges_a_bug_planted_in_another_edition_in_its_own():
    """Karpathy's lecture bugs rename the reference's relu away: the reference (repository
    edition) has no tanh (blank), the bug's upload no relu. The bug's tanh is judged against
    tanh's points, and relu, which its edition leaves out, is not a cost."""
    bug = CATALOGUE["micrograd.ops.tanh:one-minus-t"]
    columns = ("micrograd.ops.relu", "micrograd.ops.tanh", "micrograd.ops.exp")

    def row(*scores: str) -> dict[str, str]:
        return {"total": "9", "max": "9", **dict(zip(columns, scores, strict=True))}

    name = seed_sweep.upload_name(bug)
    points = {"micrograd.ops.relu": 8, "micrograd.ops.tanh": 4, "micrograd.ops.exp": 4}
    rows = {seed_sweep.REFERENCE_UPLOAD: row("8", "", ""), name: row("", "0", "4")}
    assert seed_sweep.verdicts(rows, {name: bug}, points) == []
    rows[name] = row("", "4", "2")
    assert seed_sweep.verdicts(rows, {name: bug}, points) == [
        f"{bug.label}: survives",
        f"{bug.label}: also costs micrograd.ops.exp",
    ]


def test_the_mutant_sweep_names_a_killed_mutant_that_survives_a_seed():
    """``--mutants``' judge: a mutant costs an item of its region, or survives; an item of its
    region not graded in this batch (blank) is not one it can cost."""
    columns = ("babygrad.ops.summation", "babygrad.backward")

    def row(total: str, *scores: str) -> dict[str, str]:
        cells = dict(zip(columns, scores, strict=True))
        return {"student": "x", "total": total, "max": "6", **cells, "notes": ""}

    mutants = [
        {"id": "m1", "own": ["babygrad.ops.summation", "babygrad.accumulate"]},
        {"id": "m2", "own": ["babygrad.backward", "babygrad.accumulate"]},
        {"id": "m3", "own": ["babygrad.backward"]},
    ]
    rows = {
        seed_sweep.REFERENCE_UPLOAD: row("6", "3", "3"),
        "m1": row("3", "0", "3"),
        "m2": row("3", "3", "3"),
        "m3": row("", "", ""),
    }
    rows["m3"]["notes"] = "timed out"
    assert seed_sweep.mutant_verdicts(rows, mutants) == [
        "m2: survives",
        "m3: not graded (timed out)",
    ]
    rows[seed_sweep.REFERENCE_UPLOAD]["total"] = "5"
    assert seed_sweep.mutant_verdicts(rows, mutants[:1]) == ["reference: 5 of 6"]


def test_the_mutant_sweep_grades_each_region_on_its_own_items(tmp_path):
    """``--mutants`` batches an audit's killed mutants by the items of their region (the whole
    graph's left out), the same sample at every call; what was not killed is not swept."""
    verdicts = [
        {"id": "b", "verdict": "killed", "own": ["babygrad.backward", "babygrad.graphs"]},
        {"id": "a", "verdict": "killed", "own": ["babygrad.backward"]},
        {"id": "c", "verdict": "killed", "own": ["micrograd.ops.tanh", "micrograd.accumulate"]},
        {"id": "d", "verdict": "confirmed-equivalent", "own": ["babygrad.backward"]},
    ]
    (tmp_path / "audit.json").write_text(json.dumps({"verdicts": verdicts}))
    regions = seed_sweep.killed(tmp_path, None)
    assert {items: [m["id"] for m in mutants] for items, mutants in regions.items()} == {
        ("babygrad.backward",): ["a", "b"],
        ("micrograd.accumulate", "micrograd.ops.tanh"): ["c"],
    }
    assert list(seed_sweep.killed(tmp_path, None, ("micrograd.ops",))) == [
        ("micrograd.accumulate", "micrograd.ops.tanh")
    ]
    sample = seed_sweep.killed(tmp_path, 2)
    assert sum(len(m) for m in sample.values()) == 2
    assert sample == seed_sweep.killed(tmp_path, 2)


@pytest.mark.slow
@pytest.mark.parametrize(
    "bugs",
    [
        ("micrograd.ops.tanh:one-minus-t", "babygrad.ops.summation:sorted-reinsertion"),
        ("micrograd.topo:no-visited-check", "babygrad.backward:walks-forwards"),
    ],
)
def test_the_sweeps_verdicts_only_grade_scores_as_a_full_grade(tmp_path, bugs):
    """``--verdicts-only`` (what the sweeps grade with) leaves counterexamples unshrunk and
    never runs them afresh: every item's score and status are the full grade's."""
    engine = plant(tmp_path / "engine", *(CATALOGUE[b] for b in bugs))

    def scores(**options) -> dict[str, tuple[float, str]]:
        report = api.grade(GradeOptions(engine, **options))
        return {i["id"]: (i["score"], i["status"]) for i in report.items}

    full, verdicts = scores(), scores(verdicts_only=True)
    full_marks = {i.id: i.points for i in rubric_module.load(DEFAULT_RUBRIC).items}
    assert verdicts == full
    assert all(full[CATALOGUE[b].item][0] < full_marks[CATALOGUE[b].item] for b in bugs)


def test_the_seed_sweep_names_every_grade_that_moves_with_the_seed():
    """``tests/seed_sweep.py``'s ``moved``: a grade the same at every seed is not named; one
    whose total or any item's score differs is, with its totals and the items that moved."""

    def row(total: str, graphs: str, broadcasting: str) -> dict[str, str]:
        return {
            "student": "x",
            "total": total,
            "max": "9",
            "babygrad.graphs": graphs,
            "babygrad.broadcasting": broadcasting,
            "notes": "differs and is not a score",
        }

    by_seed = {
        1: {"steady": row("5", "0", "5"), "mover": row("5", "0", "5")},
        2: {"steady": row("5", "0", "5"), "mover": row("8", "3", "5")},
    }
    by_seed[2]["steady"]["notes"] = "another note"
    assert seed_sweep.moved(by_seed) == [
        "mover: moves with the seed (1: 5, 2: 8) on babygrad.graphs"
    ]
    by_seed[2]["mover"] = row("5", "0", "5")
    assert seed_sweep.moved(by_seed) == []
