"""Central finite differences over the grader's own float64 forward evaluator."""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.language.graphs import OPS, Graph, evaluate
from grader.language.verdicts import Tolerance
from grader.oracles import Evaluation

EPS = 1e-6
TOLERANCE = Tolerance(atol=1e-5, rtol=1e-4)
"""How far central differences may be from the exact gradient on domain-safe graphs."""

name = "finite differences"


def evaluate_graph(graph: Graph, out_grad: np.ndarray | None = None) -> Evaluation:
    """Values by direct evaluation; leaf gradients of ``sum(out_grad * output)`` by central
    differences with step ``EPS`` (median relative error ~1e-10 on domain-safe graphs)."""
    values = evaluate(graph)
    weight = np.ones_like(values[-1]) if out_grad is None else np.asarray(out_grad, np.float64)
    leaves = [np.array(v, dtype=np.float64) for v in graph.leaves]  # ndarrays, never scalars
    grads = []
    for leaf_index, leaf in enumerate(leaves):
        grad = np.zeros_like(leaf)
        for flat in range(leaf.size):
            original = leaf.flat[flat]
            leaf.flat[flat] = original + EPS
            up = float(np.sum(weight * evaluate(graph, leaves)[-1]))
            leaf.flat[flat] = original - EPS
            down = float(np.sum(weight * evaluate(graph, leaves)[-1]))
            leaf.flat[flat] = original
            grad.flat[flat] = (up - down) / (2 * EPS)
        grads.append(grad)
        leaves[leaf_index] = leaf
    return Evaluation(tuple(values), tuple(grads))


def numeric_vjp(op: str, param: Any, arrays: list[np.ndarray], g: np.ndarray
                ) -> list[np.ndarray]:
    """``g`` times the Jacobian of one op of the graph language, by central differences in
    float64 (operands hold at most a few dozen numbers and graded graphs keep them away from
    kinks and poles)."""
    forward = OPS[op].forward
    grads = []
    for k, x in enumerate(arrays):
        grad = np.zeros(x.shape)
        for index in np.ndindex(*x.shape):
            eps = 1e-6 * max(1.0, abs(float(x[index])))
            up, down = list(arrays), list(arrays)
            up[k], down[k] = x.copy(), x.copy()
            up[k][index] += eps
            down[k][index] -= eps
            grad[index] = float(np.sum(g * (np.asarray(forward(*up, param))
                                             - np.asarray(forward(*down, param))))) / (2 * eps)
        grads.append(grad)
    return grads
