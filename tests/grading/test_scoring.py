"""Scoring, in-process on made-up outcomes: partial credit, all-or-nothing items, extra credit,
``depends_on``, statuses and feedback (``grader/grading/scoring.py``), and the totals a report
makes of the item results. No pytest run, no worker: milliseconds."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from grader.grading import rubric as rubric_module
from grader.grading import scoring
from grader.grading.rubric import Item, Rubric
from grader.grading.scoring import FAILING, feedback_text, score_items
from grader.language.editions import NOT_IN_EDITION, Edition
from grader.language.graphs import (
    MICROGRAD_OPS,
    MICROGRAD_PRIMITIVES,
    SCALAR_FUNCTION_GRAPH_OPS,
    SCALAR_FUNCTION_OPS,
    TENSOR_GRAPH_OPS,
    TENSOR_OP_ITEMS,
)
from grader.layout import COURSES, DEFAULT_RUBRIC
from grader.report.document import GradeReport

OPS = Item("micrograd.ops.tanh", "tanh", 6, "d tanh = 1 - t**2")
WALK = Item("micrograd.backward", "backward", 12, "reversed(topo)", partial_credit=False)
DEEP = Item("micrograd.deep", "deep", 5, "iterative", extra_credit=True)
GRAPHS = Item(
    "micrograd.graphs",
    "graphs",
    16,
    "fix the parts first",
    depends_on=("micrograd.ops.tanh", "micrograd.backward"),
)
ITEMS = [OPS, WALK, DEEP, GRAPHS]
RUBRIC = Rubric(Path("rubric.yaml"), tuple(ITEMS), {}, {})


def passed(item: str, name: str = "test", weight: float = 1.0) -> scoring.TestOutcome:
    return scoring.TestOutcome(item=item, name=name, weight=weight, passed=True)


def failed(
    item: str,
    name: str = "test",
    weight: float = 1.0,
    status: str = "failed",
    reason: str = "wrong gradient",
    **fields,
) -> scoring.TestOutcome:
    return scoring.TestOutcome(
        item=item, name=name, weight=weight, passed=False, status=status, reason=reason, **fields
    )


def score(outcomes: list[scoring.TestOutcome], items: list[Item] = ITEMS) -> dict:
    return {r.id: r for r in score_items(RUBRIC, items, outcomes)}


def all_pass(*but: str) -> list[scoring.TestOutcome]:
    return [passed(item.id) for item in ITEMS if item.id not in but]


def test_every_test_passing_is_full_marks():
    results = score(all_pass())
    for item in ITEMS:
        result = results[item.id]
        assert (result.status, result.score, result.max_score) == (
            "passed",
            item.points,
            item.points,
        )
        assert result.feedback == result.reason == result.hint == ""
        assert result.failures == result.fix_first == result.bugs == []


@pytest.mark.parametrize(
    ("weights", "failing", "expected"),
    [
        ([1, 1, 1], [0], 4.0),  # 2 of 3 equal tests: 2/3 of 6 points
        ([1, 1, 1], [0, 1], 2.0),
        ([1, 3], [1], 1.5),  # weights share the points: 1/4 of 6
        ([1, 3], [0], 4.5),
        ([2, 2, 2, 2], [3], 4.5),
    ],
)
def test_partial_credit_shares_the_items_points_by_weight(weights, failing, expected):
    outcomes = [
        failed(OPS.id, f"t{n}", w) if n in failing else passed(OPS.id, f"t{n}", w)
        for n, w in enumerate(weights)
    ]
    result = score(outcomes + all_pass(OPS.id))[OPS.id]
    assert result.score == expected
    assert result.status == "partial"
    assert [f["test"] for f in result.failures] == [f"t{n}" for n in failing]


def test_every_test_failing_is_no_points_and_failed():
    result = score([failed(OPS.id, "a"), failed(OPS.id, "b")] + all_pass(OPS.id))[OPS.id]
    assert (result.score, result.status) == (0.0, "failed")


def light_failure() -> list[scoring.TestOutcome]:
    """WALK's tests: two heavy ones pass, a light one fails (partial credit keeps 99%)."""
    return [passed(WALK.id, "a", 5), passed(WALK.id, "b", 5), failed(WALK.id, "c", 0.1)]


