"""What a MiniTorch ``topological_sort`` bug costs, as real engines showed it: its own item and
the whole graphs resting on it, the same at every seed, and the feedback says so.

- An order right but for its direction (the output last, where the course's docstring asks
  for it first), walked reversed by the engine's own ``backpropagate`` (an id()-keyed stack and
  ledger, as a student wrote them): the pair is right end to end, so nothing of
  ``backpropagate``'s is charged.
- A walk that revisits shared variables (it recurses before asking whether it listed one): the
  chain of diamonds' test charges it at every seed; the random graphs' test counted the reads
  too, and took 3 points more at a seed whose graphs shared deeper (82 at seeds 1 and 4, 85 at
  2, 3 and 5)."""

from __future__ import annotations

import pytest

from grader.checks.variables import ROOT_LAST
from grader.layout import COURSES
from tests.helpers.grading import ENGINES, grade_report
from tests.helpers.planted import course_bugs, plant

COURSE = COURSES / "minitorch-module1"
BUGS = {bug.name: bug for bug in course_bugs(ENGINES / "minitorch-module1" / "planted.yaml")}


def graded(tmp_path, name: str, seed: int | None = None) -> dict[str, dict]:
    submission = plant(tmp_path, BUGS[name], reference=COURSE / "reference")
    report = grade_report(
        submission, seed=seed, rubric=COURSE / "rubric.yaml", reference=COURSE / "reference"
    )
    return {i["id"]: i for i in report.items}


def lost(items: dict[str, dict]) -> dict[str, float]:
    return {i: item["score"] for i, item in items.items() if item["score"] < item["max_score"]}


@pytest.mark.slow
def test_a_root_last_order_costs_topo_and_graphs_and_says_so(tmp_path):
    items = graded(tmp_path, "root-last-stack-keyed-by-id")
    assert set(lost(items)) == {"minitorch.topo", "minitorch.graphs"}
    assert ROOT_LAST in items["minitorch.topo"]["feedback"].replace("\n", " ")
    assert "costs this item and the whole graphs" in ROOT_LAST
    assert items["minitorch.graphs"]["fix_first"] == ["minitorch.topo"]


@pytest.mark.slow
def test_a_walk_that_revisits_costs_the_same_at_every_seed(tmp_path):
    costs = [
        lost(graded(tmp_path / str(seed), "revisits-shared-variables", seed)) for seed in (1, 2, 4)
    ]
    assert costs[0] == costs[1] == costs[2]
    assert set(costs[0]) == {"minitorch.topo", "minitorch.graphs"}
    assert costs[0]["minitorch.topo"] > 0
