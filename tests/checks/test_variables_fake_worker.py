"""The judges of ``grader.checks.variables`` (MiniTorch's function API: ``topological_sort``
alone, the order of a constant, a second sort, and ``backpropagate`` with a correct order
swapped in) against a fake worker, in-process, in milliseconds.

As ``tests/checks/test_checks_fake_worker.py`` does for the other checks (with the same
``tests/helpers/fake_worker.py``): each probe runs on MiniTorch's reference, in this process, its
answer crosses as JSON and a test may change it (``tamper``). The reference's own answers pass; each
way an answer can be wrong is a ``WrongAnswer`` saying what was expected, of which variable,
with the example the student can run; and ``backpropagate``, wrong with the grader's order but
right with the student's own ``topological_sort``, costs nothing (the order's convention is the
``topological_sort`` item's to grade)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

from grader.checks import variables
from grader.checks.session import GradingSession
from grader.language import profiles
from grader.language.dags import Dag
from grader.language.verdicts import WrongAnswer
from grader.layout import COURSES
from grader.worker.engines import load_engine, reinstate
from tests.helpers.fake_worker import (
    TEST,
    Answer,
    FakeWorker,
    Tamper,
    asked,
    encode,
    error,
    session,
    wrong,
    wrote,
)

PROFILE = profiles.load(COURSES / "minitorch-module1" / "profile.yaml")
ASSIGNMENT = PROFILE.assignment("scalar")
API = ASSIGNMENT.functions
SORT = "minitorch.autodiff.topological_sort"
MINITORCH_ORDER = (
    "The course's own words (minitorch/autodiff.py, topological_sort's docstring): "
    '"Non-constant Variables in topological order starting from the right."'
)
"""Told with an order backwards: the direction in MiniTorch's own words."""
SHOW = "print([next((i for i, m in enumerate(nodes) if m is v), -1) for v in order])"
"""What the order's snippets print: each variable's node number (-1: not one of the graph's)."""


@functools.cache
def reference() -> Any:
    """MiniTorch's reference engine, as the worker imports it for the course's import request."""
    loaded = load_engine(
        PROFILE.path.parent / "reference", ASSIGNMENT.name, API.package, API.folder, whole=True
    )
    loaded.api = API
    return loaded


class MiniTorchWorker(FakeWorker):
    """``FakeWorker`` on MiniTorch's reference, its package's modules in place while a probe
    runs (MiniTorch's ``apply`` imports a sibling module when called)."""

    def engine(self, assignment: str) -> Any:
        assert assignment == ASSIGNMENT.name
        return reference()

    def request(self, message: dict[str, Any], budget: float) -> dict[str, Any]:
        reinstate(reference())
        return super().request(message, budget)


def minitorch(item: str, tamper: dict[str, Tamper] | None = None) -> GradingSession:
    """A grading session of MiniTorch's course, answered by its reference (``tamper``ed)."""
    return session(f"minitorch.{item}", tamper, worker=MiniTorchWorker, profile=PROFILE)


def answering(**fields: Any) -> dict[str, Tamper]:
    """The ``variable_topo`` probe's answer with these fields instead."""
    return {"variable_topo": lambda case, answer: answer | fields}


def invalid(verdict: WrongAnswer, reason: str, shown: str) -> None:
    """``verdict`` is the student's invalid answer for ``reason``, with no details, shown with
    the example that ends with ``shown``."""
    assert (verdict.status, verdict.reason, verdict.details) == (
        "error",
        f"invalid answer: {reason}",
        [],
    )
    assert verdict.snippet.endswith(shown)


# n0, n1 leaves; n2 = 2 n0 - n1; n3 = 0.5 n2 + 3 n0 (n0 shared). Derivatives: 4, -0.5, 0.5, 1.
DAG = Dag(2, (((0, 2.0), (1, -1.0)), ((2, 0.5), (0, 3.0))))
# n0, n1, n2 leaves; n3 = n0 + n1; n4 = n3 + n2; n5 = n4 + n0. Derivatives: 2, 1, 1, 1, 1, 1.
WIDE = Dag(3, (((0, 1.0), (1, 1.0)), ((3, 1.0), (2, 1.0)), ((4, 1.0), (0, 1.0))))
# n0, n1, n2 leaves; n3 = 2 n0 - n1; n4 = 0.5 n3 + 3 n2: a tree, sorted from n3 first.
TREE = Dag(3, (((0, 2.0), (1, -1.0)), ((3, 0.5), (2, 3.0))))
SEED = -1.5
EXPECTED = [-6.0, 0.75, -0.75, -1.5]
"""DAG's derivatives times SEED: the leaves' totals, then each op node's d_output."""