def test_an_all_or_nothing_item_gets_nothing_for_one_failing_test():
    outcomes = light_failure()
    result = score(outcomes + all_pass(WALK.id))[WALK.id]
    assert result.score == 0.0
    assert result.max_score == WALK.points
    assert result.status == "failed"  # not "partial": nothing was earned


def test_an_all_or_nothing_item_gets_everything_when_every_test_passes():
    outcomes = [passed(WALK.id, "a"), passed(WALK.id, "b")]
    assert score(outcomes + all_pass(WALK.id))[WALK.id].score == WALK.points


def test_a_rubrics_all_or_nothing_item_pays_nothing_for_one_failing_test(tmp_path):
    """``partial_credit: false`` in a rubric file reaches the score (the course's rubric has
    no such item, so no grading run checks it)."""
    data = yaml.safe_load(DEFAULT_RUBRIC.read_text())
    (raw,) = [raw for raw in data["items"] if raw["id"] == WALK.id]
    raw["partial_credit"] = False
    path = tmp_path / "rubric.yaml"
    path.write_text(yaml.safe_dump(data))
    rubric = rubric_module.load(path)
    outcomes = light_failure()
    (result,) = score_items(rubric, [rubric.by_id[WALK.id]], outcomes)
    assert (result.status, result.score, result.max_score) == ("failed", 0.0, raw["points"])


def test_a_partial_credit_item_with_the_same_outcomes_keeps_its_share():
    """The same outcomes as the all-or-nothing case, on an item with partial credit."""
    shared = Item(WALK.id, WALK.title, WALK.points, WALK.hint)
    outcomes = light_failure()
    result = score(outcomes, [shared])[WALK.id]
    assert result.score == round(12 * 10 / 10.1, 4)


def test_extra_credit_counts_in_the_score_not_in_the_maximum():
    results = score(all_pass())
    report = GradeReport("micrograd", 0, [r.to_json() for r in results.values()], [], [], 0.0)
    regular = sum(item.points for item in ITEMS if not item.extra_credit)
    assert report.max_score == regular
    assert report.score == regular + DEEP.points
    assert results[DEEP.id].extra_credit and results[DEEP.id].max_score == DEEP.points


def test_losing_extra_credit_leaves_a_full_regular_score():
    results = score(all_pass(DEEP.id) + [failed(DEEP.id, status="error", reason="Recursion")])
    report = GradeReport("micrograd", 0, [r.to_json() for r in results.values()], [], [], 0.0)
    assert report.score == report.max_score == sum(i.points for i in ITEMS if not i.extra_credit)


def test_a_failing_dependency_says_fix_it_first():
    outcomes = all_pass(OPS.id, GRAPHS.id) + [failed(OPS.id), failed(GRAPHS.id, "g")]
    result = score(outcomes)[GRAPHS.id]
    assert result.fix_first == [OPS.id]
    assert result.feedback.splitlines()[0] == (
        f"Fix {OPS.id} first: this item uses it, and scores 0 until it passes."
    )
    assert result.hint == GRAPHS.hint and f"Hint: {GRAPHS.hint}" in result.feedback


def test_a_composite_scores_nothing_while_an_item_it_depends_on_fails():
    """Whatever its own tests showed (the seed's graphs may not have drawn the broken op): a
    bug costs its own item and the composite at every seed, never more."""
    clean = score(all_pass(OPS.id, WALK.id) + [failed(OPS.id), failed(WALK.id)])
    assert clean[GRAPHS.id].score == 0.0
    assert clean[GRAPHS.id].status == scoring.NOT_GRADABLE
    assert clean[GRAPHS.id].fix_first == [OPS.id, WALK.id]
    assert clean[GRAPHS.id].reason == (
        f"Fix {OPS.id}, {WALK.id} first: this item uses them, and scores 0 until they pass."
    )
    assert clean[GRAPHS.id].feedback.splitlines()[0] == clean[GRAPHS.id].reason
    assert clean[DEEP.id].score == DEEP.points  # no depends_on: its own tests alone
    half = score(
        all_pass(OPS.id, GRAPHS.id)
        + [failed(OPS.id), passed(GRAPHS.id, "a"), failed(GRAPHS.id, "b")]
    )
    assert (half[GRAPHS.id].score, half[GRAPHS.id].status) == (0.0, scoring.NOT_GRADABLE)
    assert half[GRAPHS.id].reason == "wrong gradient"  # its own failure comes first
    own = score(all_pass(OPS.id, GRAPHS.id) + [failed(OPS.id), failed(GRAPHS.id, "g")])
    assert (own[GRAPHS.id].score, own[GRAPHS.id].status) == (0.0, "failed")


