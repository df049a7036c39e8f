"""Classic student bugs, recognised by predicting what the buggy engine would answer.

Each diagnosis replays the failing example under a model of one bug, in plain numpy, and names
the bug when the student's numbers match that model. A name is a hint attached to a failure
the judge already found; it never changes a verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.checks.judge import Tolerance
from grader.language.dags import Dag
from grader.language.graphs import Graph, evaluate
from grader.worker.probes import numeric_vjp


@dataclass(frozen=True)
class Bug:
    id: str
    title: str
    fix: str

    def describe(self) -> str:
        return f"{self.id}: {self.title}. Fix: {self.fix}"


BUGS = {bug.id: bug for bug in [
    Bug("overwrite-grad", "gradient overwritten with = instead of accumulated with +=",
        "in every _backward closure (and the grads ledger) add into the gradient with +=, "
        "so a node used twice receives both contributions"),
    Bug("topo-not-reversed", "backward walks the topological order forwards",
        "iterate over reversed(topo): the output's gradient must be known before its "
        "operands'"),
    Bug("no-seed", "the output gradient is not seeded with 1",
        "set self.grad = 1.0 on the node backward() is called on, before the walk"),
    Bug("no-visited-set", "build_topo visits shared nodes more than once",
        "keep a visited set (by identity) and skip nodes already in it"),
    Bug("revisits-shared-nodes", "the walk goes into a shared node again from every path to "
        "it (exponential time), although each node appears once in the result",
        "check whether a node was visited before walking into its operands, and skip it if so"),
    Bug("tanh-derivative", "tanh derivative written as 1 - t instead of 1 - t**2",
        "d tanh(x)/dx = 1 - tanh(x)**2"),
    Bug("broadcast-no-sum", "broadcast backward does not sum over stretched or prepended axes",
        "sum out_grad over the axes broadcasting added or stretched, then reshape to the "
        "input's shape"),
    Bug("transpose-same-axes", "transpose backward reuses the forward permutation",
        "transpose out_grad by the inverse permutation (np.argsort(axes))"),
    Bug("summation-shape", "summation backward loses the reduced axes' shape",
        "reshape out_grad so the summed axes have size 1, then broadcast to the input shape"),
    Bug("matmul-no-transpose", "matmul backward without transposes",
        "grad_a = out_grad @ b^T and grad_b = a^T @ out_grad (swap the last two axes)"),
]}


def _matches(got: Sequence[np.ndarray | None], predicted: Sequence[np.ndarray],
             tol: Tolerance) -> bool:
    return all(g is not None and tol.close(np.asarray(g), np.asarray(p))
               for g, p in zip(got, predicted, strict=True))


def _walk(graph: Graph, overwrite: bool) -> list[np.ndarray]:
    """Every node's gradient from a reverse walk over the graph, each op's own backward exact
    (up to central differences); ``overwrite`` models ``=`` where ``+=`` belongs."""
    values = evaluate(graph)
    grads = [np.zeros(v.shape) for v in values]
    grads[-1] = np.ones(values[-1].shape)
    for index in range(graph.size - 1, len(graph.leaves) - 1, -1):
        node = graph.nodes[index - len(graph.leaves)]
        parts = numeric_vjp(node.op, node.param, [values[a] for a in node.args], grads[index])
        for arg, part in zip(node.args, parts, strict=True):
            grads[arg] = part if overwrite else grads[arg] + part
    return grads


def diagnose_graph(graph: Graph, leaf_grads: Sequence[np.ndarray | None],
                   tol: Tolerance) -> list[str]:
    """A graph built with operators: is it the gradient overwritten on shared nodes (micrograd
    closures with ``=``, or a babygrad ledger that stores each contribution over the last)?"""
    predicted = _walk(graph, overwrite=True)[: len(graph.leaves)]
    return [BUGS["overwrite-grad"].describe()] if _matches(leaf_grads, predicted, tol) else []


def _predict(compute: Callable[[], np.ndarray]) -> np.ndarray | None:
    """A buggy engine's gradient for one input, or None where that bug would have raised."""
    try:
        return np.asarray(compute(), dtype=np.float64)
    except ValueError:
        return None