def test_the_graphs_derivatives_are_what_the_tests_below_assume():
    assert [SEED * g for g in DAG.backward()[0]] == EXPECTED
    assert WIDE.backward() == [[2.0, 1.0, 1.0, 1.0, 1.0, 1.0]]
    assert variables.op_nodes_with_constants(DAG) == [2]
    assert variables.op_nodes_with_constants(WIDE) == [3, 5]


# ------------------------------------------------------------------------ topological_sort


@pytest.mark.parametrize(("constants", "extra"), [(False, []), (True, [2])])
def test_topological_sort_right_answers_pass(constants, extra):
    grading = minitorch("topo")
    variables.check_topological_sort(grading, DAG, constants)
    assert asked(grading) == ["load", "variable_topo"]
    assert grading.asked == [
        (ASSIGNMENT.name, "variable_topo", {"dag": DAG.to_json(), "constants": extra})
    ]
    assert TEST not in grading.failures


def test_topological_sort_shows_its_graph_in_the_graders_variables():
    """The snippet builds the grader's variables (a constant parent for every other op node)
    and prints the order from the root as node numbers."""
    grading = minitorch("topo", answering(order=[0, 1, 2, 3]))
    snippet = wrong(variables.check_topological_sort, grading, DAG, True).snippet
    assert snippet.startswith("import minitorch\nfrom minitorch import Scalar\ndef given(")
    assert "\nclass Variable(Scalar):\n" in snippet
    assert snippet.endswith(
        "\nn0 = variable(value=1.0)\nn1 = variable(value=2.0)\n"
        "n2 = variable((n0, 2.0), (n1, -1.0), (variable(constant=True), 1.0))\n"
        "n3 = variable((n2, 0.5), (n0, 3.0))\nnodes = [n0, n1, n2, n3]\n"
        f"order = {SORT}(n3)\n{SHOW}"
    )
    grading = minitorch("topo", answering(order=[0, 1, 2, 3]))
    snippet = wrong(variables.check_topological_sort, grading, DAG, False).snippet
    assert "constant=True), " not in snippet
    assert "\nn2 = variable((n0, 2.0), (n1, -1.0))\n" in snippet


def test_topological_sort_root_last_is_named_as_the_convention():
    grading = minitorch("topo", answering(order=[0, 1, 2, 3]))
    verdict = wrong(variables.check_topological_sort, grading, DAG, False)
    assert (verdict.status, verdict.reason) == (
        "failed",
        "topological_sort returned an invalid order",
    )
    assert verdict.details == [
        "order (as node numbers): [0, 1, 2, 3]",
        "node 2 comes after its operand(s) [0, 1]",
        "the root is not first",
        variables.ROOT_LAST,
        MINITORCH_ORDER,
    ]
    assert verdict.bugs == []


def test_topological_sort_in_no_order_is_not_said_to_be_backwards():
    grading = minitorch("topo", answering(order=[3, 0, 2, 1]))
    verdict = wrong(variables.check_topological_sort, grading, DAG, False)
    assert verdict.details == [
        "order (as node numbers): [3, 0, 2, 1]",
        "node 2 comes after its operand(s) [0]",
    ]


@pytest.mark.parametrize(
    ("order", "problem"),
    [
        ([3, 2, -1, 1, 0], "it contains objects that are not nodes of the graph"),
        ([3, 2, 0, 1, 0], "node(s) [0] appear more than once"),
        ([3, 2, 1], "node(s) [0] are missing"),
    ],
    ids=["a-constant", "twice", "missing"],
)
def test_topological_sort_with_a_constant_a_repeat_or_a_gap_says_which(order, problem):
    """A constant (or anything not the graph's) comes back as -1."""
    grading = minitorch("topo", answering(order=order))
    verdict = wrong(variables.check_topological_sort, grading, DAG, True)
    assert verdict.details == [f"order (as node numbers): {order}", problem]