def test_a_dependency_the_run_does_not_score_or_the_edition_lacks_counts_as_passing():
    only = score(all_pass(OPS.id), [WALK, GRAPHS])  # --only: tanh not scored here
    assert (only[GRAPHS.id].score, only[GRAPHS.id].fix_first) == (GRAPHS.points, [])
    edition = Edition("2022", "ops.py", ("tanh",))
    results = {r.id: r for r in score_items(RUBRIC, ITEMS, all_pass(OPS.id), {OPS.id: edition})}
    assert (results[GRAPHS.id].score, results[GRAPHS.id].fix_first) == (GRAPHS.points, [])


def test_a_passing_dependency_is_not_named():
    result = score(all_pass(GRAPHS.id) + [failed(GRAPHS.id)])[GRAPHS.id]
    assert result.fix_first == []
    assert not result.feedback.startswith("Fix ")


@pytest.mark.parametrize("status", FAILING)
def test_a_status_of_every_failing_test_is_the_items(status):
    result = score(
        all_pass(OPS.id)
        + [
            failed(OPS.id, status=status, reason="why"),
            failed(OPS.id, "b", status=status, reason="why"),
        ]
    )[OPS.id]
    assert (result.status, result.score, result.reason) == (status, 0.0, "why")


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["failed", "error"], "error"),
        (["timeout", "failed"], "timeout"),
        (["error", "timeout"], "timeout"),
        (["failed", "missing", "error"], "missing"),
    ],
)
def test_mixed_failures_report_the_gravest_status(statuses, expected):
    """``missing`` before ``timeout`` before ``error`` before ``failed``: the one that says
    most about what to do."""
    outcomes = [failed(OPS.id, f"t{n}", status=s) for n, s in enumerate(statuses)]
    assert score(outcomes + all_pass(OPS.id))[OPS.id].status == expected


@pytest.mark.parametrize("status", FAILING)
def test_one_failing_test_of_several_is_partial_whatever_its_status(status):
    outcomes = [passed(OPS.id, "a"), failed(OPS.id, "b", status=status)]
    result = score(outcomes + all_pass(OPS.id))[OPS.id]
    assert (result.status, result.score) == ("partial", OPS.points / 2)


def test_an_item_no_test_reached_is_an_error_with_no_points():
    result = score(all_pass(OPS.id))[OPS.id]
    assert (result.status, result.score, result.feedback, result.reason) == (
        "error",
        0.0,
        "no grading test ran",
        "no grading test ran",
    )


def test_the_first_failure_gives_the_reason_figure_and_bugs():
    figure = {"nodes": [], "edges": []}
    outcomes = [
        passed(OPS.id, "ok"),
        failed(
            OPS.id,
            "first",
            reason="wrong gradient in backward",
            details=["backward: gradient for a: expected 0.42, got 0.5"],
            snippet="a = Value(1.0)\nout = a.tanh()",
            figure=figure,
            bugs=["tanh-derivative: 1 - t", "tanh-derivative: again"],
        ),
        failed(OPS.id, "second", reason="wrong forward value", bugs=["other-bug: x"]),
    ]
    result = score(outcomes + all_pass(OPS.id))[OPS.id]
    assert result.reason == "wrong gradient in backward"
    assert result.figure is figure
    assert result.bugs == ["other-bug", "tanh-derivative"]  # ids, once each, sorted
    assert [f["test"] for f in result.failures] == ["first", "second"]
    assert result.failures[0] == {
        "test": "first",
        "reason": "wrong gradient in backward",
        "details": ["backward: gradient for a: expected 0.42, got 0.5"],
        "snippet": "a = Value(1.0)\nout = a.tanh()",
        "bugs": ["tanh-derivative: 1 - t", "tanh-derivative: again"],
    }
    assert result.feedback == feedback_text([], result.failures, OPS.hint)


