"""Pure ops: an op that writes into what it is given (its input's array, ``out_grad``) fails its
own item, and the feedback says which value changed, from what to what, and where.

The planted bugs of this family (``tests/helpers/planted.py``,
``tests/engines/needle-hw1/planted.yaml``) are right in value and gradient: only the write gives
them away. Their blame (their own item and ``*.graphs`` only) is ``tests/grading/test_blame.py``'s
and ``tests/flows/test_courses.py``'s; here, what the student reads. The watch itself
(``grader.worker.probes.untouched``) and the parent's validation of its report
(``grader.worker.answers.changes``) are tested in milliseconds below.
"""

from __future__ import annotations

import numpy as np
import pytest

from grader.checks import graphs, ops, untouched, walks
from grader.layout import COURSES
from grader.worker import answers, protocol
from grader.worker.probes.untouched import OUT_GRAD, Watch
from tests.helpers.fake_worker import (
    DAG,
    SCALAR,
    TANH,
    TREE,
    UPSTREAM,
    Answer,
    Tamper,
    session,
    wrong,
)
from tests.helpers.grading import ENGINES, grade_items
from tests.helpers.planted import CATALOGUE, Bug, course_bugs, plant

NEEDLE = COURSES / "needle-hw1"
NEEDLE_BUG = next(
    b
    for b in course_bugs(ENGINES / "needle-hw1" / "planted.yaml")
    if b.name == "compute-writes-into-a"
)

FEEDBACK = [
    (
        CATALOGUE["babygrad.ops.relu:forward-into-its-input"],
        "forward changed its input in place",
        [
            "ReLU.forward changed its input a in place: it was ",
            " before, ",
            " after",
            "print(a.data)",
        ],
    ),
    (
        CATALOGUE["babygrad.ops.mul_scalar:scales-out-grad-in-place"],
        "backward changed a value it was given in place",
        [
            "MulScalar.backward changed out_grad in place: it was ",
            "out_grad = Tensor(",
            "grads = op.backward(out_grad, out)",
            "print(out_grad.data)",
        ],
    ),
    (
        CATALOGUE["micrograd.ops.relu:clamps-its-operand"],
        "forward changed its input in place",
        ["a.relu() changed its input a in place: it was ", "print(a.data)"],
    ),
    (
        NEEDLE_BUG,
        "forward changed its input in place",
        ["EWiseAdd.compute changed its input a in place: it was ", "print(a.numpy())"],
    ),
]


@pytest.mark.parametrize(
    ("bug", "reason", "lines"), FEEDBACK, ids=[b.label for b, _, _ in FEEDBACK]
)
def test_the_feedback_names_the_value_changed(tmp_path, bug: Bug, reason: str, lines: list[str]):
    if bug is NEEDLE_BUG:
        submission = plant(tmp_path, bug, reference=NEEDLE / "reference")
        options = {"rubric": NEEDLE / "rubric.yaml", "reference": NEEDLE / "reference"}
    else:
        submission, options = plant(tmp_path, bug), {}
    item = grade_items(submission, only=[bug.item], **options)[bug.item]
    assert item["score"] < item["max_score"]
    assert item["reason"] == reason
    phase = "forward" if reason.startswith("forward") else "backward"
    for line in [*lines, untouched.FIXES[phase]]:
        assert line in item["feedback"], item["feedback"]


# --------------------------------------------------------------------------- the watch


class Holder:
    """A node whose value a call may write into, or rebind."""

    def __init__(self, data: object) -> None:
        self.data = data


def watched(call, *holders: Holder) -> list[dict]:
    watch = Watch()
    with watch.phase("forward", {i: (lambda h=h: h.data) for i, h in enumerate(holders)}, 3):
        call()
    return watch.changes


def test_the_watch_sees_a_write_into_an_array_and_a_rebinding():
    a, b = Holder(np.array([-1.0, 2.0], dtype=np.float32)), Holder(1.5)

    def write() -> None:
        np.maximum(a.data, 0, out=a.data)
        b.data = 2.5

    (first, second) = watched(write, a, b)
    assert first == {
        "phase": "forward",
        "target": 0,
        "during": 3,
        "before": {"shape": [2], "data": [-1.0, 2.0]},
        "after": {"shape": [2], "data": [0.0, 2.0]},
    }
    assert (second["target"], second["after"]["data"]) == (1, [2.5])


def test_the_watch_takes_nan_for_nan_and_leaves_what_is_no_number_to_the_value_checks():
    a, b = Holder(np.array([np.nan, 1.0])), Holder("not a number")

    def rewrite() -> None:
        a.data = np.array([np.nan, 1.0])
        b.data = "still not one"

    assert watched(rewrite, a, b) == []