@pytest.mark.parametrize(
    "fields",
    [
        {"order": [3, "n2", 1, 0]},
        {"order": [3, 2, 1, 0.0]},
        {"order": [True, 2, 1, 0]},
        {"reads": [1, 1, 1.0, 1]},
    ],
    ids=["a-string", "a-float", "a-bool", "reads"],
)
def test_topological_sort_answering_non_variables_is_an_invalid_answer(fields):
    grading = minitorch("topo", answering(**fields))
    verdict = wrong(variables.check_topological_sort, grading, DAG, False)
    invalid(verdict, "the order holds non-variables", f"order = {SORT}(n3)\n{SHOW}")


def test_topological_sort_answer_without_an_order_is_the_students_invalid_answer():
    """Only a submission that rewrites the grader's probe in its worker answers so: its
    invalid answer, shown with the example, never a failure of the grader."""
    grading = minitorch("topo", {"variable_topo": lambda case, answer: {"reads": [1] * 4}})
    verdict = wrong(variables.check_topological_sort, grading, DAG, False)
    invalid(verdict, "the answer has no valid 'order'", f"order = {SORT}(n3)\n{SHOW}")


@pytest.mark.parametrize("reads", [[], [1, 1], [1, 1, 1, 1, 1], [1, -1, 1, 1]])
def test_topological_sort_answer_without_one_count_of_reads_per_variable_is_invalid(reads):
    grading = minitorch("topo", answering(reads=reads))
    verdict = wrong(variables.check_topological_sort, grading, DAG, False)
    invalid(verdict, "a count of reads per variable", f"order = {SORT}(n3)\n{SHOW}")


def test_topological_sort_may_leave_a_variables_parents_unread():
    """A sort that asks ``is_leaf`` first never reads a leaf's parents: a count of 0."""
    grading = minitorch("topo", answering(reads=[0, 0, 1, 1]))
    variables.check_topological_sort(grading, DAG, False)


def test_topological_sort_may_read_a_variables_parents_four_times():
    grading = minitorch("topo", answering(reads=[1, 4, 4, 1]))
    variables.check_topological_sort(grading, DAG, False)


def test_topological_sort_reading_parents_more_often_revisits_shared_variables():
    grading = minitorch("topo", answering(reads=[1, 3, 5, 5]))
    verdict = wrong(variables.check_topological_sort, grading, DAG, False)
    assert (verdict.status, verdict.reason) == ("failed", "the walk visits shared variables again")
    assert verdict.details == [
        "node 2's parents were read 5 times: keep the unique_id of every variable visited "
        "and skip it after"
    ]
    assert verdict.snippet.endswith(f"order = {SORT}(n3)\n{SHOW}")


def test_topological_sort_on_random_graphs_leaves_the_reads_to_the_diamonds():
    """A revisiting walk is charged by the chain of diamonds' test alone, at every seed."""
    grading = minitorch("topo", answering(reads=[1, 3, 5, 5]))
    variables.check_topological_sort(grading, DAG, False, counts_reads=False)


def test_topological_sort_asks_about_each_graph_it_is_given():
    grading = minitorch("topo")
    variables.check_topological_sort(grading, DAG, True)
    variables.check_topological_sort(grading, WIDE, True)
    assert [case for _, _, case in grading.asked] == [
        {"dag": DAG.to_json(), "constants": [2]},
        {"dag": WIDE.to_json(), "constants": [3, 5]},
    ]


# ------------------------------------------------------------------- the order of a constant


def test_constant_root_right_answer_passes():
    grading = minitorch("topo")
    variables.check_constant_root(grading, WIDE)
    case = {"dag": WIDE.to_json(), "constants": [3, 5], "constant_root": True}
    assert grading.asked == [(ASSIGNMENT.name, "variable_topo", case)]
    assert TEST not in grading.failures


def test_constant_root_with_an_order_fails_showing_the_first_constant():
    grading = minitorch("topo", answering(order=[-1]))
    verdict = wrong(variables.check_constant_root, grading, WIDE)
    assert (verdict.status, verdict.reason) == ("failed", "a constant's order is not empty")
    assert verdict.details == ["order: [-1]: a constant is not walked, so nothing depends on it"]
    assert "\nclass Variable(Scalar):\n" in verdict.snippet
    assert "\nn3 = variable((n0, 1.0), (n1, 1.0), (variable(constant=True), 1.0))\n" in (
        verdict.snippet
    )
    assert verdict.snippet.endswith(
        f"\nconstant = n3.history.inputs[-1]\nprint(list({SORT}(constant)))"
    )


