"""Every oracle configuration the grader can run in gives the same verdicts: correct engines
get full marks, and each planted bug loses the same items.

Each configuration grades against different oracles, so a grader bug can hide in all but one:
the release's false fail of ``micrograd.ops.pow`` showed only where finite differences were
the sole oracle, and the project's own environment always had torch to skip the example.

- reference + PyTorch: the instructor's checkout;
- the reference alone (``--no-torch``): Gradescope, which installs no torch;
- PyTorch alone (no reference): a student release with ``EXTRAS=torch``;
- finite differences alone: the student release as installed (``tests/release/test_release.py`` also
  grades that installed release through its own ``make grade``).

The correct engines are written unlike each other (``tests/engines/*`` say how). Each is graded
once per configuration and each configuration once per engine, every grade with a seed of its
own: 12 seeds at the cost of 12 grades. The planted bugs are ``tests/helpers/planted.py``'s
catalogue.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.grading import rubric as rubric_module
from grader.layout import DEFAULT_REFERENCE, DEFAULT_RUBRIC
from grader.oracles import torch_oracle
from tests.helpers.grading import CORRECT_ENGINES, MAY_LOSE, grade_items, grade_report
from tests.helpers.planted import PAIRS, pair_label, plant
from tests.helpers.programs import TORCH_WHY

pytestmark = pytest.mark.slow

RUBRIC = rubric_module.load(DEFAULT_RUBRIC)

CONFIGURATIONS: dict[str, tuple[Path | None, bool, list[str]]] = {
    "reference+torch": (DEFAULT_REFERENCE, True, ["reference", "finite differences", "pytorch"]),
    "reference": (DEFAULT_REFERENCE, False, ["reference", "finite differences"]),
    "torch": (None, True, ["pytorch", "finite differences"]),
    "finite-differences": (None, False, ["finite differences"]),
}
"""name: (reference folder, torch allowed, the oracles the grade must report, in order)."""

CELLS = [(config, engine) for config in CONFIGURATIONS for engine in CORRECT_ENGINES]


def cell_seed(config: str, engine: str) -> int:
    """A distinct seed per cell, none of them the rubric's default."""
    return RUBRIC.seed + 104_729 * (1 + CELLS.index((config, engine)))


@pytest.mark.parametrize(("config", "engine"), CELLS, ids=[f"{c}-{e}" for c, e in CELLS])
def test_a_correct_engine_gets_full_marks(config, engine):
    reference, torch, oracles = CONFIGURATIONS[config]
    if "pytorch" in oracles and not torch_oracle.available():
        pytest.skip(TORCH_WHY)
    report = grade_report(
        CORRECT_ENGINES[engine], seed=cell_seed(config, engine), reference=reference, torch=torch
    )
    assert report.oracles == oracles
    assert {item["id"] for item in report.items} == {item.id for item in RUBRIC.items}
    lost = {
        item["id"]: f"{item['status']} {item['score']}/{item['max_score']}:\n"
        f"{item['feedback'][:2000]}"
        for item in report.items
        if item["id"] not in MAY_LOSE.get(engine, set())
        and (item["status"] != "passed" or item["score"] < item["max_score"])
    }
    assert not lost, "\n\n".join(f"{k}: {v}" for k, v in lost.items())
    single = [notice for notice in report.notices if "single oracle" in notice]
    assert len(single) == (len(oracles) == 1), report.notices


# ------------------------------------------------------------------------- planted bugs

QUICK = {
    item.id for item in RUBRIC.items if not item.extra_credit and not item.id.endswith(".graphs")
}
"""Items that grade in a moment (whole graphs shrink slowly, the extra credit walks 100,000
nodes): the neighbours graded beside a bug."""


def neighbours(item_id: str) -> set[str]:
    """The quick items listed just before and after ``item_id`` in the rubric: across the
    catalogue, every quick item is graded beside some bug in both configurations."""
    order = [item.id for item in RUBRIC.items if item.assignment == item_id.split(".")[0]]
    at = order.index(item_id)
    before = [i for i in order[:at] if i in QUICK][-1:]
    after = [i for i in order[at + 1 :] if i in QUICK][:1]
    return {*before, *after}


BASELINES = ("reference+torch", "reference", "torch")
"""The configurations with two oracles, in turn: each is compared with finite differences alone
on a third of the catalogue (``tests/grading/test_blame.py`` grades every bug with reference +
torch). Comparing every bug in every configuration would cost three times as much: torch alone takes
seconds to import, in each assignment's grading process that needs it."""
CASES = [(pair, BASELINES[n % len(BASELINES)]) for n, pair in enumerate(PAIRS)]


def _case_id(case: tuple) -> str:
    pair, baseline = case
    return f"{pair_label(pair)}-vs-{baseline}"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_a_planted_bug_loses_the_same_items_on_finite_differences_alone(tmp_path, case):
    """A bug caught with two oracles is caught by finite differences alone, and costs nothing
    more there: the widened tolerance lets no bug through, a wrong oracle fails nothing extra.
    Each submission carries one bug per assignment (as in ``tests/grading/test_blame.py``), graded
    on its items and their neighbours."""
    pair, baseline = case
    if "pytorch" in CONFIGURATIONS[baseline][2] and not torch_oracle.available():
        pytest.skip(TORCH_WHY)
    bugs = [bug for bug in pair if bug is not None]
    submission = plant(tmp_path, *bugs)
    only = sorted({bug.item for bug in bugs}.union(*(neighbours(bug.item) for bug in bugs)))
    lost = {}
    for config in (baseline, "finite-differences"):
        reference, torch, _ = CONFIGURATIONS[config]
        items = grade_items(submission, only=only, reference=reference, torch=torch)
        assert set(items) == set(only)
        lost[config] = {
            k: f"{v['status']}: {v['feedback'][:600]}"
            for k, v in items.items()
            if v["score"] < v["max_score"]
        }
    assert {bug.item for bug in bugs} <= set(lost["finite-differences"]), lost
    assert set(lost["finite-differences"]) == set(lost[baseline]), lost
