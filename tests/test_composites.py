"""What a bug and partial work cost, end to end (``docs/items.md``, "Partial work and
composite items"): a planted bug costs its own item and the whole graphs at every seed, not
only where the seed's graphs draw the buggy op; the stubs with one function written earn that
function's items and a share of the items it shares, and no status is "passed" because a
test could not be graded."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.audit.mutants import do_one_thing
from grader.grading.scoring import FAILING, NOT_GRADABLE
from tests.grading import REFERENCE, grade_items
from tests.planted import BABYGRAD_BUGS, MICROGRAD_BUGS, plant

pytestmark = pytest.mark.slow

SEEDS = (1, 4)
"""Seeds at which the babygrad bugs below kept ``babygrad.graphs`` before (issue 47: sub at
some seeds, matmul at others)."""
BUGS = [
    next(bug for bug in BABYGRAD_BUGS if bug.label == label)
    for label in ("babygrad.ops.sub:no-minus", "babygrad.ops.matmul:no-transpose")
] + [next(bug for bug in MICROGRAD_BUGS if bug.label == "micrograd.ops.mul:own-data")]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("bug", BUGS, ids=[bug.label for bug in BUGS])
def test_a_bug_costs_its_item_and_the_whole_graphs_at_every_seed(tmp_path: Path, bug, seed):
    assignment = bug.item.split(".")[0]
    items = grade_items(plant(tmp_path, bug), assignment=assignment, seed=seed, replay=None)
    lost = {i for i, item in items.items() if item["score"] < item["max_score"]}
    graphs = items[f"{assignment}.graphs"]
    assert lost == {bug.item, graphs["id"]}
    assert graphs["score"] == 0 and graphs["status"] in (NOT_GRADABLE, *FAILING)
    assert graphs["fix_first"] == [bug.item]
    assert graphs["feedback"].startswith(f"Fix {bug.item} first: this item uses it")


def test_the_stubs_and_one_op_earn_that_op_and_its_share_of_the_ledger(tmp_path: Path):
    (add,) = [v for v in do_one_thing(REFERENCE) if v.region.function == "Value.__add__"]
    items = grade_items(add.write(REFERENCE, tmp_path / "add"), assignment="micrograd")
    earned = {i: item["score"] for i, item in items.items() if item["score"]}
    assert earned == {"micrograd.ops.add": 6.0, "micrograd.accumulate": round(12 / 7, 4)}
    accumulate = items["micrograd.accumulate"]
    assert accumulate["status"] == "partial"
    assert "micrograd.ops.mul: not written yet" in accumulate["feedback"]
    for item in items.values():
        assert item["status"] != "passed" or "not gradable" not in item.get("reason", "")