def test_constant_root_asks_about_each_graph_it_is_given():
    grading = minitorch("topo")
    variables.check_constant_root(grading, DAG)
    variables.check_constant_root(grading, WIDE)
    assert [case for _, _, case in grading.asked] == [
        {"dag": DAG.to_json(), "constants": [2], "constant_root": True},
        {"dag": WIDE.to_json(), "constants": [3, 5], "constant_root": True},
    ]


# ----------------------------------------------------------------------------- backpropagate


def backpropagated(
    received: dict[int, list[float]] | None = None,
    accumulated: dict[int, list[float]] | None = None,
) -> Callable[[dict[str, Any], Answer], Answer]:
    """The ``backpropagate`` answer with these nodes' d_outputs (one per call of their chain
    rule) and these leaves' derivatives (one per accumulation) instead."""

    def change(case: dict[str, Any], answer: Answer) -> Answer:
        for key, given in (("received", received), ("accumulated", accumulated)):
            for index, values in (given or {}).items():
                answer[key][index] = [encode(v) for v in values]
        return answer

    return change


def given_order(tamper: Tamper) -> Tamper:
    """``tamper`` where the grader's order is swapped in; the student's own pair is right."""
    return lambda case, answer: answer if case["order"] is None else tamper(case, answer)


def both(tamper: Tamper) -> dict[str, Tamper]:
    return {"backpropagate": tamper}


@pytest.mark.parametrize("scalars", [False, True])
def test_backpropagate_right_answers_pass(scalars):
    grading = minitorch("backward")
    variables.check_backpropagate(grading, DAG, SEED, scalars)
    case = {"dag": DAG.to_json(), "order": [3, 2, 1, 0], "seed": SEED, "scalars": scalars}
    assert grading.asked == [(ASSIGNMENT.name, "backpropagate", case)]
    assert TEST not in grading.failures


def test_backpropagate_is_on_the_graders_variables_unless_told():
    grading = minitorch("backward", both(backpropagated(accumulated={0: [9.0]})))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED)
    assert grading.asked[0][2]["scalars"] is False
    assert "\nclass Variable(Scalar):\n" in verdict.snippet


def test_backpropagate_leaf_totals_of_several_contributions_pass():
    grading = minitorch("backward", both(backpropagated(accumulated={0: [-4.5, -1.5]})))
    variables.check_backpropagate(grading, DAG, SEED)
    assert asked(grading) == ["load", "backpropagate"]


@pytest.mark.parametrize("scalars", [False, True])
def test_backpropagate_shows_the_correct_order_it_swapped_in(scalars):
    grading = minitorch("backward", both(backpropagated(accumulated={0: [9.0]})))
    snippet = wrong(variables.check_backpropagate, grading, DAG, SEED, scalars).snippet
    assert snippet.endswith(
        "nodes = [n0, n1, n2, n3]\n"
        f"{SORT} = lambda variable: [n3, n2, n1, n0]  # a correct order, as the grader gives it\n"
        f"minitorch.autodiff.backpropagate(n3, {SEED})\n"
        "print([n.derivative for n in nodes[:2]])"
    )
    if scalars:  # the course's scalars, made by the grader's functions
        assert "class Variable(" not in snippet
        assert "\nn0 = Scalar(1.0)\n" in snippet
        assert "\nn3 = given(0.5, 3.0).apply(n2, n0)\n" in snippet
    else:
        assert "\nn3 = variable((n2, 0.5), (n0, 3.0))\n" in snippet


def test_backpropagate_wrong_leaf_derivatives_name_each_leaf_in_order():
    grading = minitorch("backward", both(backpropagated(accumulated={0: [9.0], 1: [2.0]})))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED)
    assert (verdict.status, verdict.reason) == ("failed", "wrong derivatives from backpropagate")
    assert verdict.details == [
        "n0.derivative: expected -6, got 9",
        "n1.derivative: expected 0.75, got 2",
    ]
    assert verdict.bugs == []


def test_backpropagate_wrong_second_leaf_alone_is_named():
    grading = minitorch("backward", both(backpropagated(accumulated={1: [2.0]})))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED)
    assert verdict.details == ["n1.derivative: expected 0.75, got 2"]


