"""The grader's recording ops (``grader.worker.recording``) and the gradients the trusted side
computes from what they recorded (``grader.checks.records``), the record decoded as it arrives
(``grader.worker.answers.record``).

Where ``micrograd.sugar`` and ``babygrad.tensor_ops`` grade how operators are composed, the
worker only records what the student's code builds: the grader's primitive ops make nodes with
no closure of their own, and a node of the student's own is measured by what its backward adds.
The trusted side then computes the gradients with its oracles. Shown here: a record of the
reference is the graph as composed; the gradients computed from it are the oracles'; a
student's own closures and ``Function``s count by what they add; a record that is not one is
an invalid answer; and the worker's parts hold no closure and call no backward of the grader's.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from grader.checks import records
from grader.language.graphs import Graph, Node
from grader.worker import answers, probes, protocol
from grader.worker.engines import load_engine
from grader.worker.recording import Record, recording_values
from tests.helpers.fake_worker import session
from tests.helpers.grading import CORRECT_ENGINES, REFERENCE

SUB = Graph("scalar", (1.5, -2.0), (Node("sub", (0, 1)),))
RDIV = Graph("scalar", (-0.5,), (Node("rdiv", (0,), 2.0),))
RSUB = Graph(
    "tensor",
    (np.array([[1.0, -2.0], [0.5, 3.0]]),),
    (Node("rsub", (0,), 2.0), Node("sum", (1,), None)),
)


def answer_of(probe: str, engine: Any, graph: Graph) -> dict[str, Any]:
    """The probe's answer, as it crosses from the worker: plain JSON."""
    return json.loads(json.dumps(probes.PROBES[probe](engine, {"graph": graph.to_json()})))


def test_the_reference_composes_a_minus_b_as_a_plus_b_times_minus_one():
    answer = answer_of("sugar", load_engine(REFERENCE, "micrograd"), SUB)
    record = answers.record(answer, "scalar", SUB.size)
    made, named = record.made, record.named
    ops = [(m.op, m.args, m.param) for m in made]
    # a, b, the -1 that -b wraps, b * -1, a + (b * -1)
    assert ops == [
        (None, (), None),
        (None, (), None),
        (None, (), None),
        ("mul", (1, 2), None),
        ("add", (0, 3), None),
    ]
    assert float(made[2].value) == -1.0 and named == (0, 1, 4)
    assert all(not m.adds for m in made)  # leaves: their closures add nothing


@pytest.mark.parametrize("graph", [SUB, RDIV], ids=["a - b", "2 / a"])
@pytest.mark.parametrize("engine", ["reference", "value_equality"])
def test_the_gradients_of_a_record_are_the_oracles(graph, engine):
    """value_equality gives ``-`` and the reflected forms closures of their own: they count by
    what they add, measured one at a time."""
    grading = session("micrograd.sugar")
    answer = answer_of("sugar", load_engine(CORRECT_ENGINES[engine], "micrograd"), graph)
    record = answers.record(answer, "scalar", graph.size)
    got = records.named_gradients(grading, "scalar", record)
    expected = grading.oracles.expected(graph)
    assert len(got) == graph.size  # every named node's, the leaves' first
    leaves = got[: len(graph.leaves)]
    assert all(np.isclose(g, e) for g, e in zip(leaves, expected.grads, strict=True))
    if engine == "value_equality":
        assert any(m.adds for m in record.made)


def test_a_function_of_the_students_own_counts_by_its_backward():
    """``2 - t`` routed to a ``Function`` the student wrote (not one of the course's): its
    backward is asked once per number of its result, and the gradients follow."""
    engine = load_engine(REFERENCE, "babygrad")
    ops = engine.ops

    class RSub(ops.Function):
        def __init__(self, number: float) -> None:
            self.number = number

        def forward(self, a: np.ndarray) -> np.ndarray:
            return self.number - a

        def backward(self, out_grad: Any, node: Any) -> Any:
            return engine.Tensor(-out_grad.data, requires_grad=False)

    original = engine.Tensor.__rsub__
    engine.Tensor.__rsub__ = lambda self, other: RSub(other)(self)
    try:
        answer = answer_of("routing", engine, RSUB)
    finally:
        engine.Tensor.__rsub__ = original
    record = answers.record(answer, "tensor", RSUB.size)
    made = record.made
    assert [m.op for m in made] == [None, None, "sum"] and made[1].adds[0][1].shape == (2, 2, 2, 2)
    grading = session("babygrad.tensor_ops")
    got = records.named_gradients(grading, "tensor", record)
    assert np.allclose(got[0], -np.ones((2, 2)))


def tampered(change: Any) -> dict[str, Any]:
    answer = answer_of("sugar", load_engine(REFERENCE, "micrograd"), SUB)
    change(answer["record"])
    return answer


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r["nodes"][3].update(op="div"),  # not one of the grader's primitives
        lambda r: r["nodes"][3].update(args=[1, 3]),  # an operand made after the node
        lambda r: r["nodes"][3].update(args=[1]),  # the wrong arity
        lambda r: r["nodes"][4].update(param=True),
        lambda r: r["nodes"][2].update(adds=[[5, {"shape": [], "data": [1.0]}]]),
        lambda r: r["nodes"][2].update(adds=[[0, {"shape": [2], "data": [1.0, 2.0]}]]),
        lambda r: r.update(named=[0, 1, 9]),
        lambda r: r.update(named=[0, 4]),  # not one per node of the graph
        lambda r: r.update(nodes=[]),
    ],
    ids=[
        "op",
        "later operand",
        "arity",
        "param",
        "adds later",
        "adds shape",
        "named",
        "count",
        "empty",
    ],
)
def test_a_record_that_is_not_one_is_an_invalid_answer(change):
    with pytest.raises(protocol.InvalidAnswer):
        answers.record(tampered(change), "scalar", 3)


def test_the_grader_primitives_make_nodes_without_closures():
    """What the worker's recording ops build carries no derivative: the nodes they make keep
    the engine's do-nothing ``_backward``."""
    engine = load_engine(REFERENCE, "micrograd")
    record = Record()
    with recording_values(engine, record):
        a, b = engine.Value(1.5), engine.Value(-2.0)
        out = (a * b).tanh()
    out.grad = 1.0
    for node in record.nodes:
        node._backward()
    assert a.grad == b.grad == 0.0
    assert [record.made.get(i, {}).get("op") for i in range(len(record.nodes))] == [
        None,
        None,
        "mul",
        "tanh",
    ]
    assert engine.Value(1.0) * engine.Value(2.0) is not None  # restored on the way out
    assert "__init__" in vars(engine.Value) and vars(engine.Value)["__mul__"].__name__ == (
        "__mul__"
    )
