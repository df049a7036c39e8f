"""Correct engines get full marks on every item whatever the seed: no example any seed draws
may fail a correct engine (a domain edge, a tolerance, an oracle disagreement, a check that
leans on one way of writing an engine).

Per seed, the reference is graded first, drawing every example afresh and recording them; then
again, replaying them: the same grade, but for durations. The other correct engines then
replay the same recordings, as a batch's later submissions do. Replay gives the grade a fresh
draw gives (this file's reference, ``tests/grading/test_blame.py`` on every planted bug, and
``tests/grading/test_replay.py`` prove it): an outcome no recorded run had sends its test back
through Hypothesis."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.grading import rubric as rubric_module
from grader.layout import DEFAULT_RUBRIC
from tests.helpers.grading import CORRECT_ENGINES, MAY_LOSE, comparable, grade_report

pytestmark = pytest.mark.slow

RUBRIC = rubric_module.load(DEFAULT_RUBRIC)
SEEDS = [RUBRIC.seed + 7919 * k for k in range(1, 21)]
SEEDLESS = {"micrograd.deep"}
"""Items whose checks draw nothing, so no seed changes them:
``tests/grading/test_configurations.py`` grades them for every engine in every oracle
configuration."""
GRADED = [item.id for item in RUBRIC.items if item.id not in SEEDLESS]
ENGINES = ["reference", *sorted(set(CORRECT_ENGINES) - {"reference"})]
"""The reference first: it records what the others replay."""
CELLS = [
    pytest.param(
        engine, seed, id=f"{engine}-{seed}", marks=pytest.mark.xdist_group(f"seed-{seed}")
    )  # one worker, in order
    for seed in SEEDS
    for engine in ENGINES
]


@pytest.fixture(scope="session")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Each seed's recordings folder, shared by the engines graded with that seed."""
    return {seed: tmp_path_factory.mktemp(f"seed-{seed}") for seed in SEEDS}


@pytest.mark.parametrize(("engine", "seed"), CELLS)
def test_a_correct_engine_gets_full_marks_with_seed(engine, seed, recordings):
    report = grade_report(CORRECT_ENGINES[engine], seed=seed, only=GRADED, replay=recordings[seed])
    if engine == "reference":  # that grade drew afresh (and recorded); now it replays
        replayed = grade_report(
            CORRECT_ENGINES[engine], seed=seed, only=GRADED, replay=recordings[seed]
        )
        assert comparable(replayed) == comparable(report)
    items = {item["id"]: item for item in report.items}
    assert set(items) == set(GRADED)
    lost = {
        k: f"{v['status']} {v['score']}/{v['max_score']}: {v['feedback'][:2000]}"
        for k, v in items.items()
        if k not in MAY_LOSE.get(engine, set())
        and (v["status"] != "passed" or v["score"] != v["max_score"])
    }
    assert not lost, "\n\n".join(f"{k}: {v}" for k, v in lost.items())
