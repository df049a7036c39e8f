"""Central finite differences over the grader's own float64 forward evaluator."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from grader.language.graphs import OPS, Graph, Op, evaluate
from grader.language.verdicts import Tolerance
from grader.oracles import Evaluation

EPS = 1e-6
TOLERANCE = Tolerance(atol=1e-5, rtol=1e-4)
"""How far central differences may be from the exact gradient on domain-safe graphs."""

name = "finite differences"


def central_differences(
    difference: Callable[[list[np.ndarray], list[np.ndarray]], float],
    arrays: Sequence[np.ndarray],
    step: Callable[[float], float],
) -> list[np.ndarray]:
    """The derivative of a scalar function by every element of every array, each
    ``difference(up, down) / (2 * h)``: ``up`` and ``down`` are ``arrays`` with that one
    element moved by ``+h`` and ``-h`` (in a copy), ``h = step(element)``.

    The caller takes the difference, so that each keeps the order in which it sums and
    subtracts, and each keeps its own step: its numbers stay what they were.
    """
    grads = []
    for k, x in enumerate(arrays):
        grad = np.zeros(x.shape)
        for index in np.ndindex(*x.shape):
            h = step(float(x[index]))
            up, down = list(arrays), list(arrays)
            up[k], down[k] = x.copy(), x.copy()
            up[k][index] += h
            down[k][index] -= h
            grad[index] = difference(up, down) / (2 * h)
        grads.append(grad)
    return grads


def evaluate_graph(
    graph: Graph, out_grad: np.ndarray | None = None, ops: Mapping[str, Op] = OPS
) -> Evaluation:
    """Values by direct evaluation over ``ops`` (a course's op table); leaf gradients of
    ``sum(out_grad * output)`` by central differences with step ``EPS`` (median relative error
    ~1e-10 on domain-safe graphs)."""
    values = evaluate(graph, ops=ops)
    weight = np.ones_like(values[-1]) if out_grad is None else np.asarray(out_grad, np.float64)

    def weighted(leaves: list[np.ndarray]) -> float:
        return float(np.sum(weight * evaluate(graph, leaves, ops)[-1]))

    leaves = [np.array(v, dtype=np.float64) for v in graph.leaves]  # ndarrays, never scalars
    grads = central_differences(
        lambda up, down: weighted(up) - weighted(down), leaves, lambda _: EPS
    )
    return Evaluation(tuple(values), tuple(grads))


def relative_step(x: float) -> float:
    """``EPS`` scaled to an element's size, so that the rounding of ``x + h`` is no larger a
    part of ``h`` for a large operand than for one near 1."""
    return EPS * max(1.0, abs(x))


def vjp(
    forward: Callable[..., Any], arrays: Sequence[np.ndarray], g: np.ndarray
) -> list[np.ndarray]:
    """``g`` times the Jacobian of ``forward`` at ``arrays``, by central differences with
    ``relative_step`` (the difference of the outputs weighted, then summed)."""
    return central_differences(
        lambda up, down: float(np.sum(g * (np.asarray(forward(*up)) - np.asarray(forward(*down))))),
        arrays,
        relative_step,
    )


def numeric_vjp(op: str, param: Any, arrays: list[np.ndarray], g: np.ndarray) -> list[np.ndarray]:
    """``g`` times the Jacobian of one op of the graph language, by central differences in
    float64 (operands hold at most a few dozen numbers and graded graphs keep them away from
    kinks and poles)."""
    forward = OPS[op].forward
    return vjp(lambda *xs: forward(*xs, param), arrays, g)
