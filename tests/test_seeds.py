"""Correct engines get full marks on every item whatever the seed: no example any seed draws
may fail a correct engine (a domain edge, a tolerance, an oracle disagreement, a check that
leans on one way of writing an engine). The reference is graded twice per seed, the second
time replaying the first's recorded examples: the same grade, but for durations."""

from __future__ import annotations

import pytest

from grader.grading import rubric as rubric_module
from grader.layout import DEFAULT_RUBRIC
from tests.grading import CORRECT_ENGINES, MAY_LOSE, comparable, grade_report

pytestmark = pytest.mark.slow

RUBRIC = rubric_module.load(DEFAULT_RUBRIC)
SEEDS = [RUBRIC.seed + 7919 * k for k in range(1, 21)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("engine", sorted(CORRECT_ENGINES))
def test_a_correct_engine_gets_full_marks_with_seed(engine, seed, tmp_path):
    report = grade_report(CORRECT_ENGINES[engine], seed=seed, replay=tmp_path)
    if engine == "reference":  # graded again, replaying what the first grade recorded
        replayed = grade_report(CORRECT_ENGINES[engine], seed=seed, replay=tmp_path)
        assert comparable(replayed) == comparable(report)
    items = {item["id"]: item for item in report.items}
    assert set(items) == {item.id for item in RUBRIC.items}
    lost = {k: f"{v['status']} {v['score']}/{v['max_score']}: {v['feedback'][:2000]}"
            for k, v in items.items() if k not in MAY_LOSE.get(engine, set())
            and (v["status"] != "passed" or v["score"] != v["max_score"])}
    assert not lost, "\n\n".join(f"{k}: {v}" for k, v in lost.items())
