"""The walks, on grader-made graphs whose local gradients are known: ``build_topo``,
``backward()``, ``zero_grad``, ``Tensor.backward``, and what they cost on shared nodes."""

from __future__ import annotations

from functools import partial

import numpy as np

from grader.checks import bugs
from grader.checks.figures import dag_figure
from grader.checks.judge import WrongAnswer, mismatch
from grader.grading.session import GradingSession, recorded
from grader.language.dags import Dag, diamonds
from grader.language.snippets import (
    DAG_HELPER,
    IMPORTS,
    TENSOR_HELPER,
    TENSOR_IMPORTS,
    dag_snippet,
    tensor_dag_snippet,
)
from grader.worker import protocol

EXPONENTIAL = "visits shared nodes again: exponential time"


def chain_snippet(length: int) -> str:
    """A chain of nodes as long as the graded one, then the student's ``build_topo``."""
    return "\n".join([IMPORTS["scalar"].replace("Value", "Value, build_topo"),
                      "node = Value(1.0)", f"for _ in range({length}):",
                      "    node = Value(0.0, (node,))",
                      "print(len(build_topo(node)))"])


def diamond_snippet(assignment: str) -> str:
    """A chain of diamonds whose depth the student can raise and watch the walk's time
    double, if it visits shared nodes again."""
    if assignment == "micrograd":
        setup = [IMPORTS["scalar"].replace("Value", "Value, build_topo"), DAG_HELPER,
                 "node = Value(1.0)"]
        level = ["    left = given(Value(0.0, (node,)), (node, 1.0))",
                 "    right = given(Value(0.0, (node,)), (node, 1.0))",
                 "    node = given(Value(0.0, (left, right)), (left, 0.5), (right, 0.5))"]
        walk = "build_topo(node)"
    else:
        setup = [TENSOR_IMPORTS, TENSOR_HELPER, "node = Tensor(np.ones(1))"]
        level = ["    left, right = Given(1.0)(node), Given(1.0)(node)",
                 "    node = Given(0.5, 0.5)(left, right)"]
        walk = "node.backward()"
    return "\n".join(["import time", *setup,
                      "depth = 16  # one more level doubles the time of a walk that revisits",
                      "for _ in range(depth):", *level, "start = time.process_time()", walk,
                      'print(depth, "levels:", round(time.process_time() - start, 3), "s")'])


@recorded
def check_topo(session: GradingSession, dag: Dag, on_timeout: WrongAnswer | None = None) -> None:
    snippet = dag_snippet(dag, "print(build_topo({root}))")
    answer = session.ask("micrograd", "topo", {"dag": dag.to_json()}, lambda: snippet,
                      on_timeout)
    order = protocol.field(answer, "order", list)
    if not all(type(i) is int for i in order):
        raise WrongAnswer("error", "invalid answer: build_topo returned non-nodes", [],
                           snippet)
    problems = dag.topo_problems(order)
    if problems:
        found = bugs.diagnose_topo(dag, order)
        raise WrongAnswer("failed", "build_topo returned an invalid order",
                           [f"order (as node numbers): {order}", *problems], snippet, found)


@recorded
def check_backward(session: GradingSession, dag: Dag, passes: int = 1) -> None:
    """``backward()`` over grader closures (and a correct ``build_topo``)."""
    calls = "\n".join(["{root}.backward()"] * passes)
    snippet = dag_snippet(dag, calls + "\nprint([n.grad for n in build_topo({root})])")
    answer = session.ask("micrograd", "backward", {"dag": dag.to_json(), "passes": passes},
                      lambda: snippet)
    results = protocol.field(answer, "passes", list)
    if len(results) != passes or not all(isinstance(r, dict) for r in results):
        raise WrongAnswer("error", "invalid answer from backward()", [], snippet)
    expected = dag.backward(passes)
    tol = session.tolerances["micrograd"]
    live = dag.reachable()
    for number, (result, want) in enumerate(zip(results, expected, strict=True), 1):
        label = f"after backward() call {number}: " if passes > 1 else ""
        grads = session.decoded(result, "grads", [f"n{i}.grad" for i in range(dag.size)],
                              [()] * dag.size, snippet)
        calls_made = protocol.field(result, "calls", list)
        twice = [i for i, c in enumerate(calls_made)
                 if i in live and i >= dag.leaves and c != number]
        if twice:
            found = bugs.diagnose_calls(calls_made, number)
            raise WrongAnswer("failed", "a node's _backward ran the wrong number of times",
                               [f"{label}node(s) {twice} ran {[calls_made[i] for i in twice]}"
                                f" times, expected {number}"], snippet, found)
        wrong = [m for i, (got, exp) in enumerate(zip(grads, want, strict=True))
                 if (m := mismatch(f"{label}n{i}.grad", got, np.float64(exp), tol))]
        if wrong:
            found = bugs.diagnose_backward(dag, grads, number)
            raise WrongAnswer("failed", "wrong gradients after backward()", wrong[:4],
                               snippet, found, partial(dag_figure, dag, want, grads, tol))


