"""The reference gets full marks on every item whatever the seed: no example any seed draws
may fail a correct engine (a domain edge, a tolerance, an oracle disagreement)."""

from __future__ import annotations

import pytest

from grader import rubric as rubric_module
from grader.cli import DEFAULT_RUBRIC
from tests.grading import REFERENCE, grade_items

pytestmark = pytest.mark.slow

RUBRIC = rubric_module.load(DEFAULT_RUBRIC)
SEEDS = [RUBRIC.seed + 7919 * k for k in range(1, 21)]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_reference_gets_full_marks_with_seed(seed):
    items = grade_items(REFERENCE, seed=seed)
    assert set(items) == {item.id for item in RUBRIC.items}
    lost = {k: f"{v['status']} {v['score']}/{v['max_score']}: {v['feedback'][:2000]}"
            for k, v in items.items()
            if v["status"] != "passed" or v["score"] != v["max_score"]}
    assert not lost, "\n\n".join(f"{k}: {v}" for k, v in lost.items())