def test_backpropagate_leaf_never_given_a_derivative_is_named():
    grading = minitorch("backward", both(backpropagated(accumulated={1: []})))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED)
    assert verdict.details == ["n1.derivative: expected 0.75, got None (never set)"]


@pytest.mark.parametrize(
    ("scalars", "chain_rule"), [(False, "chain_rule"), (True, "the function's backward")]
)
def test_backpropagate_wrong_d_output_names_the_chain_rule(scalars, chain_rule):
    """The leaves are right: only what one variable's chain rule was given is wrong."""
    grading = minitorch("backward", both(backpropagated(received={2: [5.0]})))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED, scalars)
    assert verdict.details == [f"n2: d_output given to {chain_rule}: expected -0.75, got 5"]


def test_backpropagate_never_calling_a_chain_rule_is_named():
    grading = minitorch("backward", both(backpropagated(received={2: []})))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED)
    assert verdict.details == ["n2: chain_rule was called 0 times, not once"]


def test_backpropagate_calling_a_chain_rule_twice_is_judged_by_what_each_call_was_given():
    """MiniTorch's text does not say a chain rule runs once (``conventions: calls``): the
    leaves are right, so two calls each given the right d_output cost nothing, and a wrong
    one is named."""
    grading = minitorch("backward", both(backpropagated(received={2: [-0.75, -0.75]})))
    variables.check_backpropagate(grading, DAG, SEED)
    grading = minitorch("backward", both(backpropagated(received={2: [-0.75, 5.0]})))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED)
    assert verdict.details == ["n2: d_output given to chain_rule: expected -0.75, got 5"]


def test_backpropagate_calling_a_chain_rule_twice_is_named_where_the_course_says_once(
    monkeypatch,
):
    """A course whose words say each chain rule runs once (``conventions: calls: once``): a
    second run is wrong in itself, even given the right d_output each time."""
    monkeypatch.setattr(variables, "_once", lambda session: True)
    grading = minitorch("backward", both(backpropagated(received={2: [-0.75, -0.75]})))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED)
    assert verdict.details == ["n2: chain_rule was called 2 times, not once"]


def test_backpropagate_shows_the_first_four_of_its_wrong_variables_op_nodes_first():
    everything = backpropagated({i: [9.0] for i in (3, 4, 5)}, {i: [9.0] for i in (0, 1, 2)})
    grading = minitorch("backward", both(everything))
    verdict = wrong(variables.check_backpropagate, grading, WIDE, 2.0)
    assert verdict.details == [
        "n3: d_output given to chain_rule: expected 2, got 9",
        "n4: d_output given to chain_rule: expected 2, got 9",
        "n5: d_output given to chain_rule: expected 2, got 9",
        "n0.derivative: expected 4, got 9",
    ]


def test_backpropagate_figure_shows_each_variables_derivative_beside_the_students():
    """A leaf's total, an op node's d_output (its first, where its chain rule ran twice)."""
    tamper = backpropagated(received={2: [-0.75, -0.75]}, accumulated={0: [9.0]})
    verdict = wrong(variables.check_backpropagate, minitorch("backward", both(tamper)), DAG, SEED)
    figure = verdict.figure
    assert [(n["id"], n["op"], n["expected"], n["got"], n["wrong"]) for n in figure["nodes"]] == [
        ("n0", "leaf", "-6", "9", True),
        ("n1", "leaf", "0.75", "0.75", False),
        ("n2", "given", "-0.75", "-0.75", False),
        ("n3", "given", "-1.5", "-1.5", False),
    ]
    assert figure["edges"][0] == {"from": "n0", "to": "n2", "label": "x2"}


def test_backpropagate_judges_each_answer_afresh():
    """A wrong answer, then a right one in the same process: nothing of the first is kept."""
    grading = minitorch("backward", both(backpropagated(accumulated={0: [9.0]})))
    wrong(variables.check_backpropagate, grading, DAG, SEED)
    variables.check_backpropagate(minitorch("backward"), DAG, SEED)