def test_feedback_text_lists_fix_first_failures_examples_bugs_then_the_hint():
    failures = [
        {
            "test": "t1",
            "reason": "wrong gradient",
            "details": ["a.grad: expected 1"],
            "snippet": "print(1)",
            "bugs": ["overwrite-grad: = not +="],
        },
        {"test": "t2", "reason": "timed out", "details": [], "snippet": "", "bugs": []},
    ]
    assert feedback_text(["micrograd.topo"], failures, "use +=").splitlines() == [
        "Fix micrograd.topo first: this item uses it, and scores 0 until it passes.",
        "t1: wrong gradient",
        "a.grad: expected 1",
        "Smallest example (runnable):",
        "```python",
        "print(1)",
        "```",
        "Recognised bug: overwrite-grad: = not +=",
        "t2: timed out",
        "Hint: use +=",
    ]


def test_feedback_keeps_the_order_failures_came_in_and_the_order_bugs_were_named():
    failures = [
        {
            "test": "t2",
            "reason": "wrong gradient",
            "details": [],
            "snippet": "",
            "bugs": ["overwrite-grad: = not +=", "no-seed: the root's grad is not 1"],
        },
        {"test": "t1", "reason": "timed out", "details": [], "snippet": "", "bugs": []},
    ]
    assert feedback_text([], failures, "").splitlines() == [
        "t2: wrong gradient",
        "Recognised bug: overwrite-grad: = not +=",
        "Recognised bug: no-seed: the root's grad is not 1",
        "t1: timed out",
    ]


def test_dependencies_to_fix_first_come_in_the_rubrics_order():
    outcomes = all_pass(OPS.id, WALK.id, GRAPHS.id)
    outcomes += [failed(OPS.id), failed(WALK.id, "w"), failed(GRAPHS.id, "g")]
    assert score(outcomes)[GRAPHS.id].fix_first == [OPS.id, WALK.id]


def test_failures_with_the_same_verdict_are_told_once_with_every_test_they_stopped():
    missing = {"reason": "Value has no method exp", "details": [], "snippet": "", "bugs": []}
    failures = [
        {"test": "t1", **missing},
        {"test": "t2", **missing, "details": ["at engine.py:3"]},
        {"test": "t3", **dict(reversed(missing.items()))},  # the same verdict, in any order
    ]
    assert feedback_text([], failures, "").splitlines() == [
        "t1, t3: Value has no method exp",
        "t2: Value has no method exp",
        "at engine.py:3",
    ]


def test_results_come_in_the_rubrics_order_of_the_items():
    assert [r.id for r in score_items(RUBRIC, ITEMS, all_pass())] == [i.id for i in ITEMS]


def test_feedback_text_is_empty_with_nothing_to_say():
    assert feedback_text([], [], "a hint alone is not feedback") == ""


def test_tests_of_weight_zero_that_all_pass_earn_the_item():
    outcomes = [passed(OPS.id, "a", 0.0), passed(OPS.id, "b", 0.0)]
    result = score(outcomes + all_pass(OPS.id))[OPS.id]
    assert (result.status, result.score) == ("passed", OPS.points)


def test_an_item_no_test_reached_is_a_dependency_to_fix_first():
    """A dependency whose tests never ran has not been shown to work: its dependents say so."""
    dependent = [item for item in ITEMS if OPS.id in item.depends_on][0]
    results = score([failed(dependent.id, "a")])
    assert results[OPS.id].status == "error"
    assert OPS.id in results[dependent.id].fix_first


def not_gradable(item: str, name: str, needs: str = "micrograd.ops.exp") -> scoring.TestOutcome:
    return scoring.TestOutcome(
        item=item,
        name=name,
        weight=1.0,
        passed=False,
        status=scoring.NOT_GRADABLE,
        reason=f"not gradable until {needs} passes",
        needs=[needs],
    )


def test_a_test_that_is_not_gradable_does_not_count():
    """Its share of the item goes to the tests that ran; the feedback says what to fix first."""
    outcomes = [
        passed(OPS.id, "a"),
        failed(OPS.id, "b"),
        not_gradable(OPS.id, "c"),
        not_gradable(OPS.id, "d", "micrograd.sugar"),
    ]
    result = score(outcomes + all_pass(OPS.id))[OPS.id]
    assert (result.status, result.score, result.reason) == ("partial", 3.0, "wrong gradient")
    assert [f["test"] for f in result.failures] == ["b"]
    assert result.not_gradable == [
        {"test": "c", "reason": "not gradable until micrograd.ops.exp passes", "missing": []},
        {"test": "d", "reason": "not gradable until micrograd.sugar passes", "missing": []},
    ]
    assert result.feedback.splitlines()[-3:] == [
        "c: not gradable until micrograd.ops.exp passes",
        "d: not gradable until micrograd.sugar passes",
        scoring.WAITING_NOTE,
    ]