@recorded
def check_zero_grad(session: GradingSession, dag: Dag) -> None:
    snippet = dag_snippet(dag, "for n in build_topo({root}):\n    n.grad = 1.0\n"
                               "zero_grad({root})\nprint([n.grad for n in build_topo({root})])")
    answer = session.ask("micrograd", "zero_grad", {"dag": dag.to_json()}, lambda: snippet)
    grads = session.decoded(answer, "grads", [f"n{i}.grad" for i in range(dag.size)],
                          [()] * dag.size, snippet)
    live = dag.reachable()
    left = [f"n{i}.grad is {float(g)}" for i, g in enumerate(grads)
            if i in live and (g is None or float(g) != 0.0)]
    if left:
        raise WrongAnswer("failed", "zero_grad left gradients behind", left[:4], snippet)


@recorded
def check_deep(session: GradingSession, length: int) -> None:
    """``build_topo`` over a chain of ``length`` grader nodes returns each node once (in
    any order: whether the order is valid is ``micrograd.topo``'s question)."""
    snippet = chain_snippet(length)
    answer = session.ask("micrograd", "deep", {"length": length}, lambda: snippet)
    order = protocol.field(answer, "order", list)
    if sorted(i for i in order if type(i) is int) != list(range(length + 1)):
        raise WrongAnswer("failed", "build_topo lost nodes of a long chain",
                           [f"it returned {len(order)} entries for the {length + 1:,} "
                            "nodes of the chain"], snippet)


@recorded
def check_walk_cost(session: GradingSession, assignment: str, depth: int) -> None:
    """The walk of ``assignment`` over a chain of ``depth`` diamonds finishes within the
    item's CPU budget, which a walk that revisits shared nodes (2**depth visits) does not.
    micrograd's order is also checked (that is ``micrograd.topo``'s subject); babygrad's
    gradients are not: summing them on shared tensors is ``babygrad.accumulate``'s."""
    dag = diamonds(depth)
    budget = session.budgets.get(session.current_item, 5.0)
    failure = WrongAnswer(
        "failed", f"{'build_topo' if assignment == 'micrograd' else 'Tensor.backward'} "
        f"{EXPONENTIAL}",
        [f"it did not finish on a chain of {depth} diamonds ({dag.size} nodes) within "
         f"{budget:g} s of CPU time: each shared node was walked again from every path to "
         "it, 2 ** depth times", "Each level added to `depth` below doubles the time."],
        diamond_snippet(assignment), [bugs.BUGS["revisits-shared-nodes"].describe()])
    if assignment == "micrograd":
        check_topo(session, dag, on_timeout=failure)
    else:
        tensor_backward(session, dag, (1,), tensor_dag_snippet(dag, (1,)), on_timeout=failure)


def tensor_backward(session: GradingSession, dag: Dag, shape: tuple[int, ...], snippet: str,
                     on_timeout: WrongAnswer | None = None) -> list[np.ndarray | None]:
    """Every node's gradient after the student's ``Tensor.backward`` on grader-made ops."""
    answer = session.ask("babygrad", "tensor_backward",
                      {"dag": dag.to_json(), "shape": list(shape)}, lambda: snippet,
                      on_timeout)
    return session.decoded(answer, "grads", [f"n{i}.grad" for i in range(dag.size)],
                         [shape] * dag.size, snippet)


@recorded
def check_tensor_backward(session: GradingSession, dag: Dag, shape: tuple[int, ...]) -> None:
    """``Tensor.backward`` over grader-made weighted-sum ops: the walk and the ledger."""
    snippet = tensor_dag_snippet(dag, shape)
    grads = tensor_backward(session, dag, shape, snippet)
    (want,) = dag.backward(1)
    tol = session.tolerances["babygrad"]
    live = dag.reachable()
    wrong = [m for i, got in enumerate(grads)
             if i in live and (m := mismatch(f"n{i}.grad", got, np.full(shape, want[i]), tol))]
    if wrong:
        found = bugs.diagnose_tensor_backward(dag, grads)
        expected = [np.full(shape, w) for w in want]
        raise WrongAnswer("failed", "wrong gradients from Tensor.backward()", wrong[:4],
                           snippet, found, partial(dag_figure, dag, expected, grads, tol))