def test_backpropagate_asks_about_each_graph_it_is_given():
    grading = minitorch("backward")
    variables.check_backpropagate(grading, DAG, SEED)
    variables.check_backpropagate(grading, WIDE, 2.0, True)
    assert [case for _, _, case in grading.asked] == [
        {"dag": DAG.to_json(), "order": [3, 2, 1, 0], "seed": SEED, "scalars": False},
        {"dag": WIDE.to_json(), "order": [5, 4, 3, 2, 1, 0], "seed": 2.0, "scalars": True},
    ]


def test_backpropagate_changing_a_value_in_place_names_backpropagate():
    grading = minitorch("backward", both(wrote("walk", 0, None, 1.0, 2.0)))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED, True)
    assert (verdict.status, verdict.reason) == ("failed", "the walk changed a value in place")
    assert verdict.details[0].startswith("backpropagate changed n0 in place: it was 1 before, 2")
    assert verdict.snippet.endswith("\nprint(n0.data)")


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        (lambda case, answer: answer | {"received": answer["received"][:-1]}, "not one list"),
        (lambda case, answer: answer | {"accumulated": answer["accumulated"][1:]}, "not one list"),
        (lambda case, answer: answer | {"received": [[], [], 5, []]}, "not a list of d_output"),
        (
            lambda case, answer: answer | {"accumulated": [[], 5, [], []]},
            "not a list of derivative",
        ),
    ],
    ids=["received", "accumulated", "a-received", "an-accumulated"],
)
def test_backpropagate_answer_that_is_not_one_list_per_variable_is_invalid(tamper, reason):
    grading = minitorch("backward", both(tamper))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED)
    invalid(verdict, f"{reason} per node", "print([n.derivative for n in nodes[:2]])")


# Wrong with the grader's order (the output first), right with the student's own
# topological_sort: the order's convention is topological_sort's item to grade.

RAISES = error("'NoneType' object is not subscriptable", "autodiff.py:97 in backpropagate")


@pytest.mark.parametrize(
    "tamper",
    [backpropagated(accumulated={0: [9.0]}), lambda case, answer: RAISES],
    ids=["wrong", "raises"],
)
def test_backpropagate_right_with_the_students_own_order_costs_nothing(tamper):
    grading = minitorch("backward", both(given_order(tamper)))
    variables.check_backpropagate(grading, DAG, SEED)
    own = {"dag": DAG.to_json(), "order": None, "seed": SEED, "scalars": False}
    assert grading.asked[-1] == (ASSIGNMENT.name, "backpropagate", own)
    assert TEST not in grading.failures


def test_backpropagate_raising_both_ways_is_the_error_shown_with_the_graders_order():
    grading = minitorch("backward", both(lambda case, answer: RAISES))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED)
    assert (verdict.status, verdict.reason) == ("error", "'NoneType' object is not subscriptable")
    assert verdict.details == ["  at autodiff.py:97 in backpropagate"]
    assert f"{SORT} = lambda variable: [n3, n2, n1, n0]" in verdict.snippet
    assert asked(grading) == ["load", "backpropagate", "backpropagate"]


def test_backpropagate_raising_with_the_graders_order_and_wrong_with_its_own_is_the_error():
    def tamper(case: dict[str, Any], answer: Answer) -> Answer:
        if case["order"] is not None:
            return RAISES
        return backpropagated(accumulated={0: [9.0]})(case, answer)

    verdict = wrong(variables.check_backpropagate, minitorch("backward", both(tamper)), DAG, SEED)
    assert (verdict.status, verdict.reason) == ("error", "'NoneType' object is not subscriptable")


@pytest.mark.parametrize(
    "own",
    [
        backpropagated(accumulated={0: [9.0]}),
        lambda case, answer: RAISES,
        lambda case, answer: answer | {"received": 5},
    ],
    ids=["wrong", "raises", "invalid"],
)
def test_backpropagate_wrong_with_the_graders_order_and_not_right_with_its_own_fails(own):
    def tamper(case: dict[str, Any], answer: Answer) -> Answer:
        if case["order"] is None:
            return own(case, answer)
        return backpropagated(accumulated={1: [2.0]})(case, answer)

    grading = minitorch("backward", both(tamper))
    verdict = wrong(variables.check_backpropagate, grading, DAG, SEED)
    assert (verdict.status, verdict.reason) == ("failed", "wrong derivatives from backpropagate")
    assert verdict.details == ["n1.derivative: expected 0.75, got 2"]
    assert asked(grading) == ["load", "backpropagate", "backpropagate"]