@pytest.mark.parametrize("item", [OPS, WALK])  # partial credit, all or nothing
def test_an_item_whose_graded_tests_all_pass_passes_beside_tests_not_gradable(item):
    outcomes = [passed(item.id, "a"), not_gradable(item.id, "b")]
    result = score(outcomes + all_pass(item.id))[item.id]
    assert (result.status, result.score) == ("passed", item.points)
    assert result.reason == ""  # never "passed" because "not gradable"
    assert result.failures == result.bugs == [] and result.hint == ""
    assert "b: not gradable until micrograd.ops.exp passes" in result.feedback


def test_an_item_none_of_whose_tests_is_gradable_earns_nothing():
    """Code that does nothing earns nothing: no test ran, so nothing was shown to work."""
    outcomes = [not_gradable(OPS.id, "a", "micrograd.ops.add"), not_gradable(OPS.id, "b")]
    results = score(outcomes + all_pass(OPS.id, GRAPHS.id) + [failed(GRAPHS.id)])
    result = results[OPS.id]
    assert (result.status, result.score) == (scoring.NOT_GRADABLE, 0.0)
    assert result.reason == "not gradable until micrograd.ops.add passes"
    assert result.feedback.splitlines()[-1] == scoring.NONE_GRADED_NOTE
    assert OPS.id in results[GRAPHS.id].fix_first


def test_a_test_waiting_on_code_not_written_counts_and_earns_nothing():
    """Partial work earns only what it shows: the stubs and one op filled in earn that op's
    share of a ledger item, not the shares of the ops not written."""
    accumulate = Item("micrograd.accumulate", "accumulate", 12, "+=")
    mul = Item("micrograd.ops.mul", "mul", 6, "product rule")
    pow_ = Item("micrograd.ops.pow", "pow", 6, "power rule")
    items = [OPS, accumulate, mul, pow_]
    outcomes = [
        passed(accumulate.id, "test_add"),
        not_gradable(accumulate.id, "test_mul", mul.id),
        not_gradable(accumulate.id, "test_tanh", f"{OPS.id} (away from 0)"),
        failed(mul.id, "m", status="missing", reason="not implemented"),
        failed(pow_.id, "p", status="missing", reason="not implemented"),
        failed(OPS.id, "t", reason="wrong gradient"),
    ]
    result = score(outcomes, items)[accumulate.id]
    assert (result.status, result.score) == ("partial", 6.0)  # tanh is written: not counted
    assert result.reason == "not gradable until micrograd.ops.mul passes"
    assert result.not_gradable[1] == {
        "test": "test_tanh",
        "reason": f"not gradable until {OPS.id} (away from 0) passes",
        "missing": [],
    }
    assert result.feedback.splitlines() == [
        "test_mul: not gradable until micrograd.ops.mul passes (micrograd.ops.mul: not "
        "written yet)",
        f"test_tanh: not gradable until {OPS.id} (away from 0) passes",
        scoring.UNWRITTEN_NOTE,
        scoring.WAITING_NOTE,
    ]
    alone = score([not_gradable(accumulate.id, "a", mul.id), *outcomes[3:]], items)
    assert (alone[accumulate.id].status, alone[accumulate.id].score) == (scoring.NOT_GRADABLE, 0)
    assert alone[accumulate.id].feedback.splitlines()[-1] == scoring.UNWRITTEN_NOTE


def test_one_function_left_unwritten_in_a_whole_engine_costs_its_own_item_alone():
    """A bug costs its own item, also when the code is missing: with one item of the
    assignment not written (an engine complete but for it), a test waiting on it does not
    count, as one waiting on code written but wrong; a second item missing makes it partial
    work (the test above), and another assignment's missing items do not."""
    accumulate = Item("micrograd.accumulate", "accumulate", 12, "+=")
    mul = Item("micrograd.ops.mul", "mul", 6, "product rule")
    other = Item("babygrad.ops.add", "add", 3, "sum")
    graphs = Item(GRAPHS.id, GRAPHS.title, 16, "mix", depends_on=(mul.id,))
    outcomes = [
        passed(accumulate.id, "test_add"),
        not_gradable(accumulate.id, "test_mul", mul.id),
        failed(mul.id, "m", status="missing", reason="not implemented"),
        failed(graphs.id, "g", status="missing", reason="not implemented"),  # it meets it too
        failed(other.id, "b", status="missing", reason="not implemented"),
    ]
    result = score(outcomes, [accumulate, mul, graphs, other])[accumulate.id]
    assert (result.status, result.score, result.reason) == ("passed", 12.0, "")
    assert result.not_gradable[0]["missing"] == []