def test_a_build_reports_each_change_once_with_the_op_that_made_it():
    watch = Watch()
    step = watch.steps(lambda node: node.data, ops_from=1)
    a = Holder(np.array([-1.0, 2.0]))
    step(0, a)
    a.data[0] = 0.0  # the op making node 1 writes into a
    step(1, Holder(np.array([0.0, 2.0])))
    step(2, Holder(3.0))  # the next op leaves everything alone
    assert [(c["target"], c["during"], c["after"]["data"]) for c in watch.changes] == [
        (0, 1, [0.0, 2.0])
    ]


def test_a_call_that_raises_reports_nothing():
    a = Holder(np.zeros(2))

    def broken() -> None:
        a.data += 1
        raise ValueError("the engine's own error")

    watch = Watch()
    with pytest.raises(ValueError), watch.phase("backward", {0: lambda: a.data}):
        broken()
    assert watch.report() == {}


# ----------------------------------------------------------------- the parent's judgement


def report(**change: object) -> dict:
    entry = {
        "phase": "backward",
        "target": OUT_GRAD,
        "during": 1,
        "before": {"shape": [1], "data": [1.0]},
        "after": {"shape": [1], "data": [3.0]},
    }
    return {"mutated": [{**entry, **change}]}


def test_a_reported_change_is_decoded_and_measured():
    (change,) = answers.changes(report(), 2)
    assert (change.phase, change.target, change.during) == ("backward", OUT_GRAD, 1)
    assert (
        change.describe()
        == "it was shape (1,) [1.] before, shape (1,) [3.] after (largest change 2)"
    )


def test_a_reported_change_that_changed_nothing_is_no_change():
    same = {"shape": [1], "data": ["nan"]}
    assert answers.changes(report(before=same, after=same), 2) == ()
    assert answers.changes({}, 2) == ()


@pytest.mark.parametrize(
    "answer",
    [
        {"mutated": "everything"},
        {"mutated": [{"phase": "forward"}]},
        report(phase="sideways"),
        report(target=2),
        report(target=True),
        report(during=-1),
        report(after={"shape": [2], "data": [1.0]}),
        {"mutated": report()["mutated"] * 9},
    ],
)
def test_a_malformed_report_is_an_invalid_answer(answer):
    with pytest.raises(protocol.InvalidAnswer):
        answers.changes(answer, 2)


# ------------------------------------------------- the checks, on a worker reporting changes


def reporting(change: dict) -> Tamper:
    """The reference's answer, with ``change`` reported."""

    def tamper(case: dict, answer: Answer) -> Answer:
        return {**answer, **report(**change)}

    return tamper


def test_an_op_changing_its_input_fails_and_shows_it():
    grading = session("micrograd.ops.tanh", {"op": reporting({"phase": "forward", "target": 0})})
    verdict = wrong(ops.check_op, grading, TANH, np.asarray(1.0))
    assert (verdict.status, verdict.reason) == ("failed", "forward changed its input in place")
    assert verdict.details == [
        "a.tanh() changed its input a in place: it was shape (1,) [1.] before, shape (1,) [3.] "
        "after (largest change 2)",
        untouched.FIXES["forward"],
    ]
    assert verdict.snippet.endswith("out._backward()\nprint(a.data)")


def test_a_graph_names_the_op_that_changed_a_node_while_it_ran():
    change = {"phase": "forward", "target": 0, "during": 2}
    grading = session("micrograd.graphs", {"graph": reporting(change)})
    verdict = wrong(graphs.check_graph, grading, SCALAR)
    assert verdict.details[0].startswith("c = a * b changed a in place: it was ")
    assert verdict.snippet.endswith("print(a.data)")


def test_a_walk_changing_the_gradient_it_was_given_fails_the_walk():
    grading = session("babygrad.backward", {"tensor_backward": reporting({"phase": "walk"})})
    verdict = wrong(walks.check_tensor_backward, grading, TREE, (2,), (), UPSTREAM)
    assert verdict.reason == "the walk changed a value in place"
    assert verdict.details[0].startswith(
        "Tensor.backward changed the gradient given to backward() in place"
    )


def test_a_malformed_report_is_the_students_error():
    grading = session("micrograd.topo", {"topo": reporting({"phase": "walk", "target": 9})})
    verdict = wrong(walks.check_topo, grading, DAG)
    assert (verdict.status, verdict.reason) == (
        "error",
        "invalid answer: a changed value names no value of this example",
    )
