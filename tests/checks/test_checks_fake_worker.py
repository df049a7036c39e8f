"""Every check of ``grader/checks/`` against a fake worker, in-process, in milliseconds.

A check asks the worker through the session (``GradingSession.ask``: a request of
``grader/worker/protocol.py``, an answer of plain numbers, validated) and judges the answer.
``FakeWorker`` stands in for the sandboxed process: it answers each request as
``grader/worker/runner.py`` does, by running the probe on the reference engine in this process,
and a test may change the plain numbers before the session sees them (``tamper``), answer an
error, or time out. For each check: the reference's own answers pass, and a wrong answer is a
``WrongAnswer`` that says what was expected and what came instead, for which node or op, and
names the classic bug where the wrong numbers are that bug's.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from grader.checks import accumulation, broadcasting, bugs, graphs, ops, stopwatch, walks
from grader.checks import session as session_module
from grader.checks.session import Aborted, GradingSession, NotGradable, remembers_verdict
from grader.language import profiles
from grader.language.conventions import Convention
from grader.language.dags import Dag
from grader.language.domains import Domain
from grader.language.graphs import Graph, Node
from grader.language.snippets import tensor_dag_snippet
from grader.language.verdicts import SMALL, Tolerance, WrongAnswer, mismatch
from grader.layout import COURSES
from grader.sandbox.launch import WorkerFailure
from grader.worker import answers, probes, protocol
from grader.worker.probes import stand_ins
from tests.helpers.fake_worker import (
    DAG,
    ROUTING,
    SCALAR,
    SQUARE,
    SUGAR,
    TANH,
    TENSOR,
    TEST,
    TREE,
    UPSTREAM,
    Answer,
    Tamper,
    asked,
    decode,
    encode,
    engine,
    error,
    names_bug,
    on_run,
    session,
    set_entry,
    wrong,
    wrote,
)
from tests.helpers.planted import REFERENCE

# ----------------------------------------------------------------------------- graphs


@pytest.mark.parametrize(
    ("item", "graph", "probe"),
    [
        ("micrograd.graphs", SCALAR, "graph"),
        ("micrograd.graphs", SQUARE, "graph"),
        ("babygrad.graphs", TENSOR, "graph"),
        ("micrograd.sugar", SUGAR, "sugar"),
        ("babygrad.tensor_ops", ROUTING, "routing"),
    ],
    ids=["scalar", "shared", "tensor", "sugar", "routing"],
)
def test_graph_right_answers_pass(item, graph, probe):
    grading = session(item)
    graphs.check_graph(grading, graph, probe)
    assert asked(grading) == ["load", probe]
    assert TEST not in grading.failures


def test_a_graph_is_asked_of_the_running_items_assignment():
    """The item names the assignment asked, as the course names it; a suite's item the course
    has not renamed is the built-in assignment of that name."""
    needle = profiles.load(COURSES / "needle-hw1" / "profile.yaml")
    assert session("needle.graphs", profile=needle).item_assignment == needle.assignment("tensor")
    assert session("babygrad.tensor_ops").item_assignment.name == "babygrad"
    karpathy = profiles.load(COURSES / "karpathy-micrograd" / "profile.yaml")
    assert session("babygrad.graphs", profile=karpathy).item_assignment.kind == "tensor"


def test_graph_wrong_gradient_names_the_node():
    grading = session("micrograd.graphs", {"graph": set_entry("grads", 1, 7.0)})
    verdict = wrong(graphs.check_graph, grading, SCALAR)
    assert (verdict.status, verdict.reason) == ("failed", "wrong gradient")
    expected = -2.0 * 1.5 + 1.5
    right = 1.5 * (1 - math.tanh(expected) ** 2)  # de/db = a * tanh'(d)
    assert verdict.details == [f"b.grad: expected {right:.6g}, got 7"]
    assert "b = Value(-2.0)" in verdict.snippet and ".tanh()" in verdict.snippet
    assert verdict.bugs == []
    assert isinstance(verdict.figure, dict)


def test_graph_wrong_forward_value_names_the_node():
    grading = session("micrograd.graphs", {"graph": set_entry("values", 2, 1.0)})
    verdict = wrong(graphs.check_graph, grading, SCALAR)
    assert verdict.reason == "wrong forward value"
    assert verdict.details == ["value of c: expected -3, got 1"]


def test_graph_overwritten_gradient_is_named():
    """``a * a`` with ``=`` in the closure: a.grad is 3, not 6."""
    grading = session("micrograd.graphs", {"graph": set_entry("grads", 0, 3.0)})
    verdict = wrong(graphs.check_graph, grading, SQUARE)
    assert verdict.details == ["a.grad: expected 6, got 3"]
    assert names_bug(verdict, "overwrite-grad")


def test_graph_wrong_tensor_gradient_shows_both_arrays():
    grading = session("babygrad.graphs", {"graph": set_entry("grads", 1, np.zeros(3))})
    verdict = wrong(graphs.check_graph, grading, TENSOR)
    assert verdict.reason == "wrong gradient"
    assert verdict.details[0].startswith("b.grad: expected shape (3,) [")
    assert verdict.details[0].endswith("got shape (3,) [0., 0., 0.]")


def detached(case: dict[str, Any], answer: Answer) -> Answer:
    """The output recorded as a node no op made (as ``Value(x.data)`` would be): nothing
    reaches the leaves."""
    record = answer["record"]
    out = record["named"][-1]
    record["nodes"][out] = {"value": record["nodes"][out]["value"]}
    return answer


def test_graph_sugar_says_what_is_the_students_and_names_no_bug():
    grading = session("micrograd.sugar", {"sugar": detached})
    verdict = wrong(graphs.check_graph, grading, SUGAR, "sugar")
    assert verdict.details[0].startswith("a.grad: expected ")
    assert verdict.details[-1] == graphs.NOTES["sugar"]
    assert verdict.bugs == []


def test_graph_missing_gradient_is_never_set():
    grading = session(
        "micrograd.graphs",
        {"graph": lambda case, answer: answer | {"grads": [None, *answer["grads"][1:]]}},
    )
    verdict = wrong(graphs.check_graph, grading, SCALAR)
    assert verdict.details[0].startswith("a.grad: expected ")
    assert verdict.details[0].endswith("got None (never set)")


SUM6 = Graph(  # a + b + c + d + e + f
    "scalar",
    (0.5, 1.0, 1.5, 2.0, 2.5, 3.0),
    (Node("add", (0, 1)), *(Node("add", (i, i - 4)) for i in range(6, 10))),
)


def every_entry(key: str, value: float) -> Tamper:
    def change(case: dict[str, Any], answer: Answer) -> Answer:
        answer[key] = [encode(value) for _ in answer[key]]
        return answer

    return change


@pytest.mark.parametrize(
    ("key", "reason", "first"),
    [("values", "wrong forward value", "value of a: "), ("grads", "wrong gradient", "a.grad: ")],
)
def test_graph_shows_the_first_four_of_its_wrong_nodes(key, reason, first):
    grading = session("micrograd.graphs", {"graph": every_entry(key, 9.0)})
    verdict = wrong(graphs.check_graph, grading, SUM6)
    assert verdict.reason == reason
    assert len(verdict.details) == 4 and verdict.details[0].startswith(first)


@pytest.mark.parametrize("key", ["values", "grads"])
def test_graph_wrong_where_the_oracles_disagree_says_nothing(monkeypatch, key):
    grading = session("micrograd.graphs", {"graph": every_entry(key, 9.0)})
    monkeypatch.setattr(grading.oracles, "confirmed", lambda *args: False)
    graphs.check_graph(grading, SCALAR)
    assert TEST not in grading.failures


def test_graph_sugar_asks_for_no_diagnosis(monkeypatch):
    """What is the student's in sugar is how operators are composed, which no classic bug of
    the graph diagnoses describes."""
    monkeypatch.setattr(bugs, "diagnose_graph", lambda *args: ["overwrite-grad: a guess"])
    grading = session("micrograd.sugar", {"sugar": detached})
    assert wrong(graphs.check_graph, grading, SUGAR, "sugar").bugs == []


def test_graph_figure_shows_the_expected_numbers_beside_the_students():
    grading = session("micrograd.graphs", {"graph": set_entry("grads", 1, 7.0)})
    a, b, c = wrong(graphs.check_graph, grading, SCALAR).figure["nodes"][:3]
    assert (a["expected"], a["got"], a["wrong"]) == ("-0.180707", "-0.180707", False)
    assert (b["value"], b["expected"], b["got"], b["wrong"]) == ("-2", "0.27106", "7", True)
    assert (c["value"], c["wrong"]) == ("-3", False)
    grading = session("micrograd.graphs", {"graph": set_entry("values", 2, 1.0)})
    c = wrong(graphs.check_graph, grading, SCALAR).figure["nodes"][2]
    assert (c["id"], c["value"], c["wrong"]) == ("c", "-3", True)  # the value it should have


def test_graph_names_the_gradient_as_the_course_keeps_it(monkeypatch):
    """A course whose ops are classes (MiniTorch's) keeps a leaf's gradient in ``derivative``."""
    minitorch = profiles.load(COURSES / "minitorch-module1" / "profile.yaml")
    grading = session("micrograd.graphs", {"graph": set_entry("grads", 1, 7.0)})
    own = dataclasses.replace(
        grading.assignment("scalar"), spelling=minitorch.assignment("scalar").functions
    )
    monkeypatch.setattr(grading, "assignment", lambda kind: own)
    verdict = wrong(graphs.check_graph, grading, SCALAR)
    assert verdict.details[0].startswith("b.derivative: expected ")
    assert verdict.bugs == []  # the diagnoses speak of closures, which such a course has none of


def test_graph_an_op_writing_into_its_input_is_named_with_the_value_printed():
    grading = session("micrograd.graphs", {"graph": wrote("forward", 0, 2, 1.5, 0.0)})
    verdict = wrong(graphs.check_graph, grading, SCALAR)
    assert verdict.reason == "forward changed its input in place"
    assert verdict.details[0] == (
        "c = a * b changed a in place: it was 1.5 before, 0 after (largest change 1.5)"
    )
    assert verdict.snippet.endswith("\nprint(a.data)")


def test_graph_sugar_without_its_record_is_an_invalid_answer_showing_the_example():
    unrecorded = {"sugar": lambda case, answer: {"values": answer["values"]}}
    verdict = wrong(graphs.check_graph, session("micrograd.sugar", unrecorded), SUGAR, "sugar")
    assert verdict.status == "error"
    assert verdict.reason == "invalid answer: the answer has no valid 'record'"
    assert verdict.details == [] and verdict.snippet.startswith("from micrograd")


BIG = Graph(  # 28 leaves summed: 55 nodes, named a..z, then v26, v27, ...
    "scalar",
    tuple(np.asarray(0.25 * i) for i in range(28)),
    (Node("add", (0, 1)), *(Node("add", (i, i - 26)) for i in range(28, 54))),
)


@pytest.mark.parametrize(("key", "label"), [("values", "value of w"), ("grads", "w.grad")])
def test_graph_an_entry_that_is_no_number_is_named_by_its_node(key, label):
    def no_number(case: dict[str, Any], answer: Answer) -> Answer:
        answer[key][22] = "oops"
        return answer

    grading = session("micrograd.graphs", {"graph": no_number})
    verdict = wrong(graphs.check_graph, grading, BIG)
    assert verdict.reason.startswith(f"invalid answer: {label}")


@pytest.mark.parametrize(("key", "first"), [("values", "value of w"), ("grads", "w.grad")])
def test_graph_lists_wrong_nodes_in_the_graphs_order(key, first):
    """w (node 22) before v26 (node 26), as a name sorted would not be."""

    def two_wrong(case: dict[str, Any], answer: Answer) -> Answer:
        for index in (22, 26):
            answer[key][index] = encode(99.0)
        return answer

    grading = session("micrograd.graphs", {"graph": two_wrong})
    details = wrong(graphs.check_graph, grading, BIG).details
    assert [d.split(":")[0] for d in details] == [first, first.replace("w", "v26")]


# -------------------------------------------------------------------------------- ops

TRANSPOSE = Graph(
    "tensor", (np.arange(24.0).reshape(2, 3, 4) / 10,), (Node("transpose", (0,), (1, 2, 0)),)
)
TRANSPOSE_GRAD = np.arange(24.0).reshape(3, 4, 2) / 7 - 1
MATMUL = Graph("tensor", (np.ones((2, 3)), np.full((3, 4), 0.5)), (Node("matmul", (0, 1)),))
MATMUL_GRAD = np.ones((2, 4))


@pytest.mark.parametrize(
    ("graph", "out_grad"),
    [
        (TANH, np.float64(1.0)),
        (TANH, np.float64(-2.5)),
        (TRANSPOSE, TRANSPOSE_GRAD),
        (MATMUL, MATMUL_GRAD),
    ],
    ids=["tanh", "tanh-scaled", "transpose", "matmul"],
)
def test_op_right_answers_pass(graph, out_grad):
    grading = session("micrograd.ops.tanh")
    ops.check_op(grading, graph, np.asarray(out_grad))
    assert asked(grading) == ["load", "op"]


def test_op_tanh_derivative_is_named():
    t = math.tanh(0.5)
    grading = session("micrograd.ops.tanh", {"op": set_entry("grads", 0, 1 - t)})
    verdict = wrong(ops.check_op, grading, TANH, np.asarray(1.0))
    assert (verdict.status, verdict.reason) == ("failed", "wrong gradient in backward")
    assert verdict.details == [
        f"backward: gradient for a: expected {1 - t * t:.6g}, got {1 - t:.6g}"
    ]
    assert "out = a.tanh()" in verdict.snippet
    assert names_bug(verdict, "tanh-derivative")


def test_op_wrong_forward_value():
    grading = session("micrograd.ops.tanh", {"op": set_entry("values", 0, 0.5)})
    verdict = wrong(ops.check_op, grading, TANH, np.asarray(1.0))
    assert verdict.reason == "wrong forward value"
    assert verdict.details == [f"forward: out.data: expected {math.tanh(0.5):.6g}, got 0.5"]


@pytest.mark.parametrize("key", ["values", "grads"])
def test_op_wrong_where_the_oracles_disagree_says_nothing(monkeypatch, key):
    grading = session("micrograd.ops.tanh", {"op": set_entry(key, 0, 9.0)})
    monkeypatch.setattr(grading.oracles, "confirmed", lambda *args: False)
    ops.check_op(grading, TANH, np.asarray(1.0))
    assert TEST not in grading.failures


def test_op_writing_into_its_input_is_named_with_the_value_printed():
    grading = session("micrograd.ops.tanh", {"op": wrote("forward", 0, None, 0.5, 0.0)})
    verdict = wrong(ops.check_op, grading, TANH, np.asarray(1.0))
    assert verdict.reason == "forward changed its input in place"
    assert verdict.details[0] == (
        "a.tanh() changed its input a in place: it was 0.5 before, 0 after (largest change 0.5)"
    )
    assert verdict.snippet.endswith("\nprint(a.data)")


def test_op_figure_shows_the_expected_gradient_beside_the_students():
    t = math.tanh(0.5)
    grading = session("micrograd.ops.tanh", {"op": set_entry("grads", 0, 1 - t)})
    a, out = wrong(ops.check_op, grading, TANH, np.asarray(1.0)).figure["nodes"]
    assert (a["expected"], a["got"], a["wrong"]) == (f"{1 - t * t:.6g}", f"{1 - t:.6g}", True)
    assert (out["value"], out["expected"], out["got"]) == (f"{t:.6g}", "1", "1")
    grading = session("micrograd.ops.tanh", {"op": set_entry("values", 0, 0.5)})
    out = wrong(ops.check_op, grading, TANH, np.asarray(1.0)).figure["nodes"][1]
    assert (out["value"], out["wrong"]) == (f"{t:.6g}", True)  # the value it should have


def test_op_a_gradient_that_is_no_number_is_named_by_its_operand():
    def no_number(case: dict[str, Any], answer: Answer) -> Answer:
        answer["grads"][0] = "oops"
        return answer

    grading = session("babygrad.ops.matmul", {"op": no_number})
    verdict = wrong(ops.check_op, grading, MATMUL, MATMUL_GRAD)
    assert verdict.reason.startswith("invalid answer: gradient for a")


def test_op_transpose_with_the_forward_axes_is_named():
    grading = session(
        "babygrad.ops.transpose",
        {"op": set_entry("grads", 0, np.transpose(TRANSPOSE_GRAD, (1, 2, 0)))},
    )
    verdict = wrong(ops.check_op, grading, TRANSPOSE, TRANSPOSE_GRAD)
    assert verdict.details == [
        "backward: gradient for a: expected shape (2, 3, 4), got shape (4, 2, 3)"
    ]
    assert "op = ops.Transpose((1, 2, 0))" in verdict.snippet
    assert names_bug(verdict, "transpose-same-axes")


SUM_INT = Graph("tensor", (np.arange(6.0).reshape(2, 3) / 4 - 0.5,), (Node("sum", (0,), 1),))
"""A summation over one axis given as an int: needle's forward tests pass one, no gradient test
does (``domain: forward_axes``)."""
SUM_GRAD = np.array([0.5, -1.0])


def forward_axes(tamper: dict[str, Tamper] | None = None) -> GradingSession:
    """A session of a course whose summation takes its axes as a tuple or None, and an int in
    its forward alone (needle's ``domain``), answered by the reference (``tamper``ed)."""
    grading = session("babygrad.ops.sum", tamper)
    own = grading.profile.of("babygrad")
    domain = Domain(axes=("none", "tuple"), forward_axes=("int",))
    assignments = {"babygrad": dataclasses.replace(own, domain=domain)}
    grading.profile = dataclasses.replace(grading.profile, assignments=assignments)
    return grading


def test_op_an_int_axis_the_course_gives_its_forward_alone_grades_the_forward_alone():
    grading = forward_axes()
    ops.check_op(grading, SUM_INT, SUM_GRAD)
    assert grading.asked[-1][2]["forward_only"] is True
    first_axis = Graph("tensor", SUM_INT.leaves, (Node("sum", (0,), 0),))
    ops.check_op(grading, first_axis, np.ones(3))  # each example asked anew
    tuple_axis = Graph("tensor", SUM_INT.leaves, (Node("sum", (0,), (1,)),))
    ops.check_op(grading, tuple_axis, SUM_GRAD)
    assert "forward_only" not in grading.asked[-1][2]
    assert TEST not in grading.failures
    everywhere = session("babygrad.ops.sum")  # this course's domain: every form, both ways
    ops.check_op(everywhere, SUM_INT, SUM_GRAD)
    assert "forward_only" not in everywhere.asked[-1][2]


def test_op_a_wrong_forward_on_an_int_axis_shows_the_forward_alone():
    grading = forward_axes({"op": set_entry("values", 0, [9.0, 9.0])})
    verdict = wrong(ops.check_op, grading, SUM_INT, SUM_GRAD)
    assert verdict.reason == "wrong forward value"
    assert verdict.details == [
        "forward: out.data: expected shape (2,) [-0.75,  1.5 ], got shape (2,) [9., 9.]",
        ops.FORWARD_ONLY,
    ]
    assert verdict.snippet.endswith("\nout = ops.Summation(1)(a)\nprint(out.data)")
    assert verdict.snippet.startswith("from babygrad import Tensor")


def test_op_a_forward_that_raises_on_an_int_axis_is_told_why_it_is_asked():
    grading = forward_axes({"op": lambda case, answer: error("AssertionError", "ops.py:1")})
    verdict = wrong(ops.check_op, grading, SUM_INT, SUM_GRAD)
    assert (verdict.status, verdict.reason) == ("error", "AssertionError")
    assert verdict.details == ["  at ops.py:1", ops.FORWARD_ONLY]


def test_op_a_forward_on_an_int_axis_that_writes_into_its_input_is_named():
    grading = forward_axes({"op": wrote("forward", 0, None, 0.5, 0.0)})
    verdict = wrong(ops.check_op, grading, SUM_INT, SUM_GRAD)
    assert verdict.reason == "forward changed its input in place"


def test_op_that_raises_in_backward_is_an_error_naming_matmul_without_transposes():
    """``g @ b`` on these shapes raises: the student's error is the verdict, and the bug that
    raises just so is named."""
    grading = session(
        "babygrad.ops.matmul",
        {
            "op": lambda case, answer: error(
                "ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0",
                "babygrad/ops.py:200 in backward: return np.matmul(g, y)",
            )
        },
    )
    verdict = wrong(ops.check_op, grading, MATMUL, MATMUL_GRAD)
    assert (verdict.status, verdict.reason) == (
        "error",
        "ValueError: matmul: Input operand 1 has a mismatch in its core dimension 0",
    )
    assert verdict.details == ["  at babygrad/ops.py:200 in backward: return np.matmul(g, y)"]
    assert "op = ops.MatMul()" in verdict.snippet
    assert names_bug(verdict, "matmul-no-transpose")


def test_op_answer_without_gradients_is_an_invalid_answer():
    grading = session(
        "micrograd.ops.tanh", {"op": lambda case, answer: {"values": answer["values"]}}
    )
    verdict = wrong(ops.check_op, grading, TANH, np.asarray(1.0))
    assert verdict.status == "error"
    assert verdict.reason.startswith("invalid answer: ") and "grads" in verdict.reason
    assert verdict.details == [] and "tanh()" in verdict.snippet  # the example that ran


def test_a_missing_function_aborts_the_test_as_missing():
    grading = session(
        "micrograd.ops.tanh",
        {"op": lambda case, answer: error("not implemented: tanh", status="missing")},
    )
    with pytest.raises(Aborted):
        ops.check_op(grading, TANH, np.asarray(1.0))
    abort = grading.aborts[TEST]
    assert (abort.status, abort.reason) == ("missing", "not implemented: tanh")


def test_a_hung_probe_aborts_the_test_as_a_timeout():
    grading = session("micrograd.ops.tanh", timeout=("op",))
    with pytest.raises(Aborted):
        ops.check_op(grading, TANH, np.asarray(1.0))
    assert grading.aborts[TEST].status == "timeout"
    assert "timed out" in grading.aborts[TEST].reason


def relu_at(zero: float) -> Graph:
    return Graph("scalar", (np.asarray(zero),), (Node("relu", (0,)),))


def at_zero(tamper: Tamper) -> Tamper:
    """``tamper`` only the answers for operands that are exactly 0 (not ``check_kink``'s run
    away from the kink)."""

    def change(case: dict[str, Any], answer: Answer) -> Answer:
        leaves = Graph.from_json(case["graph"]).leaves
        return tamper(case, answer) if not np.any(leaves[0]) else answer

    return change


@pytest.mark.parametrize("zero", [0.0, -0.0], ids=["zero", "negative-zero"])
def test_relu_at_zero_right_answer_passes(zero):
    grading = session("micrograd.ops.relu")
    ops.check_kink(grading, relu_at(zero), np.asarray(-1.5))
    assert asked(grading) == ["load", "op", "op"]


def test_relu_letting_the_gradient_through_at_zero_fails_quoting_the_courses_words():
    grading = session("micrograd.ops.relu", {"op": at_zero(set_entry("grads", 0, -1.5))})
    verdict = wrong(ops.check_kink, grading, relu_at(-0.0), np.asarray(-1.5))
    assert verdict.reason == "wrong gradient at 0"
    assert verdict.details[0] == "backward: gradient for a: expected 0, got -1.5"
    assert verdict.details[1:] == [
        "relu passes no gradient where its operand is exactly 0.",
        "The course's own words (exercises/micrograd/engine.py, Value.relu's docstring): "
        '"The derivative is 1 where the input is positive and 0 elsewhere, including exactly '
        'at 0."',
    ]
    assert verdict.snippet.endswith(
        "a = Value(-0.0)\nout = a.relu()\nout.grad = -1.5\nout._backward()\nprint(out.data, a.grad)"
    )
    assert verdict.bugs == []


@pytest.mark.parametrize("assignment", ["micrograd", "babygrad"])
def test_a_kink_is_not_gradable_where_the_op_is_wrong_away_from_it(assignment):
    """A relu that does nothing passes back no gradient, right at 0 by the convention: the
    same op away from 0 must work first, or the example grades nothing."""
    graph = relu_at(0.0) if assignment == "micrograd" else KINK
    grading = session(
        f"{assignment}.ops.relu", {"op": set_entry("grads", 0, np.zeros_like(graph.leaves[0]))}
    )
    with pytest.raises(NotGradable) as raised:
        ops.check_kink(
            grading, graph, np.asarray(-1.5) if assignment == "micrograd" else KINK_GRAD + 0.25
        )
    assert raised.value.needs == (f"{assignment}.ops.relu (away from 0)",)
    assert TEST not in grading.failures


def test_a_kink_while_shrinking_a_failure_passes_an_example_it_cannot_grade():
    grading = session("micrograd.ops.relu", {"op": set_entry("grads", 0, 0.0)})
    earlier = grading.failures[TEST] = WrongAnswer("failed", "an earlier example")
    ops.check_kink(grading, relu_at(0.0), np.asarray(-1.5))
    assert grading.failures[TEST] is earlier


def test_a_kink_with_a_wrong_forward_value_at_zero_fails():
    grading = session("micrograd.ops.relu", {"op": at_zero(set_entry("values", 0, 0.5))})
    verdict = wrong(ops.check_kink, grading, relu_at(0.0), np.asarray(-1.5))
    assert verdict.reason == "wrong forward value at 0"
    assert verdict.details == ["forward: out.data: expected 0, got 0.5"]


def test_a_kink_whose_op_writes_into_its_input_is_named():
    grading = session("micrograd.ops.relu", {"op": at_zero(wrote("backward", 1, None, 0.0, 1.0))})
    verdict = wrong(ops.check_kink, grading, relu_at(0.0), np.asarray(-1.5))
    assert verdict.reason == "backward changed a value it was given in place"
    assert verdict.details[0].startswith("the _backward of out = a.relu() changed its output out")


def test_a_kink_names_the_function_class_of_a_course_whose_ops_are_classes(monkeypatch):
    functions = profiles.load(COURSES / "minitorch-module1" / "profile.yaml").assignment("scalar")
    grading = session("micrograd.ops.relu", {"op": at_zero(set_entry("grads", 0, -1.5))})
    own = dataclasses.replace(grading.assignment("scalar"), spelling=functions.functions)
    monkeypatch.setattr(grading, "assignment", lambda kind: own)
    verdict = wrong(ops.check_kink, grading, relu_at(0.0), np.asarray(-1.5))
    assert verdict.details[1].startswith(
        f"{functions.functions.class_source('relu')} passes no gradient where its operand"
    )


@pytest.mark.parametrize(
    ("path", "op"),
    [
        ("micrograd/engine.py", "def relu"),
        ("babygrad/ops.py", "class ReLU"),
        ("babygrad/ops.py", "class Abs"),
    ],
)
def test_the_kink_convention_is_in_the_stubs_docstrings(path, op):
    stub = (REFERENCE.parent / "exercises" / path).read_text()
    docstring = " ".join(stub[stub.index(op) :].split('"""')[1].split())
    assert "0" in docstring and ("exactly at 0" in docstring or "at a == 0" in docstring)


# ------------------------------------------------------------------------------ walks


def filled(grads: Sequence[float], shape: tuple[int, ...]) -> list[dict[str, Any]]:
    """Each gradient as an array of ``shape`` full of it, as the worker sends it."""
    return [encode(np.full(shape, g)) for g in grads]


def walk_grads(grads: Sequence[float], shape: tuple[int, ...]) -> Tamper:
    """The ``Tensor.backward`` probe answering ``grads`` (``filled``) for its walk."""
    return lambda case, answer: answer | {"grads": filled(grads, shape)}


def test_dag_gradients_are_what_the_tests_below_assume():
    assert DAG.backward() == [[4.0, -0.5, 0.5, 1.0]]


def test_topo_right_answer_passes():
    grading = session("micrograd.topo")
    walks.check_topo(grading, DAG)
    assert asked(grading) == ["load", "topo"]


def test_a_replys_results_keep_the_order_of_the_cases():
    sent = protocol.request(7, "micrograd", "topo", [{"n": 0}, {"n": 1}, {"n": 2}])
    reply = {"id": 7, "results": [{"ok": {"n": 0}}, error("boom", "engine.py:3"), {"ok": {}}]}
    assert protocol.results(reply, sent) == [
        {"ok": {"n": 0}},
        {"error": {"status": "error", "message": "boom", "frames": ["engine.py:3"]}},
        {"ok": {}},
    ]


def test_an_array_may_be_empty_but_its_shape_is_bounded():
    for dims in ([2, 0], [1 << 20, 0], [1] * 7 + [0]):
        assert answers.decode_array({"shape": dims, "data": []}, "x").shape == tuple(dims)
    for dims in ([-1], [(1 << 20) + 1], [1] * 9, [2.0], "2", [2, "x"]):
        with pytest.raises(protocol.InvalidAnswer, match="x: bad shape"):
            answers.decode_array({"shape": dims, "data": []}, "x")


def test_an_array_is_float64_with_its_non_finite_numbers():
    got = answers.decode_array({"shape": [2, 2], "data": [1, 0.5, "-inf", "nan"]}, "x")
    assert got.dtype == np.float64 and got[0].tolist() == [1.0, 0.5]
    assert got[1, 0] == -np.inf and np.isnan(got[1, 1])
    assert answers.decode_array({"shape": [], "data": ["inf"]}, "x") == np.inf
    for data, says in [
        ([1], "1 numbers for shape (2,)"),
        ((1, 2), "? numbers for shape (2,)"),
        (["1", 2], "'1' is not a number"),
        ([None, 1], "None is not a number"),
        ([True, 1], "True is not a number"),
    ]:
        with pytest.raises(protocol.InvalidAnswer, match=f"^x: {re.escape(says)}$"):
            answers.decode_array({"shape": [2], "data": data}, "x")
    for answer in ([[2], [1, 2]], {"shape": [2]}, {"shape": [2], "data": [1, 2], "dtype": "f"}):
        with pytest.raises(protocol.InvalidAnswer, match="^x: not an array$"):
            answers.decode_array(answer, "x")


def test_closeness_is_relative_to_the_expected_value_and_never_broadcasts():
    half = Tolerance(atol=0.0, rtol=0.6)
    assert mismatch("x", np.float64(2.0), np.float64(1.0), half) is not None  # 1 > 0.6 * 1
    assert mismatch("x", np.float64(1.0), np.float64(2.0), half) is None  # 1 <= 0.6 * 2
    assert not half.close(np.ones(3), np.ones(1))
    assert not half.close(np.ones((2, 1)), np.ones((1, 2)))


@given(
    st.integers(1, SMALL + 8).flatmap(
        lambda n: st.tuples(*[arrays(np.float64, n, elements=st.floats(width=64))] * 2)
    ),
    st.sampled_from([0.0, 1e-9, 1e-6, 0.5]),
    st.sampled_from([0.0, 1e-9, 1e-6, 0.5]),
)
def test_small_arrays_compare_as_numpy_compares_them(pair, atol, rtol):
    """``close`` compares small float64 arrays as Python floats (``verdicts.SMALL``), larger
    ones with numpy: the same verdict as numpy's elementwise bound, NaN, infinities and signed
    zeros included."""
    got, expected = pair
    got = np.where(np.arange(got.size) % 3 == 0, expected, got)  # some equal, most not
    with np.errstate(invalid="ignore", over="ignore"):
        numpy = bool(np.all(np.abs(got - expected) <= atol + rtol * np.abs(expected)))
    assert Tolerance(atol, rtol).close(got, expected) is numpy


def test_closeness_is_numpys_bound_in_the_arrays_own_dtype_on_either_path():
    """Only float64 arrays take the Python path: a float32 one is judged by numpy's bound in
    float32, which rounds this tolerance up to the difference (float64 keeps it just below);
    and numpy's path, for arrays larger than ``SMALL``, holds the same bound."""
    ones = np.ones(1, dtype=np.float32)
    just_under = Tolerance(0.0, 2.0**-23 * (1 - 2.0**-30))  # float32 rounds rtol to 2**-23
    assert just_under.close(ones + np.float32(2.0**-23), ones)
    assert not just_under.close((ones + np.float32(2.0**-23)).astype(float), ones.astype(float))
    many, half = np.full(SMALL + 1, 2.0), Tolerance(atol=0.0, rtol=0.6)
    assert half.close(many * 1.5, many) and not half.close(many * 2, many)


def test_an_error_report_keeps_five_frames_of_at_most_200_characters_on_one_line():
    sent = protocol.request(7, "micrograd", "topo", [{}])
    frames = ["x" * 300, *(f"engine.py:{i}" for i in range(1, 7))]
    report = error("line one\n  line two", *frames)
    (result,) = protocol.results({"id": 7, "results": [report]}, sent)
    assert result["error"]["message"] == "line one line two"
    assert len(result["error"]["frames"]) == 5 and len(result["error"]["frames"][0]) == 200
    assert result["error"]["frames"][1:] == [f"engine.py:{i}" for i in range(1, 5)]


@pytest.mark.parametrize(
    "reply",
    [
        [7, []],
        {"id": 7, "results": [{"error": "boom"}]},
        {"id": 7, "results": [{"ok": {}}], "extra": 1},
        {"id": 8, "results": [{"ok": {}}]},
        {"id": 7, "results": ({"ok": {}},)},
        {"id": 7, "results": [{"ok": {}}, {"ok": {}}]},
        {"id": 7, "results": [{"ok": 1}]},
        {"id": 7, "results": [{"ok": {}, "error": {}}]},
        {"id": 7, "results": [{"error": {"status": "passed", "message": ""}}]},
        {"id": 7, "results": [{"error": {"status": "error", "frames": "engine.py"}}]},
    ],
)
def test_a_reply_that_is_not_one_answer_or_error_per_case_is_invalid(reply):
    with pytest.raises(protocol.InvalidAnswer):
        protocol.results(reply, protocol.request(7, "micrograd", "topo", [{}]))


def test_topo_in_the_wrong_order():
    grading = session("micrograd.topo", {"topo": lambda case, answer: {"order": [3, 2, 1, 0]}})
    verdict = wrong(walks.check_topo, grading, DAG)
    assert verdict.reason == "build_topo returned an invalid order"
    assert verdict.details[0] == "order (as node numbers): [3, 2, 1, 0]"
    assert "node 2 comes before its operand(s) [0, 1]" in verdict.details
    assert "the root is not last" in verdict.details
    assert verdict.bugs == []


def test_topo_writing_into_a_node_is_named():
    grading = session("micrograd.topo", {"topo": wrote("walk", 2, None, 0.0, 1.0)})
    verdict = wrong(walks.check_topo, grading, DAG)
    assert verdict.reason == "the walk changed a value in place"
    assert verdict.details[0].startswith("build_topo changed n2 in place: it was 0 before, 1 after")


def test_topo_answer_without_an_order_is_the_students_invalid_answer():
    grading = session("micrograd.topo", {"topo": lambda case, answer: {}})
    verdict = wrong(walks.check_topo, grading, DAG)
    assert (verdict.status, verdict.reason) == (
        "error",
        "invalid answer: the answer has no valid 'order'",
    )
    assert "print(build_topo(n3))" in verdict.snippet


def test_topo_with_a_shared_node_twice_is_named():
    grading = session("micrograd.topo", {"topo": lambda case, answer: {"order": [0, 1, 2, 0, 3]}})
    verdict = wrong(walks.check_topo, grading, DAG)
    assert "node(s) [0] appear more than once" in verdict.details
    assert names_bug(verdict, "no-visited-set")


def test_topo_with_foreign_objects_is_an_invalid_answer():
    grading = session("micrograd.topo", {"topo": lambda case, answer: {"order": [0, 1, "n2", 3]}})
    verdict = wrong(walks.check_topo, grading, DAG)
    assert verdict.status == "error"
    assert verdict.reason == "invalid answer: build_topo returned non-nodes"
    assert verdict.details == [] and "print(build_topo(" in verdict.snippet


SHARED6_SCALAR = Dag(
    4,
    (
        ((0, 1.0), (1, 1.0)),
        ((0, 1.0), (1, 1.0), (2, 1.0), (3, 1.0)),
    ),
)
"""n4 = n0 + n1, n5 = n0 + n1 + n2 + n3: six nodes."""


@pytest.mark.parametrize("passes", [1, 2, 4])
def test_backward_right_answers_pass(passes):
    """Four passes: each closure has run 4 times, as many as DAG has nodes (a count, not a
    node number)."""
    grading = session("micrograd.backward")
    walks.check_backward(grading, DAG, passes)
    assert asked(grading) == ["load", "backward"]


def backward_grads(grads: list[float]) -> Tamper:
    def change(case: dict[str, Any], answer: Answer) -> Answer:
        answer["passes"][0]["grads"] = [encode(g) for g in grads]
        return answer

    return change


def test_backward_walking_forwards_is_named():
    """Forwards, n2's closure runs before n3 has given n2 anything: n0 gets only 3."""
    grading = session("micrograd.backward", {"backward": backward_grads([3.0, 0.0, 0.5, 1.0])})
    verdict = wrong(walks.check_backward, grading, DAG)
    assert verdict.reason == "wrong gradients after backward()"
    assert verdict.details == ["n0.grad: expected 4, got 3", "n1.grad: expected -0.5, got 0"]
    assert names_bug(verdict, "topo-not-reversed")


def test_backward_is_given_a_correct_order_where_build_topo_is_graded_alone():
    grading = session("micrograd.backward", {"backward": backward_grads([3.0, 0.0, 0.5, 1.0])})
    verdict = wrong(walks.check_backward, grading, DAG)
    assert grading.asked[-1][2]["order"] == [0, 1, 2, 3]
    assert "micrograd.engine.build_topo = lambda root: [n0, n1, n2, n3]" in verdict.snippet


def test_backward_where_build_topo_is_nested_leaves_the_whole_walk_to_the_student():
    """Karpathy's course builds its order inside ``backward()``: the grader gives none, and the
    snippet sets none."""
    grading = session("micrograd.backward", {"backward": backward_grads([3.0, 0.0, 0.5, 1.0])})
    grading.profile = profiles.load(COURSES / "karpathy-micrograd" / "profile.yaml")
    verdict = wrong(walks.check_backward, grading, DAG)
    assert grading.asked[-1][2]["order"] is None
    assert "build_topo" not in verdict.snippet


def test_backward_shows_the_first_four_of_its_wrong_nodes():
    grading = session("micrograd.backward", {"backward": backward_grads([9.0] * 6)})
    verdict = wrong(walks.check_backward, grading, SHARED6_SCALAR)
    assert [line.split(".")[0] for line in verdict.details] == ["n0", "n1", "n2", "n3"]


@pytest.mark.parametrize("passes", [1, 2])
def test_backward_an_answer_that_is_not_one_result_per_call_is_invalid(passes):
    def one_not_a_result(case: dict[str, Any], answer: Answer) -> Answer:
        return {"passes": [*answer["passes"][:-1], 1]}

    grading = session("micrograd.backward", {"backward": one_not_a_result})
    verdict = wrong(walks.check_backward, grading, DAG, passes)
    assert (verdict.status, verdict.reason) == (
        "error",
        "invalid answer: not one result per backward() call",
    )
    assert verdict.details == [] and verdict.snippet.endswith("n3.grad])")


def test_backward_out_of_time_is_the_verdict_its_caller_gave():
    failure = WrongAnswer("failed", "backward() visits shared nodes again")
    grading = session("micrograd.backward", timeout=("backward",))
    with pytest.raises(WrongAnswer) as raised:
        walks.check_backward(grading, DAG, on_timeout=failure)
    assert raised.value is failure


def test_backward_figure_shows_the_expected_gradients_beside_the_students():
    grading = session("micrograd.backward", {"backward": backward_grads([3.0, 0.0, 0.5, 1.0])})
    n0 = wrong(walks.check_backward, grading, DAG).figure["nodes"][0]
    assert (n0["expected"], n0["got"], n0["wrong"]) == ("4", "3", True)


def test_backward_writing_into_a_node_is_named():
    grading = session("micrograd.backward", {"backward": wrote("walk", 2, None, 0.0, 1.0)})
    verdict = wrong(walks.check_backward, grading, DAG)
    assert verdict.details[0].startswith("backward() changed n2 in place")


def test_backward_without_a_seed_is_named():
    grading = session("micrograd.backward", {"backward": backward_grads([0.0] * 4)})
    verdict = wrong(walks.check_backward, grading, DAG)
    assert "n3.grad: expected 1, got 0" in verdict.details
    assert names_bug(verdict, "no-seed")


def test_backward_second_call_that_resets_says_which_call():
    """Nothing is reset between calls: n2 holds 1.0 in the second, so n0 gets 4 + 3 + 2."""

    def reset(case: dict[str, Any], answer: Answer) -> Answer:
        answer["passes"][1]["grads"] = answer["passes"][0]["grads"]
        return answer

    grading = session("micrograd.backward", {"backward": reset})
    verdict = wrong(walks.check_backward, grading, DAG, 2)
    assert verdict.details[0] == "after backward() call 2: n0.grad: expected 9, got 4"
    assert verdict.details[-1] == ADDS


ADDS = (
    "The course's own words (exercises/micrograd/engine.py, Value.backward's docstring): "
    '"Never reset any gradient here: calling ``backward()`` twice adds the second pass on top '
    'of the first."'
)
"""Told where a second ``backward()`` goes wrong: this course's words for what it does."""


ONCE = (
    "The course's own words (exercises/micrograd/engine.py, Value.backward's docstring): "
    '"call each node\'s ``_backward`` from the last node of the order to the first."'
)
"""Told where a closure ran other than once: this course's words for it."""


def test_backward_running_a_closure_twice_is_named():
    def twice(case: dict[str, Any], answer: Answer) -> Answer:
        answer["passes"][0]["calls"][2] = 2
        return answer

    grading = session("micrograd.backward", {"backward": twice})
    verdict = wrong(walks.check_backward, grading, DAG)
    assert verdict.reason == "a node's _backward ran the wrong number of times"
    assert verdict.details == ["node(s) [2] ran [2] times, expected 1", ONCE]
    assert names_bug(verdict, "no-visited-set")


def test_backward_running_a_closure_twice_costs_nothing_where_the_course_does_not_say_once():
    """Only what the calls did is judged: here the grads, which the tamper leaves right."""

    def twice(case: dict[str, Any], answer: Answer) -> Answer:
        answer["passes"][0]["calls"][2] = 2
        return answer

    grading = session("micrograd.backward", {"backward": twice})
    own = grading.profile.of("micrograd")
    open_calls = {**own.conventions, "calls": Convention("calls", "unspecified")}
    assignments = {"micrograd": dataclasses.replace(own, conventions=open_calls)}
    grading.profile = dataclasses.replace(grading.profile, assignments=assignments)
    walks.check_backward(grading, DAG)


def test_backward_lists_each_closure_run_too_often_with_its_own_count():
    def too_often(case: dict[str, Any], answer: Answer) -> Answer:
        answer["passes"][0]["calls"][2:4] = [2, 3]
        return answer

    grading = session("micrograd.backward", {"backward": too_often})
    verdict = wrong(walks.check_backward, grading, DAG)
    assert verdict.details == ["node(s) [2, 3] ran [2, 3] times, expected 1", ONCE]


@pytest.mark.parametrize(
    ("item", "probe", "check", "entry"),
    [
        ("micrograd.backward", "backward", walks.check_backward, lambda a: a["passes"][0]),
        ("micrograd.zero_grad", "zero_grad", walks.check_zero_grad, lambda a: a),
    ],
    ids=["backward", "zero_grad"],
)
def test_a_walks_gradient_that_is_no_number_is_named_by_its_node(item, probe, check, entry):
    def no_number(case: dict[str, Any], answer: Answer) -> Answer:
        entry(answer)["grads"][0] = "oops"
        return answer

    grading = session(item, {probe: no_number})
    verdict = wrong(check, grading, DAG)
    assert verdict.reason.startswith("invalid answer: n0.grad")


def test_zero_grad_shows_every_node_the_root_reaches_in_order():
    grading = session("micrograd.zero_grad", {"zero_grad": set_entry("grads", 1, 1.5)})
    verdict = wrong(walks.check_zero_grad, grading, DAG)
    assert "for n in [n0, n1, n2, n3]:  # every node the root reaches" in verdict.snippet
    assert "zero_grad(n3)" in verdict.snippet


def test_zero_grad_shows_the_first_four_nodes_it_left():
    grading = session(
        "micrograd.zero_grad",
        {"zero_grad": lambda case, answer: {"grads": [encode(1.5)] * len(answer["grads"])}},
    )
    verdict = wrong(walks.check_zero_grad, grading, SHARED6_SCALAR)
    assert verdict.details == [f"n{i}.grad is 1.5" for i in range(4)]


def test_zero_grad_writing_into_a_node_is_named():
    grading = session("micrograd.zero_grad", {"zero_grad": wrote("walk", 2, None, 0.0, 1.0)})
    verdict = wrong(walks.check_zero_grad, grading, DAG)
    assert verdict.details[0].startswith("zero_grad changed n2 in place")


def test_zero_grad_right_answer_passes():
    grading = session("micrograd.zero_grad")
    walks.check_zero_grad(grading, DAG)
    assert asked(grading) == ["load", "zero_grad"]


def test_zero_grad_leaving_a_leaf_names_it():
    grading = session("micrograd.zero_grad", {"zero_grad": set_entry("grads", 1, 1.5)})
    verdict = wrong(walks.check_zero_grad, grading, DAG)
    assert (verdict.reason, verdict.details) == (
        "zero_grad left gradients behind",
        ["n1.grad is 1.5"],
    )


def test_zero_grad_cost_right_answer_passes():
    grading = session("micrograd.zero_grad")
    walks.check_zero_grad_cost(grading, 6)
    assert asked(grading) == ["load", "zero_grad"]


def test_zero_grad_cost_out_of_time_revisits_shared_nodes():
    grading = session("micrograd.zero_grad", {"zero_grad": revisiting})
    verdict = wrong(walks.check_zero_grad_cost, grading, 6)
    assert verdict.reason == f"zero_grad {walks.EXPONENTIAL}"
    assert verdict.details[0].startswith("it did not finish on a chain of 6 diamonds (19 nodes)")
    assert "depth = 16" in verdict.snippet and "zero_grad(nodes[-1])" in verdict.snippet
    assert names_bug(verdict, "revisits-shared-nodes")
    assert asked(grading) == ["load", "zero_grad", "zero_grad"]
    assert TEST not in grading.aborts  # a verdict, not an abort


@pytest.mark.parametrize("reads", ["hangs", "few"])
def test_zero_grad_cost_out_of_time_is_not_named_unless_it_revisits(reads):
    """A ``zero_grad`` that hangs on the few levels too, or reads each node's ``_prev`` a few
    times there, runs out of time for some other reason: no name."""

    def tamper(case: dict[str, Any], answer: Answer) -> Answer:
        if not case.get("count_reads") or reads == "hangs":
            raise WorkerFailure("timeout", "timed out")
        return answer

    grading = session("micrograd.zero_grad", {"zero_grad": tamper})
    verdict = wrong(walks.check_zero_grad_cost, grading, 6)
    assert verdict.reason == "zero_grad ran out of time on shared nodes"
    assert "again" not in " ".join(verdict.details)
    assert verdict.bugs == []
    assert TEST not in grading.aborts


def test_zero_grad_cost_fails_a_zero_grad_that_is_fast_for_doing_nothing():
    grading = session(
        "micrograd.zero_grad",
        {
            "zero_grad": lambda case, answer: {
                "grads": [encode(0.5 + i) for i in range(len(answer["grads"]))]
            }
        },
    )
    verdict = wrong(walks.check_zero_grad_cost, grading, 6)
    assert verdict.reason == "zero_grad left gradients behind"
    assert verdict.details[0] == "n0.grad is 0.5"
    assert "depth = 6" in verdict.snippet and "not reset:" in verdict.snippet
    assert verdict.bugs == []


def test_zero_grad_walks_with_the_graders_build_topo():
    """A ``zero_grad`` that walks with ``build_topo`` is graded on its own: while it runs, the
    grader's build_topo (a correct order the parent sends as node numbers) stands in for the
    engine's (whether that one is right, or fast, is micrograd.topo's question), and is put
    back after."""
    micrograd = engine("micrograd")

    def own_build_topo(root: Any) -> list[Any]:
        raise AssertionError("the engine's own build_topo ran")

    def zero_grad(root: Any) -> None:
        for node in module.build_topo(root):
            node.grad = 0.0

    module = type(micrograd)("walks_with_build_topo")  # an engine module of its own
    module.Value, module.build_topo, module.zero_grad = micrograd.Value, own_build_topo, zero_grad
    dag = walks.diamonds(40)
    answer = probes.probe_zero_grad(
        module, {"dag": dag.to_json(), "count_reads": True, "order": sorted(dag.reachable())}
    )
    assert module.build_topo is own_build_topo
    assert all(decode(grad) == 0.0 for grad in answer["grads"])
    assert answer["reads"] == [0] * 121  # the order is data: no node's _prev is read


def test_deep_right_answer_passes():
    grading = session("micrograd.deep")
    walks.check_deep(grading, 500)
    assert asked(grading) == ["load", "deep"]


def test_deep_losing_nodes():
    grading = session("micrograd.deep", {"deep": lambda case, answer: {"runs": [[0, 100]]}})
    verdict = wrong(walks.check_deep, grading, 500)
    assert verdict.reason == "build_topo lost nodes of a long chain"
    assert verdict.details == ["it returned 100 entries for the 501 nodes of the chain"]


@pytest.mark.parametrize(
    "runs", [[[0, 250], [251, 250]], [[0, 501], [7, 1]], [[500 - i, 1] for i in range(501)][1:]]
)
def test_deep_a_node_missing_or_twice_fails(runs):
    grading = session("micrograd.deep", {"deep": lambda case, answer: {"runs": runs}})
    assert wrong(walks.check_deep, grading, 500).reason == "build_topo lost nodes of a long chain"


def test_deep_leaves_foreign_objects_in_the_order_to_micrograd_topo():
    """Whether the order holds only nodes is ``check_topo``'s question: here, that each node of
    the chain is in it once."""
    grading = session(
        "micrograd.deep", {"deep": lambda case, answer: {"runs": [[-1, 2], *answer["runs"]]}}
    )
    walks.check_deep(grading, 500)


def test_deep_runs_read_back_as_the_indices_they_stand_for():
    runs = [[3, 2], [-1, 2], [0, 1], [7, 3]]
    assert answers.expand_runs({"runs": runs}, "runs", 8) == [3, 4, -1, -1, 0, 7, 8, 9]


@pytest.mark.parametrize(("extra", "status"), [([], "failed"), ([[0, 1]], "error")])
def test_deep_ten_entries_a_node_are_read_and_one_more_is_invalid(extra, status):
    """The worker keeps at most ten entries a node of what ``build_topo`` returned: an answer
    with more did not come from it."""
    runs = [[0, 501]] * 10 + extra
    grading = session("micrograd.deep", {"deep": lambda case, answer: {"runs": runs}})
    verdict = wrong(walks.check_deep, grading, 500)
    assert verdict.status == status
    if status == "failed":
        assert verdict.details == ["it returned 5010 entries for the 501 nodes of the chain"]
    else:
        assert verdict.reason == "invalid answer: 'runs' has runs out of range"


@pytest.mark.parametrize(
    "runs",
    [
        [[0, 10**12]],  # more indices than the cap, refused before any is made
        [[0, 501], [-1, 5000]],
        [[0, 0]],
        [[-2, 1]],
        [[0, 501, 1]],
        [[0.0, 501]],
        [[True, 501]],
        "0-500",
        [["0", 501]],
        [[0, 501], [-2, 1]],  # one run out of range is enough
        [[0, 501], [0.0, 1]],  # one run out of form is enough
        [[0, 501], "x"],
    ],
)
def test_deep_runs_out_of_form_are_an_invalid_answer(runs):
    with pytest.raises(protocol.InvalidAnswer):
        answers.expand_runs({"runs": runs}, "runs", 5010)


@pytest.mark.parametrize(
    ("assignment", "probe"), [("micrograd", "topo"), ("babygrad", "tensor_backward")]
)
def test_walk_cost_right_answer_passes(assignment, probe):
    grading = session(f"{assignment}.topo")
    walks.check_walk_cost(grading, "scalar" if assignment == "micrograd" else "tensor", 6)
    assert asked(grading) == ["load", probe]


@pytest.mark.parametrize(
    ("assignment", "probe", "walk"),
    [("micrograd", "topo", "build_topo"), ("babygrad", "tensor_backward", "Tensor.backward")],
)
def test_walk_cost_out_of_time_revisits_shared_nodes(assignment, probe, walk):
    tamper = {"tensor_backward": revisiting} if assignment == "babygrad" else None
    grading = session("micrograd.topo", tamper, timeout=(probe,) if tamper is None else ())
    verdict = wrong(
        walks.check_walk_cost, grading, "scalar" if assignment == "micrograd" else "tensor", 6
    )
    assert verdict.reason == f"{walk} {walks.EXPONENTIAL}"
    assert verdict.details[0].startswith("it did not finish on a chain of 6 diamonds (19 nodes)")
    assert "depth = 16" in verdict.snippet
    assert names_bug(verdict, "revisits-shared-nodes")
    assert TEST not in grading.aborts  # a verdict, not an abort


def revisiting(case: dict[str, Any], answer: Answer) -> Answer:
    """A ``Tensor.backward`` that runs out of time on the diamonds and, on the few levels where
    the grader counts, reads every tensor's inputs once per path to it."""
    if not case.get("count_reads"):
        raise WorkerFailure("timeout", "timed out")
    dag = Dag(
        case["dag"]["leaves"],
        tuple(tuple(tuple(p) for p in pairs) for pairs in case["dag"]["nodes"]),
    )
    return answer | {"reads": bugs.paths_from_root(dag)}


@pytest.mark.parametrize("reads", ["hangs", "few"])
def test_walk_cost_out_of_time_is_not_named_unless_it_revisits(reads):
    """A walk that hangs on the few levels too (an endless loop), or reads each tensor's inputs
    a few times there, runs out of time for some other reason: no name."""

    def tamper(case: dict[str, Any], answer: Answer) -> Answer:
        if not case.get("count_reads") or reads == "hangs":
            raise WorkerFailure("timeout", "timed out")
        return answer

    grading = session("babygrad.backward", {"tensor_backward": tamper})
    verdict = wrong(walks.check_walk_cost, grading, "tensor", 6)
    assert verdict.reason == "Tensor.backward ran out of time on shared tensors"
    assert verdict.details[0].startswith("it did not finish on a chain of 6 diamonds (19 nodes)")
    assert "again" not in " ".join(verdict.details)
    assert verdict.bugs == []
    assert asked(grading) == ["load", "tensor_backward", "tensor_backward"]
    assert TEST not in grading.aborts


@pytest.mark.parametrize("walk", ["nothing", "no-op-backward", "out-of-order"])
def test_walk_cost_fails_a_walk_that_is_fast_for_walking_nothing(walk):
    """Doing nothing is fast: the root's gradient alone, or every gradient set without any
    op's backward, or each op's backward before those of the ops that use its result."""

    def tamper(case: dict[str, Any], answer: Answer) -> Answer:
        size = len(answer["grads"])
        if walk == "nothing":
            return {"grads": [None] * (size - 1) + [encode(np.ones(1))], "calls": []}
        if walk == "no-op-backward":
            return {"grads": [encode(np.zeros(1))] * size, "calls": []}
        return answer | {"calls": list(range(1, size))}

    grading = session("babygrad.backward", {"tensor_backward": tamper})
    verdict = wrong(walks.check_walk_cost, grading, "tensor", 6)
    if walk == "out-of-order":
        assert verdict.reason == "Tensor.backward visits tensors out of order"
        assert verdict.details[0] == (
            "n1's backward ran before that of n3, which uses n1: n1's gradient was not complete yet"
        )
    else:
        assert verdict.reason == "Tensor.backward did not reach every tensor"
        assert "the backward of 18 op(s) never ran: n1, n2, n3," in verdict.details[-1]
    assert "for _ in range(6):" in verdict.snippet and "Given.ran" in verdict.snippet
    assert verdict.bugs == []


def test_tensor_backward_right_answer_passes():
    grading = session("babygrad.backward")
    walks.check_tensor_backward(grading, DAG, (2, 3))
    assert asked(grading) == ["load", "tensor_backward"]


def test_tensor_backward_wrong_gradient_names_the_node():
    grading = session(
        "babygrad.backward", {"tensor_backward": set_entry("grads", 2, np.full((2, 3), 0.25))}
    )
    verdict = wrong(walks.check_tensor_backward, grading, DAG, (2, 3))
    assert verdict.reason == "wrong gradients from Tensor.backward()"
    assert len(verdict.details) == 1 and verdict.details[0].startswith("n2.grad:")
    assert "0.5" in verdict.details[0] and "0.25" in verdict.details[0]


@pytest.mark.parametrize("frozen", [(), (1,)])
def test_tensor_backward_with_an_upstream_gradient_right_answer_passes(frozen):
    grading = session("babygrad.backward")
    walks.check_tensor_backward(grading, TREE, (2,), frozen, UPSTREAM)
    assert asked(grading) == ["load", "tensor_backward"]


def test_tensor_backward_ignoring_the_upstream_gradient_is_not_named():
    """Seeded with ones whatever ``grad`` is: each gradient is the known one, not times
    ``grad``. No classic bug's model gives these numbers."""
    grading = session(
        "babygrad.backward",
        {"tensor_backward": walk_grads(TREE.backward()[0], (2,))},
    )
    verdict = wrong(walks.check_tensor_backward, grading, TREE, (2,), (), UPSTREAM)
    assert verdict.details[0] == "n0.grad: expected shape (2,) [ 1., -3.], got shape (2,) [2., 2.]"
    assert verdict.bugs == []
    assert "n2.backward(Tensor(np.array([0.5, -1.5]), requires_grad=False))" in verdict.snippet


def test_tensor_backward_a_gradient_on_a_tensor_not_requiring_grad_fails():
    grading = session(
        "babygrad.backward", {"tensor_backward": set_entry("grads", 1, np.full((2,), -1.0))}
    )
    verdict = wrong(walks.check_tensor_backward, grading, TREE, (2,), (1,))
    assert verdict.details == [
        "n1.grad: expected None (n1 does not require grad), got shape (2,) [-1., -1.]"
    ]
    assert "n1 = Tensor(np.full((2,), 2.0), requires_grad=False)" in verdict.snippet


def test_walk_order_right_answer_passes():
    grading = session("babygrad.backward")
    walks.check_walk_order(grading, DAG)
    assert asked(grading) == ["load", "tensor_backward"]


@pytest.mark.parametrize("rule", ["once", "unspecified"])
def test_walk_order_an_op_backward_called_once_per_input_fails_only_where_the_course_says_once(
    rule,
):
    """needle's text does not say a walk calls each op's gradient once: a walk that calls it
    for each input in turn (consumers first all the same) is a walk; this course's does."""

    def per_input(case: dict[str, Any], answer: Answer) -> Answer:
        return answer | {"calls": [c for c in answer["calls"] for _ in range(2)]}

    grading = session("babygrad.backward", {"tensor_backward": per_input})
    own = grading.profile.of("babygrad")
    stated = own.convention("calls")
    convention = stated if stated.rule == rule else Convention("calls", rule)
    changed = dataclasses.replace(own, conventions={**own.conventions, "calls": convention})
    assignments = {**grading.profile.assignments, "babygrad": changed}
    grading.profile = dataclasses.replace(grading.profile, assignments=assignments)
    if rule == "unspecified":
        walks.check_walk_order(grading, DAG)
        return
    verdict = wrong(walks.check_walk_order, grading, DAG)
    assert verdict.reason == "Tensor.backward visits tensors out of order"
    assert "backward ran twice" in verdict.details[0]
    assert verdict.details[-1] == stated.words  # the course's own, quoted
    assert stated.words.startswith("The course's own words (exercises/babygrad/tensor.py")


def test_walk_order_a_shared_tensor_reached_before_a_tensor_using_it_fails():
    """n0 (a leaf, the grader's op of a tensor) reached before n3, which uses it."""
    grading = session(
        "babygrad.backward",
        {"tensor_backward": lambda case, answer: answer | {"calls": [3, 0, 2, 1]}},
    )
    verdict = wrong(walks.check_walk_order, grading, DAG)
    assert verdict.reason == "Tensor.backward visits tensors out of order"
    assert verdict.details[0].startswith("n0's backward ran before that of n2, which uses n0")
    assert len(verdict.details) == 2  # nothing ran twice: the course's words on it are not said
    assert "n0 = Given(1.0)(Tensor(np.full((1,), 1.0), requires_grad=True))" in verdict.snippet


def test_tensor_backward_walking_forwards_is_named():
    grading = session(
        "babygrad.backward",
        {"tensor_backward": walk_grads((3.0, 0.0, 0.5, 1.0), (2,))},
    )
    verdict = wrong(walks.check_tensor_backward, grading, DAG, (2,))
    assert names_bug(verdict, "topo-not-reversed")


def test_tensor_backward_with_every_leaf_frozen_leaves_every_grad_none():
    grading = session("babygrad.backward")
    walks.check_tensor_backward(grading, TREE, (2,), (0, 1), UPSTREAM)
    grading = session("babygrad.backward", {"tensor_backward": set_entry("grads", 2, UPSTREAM)})
    verdict = wrong(walks.check_tensor_backward, grading, TREE, (2,), (0, 1), UPSTREAM)
    assert verdict.details == [
        "n2.grad: expected None (n2 does not require grad), got shape (2,) [ 0.5, -1.5]"
    ]


@pytest.mark.parametrize("grad", [None, UPSTREAM], ids=["ones", "upstream"])
def test_tensor_backward_on_a_lone_leaf_gives_it_the_upstream_gradient(grad):
    leaf = Dag(1, ())
    grading = session("babygrad.backward")
    walks.check_tensor_backward(grading, leaf, (2,), (), grad)
    grading = session(
        "babygrad.backward", {"tensor_backward": lambda case, answer: answer | {"grads": [None]}}
    )
    verdict = wrong(walks.check_tensor_backward, grading, leaf, (2,), (), grad)
    assert verdict.details[0].startswith("n0.grad: expected shape (2,) [")
    assert verdict.details[0].endswith("got None (never set)")
    assert verdict.snippet.endswith(
        "n0.backward("
        + ("" if grad is None else ("Tensor(np.array([0.5, -1.5]), requires_grad=False)"))
        + ")\nprint([n.grad for n in "
        "(n0, n0)])"
    )


CHAIN16 = Dag(2, (((0, 1.0), (1, 1.0)), *(((k, 1.0), (0, 1.0)) for k in range(2, 15))))
"""n2 = n0 + n1, then n3 ... n15 each the one before plus n0: 16 tensors, 14 ops, all reached."""


def test_a_walk_that_reaches_nothing_lists_the_first_twelve_of_each_in_order():
    run = walks.TensorRun([None] * 15 + [np.ones(1)], [], [])
    with pytest.raises(WrongAnswer) as raised:
        walks.judge_walk(CHAIN16, run, [True] * 16, "snippet")
    assert raised.value.details == [
        "15 of the 16 tensors that require grad have no .grad after backward(): "
        + ", ".join(f"n{i}" for i in range(12)),
        "the backward of 14 op(s) never ran: " + ", ".join(f"n{i}" for i in range(2, 14)),
    ]


def test_a_walk_that_runs_every_op_but_leaves_a_gradient_unset_says_only_that():
    run = walks.TensorRun([np.ones(1), None, np.ones(1)], [2], [])
    with pytest.raises(WrongAnswer) as raised:
        walks.judge_walk(TREE, run, [True] * 3, "snippet")
    assert raised.value.details == [
        "1 of the 3 tensors that require grad have no .grad after backward(): n1"
    ]


def test_a_walk_that_sets_every_gradient_but_skips_an_op_says_only_that():
    run = walks.TensorRun([np.ones(1)] * 4, [3], [])
    with pytest.raises(WrongAnswer) as raised:
        walks.judge_walk(DAG, run, [True] * 4, "snippet")
    assert raised.value.details == ["the backward of 1 op(s) never ran: n2"]


def test_a_wrapped_walk_must_reach_the_leaves_too():
    run = walks.TensorRun([np.ones(1)] * 3, [2, 1], [])
    walks.judge_walk(TREE, walks.TensorRun([np.ones(1)] * 3, [2, 1, 0], []), [True] * 3, "s", True)
    with pytest.raises(WrongAnswer) as raised:
        walks.judge_walk(TREE, run, [True] * 3, "snippet", wrapped=True)
    assert raised.value.details == ["the backward of 1 op(s) never ran: n0"]


@pytest.mark.parametrize(
    ("check", "calls"),
    [
        (walks.check_tensor_backward, [3, 2, 4]),  # no node 4
        (walks.check_tensor_backward, [3, 2, 0]),  # a leaf is no op of its own here
        (walks.check_tensor_backward, [3, "x"]),
        (walks.check_tensor_backward, [3, 2.0]),
        (walks.check_walk_order, [3, 2, 1, 0, -1]),
    ],
    ids=["past-the-end", "leaf", "no-number", "float", "negative"],
)
def test_a_record_of_calls_naming_no_op_is_an_invalid_answer(check, calls):
    grading = session(
        "babygrad.backward", {"tensor_backward": lambda case, answer: answer | {"calls": calls}}
    )
    verdict = wrong(check, grading, DAG, *((2,),) if check is walks.check_tensor_backward else ())
    assert (verdict.status, verdict.reason, verdict.details) == (
        "error",
        "invalid answer: the record of backward calls",
        [],
    )
    assert verdict.snippet.startswith("import numpy as np")


def test_a_tensor_walks_gradient_that_is_no_number_is_named_by_its_node():
    grading = session(
        "babygrad.backward",
        {
            "tensor_backward": lambda case, answer: (
                answer | {"grads": ["oops", *answer["grads"][1:]]}
            )
        },
    )
    verdict = wrong(walks.check_tensor_backward, grading, DAG, (2,))
    assert verdict.reason.startswith("invalid answer: n0.grad")


def test_tensor_backward_judges_only_the_tensors_the_root_reaches():
    """n1 is a leaf nothing uses: never reached, it keeps no gradient; n2, after it, is."""
    unused = Dag(2, (((0, 2.0),),))
    walks.check_tensor_backward(session("babygrad.backward"), unused, (2,))
    grading = session(
        "babygrad.backward", {"tensor_backward": set_entry("grads", 2, np.full((2,), 0.25))}
    )
    verdict = wrong(walks.check_tensor_backward, grading, unused, (2,))
    assert verdict.details[0].startswith("n2.grad: expected shape (2,) [1., 1.]")


def test_tensor_backward_shows_the_first_four_of_its_wrong_tensors():
    grading = session(
        "babygrad.backward",
        {"tensor_backward": walk_grads([9.0] * 16, (1,))},
    )
    verdict = wrong(walks.check_tensor_backward, grading, CHAIN16, (1,))
    assert [line.split(".")[0] for line in verdict.details] == ["n0", "n1", "n2", "n3"]


def test_tensor_backward_figure_shows_the_seeded_gradients_and_none_where_frozen():
    grading = session("babygrad.backward", {"tensor_backward": set_entry("grads", 0, np.zeros(2))})
    figure = wrong(walks.check_tensor_backward, grading, TREE, (2,), (1,), UPSTREAM).figure
    assert [(n["id"], n["expected"], n["got"]) for n in figure["nodes"]] == [
        ("n0", "shape (2,) [ 1., -3.]", "shape (2,) [0., 0.]"),
        ("n1", None, None),
        ("n2", "shape (2,) [ 0.5, -1.5]", "shape (2,) [ 0.5, -1.5]"),
    ]


def test_tensor_backward_with_right_gradients_still_judges_the_walk():
    """Every gradient right, but n2's backward ran before n3's, which uses n2: shown with the
    order the ops ran in."""
    grading = session(
        "babygrad.backward",
        {"tensor_backward": lambda case, answer: answer | {"calls": [2, 3]}},
    )
    verdict = wrong(walks.check_tensor_backward, grading, DAG, (2,))
    assert verdict.reason == "Tensor.backward visits tensors out of order"
    api = grading.assignment("tensor").api
    assert verdict.snippet == tensor_dag_snippet(api, DAG, (2,), (), None, order=True)


SECOND = Dag(2, (((0, 2.0), (1, -1.0)), ((2, 0.5),)))
"""n2 = 2 n0 - n1, n3 = 0.5 n2: ``backward()`` from n2, then from n3. After the first walk
n0, n1, n2 hold 2, -1, 1; after the second, overwritten, 1, -0.5, 0.5 (and n3 1); added to
what the first left, 3, -1.5, 1.5."""


def second_rule(grading: GradingSession, rule: str) -> GradingSession:
    """``grading`` in a course whose second ``backward()`` follows ``rule`` (in this course's
    words where it is this course's rule)."""
    own = grading.profile.of("babygrad")
    walk = dataclasses.replace(own.walk, second_backward=rule)
    stated = own.convention("second_backward")
    convention = stated if stated.rule == rule else Convention("second_backward", rule)
    conventions = {**own.conventions, "second_backward": convention}
    changed = dataclasses.replace(own, walk=walk, conventions=conventions)
    assignments = {**grading.profile.assignments, "babygrad": changed}
    grading.profile = dataclasses.replace(grading.profile, assignments=assignments)
    return grading


def second_grads(grads: tuple[float, ...], walk: str = "second") -> Tamper:
    """The walk from the root (or the ``first`` one) answering ``grads``."""

    def change(case: dict[str, Any], answer: Answer) -> Answer:
        where = answer if walk == "second" else answer["first"]
        where["grads"] = filled(grads, (2,))
        return answer

    return change


@pytest.mark.parametrize("rule", ["overwrite", "unspecified"])
def test_second_walk_right_answer_passes(rule):
    grading = second_rule(session("babygrad.backward"), rule)
    walks.check_second_walk(grading, SECOND, 2, (2,))
    assert asked(grading) == ["load", "tensor_backward"]


OVERWRITES = [
    walks.SECOND_GRADS["overwrite"],
    "The course's own words (exercises/babygrad/tensor.py, Tensor.backward's docstring): "
    "\"A tensor's ledger entry is final once you reach it: store it in ``.grad`` if the tensor "
    'requires grad."',
]
"""What a wrong second walk is told in this course: its rule, in its own words."""


@pytest.mark.parametrize(
    ("rule", "told"), [("overwrite", OVERWRITES), ("unspecified", [walks.EITHER_GRADS])]
)
def test_a_second_walk_that_neither_overwrites_nor_adds_says_the_courses_rule(rule, told):
    tamper = second_grads((0.0, 0.0, 0.0, 1.0))
    grading = second_rule(session("babygrad.backward", {"tensor_backward": tamper}), rule)
    verdict = wrong(walks.check_second_walk, grading, SECOND, 2, (2,))
    assert verdict.reason == "wrong gradients from a second Tensor.backward()"
    assert verdict.details[0] == (
        "after n3.backward(): n0.grad: expected shape (2,) [1., 1.], got shape (2,) [0., 0.]"
    )
    assert verdict.details[-len(told) - 1 :] == [*told, walks.KEPT_STATE]
    assert "n2.backward()  # a walk from a node of the graph" in verdict.snippet
    assert verdict.bugs == []
    assert [(n["expected"], n["got"]) for n in verdict.figure["nodes"][:2]] == [
        ("shape (2,) [1., 1.]", "shape (2,) [0., 0.]"),
        ("shape (2,) [-0.5, -0.5]", "shape (2,) [0., 0.]"),
    ]


def test_a_second_walk_that_adds_fails_where_the_course_overwrites_and_passes_where_it_is_open():
    tamper = second_grads((3.0, -1.5, 1.5, 1.0))
    grading = second_rule(session("babygrad.backward", {"tensor_backward": tamper}), "overwrite")
    verdict = wrong(walks.check_second_walk, grading, SECOND, 2, (2,))
    assert verdict.details[-3:-1] == OVERWRITES
    grading = second_rule(session("babygrad.backward", {"tensor_backward": tamper}), "unspecified")
    walks.check_second_walk(grading, SECOND, 2, (2,))


def test_a_wrong_first_walk_is_told_as_a_walk_of_its_own():
    tamper = second_grads((2.0, 1.0, 1.0, 0.0), walk="first")
    grading = session("babygrad.backward", {"tensor_backward": tamper})
    verdict = wrong(walks.check_second_walk, grading, SECOND, 2, (2,))
    assert verdict.reason == "wrong gradients from Tensor.backward()"
    assert verdict.details == [
        "after n2.backward(): n1.grad: expected shape (2,) [-1., -1.], got shape (2,) [1., 1.]"
    ]


def test_a_second_walk_with_right_gradients_that_skips_an_op_is_told_where():
    grading = session(
        "babygrad.backward", {"tensor_backward": lambda case, answer: answer | {"calls": [3]}}
    )
    verdict = wrong(walks.check_second_walk, grading, SECOND, 2, (2,))
    assert verdict.details == [
        "in the walk from n3, the root built on n2",
        "the backward of 1 op(s) never ran: n2",
        walks.KEPT_STATE,
    ]


def test_a_second_walk_writing_into_a_tensor_is_named():
    grading = session("babygrad.backward", {"tensor_backward": wrote("walk", 2, None, 0.0, 1.0)})
    verdict = wrong(walks.check_second_walk, grading, SECOND, 2, (2,))
    assert verdict.reason == "the walk changed a value in place"
    assert verdict.details[0].startswith("Tensor.backward changed n2 in place")


def test_a_second_walk_shows_the_first_four_of_its_wrong_tensors_then_the_rule():
    grading = session(
        "babygrad.backward",
        {"tensor_backward": walk_grads([9.0] * 16, (2,))},
    )
    verdict = wrong(walks.check_second_walk, grading, CHAIN16, 14, (2,))
    assert [line.split(": ")[1] for line in verdict.details[:4]] == [f"n{i}.grad" for i in range(4)]
    assert all(line.startswith("after n15.backward(): ") for line in verdict.details[:4])
    assert verdict.details[4:] == [*OVERWRITES, walks.KEPT_STATE]


def test_the_grader_ops_return_a_bare_tensor_for_one_input_and_check_their_node():
    """A one-input op of the grader's returns a Tensor (the ops' docstring allows it), and
    each one's backward must be given its own output."""
    babygrad = engine("babygrad")
    case = {"dag": Dag(1, (((0, 2.0),), ((0, 1.0), (1, 1.0)))).to_json(), "shape": [2]}
    nodes, calls, _ = stand_ins.given_tensor(babygrad, case)
    grad = babygrad.Tensor(np.ones(2), requires_grad=False)
    assert isinstance(nodes[1]._op.backward(grad, nodes[1]), babygrad.Tensor)
    assert len(nodes[2]._op.backward(grad, nodes[2])) == 2
    with pytest.raises(ValueError, match="not this op's output"):
        nodes[2]._op.backward(grad, nodes[1])
    assert calls == [1, 2]


KINK = Graph("tensor", (np.zeros((2, 2)),), (Node("relu", (0,)),))
KINK_GRAD = np.array([[1.0, -0.5], [2.0, 0.0]])


@pytest.mark.parametrize("op", ["relu", "abs"])
def test_kink_right_answer_passes(op):
    grading = session(f"babygrad.ops.{op}")
    ops.check_kink(grading, Graph("tensor", KINK.leaves, (Node(op, (0,)),)), KINK_GRAD)
    assert asked(grading) == ["load", "op", "op"]


@pytest.mark.parametrize(
    "got",
    [KINK_GRAD, np.array([[np.inf, -np.inf], [np.inf, np.nan]])],
    ids=["passes-it", "divides-by-sign"],
)
def test_kink_a_gradient_at_zero_fails(got):
    grading = session("babygrad.ops.relu", {"op": at_zero(set_entry("grads", 0, got))})
    verdict = wrong(ops.check_kink, grading, KINK, KINK_GRAD)
    assert verdict.reason == "wrong gradient at 0"
    assert verdict.details[0].startswith("backward: gradient for a:\nexpected shape (2, 2)")
    assert verdict.details[1].startswith(
        "ops.ReLU() passes no gradient where its operand is exactly 0"
    )
    assert "a = Tensor([[0.0, 0.0], [0.0, 0.0]], requires_grad=True)" in verdict.snippet


def test_a_micrograd_result_must_record_its_operands():
    """Right numbers, but ``out._prev`` without ``b``: no walk would ever reach b."""
    mul = Graph("scalar", (1.5, -2.0), (Node("mul", (0, 1)),))
    grading = session("micrograd.ops.mul", {"op": lambda case, answer: answer | {"prev": [0]}})
    verdict = wrong(ops.check_op, grading, mul, np.float64(1.0))
    assert verdict.reason == "the result does not record its operands in _prev"
    assert verdict.details == ["out._prev must hold a, b (the very objects): b is not in it"]
    assert verdict.snippet.endswith(
        "out = a * b\nprint(any(p is a for p in out._prev), any(p is b for p in out._prev))"
    )


@pytest.mark.parametrize(
    ("prev", "status", "details"),
    [
        ([0, "1"], "error", []),
        (None, "error", []),
        ([], "failed", ["out._prev must hold a, b (the very objects): a, b are not in it"]),
    ],
    ids=["not-numbers", "not-a-list", "empty"],
)
def test_a_micrograd_results_prev_must_be_node_numbers_holding_every_operand(prev, status, details):
    mul = Graph("scalar", (1.5, -2.0), (Node("mul", (0, 1)),))
    grading = session("micrograd.ops.mul", {"op": lambda case, answer: answer | {"prev": prev}})
    verdict = wrong(ops.check_op, grading, mul, np.float64(1.0))
    assert (verdict.status, verdict.details) == (status, details)
    if status == "error":
        assert verdict.reason == "invalid answer: out._prev"


# ----------------------------------------------------------------------- accumulation


ABCA = Graph(  # (a * b + c) * a: the uses apart are copies of a, b, c, a, each its own
    "scalar", (1.5, -2.0, 0.5), (Node("mul", (0, 1)), Node("add", (3, 2)), Node("mul", (4, 0)))
)


@pytest.mark.parametrize(
    ("graph", "out_grad", "preload"),
    [(SQUARE, 1.0, [0.5]), (SQUARE, -2.5, [0.5]), (ABCA, 1.0, [0.5, -1.0, 2.0])],
    ids=["square", "square-scaled", "four-uses"],
)
def test_accumulate_right_answer_passes(graph, out_grad, preload):
    grading = session("micrograd.accumulate")
    accumulation.check_accumulate(grading, graph, out_grad, preload)
    assert asked(grading) == ["load", "accumulate", "accumulate"]  # the uses apart, preloaded


def overwriting_mul(case: dict[str, Any], answer: Answer) -> Answer:
    """A ``*`` whose closure assigns with ``=``: of ``a * a`` preloaded, a.grad ends at the
    last use's ``a * out_grad``, on every graph of that one op (the check asks ``a * a`` of
    its own, alone, before it names the bug)."""
    graph = Graph.from_json(case["graph"])
    if case["run"] == "preloaded" and graph.nodes == (Node("mul", (0, 0)),):
        answer["preloaded"][0] = encode(float(graph.leaves[0]) * case["out_grad"])
    return answer


def test_accumulate_overwriting_names_the_op_and_the_bug():
    """``a * a`` with ``=``: a.grad ends at 3 (the last use), not 0.5 + 6."""
    grading = session("micrograd.accumulate", {"accumulate": overwriting_mul})
    verdict = wrong(accumulation.check_accumulate, grading, SQUARE, 1.0, [0.5])
    assert verdict.reason == "mul: a _backward overwrote a gradient"
    assert verdict.details == ["a.grad (held 0.5 before; its uses add 6): expected 6.5, got 3"]
    assert "a.grad = 0.5  # already there, from another use" in verdict.snippet
    assert names_bug(verdict, "overwrite-grad")
    a = verdict.figure["nodes"][0]
    assert (a["expected"], a["got"], a["wrong"]) == ("6.5", "3", True)


def test_accumulate_shows_the_first_four_of_its_wrong_leaves():
    grading = session(
        "micrograd.accumulate", {"accumulate": on_run("preloaded", every_entry("preloaded", 9.0))}
    )
    verdict = wrong(accumulation.check_accumulate, grading, SUM6, 1.0, [0.5] * 6)
    assert [line.split(" ")[0] for line in verdict.details] == [
        "a.grad",
        "b.grad",
        "c.grad",
        "d.grad",
    ]


def test_accumulate_uses_apart_the_oracles_disagree_on_say_nothing(monkeypatch):
    grading = session(
        "micrograd.accumulate", {"accumulate": on_run("separate", set_entry("grads", 0, 0.0))}
    )
    monkeypatch.setattr(grading.oracles, "confirmed", lambda *args: False)
    accumulation.check_accumulate(grading, SQUARE, 1.0, [0.5])
    assert asked(grading) == ["load", "accumulate"]  # the preloaded run is never asked
    assert TEST not in grading.failures


def test_accumulate_figure_shows_each_leafs_preload_plus_its_uses():
    grading = session(
        "micrograd.accumulate", {"accumulate": on_run("preloaded", every_entry("preloaded", 9.0))}
    )
    verdict = wrong(accumulation.check_accumulate, grading, ABCA, 1.0, [2.0, -1.0, 0.5])
    # a: 2 + (-3) + (-2.5), b: -1 + 2.25, c: 0.5 + 1.5 (the uses apart of four-uses above)
    assert [n["expected"] for n in verdict.figure["nodes"][:3]] == ["-3.5", "1.25", "2"]


def test_accumulate_losing_a_use_without_overwriting_names_no_bug():
    """``a * a`` ending at 3.5, the preload plus one use: a contribution was lost (e.g. the
    closure hung on an operand and replaced), but no ``=`` leaves the preload in."""
    grading = session(
        "micrograd.accumulate", {"accumulate": on_run("preloaded", set_entry("preloaded", 0, 3.5))}
    )
    verdict = wrong(accumulation.check_accumulate, grading, SQUARE, 1.0, [0.5])
    assert verdict.bugs == []


def not_gradable(
    grading: GradingSession,
    graph: Graph,
    out_grad: float = 1.0,
    preload: tuple[float, ...] = (0.5,),
) -> tuple[str, ...]:
    """What must pass before ``check_accumulate`` can grade this example; the test is charged
    nothing (no failure, no abort recorded)."""
    with pytest.raises(NotGradable) as raised:
        accumulation.check_accumulate(grading, graph, out_grad, list(preload))
    assert TEST not in grading.failures and TEST not in grading.aborts
    return raised.value.needs


@pytest.mark.parametrize(
    "broken",
    [
        error("RuntimeError: boom", "engine.py:3 in _backward"),
        error("NotImplementedError: write __mul__", status="missing"),
        "timeout",
        "zero gradient",
        "wrong value",
        "not a number",
        "never set",
    ],
)
def test_accumulate_is_not_gradable_where_the_uses_apart_go_wrong(broken):
    """``a * a`` whose uses apart (the op's own closures on fresh copies) raise, are missing,
    hang, or give numbers that are not the oracles': ``=`` vs ``+=`` cannot be told, and only
    micrograd.ops.mul may charge for it."""
    if broken == "timeout":
        grading = session("micrograd.accumulate", timeout=("accumulate",))
    else:
        answers = {
            "zero gradient": set_entry("grads", 0, 0.0),
            "wrong value": set_entry("values", 2, 10.0),
            "not a number": lambda case, answer: answer | {"grads": ["x", "y"]},
            "never set": lambda case, answer: answer | {"grads": [None, answer["grads"][1]]},
        }
        tamper = answers[broken] if isinstance(broken, str) else lambda case, answer: broken
        grading = session("micrograd.accumulate", {"accumulate": on_run("separate", tamper)})
    assert not_gradable(grading, SQUARE) == ("micrograd.ops.mul",)
    assert asked(grading)[-1] == "accumulate"  # the preloaded run is never asked


TWICE = Graph("scalar", (0.5,), (Node("tanh", (0,)), Node("tanh", (0,)), Node("add", (1, 2))))
SUB = Graph("scalar", (1.5, -2.0), (Node("sub", (0, 1)),))


def wrong_copy(case: dict[str, Any], answer: Answer) -> Answer:
    """A run of the uses apart gone wrong: the separate run's second copy's gradient zero; in
    a composition run (whose gradients the grader computes from the record) that copy's
    value."""
    return set_entry("values" if "record" in answer else "grads", 1, 0.0)(case, answer)


def wrong_with_own(*own: str) -> Tamper:
    """Wrong gradients from the uses apart on the engine's own ops, and from the composition
    run wherever it keeps one of ``own`` the engine's."""

    def tamper(case: dict[str, Any], answer: Answer) -> Answer:
        if case["run"] == "separate" or (
            case["run"] == "composition" and set(case["own"]) & set(own)
        ):
            return wrong_copy(case, answer)
        return answer

    return tamper


@pytest.mark.parametrize(
    ("graph", "own", "needs"),
    [
        (TWICE, ("add",), ("micrograd.ops.add",)),
        (TWICE, ("tanh",), ("micrograd.ops.tanh",)),
        (TWICE, (), ("micrograd.ops.tanh", "micrograd.ops.add")),  # neither alone: both
        (SUB, ("mul",), ("micrograd.ops.mul",)),
        (SUB, ("add", "mul"), ("micrograd.ops.add", "micrograd.ops.mul")),
    ],
)
def test_accumulate_waits_for_the_primitives_that_go_wrong(graph, own, needs):
    """``tanh(a) + tanh(a)`` and ``a - b`` (built as ``a + (-b)``, ``-b = b * -1``) going
    wrong apart, though right on the grader's primitives: each primitive they call is left the
    engine's own alone, and those that go wrong so are the ones to fix first."""
    grading = session("micrograd.accumulate", {"accumulate": wrong_with_own(*own)})
    assert not_gradable(grading, graph, preload=(0.5,) * len(graph.leaves)) == needs
    # the separate run, the composition, then each of the two primitives alone
    assert asked(grading) == ["load", *["accumulate"] * 4]


def test_accumulate_of_sugar_composed_wrong_waits_for_sugar():
    def wrong_everywhere(case: dict[str, Any], answer: Answer) -> Answer:
        return wrong_copy(case, answer) if case["run"] != "preloaded" else answer

    grading = session("micrograd.accumulate", {"accumulate": wrong_everywhere})
    assert not_gradable(grading, SUB, preload=(0.5, 2.0)) == ("micrograd.sugar",)
    assert asked(grading) == ["load", "accumulate", "accumulate"]  # separate, composition


RELU = Graph("scalar", (1.5,), (Node("relu", (0,)),))


def test_accumulate_probe_says_which_results_are_their_own_operand():
    """``relu`` that returns ``self``: right where x > 0 (the walk seeds the operand), and no
    node of its own, so a preloaded gradient is lost to no ``=``."""
    micrograd = engine("micrograd")

    class ReturnsSelf(micrograd.Value):  # type: ignore[name-defined]
        def relu(self) -> Any:
            return self

    module = type(micrograd)("returns_self")  # an engine module of its own
    module.Value = ReturnsSelf
    for graph, aliased in [(RELU, [1]), (TWICE, [])]:
        case = {"graph": graph.to_json(), "out_grad": 1.0, "preload": [0.5]}
        for run in ("separate", "composition"):
            answer = probes.probe_accumulate(module, case | {"run": run, "own": ["relu"]})
            assert answer["returns_operand"] == aliased
        assert (
            probes.probe_accumulate(engine("micrograd"), case | {"run": "separate"})[
                "returns_operand"
            ]
            == []
        )


def test_accumulate_waits_for_an_op_whose_result_is_its_operand():
    """The uses apart right, but an op's result is its operand: not gradable until that op's
    item passes (never overwrite-grad, though the preload is lost)."""

    def aliased(case: dict[str, Any], answer: Answer) -> Answer:
        return answer | {"returns_operand": [1]} if case["run"] == "separate" else answer

    grading = session("micrograd.accumulate", {"accumulate": aliased})
    assert not_gradable(grading, RELU) == ("micrograd.ops.relu",)
    assert asked(grading) == ["load", "accumulate"]  # the preloaded run is never asked

    def aliased_tanh(case: dict[str, Any], answer: Answer) -> Answer:
        if case["run"] == "separate" or "tanh" in case.get("own", ()):
            return answer | {"returns_operand": [1]}
        return answer

    grading = session("micrograd.accumulate", {"accumulate": aliased_tanh})
    assert not_gradable(grading, TWICE) == ("micrograd.ops.tanh",)


def test_accumulate_while_shrinking_a_failure_passes_an_example_it_cannot_grade():
    """A failure found before: an example that cannot be graded is not the smaller failing
    one Hypothesis looks for, and ends nothing."""
    grading = session(
        "micrograd.accumulate", {"accumulate": on_run("separate", set_entry("grads", 0, 0.0))}
    )
    grading.failures[TEST] = WrongAnswer("failed", "an earlier example")
    accumulation.check_accumulate(grading, SQUARE, 1.0, [0.5])
    assert TEST not in grading.aborts


def test_ledger_right_answer_passes():
    grading = session("babygrad.accumulate")
    accumulation.check_ledger(grading, DAG, (2,))
    assert asked(grading) == ["load", "tensor_backward", "tensor_backward"]


@pytest.mark.parametrize(("kept", "named"), [(1.0, True), (3.0, False)])
def test_ledger_losing_a_contribution_names_the_shared_node(kept, named):
    """On the DAG (not on its tree), n0 keeps one contribution of its two. The walk reaches n3,
    then n2 (as the reference's): a ledger that overwrites keeps n2's, 1 of 4. Keeping n3's,
    3, is not what overwriting does in that order: no name."""

    def lose(case: dict[str, Any], answer: Answer) -> Answer:
        if case["dag"] == DAG.to_json():
            answer["grads"][0] = encode(np.full((2,), kept))
        return answer

    grading = session("babygrad.accumulate", {"tensor_backward": lose})
    verdict = wrong(accumulation.check_ledger, grading, DAG, (2,))
    assert verdict.reason == "Tensor.backward lost a contribution to a shared tensor"
    assert verdict.details == [
        "n0.grad (used 2 times; the uses apart add up to shape (2,) "
        f"[4., 4.]): expected shape (2,) [4., 4.], got shape (2,) "
        f"[{kept:g}., {kept:g}.]"
    ]
    assert names_bug(verdict, "overwrite-grad") is named
    assert "n0 = Given(1.0)(Tensor(np.full((2,), 1.0), requires_grad=True))" in verdict.snippet


@pytest.mark.parametrize("walk", ["nothing", "no-op-backward"])
def test_ledger_fails_a_walk_that_propagates_nothing(walk):
    """Both sides agree (no gradient but the root's, or zeros everywhere), yet nothing was
    summed: no op's backward ran."""

    def tamper(case: dict[str, Any], answer: Answer) -> Answer:
        size = len(answer["grads"])
        grads = (
            [None] * (size - 1) + [encode(np.ones(2))]
            if walk == "nothing"
            else [encode(np.zeros(2))] * size
        )
        return {"grads": grads, "calls": []}

    grading = session("babygrad.accumulate", {"tensor_backward": tamper})
    verdict = wrong(accumulation.check_ledger, grading, DAG, (2,))
    assert verdict.reason == "Tensor.backward propagated nothing"
    assert verdict.bugs == []


def on_dag(dag: Dag, tamper: Tamper) -> Tamper:
    """``tamper`` applied to ``Tensor.backward``'s run on ``dag`` only (not on its tree)."""
    return lambda case, answer: tamper(case, answer) if case["dag"] == dag.to_json() else answer


def test_ledger_leaves_a_walk_that_ran_an_op_again_to_the_walks_item(monkeypatch):
    """Where the course does not say each op's backward runs once (needle's), the calls are
    read once each, but a walk that ran one again (an order listing a shared tensor twice)
    summed what the second run added: that is the walk's item's, and the ledger's check
    grades nothing here (needle's planted revisits-shared-nodes cost needle.accumulate too)."""
    monkeypatch.setattr(Convention, "charged", property(lambda self: False))

    def again(case: dict[str, Any], answer: Answer) -> Answer:
        answer["grads"][0] = encode(np.full((2,), 99.0))
        return {**answer, "calls": [*answer["calls"], answer["calls"][-1]]}

    grading = session("babygrad.accumulate", {"tensor_backward": on_dag(DAG, again)})
    accumulation.check_ledger(grading, DAG, (2,))
    assert TEST not in grading.failures
    grading = session(
        "babygrad.accumulate",
        {"tensor_backward": on_dag(DAG, set_entry("grads", 0, np.full((2,), 99.0)))},
    )
    assert wrong(accumulation.check_ledger, grading, DAG, (2,)).reason.startswith(
        "Tensor.backward lost"
    )


def test_ledger_both_runs_wrap_the_leaves():
    grading = session("babygrad.accumulate")
    accumulation.check_ledger(grading, DAG, (2,))
    assert [case.get("wrap_leaves") for _, _, case in grading.asked] == [True, True]


def test_ledger_a_tensor_used_once_is_not_its_business():
    """n1 is used once: its gradient on the DAG is babygrad.backward's to grade."""
    grading = session(
        "babygrad.accumulate", {"tensor_backward": on_dag(DAG, set_entry("grads", 1, np.zeros(2)))}
    )
    accumulation.check_ledger(grading, DAG, (2,))
    assert TEST not in grading.failures


def test_ledger_fails_a_walk_that_propagates_nothing_on_the_dag_alone():
    def nothing(case: dict[str, Any], answer: Answer) -> Answer:
        return {"grads": [None] * (len(answer["grads"]) - 1) + [encode(np.ones(2))], "calls": []}

    grading = session("babygrad.accumulate", {"tensor_backward": on_dag(DAG, nothing)})
    verdict = wrong(accumulation.check_ledger, grading, DAG, (2,))
    assert verdict.reason == "Tensor.backward propagated nothing"
    assert "n0 = Given(1.0)(Tensor(" in verdict.snippet
    assert "for n in Given.ran])" in verdict.snippet  # the order the backwards ran in


def test_ledger_an_error_on_the_tree_shows_the_tree_with_its_leaves_wrapped():
    tree, _ = DAG.unrolled()
    grading = session(
        "babygrad.accumulate", {"tensor_backward": on_dag(tree, lambda c, a: error("boom"))}
    )
    verdict = wrong(accumulation.check_ledger, grading, DAG, (2,))
    assert verdict.status == "error"
    assert (
        f"n{tree.size - 1} = " in verdict.snippet and "n0 = Given(1.0)(Tensor(" in verdict.snippet
    )


SHARED6 = Dag(6, (tuple((i, 1.0) for i in range(6)), (*((i, 1.0) for i in range(6)), (6, 1.0))))
"""Six leaves, each used by n6 and by n7 = (the leaves) + n6."""


def test_ledger_checks_a_shared_tensor_numbered_after_one_used_once():
    once_then_shared = Dag(2, (((0, 1.0),), ((1, 1.0), (2, 1.0)), ((1, 1.0), (3, 1.0))))
    lose = on_dag(once_then_shared, set_entry("grads", 1, np.full((2,), 1.0)))  # n1: 2 of it
    grading = session("babygrad.accumulate", {"tensor_backward": lose})
    verdict = wrong(accumulation.check_ledger, grading, once_then_shared, (2,))
    assert verdict.details[0].startswith("n1.grad (used 2 times;")


def test_ledger_grades_nothing_of_a_tensor_the_tree_run_left_one_copy_of_without_grad():
    """babygrad.backward's fault: the uses apart do not add up to anything."""
    tree, owners = DAG.unrolled()
    unset = on_dag(
        tree,
        lambda case, answer: (
            answer
            | {
                "grads": [
                    None if i == owners.index(0) else g for i, g in enumerate(answer["grads"])
                ]
            }
        ),
    )
    lose = on_dag(DAG, set_entry("grads", 0, np.full((2,), 1.0)))
    grading = session("babygrad.accumulate", {"tensor_backward": lambda c, a: lose(c, unset(c, a))})
    accumulation.check_ledger(grading, DAG, (2,))
    assert TEST not in grading.failures


def test_ledger_shows_the_first_four_of_its_wrong_tensors():
    grading = session(
        "babygrad.accumulate", {"tensor_backward": on_dag(SHARED6, every_entry("grads", 0.0))}
    )
    verdict = wrong(accumulation.check_ledger, grading, SHARED6, (2,))
    assert [line.split(".")[0] for line in verdict.details] == ["n0", "n1", "n2", "n3"]


def test_ledger_grades_nothing_on_a_walk_out_of_order():
    """n0 reached before n2, which uses it, so n2's contribution comes too late: the walk's
    fault (babygrad.backward's), not the ledger's."""

    def early(case: dict[str, Any], answer: Answer) -> Answer:
        if case["dag"] == DAG.to_json():
            answer["grads"][0] = encode(np.full((2,), 3.0))
            answer["calls"] = [3, 0, 2, 1]
        return answer

    grading = session("babygrad.accumulate", {"tensor_backward": early})
    accumulation.check_ledger(grading, DAG, (2,))
    assert TEST not in grading.failures


# ----------------------------------------------------------------------- broadcasting

BROADCAST = Graph(
    "tensor", (np.arange(6.0).reshape(2, 3) / 3, np.array([0.5, -1.0, 2.0])), (Node("mul", (0, 1)),)
)
BROADCAST_GRAD = np.array([[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]])


def test_broadcast_right_answer_passes():
    grading = session("babygrad.broadcasting")
    broadcasting.check_broadcast(grading, BROADCAST, BROADCAST_GRAD)
    assert asked(grading) == ["load", "broadcast", "broadcast", "broadcast"]


def test_broadcast_each_example_is_asked_about_itself():
    grading = session("babygrad.broadcasting")
    swapped = Graph("tensor", BROADCAST.leaves[::-1], BROADCAST.nodes)
    for graph in (BROADCAST, swapped, BROADCAST):
        broadcasting.check_broadcast(grading, graph, BROADCAST_GRAD)
    assert TEST not in grading.failures


def test_broadcast_a_gradient_that_is_no_number_is_named_by_its_operand():
    def no_number(answer: Answer) -> Answer:
        answer["grads"][0] = "oops"
        return answer

    grading = session("babygrad.broadcasting", {"broadcast": implicit(no_number)})
    verdict = wrong(broadcasting.check_broadcast, grading, BROADCAST, BROADCAST_GRAD)
    assert verdict.reason.startswith("invalid answer: gradient 0")


def test_broadcast_an_op_right_only_on_the_drawn_values_is_not_gradable():
    """``np.power(a, a)`` for ``a ** b`` is right where a == b, as a shrunk example may be
    (ones everywhere); on the same op holding ``generic`` values it is wrong: the reduction
    cannot be judged until the op's own item passes (that one costs babygrad.ops.pow alone)."""
    ones = Graph("tensor", (np.ones(3), np.ones((2, 3))), (Node("pow", (0, 1)),))

    def power_of_itself(case: dict[str, Any], answer: Answer) -> Answer:
        wide = np.broadcast_to(Graph.from_json(case["graph"]).leaves[0], (2, 3))
        if case["run"] == "explicit" and np.any(wide != 1.0):
            answer["value"] = encode(np.power(wide, wide))
        return answer

    grading = session("babygrad.broadcasting", {"broadcast": power_of_itself})
    with pytest.raises(NotGradable) as raised:
        broadcasting.check_broadcast(grading, ones, np.ones((2, 3)))
    assert raised.value.needs == ("babygrad.ops.pow",)
    assert TEST not in grading.failures


def implicit(change: Callable[[Answer], Answer]) -> Tamper:
    """``change`` applied to the implicit run's answer only."""
    return lambda case, answer: change(answer) if case["run"] == "implicit" else answer


def test_broadcast_not_summed_back_is_named():
    def unsummed(answer: Answer) -> Answer:
        answer["grads"][1] = encode(np.broadcast_to(decode(answer["grads"][1]), (2, 3)))
        return answer

    grading = session("babygrad.broadcasting", {"broadcast": implicit(unsummed)})
    verdict = wrong(broadcasting.check_broadcast, grading, BROADCAST, BROADCAST_GRAD)
    assert verdict.reason == "broadcast gradients not summed back"
    assert verdict.details == ["gradient for b (shape (3,)): expected shape (3,), got shape (2, 3)"]
    assert names_bug(verdict, "broadcast-no-sum")


def test_broadcast_a_reduction_that_returns_nothing_is_not_gradable():
    """``unbroadcast`` returning None: every gradient is a 0-d NaN, those of the operands
    broadcast beforehand too, where the shapes were the same and nothing needed summing. That
    run is not the oracles': nothing can be compared, and the example waits for the op's own
    item (which fails the same way)."""

    def nothing(case: dict[str, Any], answer: Answer) -> Answer:
        answer["grads"] = [{"shape": [], "data": ["nan"]}] * 2
        return answer

    grading = session("babygrad.broadcasting", {"broadcast": nothing})
    with pytest.raises(NotGradable) as raised:
        broadcasting.check_broadcast(grading, BROADCAST, BROADCAST_GRAD)
    assert raised.value.needs == ("babygrad.ops.mul",)
    assert asked(grading) == ["load", "broadcast"]  # the implicit run is never asked
    assert TEST not in grading.failures


def test_broadcast_a_reduction_that_sums_to_zeros_is_not_gradable():
    """``unbroadcast`` returning zeros: both runs agree (zeros summed are zeros), but the
    operands broadcast beforehand are not the oracles', so nothing is earned either."""

    def zeros(case: dict[str, Any], answer: Answer) -> Answer:
        answer["grads"] = [encode(np.zeros_like(decode(g))) for g in answer["grads"]]
        return answer

    grading = session("babygrad.broadcasting", {"broadcast": zeros})
    with pytest.raises(NotGradable):
        broadcasting.check_broadcast(grading, BROADCAST, BROADCAST_GRAD)


@pytest.mark.parametrize("run", ["explicit", "implicit"])
def test_broadcast_an_op_that_raises(run):
    """Raising on the operands broadcast beforehand is the op's own item's business (not
    gradable until it passes); raising only where broadcasting happens is this item's."""

    def raises(case: dict[str, Any], answer: Answer) -> Answer:
        return (
            error("ValueError: operands could not be broadcast") if case["run"] == run else answer
        )

    grading = session("babygrad.broadcasting", {"broadcast": raises})
    if run == "explicit":
        with pytest.raises(NotGradable):
            broadcasting.check_broadcast(grading, BROADCAST, BROADCAST_GRAD)
        assert TEST not in grading.failures
    else:
        assert (
            wrong(broadcasting.check_broadcast, grading, BROADCAST, BROADCAST_GRAD).status
            == "error"
        )


def test_broadcast_an_explicit_run_that_is_not_numbers_is_not_gradable():
    def unreadable(case: dict[str, Any], answer: Answer) -> Answer:
        return {"value": answer["value"]} if case["run"] == "explicit" else answer

    grading = session("babygrad.broadcasting", {"broadcast": unreadable})
    with pytest.raises(NotGradable) as raised:
        broadcasting.check_broadcast(grading, BROADCAST, BROADCAST_GRAD)
    assert raised.value.needs == ("babygrad.ops.mul",)


def test_broadcast_an_explicit_run_leaving_a_gradient_unset_is_not_gradable():
    def unset(case: dict[str, Any], answer: Answer) -> Answer:
        if case["run"] == "explicit":
            answer["grads"][0] = None
        return answer

    grading = session("babygrad.broadcasting", {"broadcast": unset})
    with pytest.raises(NotGradable):
        broadcasting.check_broadcast(grading, BROADCAST, BROADCAST_GRAD)


def test_broadcast_not_gradable_names_the_ops_item_as_the_course_names_it(monkeypatch):
    monkeypatch.setattr(profiles.Profile, "item_id", lambda self, item: "needle.ops.multiply")
    grading = session("babygrad.broadcasting", {"broadcast": lambda case, answer: error("no")})
    with pytest.raises(NotGradable) as raised:
        broadcasting.check_broadcast(grading, BROADCAST, BROADCAST_GRAD)
    assert raised.value.needs == ("needle.ops.multiply",)


def test_broadcast_a_wrong_value_where_operands_broadcast_is_wrong():
    def off(answer: Answer) -> Answer:
        answer["value"] = encode(decode(answer["value"]) + 1)
        return answer

    grading = session("babygrad.broadcasting", {"broadcast": implicit(off)})
    verdict = wrong(broadcasting.check_broadcast, grading, BROADCAST, BROADCAST_GRAD)
    assert [line.split(":")[0] for line in verdict.details] == ["out.data"]
    grading = session(
        "babygrad.broadcasting", {"broadcast": implicit(lambda a: a | {"value": None})}
    )
    verdict = wrong(broadcasting.check_broadcast, grading, BROADCAST, BROADCAST_GRAD)
    assert verdict.details[0].startswith("out.data: expected shape (2, 3)\n[[")
    assert verdict.details[0].endswith("got None (never set)")


def test_broadcast_while_shrinking_a_failure_passes_an_example_it_cannot_grade():
    grading = session("babygrad.broadcasting", {"broadcast": lambda case, answer: error("no")})
    earlier = grading.failures[TEST] = WrongAnswer("failed", "an earlier example")
    broadcasting.check_broadcast(grading, BROADCAST, BROADCAST_GRAD)
    assert grading.failures[TEST] is earlier


def test_broadcast_a_wrong_explicit_run_the_oracles_disagree_on_says_nothing(monkeypatch):
    def halved(case: dict[str, Any], answer: Answer) -> Answer:
        answer["grads"] = [encode(decode(g) / 2) for g in answer["grads"]]
        return answer

    grading = session("babygrad.broadcasting", {"broadcast": halved})
    monkeypatch.setattr(grading.oracles, "confirmed", lambda *args: False)
    broadcasting.check_broadcast(grading, BROADCAST, BROADCAST_GRAD)
    assert asked(grading) == ["load", "broadcast"]
    assert TEST not in grading.failures


def test_broadcast_averaged_instead_of_summed_is_wrong_but_not_named():
    def averaged(answer: Answer) -> Answer:
        full = BROADCAST_GRAD * BROADCAST.leaves[0]
        answer["grads"][1] = encode(full.mean(axis=0))
        return answer

    grading = session("babygrad.broadcasting", {"broadcast": implicit(averaged)})
    verdict = wrong(broadcasting.check_broadcast, grading, BROADCAST, BROADCAST_GRAD)
    assert len(verdict.details) == 1
    assert verdict.details[0].startswith("gradient for b (shape (3,)): expected shape (3,) [")
    assert verdict.bugs == []


def test_summed_back_sums_prepended_and_stretched_axes():
    """By the oracles (the reference, confirmed by finite differences), never by a reduction of
    the grader's own."""
    grading = session("babygrad.broadcasting")
    full = np.arange(24.0).reshape(2, 3, 4)

    def summed(shape: tuple[int, ...]) -> list:
        return broadcasting.summed_back(grading, full, np.zeros(shape)).tolist()

    assert summed((3, 4)) == full.sum(axis=0).tolist()
    assert summed((3, 1)) == full.sum(axis=(0, 2)).reshape(3, 1).tolist()
    assert summed((2, 3, 4)) == full.tolist()


# ---------------------------------------------------------------------------- the session

TANH_CASE = {"graph": TANH.to_json(), "out_grad": 1.0}


def test_the_session_counts_keeps_and_shows_each_request_a_check_asks():
    grading = session("micrograd.ops.tanh")
    ops.check_op(grading, TANH, np.asarray(1.0))
    ops.check_op(grading, TANH, np.asarray(-2.5))
    assert grading.checks == 2
    assert [probe for _, probe, _ in grading.asked] == ["op", "op"]
    examples = grading.examples[TEST]
    assert examples.count == 2 and len(examples.first) == 2
    assert "out.grad = -2.5" in examples.latest


def test_a_failing_check_keeps_what_it_asked_and_was_answered():
    """What ``grader.grading.reproduce`` asks a new worker again."""
    t = math.tanh(0.5)
    grading = session("micrograd.ops.tanh", {"op": set_entry("grads", 0, 1 - t)})
    verdict = wrong(ops.check_op, grading, TANH, np.asarray(1.0))
    ((request, result),) = grading.failed_calls[TEST][verdict.snippet]
    assert request == grading.asked[-1] and request[1] == "op"
    assert decode(result["ok"]["grads"][0]) == 1 - t


def test_a_test_keeps_the_calls_of_its_latest_failing_checks_by_snippet(monkeypatch):
    """At most ``FAILED_CALLS`` examples, the latest last: one that fails again moves to the
    end, and the oldest is let go."""
    monkeypatch.setattr(session_module, "FAILED_CALLS", 2)
    grading = session("micrograd.ops.tanh", {"op": set_entry("grads", 0, 9.0)})
    a, b, a_again, c = (
        wrong(ops.check_op, grading, TANH, np.asarray(g)).snippet for g in (1.0, 2.0, 1.0, 3.0)
    )
    assert len({a, b, c}) == 3 and a_again == a
    assert list(grading.failed_calls[TEST]) == [a, c]
    assert grading.answered is None


def test_a_check_inside_a_check_leaves_the_outer_one_what_it_asked():
    """A check that runs another (and catches its verdict) keeps every request of its own run,
    the inner one's too, under its own example alone; and nothing once it is over."""

    @remembers_verdict
    def outer(grading: GradingSession) -> None:
        grading.ask("micrograd", "op", TANH_CASE, "before")
        with pytest.raises(WrongAnswer):
            ops.check_op(grading, TANH, np.asarray(1.0))
        grading.ask("micrograd", "op", TANH_CASE, "after")
        raise WrongAnswer("failed", "the outer check's verdict", [], "outer")

    grading = session("micrograd.ops.tanh", {"op": set_entry("grads", 0, 9.0)})
    wrong(outer, grading)
    assert list(grading.failed_calls[TEST]) == ["outer"]
    assert len(grading.failed_calls[TEST]["outer"]) == 3
    assert grading.answered is None


def test_a_request_asked_outside_any_check_is_answered_and_kept_by_no_check():
    grading = session("micrograd.ops.tanh")
    answer = grading.ask("micrograd", "op", TANH_CASE, "a snippet")
    assert float(answer.value) == pytest.approx(math.tanh(0.5))
    assert grading.failed_calls == {} and grading.answered is None


def test_an_error_is_the_students_message_with_its_frames_in_order():
    frames = ("z.py:9 in backward", "a.py:1 in helper")
    grading = session("micrograd.ops.tanh", {"op": lambda case, answer: error("KeyError", *frames)})
    verdict = wrong(ops.check_op, grading, TANH, np.asarray(1.0))
    assert (verdict.status, verdict.reason) == ("error", "KeyError")
    assert verdict.details == ["  at z.py:9 in backward", "  at a.py:1 in helper"]


def test_try_ask_on_a_missing_function_is_none_and_charges_the_test_nothing():
    grading = session(
        "micrograd.ops.tanh",
        {"op": lambda case, answer: error("not implemented: tanh", status="missing")},
    )
    assert grading.try_ask("micrograd", "op", TANH_CASE) is None
    assert TEST not in grading.aborts


def test_planned_requests_are_answered_from_one_batch_and_not_asked_again():
    grading = session("micrograd.ops.tanh")
    cases = [TANH_CASE, {"graph": TANH.to_json(), "out_grad": -2.5}]
    grading.plan([("micrograd", "op", case) for case in cases])
    answers = [grading.ask("micrograd", "op", case, "") for case in cases]
    assert asked(grading) == ["load", "op"]
    assert [float(a.grads[0]) for a in answers] == pytest.approx(
        [1 - math.tanh(0.5) ** 2, -2.5 * (1 - math.tanh(0.5) ** 2)]
    )


def test_a_test_stops_once_it_used_six_request_budgets(monkeypatch):
    """An item with no budget of its own has 5 s a request: its test stops after 30 s (by a
    clock of the test's, not the machine's)."""
    now = [0.0]
    clock = types.SimpleNamespace(monotonic=lambda: now[0], process_time=lambda: now[0])
    monkeypatch.setattr(stopwatch, "time", clock)
    grading = session("an.item.without.a.budget")
    grading.ask("micrograd", "op", TANH_CASE, "")
    now[0] = 30.0
    grading.ask("micrograd", "op", TANH_CASE, "")
    now[0] = 30.5
    with pytest.raises(Aborted):
        grading.ask("micrograd", "op", TANH_CASE, "")
    abort = grading.aborts[TEST]
    assert abort.status == "timeout" and "more than 30 s in all" in abort.reason


# --------------------------------------------------------------- an answer's own checks


def _array(*numbers: float) -> dict[str, Any]:
    return {"shape": [len(numbers)], "data": list(numbers)}


def test_a_report_of_as_many_changes_as_a_worker_sends_is_read_whole():
    """The worker reports at most ``MAX_REPORTED`` changes: that many is an answer."""
    change = {"phase": "forward", "target": 0, "during": 1}
    report = [
        {**change, "before": _array(float(i)), "after": _array(i + 0.5)}
        for i in range(probes.untouched.MAX_REPORTED)
    ]
    found = answers.changes({"mutated": report}, 2)
    assert len(found) == probes.untouched.MAX_REPORTED
    with pytest.raises(protocol.InvalidAnswer, match="not a short list"):
        answers.changes({"mutated": [*report, report[0]]}, 2)


@pytest.mark.parametrize(
    "pair",
    [[0, _array(1.0), 0], [1, _array(1.0)], ["0", _array(1.0)]],
    ids=["three-long", "a-later-node", "not-a-number"],
)
def test_what_a_recorded_node_adds_names_an_earlier_node(pair):
    """A pair of (an earlier node, its Jacobian), exactly: anything else is invalid, not
    read as one."""
    nodes = [{"value": _array(1.0)}, {"value": _array(2.0), "adds": [pair]}]
    with pytest.raises(protocol.InvalidAnswer, match="what node 1 adds is malformed"):
        answers.record({"record": {"nodes": nodes, "named": [0, 1]}}, "tensor", 2)
