"""MiniTorch's order convention, as a real engine meets it: a ``topological_sort`` that puts the
output last where the course's docstring asks for it first, with a ``backpropagate`` that
reverses it (an id()-keyed stack and ledger, as a student wrote them). The pair is right end to
end, so the convention costs ``minitorch.topo`` and the whole graphs resting on it, nothing of
``backpropagate``'s, and the feedback says exactly that."""

from __future__ import annotations

import pytest

from grader.checks.variables import ROOT_LAST
from grader.layout import COURSES
from tests.grading import ENGINES, grade_report
from tests.planted import course_bugs, plant

COURSE = COURSES / "minitorch-module1"
(STACK_BY_ID,) = [
    bug
    for bug in course_bugs(ENGINES / "minitorch-module1" / "planted.yaml")
    if bug.name == "root-last-stack-keyed-by-id"
]


@pytest.mark.slow
def test_a_root_last_order_costs_topo_and_graphs_and_says_so(tmp_path):
    submission = plant(tmp_path, STACK_BY_ID, reference=COURSE / "reference")
    report = grade_report(submission, rubric=COURSE / "rubric.yaml", reference=COURSE / "reference")
    items = {i["id"]: i for i in report.items}
    lost = {i for i, item in items.items() if item["score"] < item["max_score"]}
    assert lost == {"minitorch.topo", "minitorch.graphs"}
    assert ROOT_LAST in items["minitorch.topo"]["feedback"].replace("\n", " ")
    assert "costs this item and the whole graphs" in ROOT_LAST
    assert items["minitorch.graphs"]["fix_first"] == ["minitorch.topo"]
