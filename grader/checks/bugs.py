"""Classic student bugs, recognised by predicting what the buggy engine would answer.

Each diagnosis replays the failing example under a model of one bug, in plain numpy, and names
the bug when the student's numbers match that model. A name is a hint attached to a failure
the judge already found; it never changes a verdict.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.language.dags import Dag
from grader.language.graphs import Graph, evaluate
from grader.language.verdicts import Tolerance
from grader.oracles.numeric import numeric_vjp


@dataclass(frozen=True)
class Bug:
    id: str
    title: str
    fix: str

    def describe(self) -> str:
        return f"{self.id}: {self.title}. Fix: {self.fix}"


BUGS = {
    bug.id: bug
    for bug in [
        Bug(
            "overwrite-grad",
            "gradient overwritten with = instead of accumulated with +=",
            "add into a gradient, never assign it (+=, not =), in every _backward closure and in "
            "the ledger: a node used twice receives both contributions",
        ),
        Bug(
            "topo-not-reversed",
            "backward walks the topological order forwards",
            "run the closures from the end of the topological order (the output) back to its "
            "start: a node's gradient must be complete before its closure passes it on",
        ),
        Bug(
            "no-seed",
            "the output gradient is not seeded with 1",
            "before the walk, seed the gradient of the node backward() is called on with 1 "
            "(d out / d out = 1)",
        ),
        Bug(
            "no-visited-set",
            "build_topo visits shared nodes more than once",
            "keep a visited set (by identity) and skip nodes already in it",
        ),
        Bug(
            "revisits-shared-nodes",
            "the walk goes into a shared node again from every path to "
            "it (exponential time), although each node appears once in the result",
            "check whether a node was visited before walking into its operands, and skip it if so",
        ),
        Bug(
            "tanh-derivative",
            "tanh derivative written as 1 - t instead of 1 - t**2",
            "d tanh(x)/dx = 1 - tanh(x)**2",
        ),
        Bug(
            "broadcast-no-sum",
            "broadcast backward does not sum over stretched or prepended axes",
            "sum out_grad over the axes broadcasting added or stretched, then reshape to the "
            "input's shape",
        ),
        Bug(
            "transpose-same-axes",
            "transpose backward reuses the forward permutation",
            "transpose out_grad by the inverse of the forward permutation, which sends every "
            "axis back where it came from",
        ),
        Bug(
            "summation-shape",
            "summation backward loses the reduced axes' shape",
            "reshape out_grad so the summed axes have size 1, then broadcast to the input shape",
        ),
        Bug(
            "matmul-no-transpose",
            "matmul backward without transposes",
            "grad_a = out_grad @ b^T and grad_b = a^T @ out_grad (swap the last two axes)",
        ),
    ]
}


def _matches(
    got: Sequence[np.ndarray | None], predicted: Sequence[np.ndarray], tol: Tolerance
) -> bool:
    return all(
        g is not None and tol.close(np.asarray(g), np.asarray(p))
        for g, p in zip(got, predicted, strict=True)
    )


def _walk(graph: Graph, overwrite: bool, keep_first: bool = False) -> list[np.ndarray]:
    """Every node's gradient from a reverse walk over the graph, each op's own backward exact
    (up to central differences); ``overwrite`` models ``=`` where ``+=`` belongs, and with
    ``keep_first`` a ledger that keeps the first contribution and drops the rest."""
    values = evaluate(graph)
    grads = [np.zeros(v.shape) for v in values]
    grads[-1] = np.ones(values[-1].shape)
    reached = {graph.size - 1}
    for index in range(graph.size - 1, len(graph.leaves) - 1, -1):
        node = graph.nodes[index - len(graph.leaves)]
        parts = numeric_vjp(node.op, node.param, [values[a] for a in node.args], grads[index])
        for arg, part in zip(node.args, parts, strict=True):
            if keep_first and arg in reached:
                continue
            grads[arg] = part if overwrite else grads[arg] + part
            reached.add(arg)
    return grads


def diagnose_graph(
    graph: Graph, leaf_grads: Sequence[np.ndarray | None], tol: Tolerance
) -> list[str]:
    """A graph built with operators: is it the gradient overwritten on shared nodes (micrograd
    closures with ``=``, or a babygrad ledger that stores each contribution over the last)?
    Not, for a tensor engine's ledger, where one that keeps the first contribution and drops
    the rest gives the same: the example cannot tell an ``=`` from a sum never written."""
    leaves = len(graph.leaves)
    if not _matches(leaf_grads, _walk(graph, overwrite=True)[:leaves], tol):
        return []
    first = _walk(graph, overwrite=True, keep_first=True)[:leaves]
    if graph.kind == "tensor" and _matches(leaf_grads, first, tol):
        return []
    return [BUGS["overwrite-grad"].describe()]


MAX_USES = 8
"""Uses of one leaf beyond which ``diagnose_accumulate`` names nothing (2**uses sums)."""


def diagnose_accumulate(
    preload: Sequence[float],
    uses: Sequence[Sequence[float]],
    got: Sequence[np.ndarray | None],
    tol: Tolerance,
) -> list[str]:
    """micrograd closures with ``=`` where ``+=`` belongs, on leaves whose gradients held
    ``preload`` before the walk and whose uses contribute ``uses`` (each use's gradient,
    known right): a closure that assigns wipes what the leaf held, preload and earlier
    contributions alike, so the leaf ends at the sum of the contributions made from the last
    assignment on. Which those are depends on the order the walk runs the closures and each
    closure assigns its operands (and on which closures assign), so any non-empty set of the
    uses may be the one. Named when every leaf that ends wrong ends at one of those sums."""
    wrong = [
        (g, contributions)
        for p, contributions, g in zip(preload, uses, got, strict=True)
        if g is None or not tol.close(np.asarray(g), np.float64(p + sum(contributions)))
    ]

    def overwritten(g: np.ndarray | None, contributions: Sequence[float]) -> bool:
        if g is None or not 0 < len(contributions) <= MAX_USES:
            return False
        return any(
            tol.close(np.asarray(g), np.float64(sum(part)))
            for size in range(1, len(contributions) + 1)
            for part in itertools.combinations(contributions, size)
        )

    if wrong and all(overwritten(g, contributions) for g, contributions in wrong):
        return [BUGS["overwrite-grad"].describe()]
    return []


def _predict(compute: Callable[[], np.ndarray]) -> np.ndarray | None:
    """A buggy engine's gradient for one input, or None where that bug would have raised."""
    try:
        return np.asarray(compute(), dtype=np.float64)
    except ValueError:
        return None