# --------------------------------------------------------------------- a second sort


def test_second_sort_right_answer_passes():
    grading = minitorch("topo")
    variables.check_second_sort(grading, TREE, 3)
    case = {"dag": TREE.to_json(), "constants": [], "first": 3}
    assert grading.asked == [(ASSIGNMENT.name, "variable_topo", case)]
    assert TEST not in grading.failures


def test_second_sort_leaving_out_what_the_first_saw_is_named():
    """A visited set kept between calls: the second order holds only what is new."""
    grading = minitorch("topo", answering(order=[4, 2]))
    verdict = wrong(variables.check_second_sort, grading, TREE, 3)
    assert (verdict.status, verdict.reason) == (
        "failed",
        "topological_sort(n4) returned an invalid order, after topological_sort(n3)",
    )
    assert verdict.details == [
        "order (as node numbers): [4, 2]",
        "node(s) [0, 1, 3] are missing",
        "topological_sort sorts anew on every call: the unique_ids visited by an earlier call "
        "(kept in a module-level or default-argument container) leave out what that call saw",
    ]
    assert "\nclass Variable(Scalar):\n" in verdict.snippet
    assert verdict.snippet.endswith(
        "\nn4 = variable((n3, 0.5), (n2, 3.0))\nnodes = [n0, n1, n2, n3, n4]\n"
        f"order = {SORT}(n3)  # an order from a variable of the graph\n{SHOW}\n"
        f"order = {SORT}(n4)  # then from a variable made from it\n{SHOW}"
    )


def test_second_sort_first_order_wrong_is_said_of_the_first_call_alone():
    grading = minitorch("topo", answering(first_order=[3, 0]))
    verdict = wrong(variables.check_second_sort, grading, TREE, 3)
    assert verdict.reason == "topological_sort(n3) returned an invalid order"
    assert verdict.details == ["order (as node numbers): [3, 0]", "node(s) [1] are missing"]


@pytest.mark.parametrize("order", [[4, 2], [0, 1, 3, 2, 4]], ids=["root-first", "root-last"])
def test_second_sort_both_orders_wrong_reports_the_first(order):
    """The first call's order is judged first, whatever either order's numbers."""
    grading = minitorch("topo", answering(first_order=[3, 0], order=order))
    verdict = wrong(variables.check_second_sort, grading, TREE, 3)
    assert verdict.reason == "topological_sort(n3) returned an invalid order"


@pytest.mark.parametrize(
    ("key", "order", "reason"),
    [
        ("first_order", [0, 1, 3], "topological_sort(n3) returned an invalid order"),
        (
            "order",
            [0, 1, 3, 2, 4],
            "topological_sort(n4) returned an invalid order, after topological_sort(n3)",
        ),
    ],
    ids=["first", "second"],
)
def test_second_sort_root_last_is_named_as_the_convention(key, order, reason):
    """Not as a walk that keeps what it visited: the order is all there, backwards."""
    grading = minitorch("topo", answering(**{key: order}))
    verdict = wrong(variables.check_second_sort, grading, TREE, 3)
    assert verdict.reason == reason
    assert verdict.details == [
        f"order (as node numbers): {order}",
        "node 3 comes after its operand(s) [0, 1]",
        "the root is not first",
        variables.ROOT_LAST,
        MINITORCH_ORDER,
    ]


@pytest.mark.parametrize(
    "fields",
    [{"first_order": [3, "n1", 0]}, {"order": [4, 3, 2, 1, 0.0]}],
    ids=["first", "second"],
)
def test_second_sort_answering_non_variables_is_an_invalid_answer(fields):
    grading = minitorch("topo", answering(**fields))
    verdict = wrong(variables.check_second_sort, grading, TREE, 3)
    invalid(
        verdict, "the order holds non-variables", f"# then from a variable made from it\n{SHOW}"
    )


def test_second_sort_asks_about_each_graph_it_is_given():
    grading = minitorch("topo")
    variables.check_second_sort(grading, TREE, 3)
    variables.check_second_sort(grading, WIDE, 4)
    assert [case for _, _, case in grading.asked] == [
        {"dag": TREE.to_json(), "constants": [], "first": 3},
        {"dag": WIDE.to_json(), "constants": [], "first": 4},
    ]
