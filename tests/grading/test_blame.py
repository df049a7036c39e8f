"""Blame isolation: a bug planted in one part costs that part's rubric item and nothing else.

For every rubric item (both assignments; the ``*.graphs`` items only mix the others) an engine
that is the reference except for one realistic bug in the part the item names must lose points
on that item and keep full marks on every other item but its assignment's ``*.graphs`` item,
the only one with ``depends_on`` (it scores 0 while an item it uses fails: docs/items.md).

The assignments are independent, so each submission carries one micrograd bug and one babygrad
bug at once, graded whole. The bugs are ``tests/helpers/planted.py``'s catalogue.

Each submission is graded twice: without replay, and replaying its lane's memory (the
reference's runs and other bugs' failing runs, as a batch's later uploads replay them; the
grade ``tests/grading/test_replayed_snippets.py`` reads). The two must be the same document,
but for durations. ``tests/grading/test_replay.py`` replays a folder of recordings, failing
runs included, test by test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from grader.grading import rubric as rubric_module
from grader.layout import DEFAULT_RUBRIC
from tests.helpers.grading import comparable, grade_report, planted_grade
from tests.helpers.planted import (
    BABYGRAD_BUGS,
    CALLS_OP_BACKWARD_WRONG,
    DO_NOTHING_BACKWARDS,
    MICROGRAD_BUGS,
    PAIRS,
    STATE_BUG_ITEMS,
    STATE_BUGS,
    UNBROADCAST_BUGS,
    UNBROADCAST_CALLERS,
    Bug,
    pair_label,
    plant,
)

pytestmark = pytest.mark.slow

RUBRIC = rubric_module.load(DEFAULT_RUBRIC)


def allowed_to_lose(bug: Bug) -> set[str]:
    return {bug.item, f"{bug.item.split('.')[0]}.graphs"}


def test_every_item_has_a_planted_bug():
    planted_items = {bug.item for bug in MICROGRAD_BUGS + BABYGRAD_BUGS}
    graded = {item.id for item in RUBRIC.items if not item.id.endswith(".graphs")}
    assert graded - planted_items == set()
    assert planted_items - graded == set()


@pytest.mark.parametrize("pair", PAIRS, ids=[pair_label(p) for p in PAIRS])
def test_a_planted_bug_costs_its_item_and_its_dependents_only(tmp_path, pair):
    bugs = [bug for bug in pair if bug is not None]
    submission = plant(tmp_path, *bugs)
    allowed = set().union(*(allowed_to_lose(bug) for bug in bugs))
    report = planted_grade(submission, bugs, replay=None)
    assert comparable(planted_grade(submission, bugs)) == comparable(report)
    items = {item["id"]: item for item in report.items}
    assignments = {bug.item.split(".")[0] for bug in bugs}
    assert set(items) == {item.id for item in RUBRIC.items if item.assignment in assignments}
    problems = []
    for bug in bugs:
        mine = items[bug.item]
        if mine["score"] >= mine["max_score"]:
            problems.append(f"{bug.label} was not caught: {bug.item} kept full marks")
    for item_id, item in items.items():
        if item_id not in allowed and (
            item["status"] != "passed" or item["score"] < item["max_score"]
        ):
            problems.append(
                f"{item_id} lost points ({item['status']}) for "
                f"{', '.join(b.label for b in bugs)}:\n{item['feedback'][:1500]}"
            )
    assert not problems, "\n\n".join(problems)


@pytest.mark.parametrize("bug", DO_NOTHING_BACKWARDS, ids=[b.name for b in DO_NOTHING_BACKWARDS])
def test_a_tensor_backward_that_does_nothing_earns_nothing(tmp_path, bug):
    """``Tensor.backward`` is one region serving two items: a body that does nothing, or
    nothing that propagates (``pass``, seeding the output and returning, walking without ever
    calling an op's backward), scores 0 on both ``babygrad.backward`` (the walk-cost test
    included: it is fast because it walks nothing) and ``babygrad.accumulate`` (both sides of
    its comparison agree because nothing was summed), and costs no other item."""
    only = [
        item.id
        for item in RUBRIC.items
        if item.assignment == "babygrad" and not item.id.endswith(".graphs")
    ]
    report = grade_report(plant(tmp_path, bug), assignment="babygrad", only=only)
    items = {item["id"]: item for item in report.items}
    assert items["babygrad.backward"]["score"] == 0, items["babygrad.backward"]["feedback"]
    assert items["babygrad.accumulate"]["score"] == 0, items["babygrad.accumulate"]["feedback"]
    lost = [
        item_id
        for item_id, item in items.items()
        if item_id not in ("babygrad.backward", "babygrad.accumulate")
        and (item["status"] != "passed" or item["score"] < item["max_score"])
    ]
    assert lost == []


def _assignment_grade(tmp_path: Path, bug: Bug, **options: Any) -> dict[str, dict]:
    """Every item of ``bug``'s assignment but its ``*.graphs`` one, graded on the reference
    with ``bug`` (``options``: more of ``grade_report``'s)."""
    assignment = bug.item.split(".")[0]
    only = [
        item.id
        for item in RUBRIC.items
        if item.assignment == assignment and not item.id.endswith(".graphs")
    ]
    report = grade_report(plant(tmp_path, bug), assignment=assignment, only=only, **options)
    return {item["id"]: item for item in report.items}


def _lost(items: dict[str, dict]) -> set[str]:
    return {
        item_id
        for item_id, item in items.items()
        if item["status"] != "passed" or item["score"] < item["max_score"]
    }


@pytest.mark.parametrize(
    "bug", CALLS_OP_BACKWARD_WRONG, ids=[b.name for b in CALLS_OP_BACKWARD_WRONG]
)
def test_a_tensor_backward_that_calls_op_backward_wrong_costs_its_two_items(tmp_path, bug):
    """The grader's own ops return a bare Tensor for one input, as the ops' docstring allows,
    and check that ``backward(out_grad, node)`` is given their own output: a ``Tensor.backward``
    that takes the first for a tuple, or gives another tensor, fails ``babygrad.backward`` and
    ``babygrad.accumulate`` (one region serves both), and costs no other item."""
    items = _assignment_grade(tmp_path, bug)
    assert _lost(items) == {"babygrad.backward", "babygrad.accumulate"}, {
        item_id: items[item_id]["feedback"][:1500] for item_id in _lost(items)
    }


@pytest.mark.parametrize("bug", UNBROADCAST_BUGS, ids=[b.name for b in UNBROADCAST_BUGS])
def test_an_unbroadcast_that_sums_nothing_earns_nothing(tmp_path, bug):
    """``unbroadcast`` returning zeros is wrong on operands broadcast beforehand too, where the
    op's own item grades it: ``babygrad.broadcasting`` is not gradable and scores 0. Returning
    its input is right there and wrong where broadcasting happened: it fails. Either costs
    nothing but ``babygrad.broadcasting`` and the items of the ops whose backward calls it."""
    items = _assignment_grade(tmp_path, bug)
    broadcasting = items["babygrad.broadcasting"]
    assert broadcasting["score"] == 0, broadcasting["feedback"]
    assert broadcasting["status"] == (
        "not_gradable" if bug.name == "unbroadcast-returns-zeros" else "failed"
    )
    assert _lost(items) - {"babygrad.broadcasting"} <= UNBROADCAST_CALLERS, {
        item_id: items[item_id]["feedback"][:1500] for item_id in _lost(items)
    }


@pytest.mark.parametrize("bug", STATE_BUGS, ids=[b.label for b in STATE_BUGS])
def test_a_walk_that_keeps_state_between_calls_costs_its_region_items(tmp_path, bug):
    """A visited set kept at module level goes wrong only after earlier walks: it costs its
    own item, and no item its region does not serve (``STATE_BUG_ITEMS``). Drawn afresh: a set
    of ids goes wrong where a new object takes a freed one's id, which a replay's batched
    requests (``grader.grading.replay``) may lay out otherwise than the run this process's
    lanes recorded for another engine; whether the other item of its region meets such an id
    too rests on the allocator's reuse of addresses (the ledger's tests of babygrad's
    ``module-level-visited-set`` met one in one run of the suite and none in the next)."""
    items = _assignment_grade(tmp_path, bug, replay=None)
    lost = _lost(items)
    assert bug.item in lost and lost <= STATE_BUG_ITEMS[bug.item], {
        item_id: items[item_id]["feedback"][:1500] for item_id in lost
    }