def _op_models(op: str, param: Any, inputs: Sequence[np.ndarray], g: np.ndarray
               ) -> dict[str, list[np.ndarray | None]]:
    """What each classic mistake in this op's backward would return, per input."""
    if op == "tanh":
        return {"tanh-derivative": [_predict(lambda: (1 - np.tanh(inputs[0])) * g)]}
    if op == "broadcast_to":
        return {"broadcast-no-sum": [g]}
    if op == "transpose" and param is not None:
        return {"transpose-same-axes": [_predict(lambda: np.transpose(g, param))]}
    if op == "sum" and param is not None:
        return {"summation-shape": [_predict(lambda: np.broadcast_to(g, inputs[0].shape))]}
    if op == "matmul":
        a, b = inputs
        return {"matmul-no-transpose": [_predict(lambda: g @ b), _predict(lambda: a @ g)]}
    return {}


def _agrees(got: Sequence[np.ndarray | None], predicted: Sequence[np.ndarray | None],
            tol: Tolerance) -> bool:
    """Every input the model predicts matches (shape and values); at least one is predicted."""
    pairs = [(g, p) for g, p in zip(got, predicted, strict=True) if p is not None]
    return bool(pairs) and all(g is not None and tol.close(np.asarray(g), p) for g, p in pairs)


def diagnose_op(graph: Graph, out_grad: np.ndarray, grads: Sequence[np.ndarray | None],
                tol: Tolerance) -> list[str]:
    """Name a classic mistake in one op's backward from its inputs and the student's grads."""
    node = graph.nodes[0]
    g = np.asarray(out_grad, dtype=np.float64)
    found = {bug for bug, predicted in _op_models(node.op, node.param, graph.leaves, g).items()
             if _agrees(grads, predicted, tol)}
    reduces = {"broadcast_to": "broadcast-no-sum", "sum": "summation-shape"}
    if node.op in reduces and grads[0] is not None and grads[0].shape != graph.leaves[0].shape:
        found.add(reduces[node.op])
    return [BUGS[bug].describe() for bug in sorted(found)]


def diagnose_op_error(graph: Graph, out_grad: np.ndarray, reason: str,
                      frames: Sequence[str]) -> list[str]:
    """One op's backward raised a shape error: name a classic mistake that raises on exactly
    these shapes (matmul without transposes, summation broadcast without the kept axes)."""
    if not reason.startswith("ValueError") or not any(" in backward:" in f for f in frames):
        return []
    node = graph.nodes[0]
    g = np.asarray(out_grad, dtype=np.float64)
    models = _op_models(node.op, node.param, graph.leaves, g)
    return [BUGS[bug].describe() for bug, predicted in sorted(models.items())
            if any(p is None for p in predicted)]


def diagnose_topo(dag: Dag, order: list[int]) -> list[str]:
    counts = [order.count(i) for i in set(order)]
    return [BUGS["no-visited-set"].describe()] if any(c > 1 for c in counts) else []


def diagnose_calls(calls: list[int], expected: int) -> list[str]:
    return [BUGS["no-visited-set"].describe()] if any(c > expected for c in calls) else []


def _dag_walk(dag: Dag, reverse: bool, seed: float, overwrite: bool) -> list[float]:
    grads = [0.0] * dag.size
    grads[-1] = seed
    live = dag.reachable()
    order = range(dag.size - 1, dag.leaves - 1, -1) if reverse else range(dag.leaves, dag.size)
    for index in order:
        if index not in live:
            continue
        for operand, weight in dag.nodes[index - dag.leaves]:
            contribution = weight * grads[index]
            grads[operand] = contribution if overwrite else grads[operand] + contribution
    return grads


def _dag_models(dag: Dag) -> dict[str, list[float]]:
    return {
        "topo-not-reversed": _dag_walk(dag, reverse=False, seed=1.0, overwrite=False),
        "no-seed": _dag_walk(dag, reverse=True, seed=0.0, overwrite=False),
        "overwrite-grad": _dag_walk(dag, reverse=True, seed=1.0, overwrite=True),
    }


def diagnose_backward(dag: Dag, grads: Sequence[np.ndarray | None], passes: int) -> list[str]:
    if passes != 1:
        return []
    tol = Tolerance(1e-9, 1e-9)
    return [BUGS[bug].describe() for bug, predicted in _dag_models(dag).items()
            if bug != "overwrite-grad"
            and _matches(grads, [np.float64(p) for p in predicted], tol)]


def diagnose_tensor_backward(dag: Dag, grads: Sequence[np.ndarray | None]) -> list[str]:
    tol = Tolerance(1e-4, 1e-4)
    found = []
    for bug, predicted in _dag_models(dag).items():
        if all(g is not None and tol.close(np.asarray(g), np.full(np.shape(g), p))
               for g, p in zip(grads, predicted, strict=True)):
            found.append(BUGS[bug].describe())
    return found