def _op_models(
    op: str, param: Any, inputs: Sequence[np.ndarray], g: np.ndarray
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


def _agrees(
    got: Sequence[np.ndarray | None], predicted: Sequence[np.ndarray | None], tol: Tolerance
) -> bool:
    """Every input the model predicts matches (shape and values); at least one is predicted."""
    pairs = [(g, p) for g, p in zip(got, predicted, strict=True) if p is not None]
    return bool(pairs) and all(g is not None and tol.close(np.asarray(g), p) for g, p in pairs)


def diagnose_op(
    graph: Graph, out_grad: np.ndarray, grads: Sequence[np.ndarray | None], tol: Tolerance
) -> list[str]:
    """Name a classic mistake in one op's backward from its inputs and the student's grads."""
    node = graph.nodes[0]
    g = np.asarray(out_grad, dtype=np.float64)
    found = {
        bug
        for bug, predicted in _op_models(node.op, node.param, graph.leaves, g).items()
        if _agrees(grads, predicted, tol)
    }
    reduces = {"broadcast_to": "broadcast-no-sum", "sum": "summation-shape"}
    if node.op in reduces and grads[0] is not None and grads[0].shape != graph.leaves[0].shape:
        found.add(reduces[node.op])
    return [BUGS[bug].describe() for bug in sorted(found)]


def diagnose_op_error(
    graph: Graph, out_grad: np.ndarray, reason: str, frames: Sequence[str]
) -> list[str]:
    """One op's backward raised a shape error: name a classic mistake that raises on exactly
    these shapes (matmul without transposes, summation broadcast without the kept axes)."""
    if not reason.startswith("ValueError") or not any(" in backward:" in f for f in frames):
        return []
    node = graph.nodes[0]
    g = np.asarray(out_grad, dtype=np.float64)
    models = _op_models(node.op, node.param, graph.leaves, g)
    return [
        BUGS[bug].describe()
        for bug, predicted in sorted(models.items())
        if any(p is None for p in predicted)
    ]


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
    return [
        BUGS[bug].describe()
        for bug, predicted in _dag_models(dag).items()
        if bug != "overwrite-grad" and _matches(grads, [np.float64(p) for p in predicted], tol)
    ]


def requiring_grad(dag: Dag, frozen: Sequence[int]) -> list[bool]:
    """Which nodes of a babygrad graph require grad: the leaves not in ``frozen``, and every
    node with an operand that does (``Function.__call__``)."""
    requires = [i not in frozen for i in range(dag.leaves)]
    for pairs in dag.nodes:
        requires.append(any(requires[operand] for operand, _ in pairs))
    return requires


def _tensor_matches(
    grads: Sequence[np.ndarray | None],
    predicted: Sequence[float],
    seed: np.ndarray,
    requires: Sequence[bool],
    tol: Tolerance,
) -> bool:
    """Every tensor that requires grad holds ``predicted * seed``; no other holds anything."""
    return all(
        g is None if not req else g is not None and tol.close(np.asarray(g), p * seed)
        for g, p, req in zip(grads, predicted, requires, strict=True)
    )


def diagnose_tensor_backward(
    dag: Dag, grads: Sequence[np.ndarray | None], seed: np.ndarray, frozen: Sequence[int] = ()
) -> list[str]:
    """A ``Tensor.backward`` on a grader-made graph called with upstream gradient ``seed``:
    name a classic walk bug only when its model gives every tensor the student's gradient."""
    tol = Tolerance(1e-4, 1e-4)
    requires = requiring_grad(dag, frozen)
    seed = np.asarray(seed, dtype=np.float64)
    return [
        BUGS[bug].describe()
        for bug, predicted in _dag_models(dag).items()
        if _tensor_matches(grads, predicted, seed, requires, tol)
    ]


def consumers_first(dag: Dag, calls: Sequence[int]) -> str | None:
    """Why ``calls`` (the op nodes whose backward ran, in order) is not a walk in reverse
    topological order of the nodes the root reaches: a node ran twice, or before one of its
    consumers that ran later. None when it is one (whether every node ran is not asked)."""
    position: dict[int, int] = {}
    for at, index in enumerate(calls):
        if index in position:
            return f"n{index}'s backward ran twice"
        position[index] = at
    for index in sorted(position):
        for operand in dag.operands(index):
            if operand in position and position[operand] < position[index]:
                return (
                    f"n{operand}'s backward ran before that of n{index}, which uses n{operand}:"
                    f" n{operand}'s gradient was not complete yet"
                )
    return None


def diagnose_ledger(
    dag: Dag, grads: Sequence[np.ndarray | None], calls: Sequence[int], shape: tuple[int, ...]
) -> list[str]:
    """A ``Tensor.backward`` whose ledger lost contributions on a grader-made DAG (default
    upstream gradient, every leaf requiring grad): overwrite-grad when a ledger that stores
    each contribution over the last, walking in the student's own order (``calls``), gives
    every tensor the student's gradient, and one that keeps the first and drops the others
    does not: on a DAG where both give the same, a ledger that never adds (a deleted sum)
    would be named for an ``=`` it does not have."""
    if not keeps_one(dag, grads, calls, shape):
        return []
    first = _ledger_model(dag, calls, keep_first=True)
    if first is not None and _ledger_gives(dag, first, grads, shape):
        return []
    return [BUGS["overwrite-grad"].describe()]


def keeps_one(
    dag: Dag, grads: Sequence[np.ndarray | None], calls: Sequence[int], shape: tuple[int, ...]
) -> bool:
    """Does a ledger that stores each contribution over the last give every tensor the
    student's gradient (an ``=``, or, where the contributions are alike, any ledger that keeps
    one of them)?"""
    last = _ledger_model(dag, calls, keep_first=False)
    return last is not None and _ledger_gives(dag, last, grads, shape)


def _ledger_model(dag: Dag, calls: Sequence[int], keep_first: bool) -> dict[int, float] | None:
    """Each tensor's gradient from a ledger that keeps one contribution of several, the last
    or the first, walking in the order ``calls`` (None: a node walked before any gradient
    reached it)."""
    model: dict[int, float] = {dag.size - 1: 1.0}
    for index in calls:
        if index not in model:
            return None
        for operand, weight in dag.nodes[index - dag.leaves] if index >= dag.leaves else ():
            if not (keep_first and operand in model):
                model[operand] = weight * model[index]
    return model


def _ledger_gives(
    dag: Dag, model: dict[int, float], grads: Sequence[np.ndarray | None], shape: tuple[int, ...]
) -> bool:
    """Does every tensor the root reaches hold the model's gradient, and no other one any?"""
    tol = Tolerance(1e-4, 1e-4)
    live = dag.reachable()
    for index, got in enumerate(grads):
        want = model.get(index) if index in live else None
        if (got is None) != (want is None) or (
            want is not None and not tol.close(np.asarray(got), np.full(shape, want))
        ):
            return False
    return True


def paths_from_root(dag: Dag) -> list[int]:
    """How many paths lead from the root to each node (a use twice counts twice)."""
    paths = [0] * dag.size
    paths[-1] = 1
    for index in range(dag.size - 1, dag.leaves - 1, -1):
        for operand in dag.operands(index):
            paths[operand] += paths[index]
    return paths


def diagnose_revisits(dag: Dag, reads: Sequence[int]) -> list[str]:
    """revisits-shared-nodes when the walk read every op node's inputs at least once per path
    from the root to it (``reads``, counted by the worker), as a walk that goes into a shared
    node again from every path does; a correct walk reads them a few times in all."""
    paths = paths_from_root(dag)
    nodes = range(dag.leaves, dag.size)
    if len(reads) == dag.size and all(reads[i] >= paths[i] for i in nodes):
        return [BUGS["revisits-shared-nodes"].describe()]
    return []