def test_tests_not_gradable_for_one_reason_are_told_once():
    outcomes = [passed(OPS.id, "a"), not_gradable(OPS.id, "b"), not_gradable(OPS.id, "c")]
    result = score(outcomes + all_pass(OPS.id))[OPS.id]
    assert result.feedback.splitlines() == [
        "b, c: not gradable until micrograd.ops.exp passes",
        scoring.WAITING_NOTE,
    ]


def test_an_item_not_in_the_submissions_edition_is_zero_of_zero_and_the_rest_are_scored():
    edition = Edition("2022", "ops.py", ("tanh",))
    results = score_items(RUBRIC, ITEMS, all_pass(), {OPS.id: edition})
    assert [r.id for r in results] == [item.id for item in ITEMS]
    lacking = results[0]
    assert (lacking.score, lacking.max_score, lacking.status) == (0.0, 0.0, NOT_IN_EDITION)
    assert lacking.feedback == lacking.reason == edition.feedback("tanh")
    assert [r.score for r in results[1:]] == [12, 5, 16]


RUBRICS = [DEFAULT_RUBRIC, *sorted(COURSES.glob("*/rubric.yaml"))]


@pytest.mark.parametrize("path", RUBRICS, ids=[p.parent.name for p in RUBRICS])
def test_a_whole_graphs_item_depends_on_every_item_its_graphs_use(path):
    """Each course's ``*.graphs`` scores 0 while any item whose code its graphs run fails: a
    bug costs it at every seed, not only where the seed's graphs draw the buggy part."""
    rubric = rubric_module.load(path)
    composites = [item for item in rubric.items if item.id.endswith(".graphs")]
    assert composites
    for graphs in composites:
        uses = rubric_module.graph_uses(rubric, graphs)
        assert any(".ops." in item or "_backward" in item for item in uses)
        assert set(uses) - set(graphs.depends_on) == set(), graphs.id


def test_the_ops_no_graph_draws_are_the_ones_graded_alone():
    """``NOT_ON_GRAPHS``'s ops are the only ones with an item that no whole graph draws
    (MiniTorch's ``inv`` is drawn as every ``/``)."""
    assert set(TENSOR_OP_ITEMS.values()) <= set(TENSOR_GRAPH_OPS)
    assert set(MICROGRAD_PRIMITIVES) <= set(MICROGRAD_OPS)
    assert set(SCALAR_FUNCTION_OPS) - set(SCALAR_FUNCTION_GRAPH_OPS) == {"inv", "lt", "eq"}
    assert "div" in SCALAR_FUNCTION_GRAPH_OPS
    assert {"ops.lt", "ops.eq"} <= set(rubric_module.NOT_ON_GRAPHS)


@pytest.mark.parametrize(
    "outcomes, credit",
    [
        ([passed(OPS.id, "a", 4), failed(OPS.id, "b", 3)], 4 / 7),
        ([passed(OPS.id)], 1.0),
        ([failed(OPS.id)], 0.0),
    ],
)
def test_a_change_of_points_alone_rescores_the_share_earned(outcomes, credit):
    """What a batch does with a stored result when only the rubric's points moved: the same
    score a grading at the new points gives, to the last digit kept."""
    (result,) = score_items(RUBRIC, [OPS], outcomes)
    assert result.credit == credit
    (at_eight,) = score_items(RUBRIC, [Item(OPS.id, OPS.title, 8, OPS.hint)], outcomes)
    assert scoring.rescored(result, 8) == at_eight
    assert scoring.rescored(result, 6) is result


def test_rescoring_leaves_an_item_not_in_the_edition_at_zero_of_zero():
    edition = Edition("2022", "ops.py", ("tanh",))
    (result,) = score_items(RUBRIC, [OPS], [], {OPS.id: edition})
    assert result.status == NOT_IN_EDITION
    assert scoring.rescored(result, 8) is result
