"""Hypothesis strategies that draw graphs of the graph language.

Every node draws the same four integers (op, two operand indices, parameter choice), so that
shrinking one choice never shifts the meaning of the others. Domains are enforced from the
concrete values computed while the graph is built (never with ``assume``): an op that is not
admissible on its operands falls back to the next allowed op that is, and finally to the first
leaf. Leaf values sit on a grid of eighths, exact in float32 and short in a snippet.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from grader.language.graphs import OPS, Graph, Node, admissible

LEAF_GRID = 8
LEAF_RANGE = 3.0
MAX_ELEMENTS = 24

SCALAR_PARAMS: dict[str, tuple[Any, ...]] = {
    "powk": (2, 3, 0.5, -1, 1.5, -0.5),
    "add_scalar": (2.0, -1.5, 0.5),
    "sub_scalar": (2.0, -1.5, 0.5),
    "mul_scalar": (2.0, -1.5, 0.5),
    "div_scalar": (2.0, -4.0, 0.5),
    "radd": (2.0, -1.5, 0.5),
    "rsub": (2.0, -1.5, 0.5),
    "rmul": (2.0, -1.5, 0.5),
    "rdiv": (2.0, -4.0, 0.5),
}


def leaf_values(shape: tuple[int, ...] = ()) -> st.SearchStrategy[np.ndarray]:
    """Values on a grid of eighths in [-3, 3].

    Drawn integers shrink towards 0; shifting by one grid unit's worth of eighths makes values
    shrink towards 1.0 instead of 0.0, where relu and abs have their kink.
    """
    steps = int(LEAF_RANGE * LEAF_GRID)
    element = st.integers(-steps, steps).map(_grid_value)
    size = math.prod(shape)
    return st.lists(element, min_size=size, max_size=size).map(
        lambda xs: np.asarray(xs, dtype=np.float64).reshape(shape))


def _grid_value(k: int) -> float:
    steps = int(LEAF_RANGE * LEAF_GRID)
    shifted = k + LEAF_GRID
    return (shifted if shifted <= steps else -k) / LEAF_GRID


def _params_for(op: str, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """Parameter candidates for ``op`` applied to an operand of ``shape``."""
    if op in SCALAR_PARAMS:
        return SCALAR_PARAMS[op]
    if op == "transpose":
        return tensor_transpose_params(len(shape))
    if op == "sum":
        return tensor_sum_params(len(shape))
    if op == "reshape":
        return tensor_reshape_params(shape)
    if op == "broadcast_to":
        return tensor_broadcast_params(shape)
    return (None,)


def tensor_transpose_params(ndim: int) -> tuple[Any, ...]:
    """``None`` (swap the last two) plus permutations that are not their own inverse."""
    if ndim < 2:
        return ()
    if ndim == 2:
        return (None, (1, 0))
    perms = [None, (1, 2, 0), (2, 0, 1), (0, 2, 1)]
    if ndim > 3:
        perms = [None, tuple(range(1, ndim)) + (0,), (ndim - 1,) + tuple(range(ndim - 1))]
    return tuple(perms)


def tensor_sum_params(ndim: int) -> tuple[Any, ...]:
    """Summation over everything, one axis, and a tuple of axes."""
    params: list[Any] = [None] + list(range(ndim))
    if ndim >= 2:
        params.append((0, ndim - 1))
    return tuple(params)


def tensor_reshape_params(shape: tuple[int, ...]) -> tuple[Any, ...]:
    size = math.prod(shape)
    candidates = [(size,), (1, size)]
    for d in range(2, size):
        if size % d == 0:
            candidates.append((d, size // d))
    return tuple(c for c in candidates if c != shape) or ((size,),)


def tensor_broadcast_params(shape: tuple[int, ...]) -> tuple[Any, ...]:
    """Stretch size-1 axes, and prepend an axis: the two things broadcasting does."""
    stretched = tuple(2 if d == 1 else d for d in shape)
    params = []
    if stretched != shape:
        params.append(stretched)
    params.append((2,) + shape)
    return tuple(p for p in params if math.prod(p) <= MAX_ELEMENTS)


def _second_operand(kind: str, values: list[np.ndarray], first: int, pick: int,
                    op: str) -> int | None:
    """Choose the second operand: any node for scalars, a shape-compatible one for tensors."""
    if kind == "scalar":
        return pick % len(values)
    a = values[first]
    if op == "matmul":
        candidates = [i for i, v in enumerate(values)
                      if v.ndim >= 2 and a.ndim >= 2 and v.shape[-2] == a.shape[-1]
                      and _batch_ok(a.shape, v.shape)]
    else:
        candidates = [i for i, v in enumerate(values) if v.shape == a.shape]
    return candidates[pick % len(candidates)] if candidates else None


def _batch_ok(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        shape = np.broadcast_shapes(a[:-2], b[:-2]) + (a[-2], b[-1])
    except ValueError:
        return False
    return math.prod(shape) <= MAX_ELEMENTS


def _resolve(kind: str, values: list[np.ndarray], ops: Sequence[str],
             draw: tuple[int, int, int, int]) -> Node:
    """Turn four drawn integers into an admissible node, falling back in a fixed order."""
    op_pick, first_pick, second_pick, param_pick = draw
    first = first_pick % len(values)
    ordered = list(ops[op_pick % len(ops):]) + list(ops[:op_pick % len(ops)])
    for operand in (first, 0):
        for name in ordered:
            op = OPS[name]
            args = [operand]
            if op.arity == 2:
                second = _second_operand(kind, values, operand, second_pick, name)
                if second is None:
                    continue
                args.append(second)
            candidates = _params_for(name, values[operand].shape)
            if not candidates:
                continue
            param = candidates[param_pick % len(candidates)]
            operands = [values[i] for i in args]
            if admissible(op, operands, param) and _small(op, operands, param):
                return Node(name, tuple(args), param)
    raise AssertionError(f"no admissible op among {ops} on the first leaf")


def _small(op: Any, operands: list[np.ndarray], param: Any) -> bool:
    with np.errstate(all="ignore"):
        return np.asarray(op.forward(*operands, param)).size <= MAX_ELEMENTS


@st.composite
def _graphs(draw: st.DrawFn, kind: str, ops: Sequence[str], shapes: st.SearchStrategy,
            max_leaves: int, max_nodes: int, combine: Sequence[str]) -> Graph:
    shape = draw(shapes)
    n_leaves = draw(st.integers(1, max_leaves))
    leaves = tuple(draw(leaf_values(shape)) for _ in range(n_leaves))
    values = list(leaves)
    nodes: list[Node] = []
    n_nodes = draw(st.integers(1, max_nodes))
    for _ in range(n_nodes):
        picks = tuple(draw(st.integers(0, 255)) for _ in range(4))
        node = _resolve(kind, values, ops, picks)  # type: ignore[arg-type]
        nodes.append(node)
        values.append(np.asarray(OPS[node.op].forward(*(values[i] for i in node.args),
                                                      node.param), dtype=np.float64))
    return _combine_sinks(Graph(kind, leaves, tuple(nodes)), combine)


def _combine_sinks(graph: Graph, combine: Sequence[str]) -> Graph:
    """Make every node that nothing consumes count: reduce each sink, then add them up.

    With "the last node" as the output about half the leaf gradients would be exactly zero;
    an unused leaf is a sink too, so every leaf gets a gradient.
    """
    used = {a for node in graph.nodes for a in node.args}
    sinks = [i for i in range(graph.size) if i not in used]
    nodes = list(graph.nodes)
    total = None
    for sink in sinks:
        index = sink
        for reducer in combine:
            nodes.append(Node(reducer, (index,), None))
            index = len(graph.leaves) + len(nodes) - 1
        if total is not None:
            nodes.append(Node("add", (total, index), None))
            index = len(graph.leaves) + len(nodes) - 1
        total = index
    return Graph(graph.kind, graph.leaves, tuple(nodes))


def scalar_graphs(ops: Sequence[str], max_leaves: int = 3, max_nodes: int = 6
                  ) -> st.SearchStrategy[Graph]:
    """Random micrograd graphs built from ``ops`` (sinks summed with ``+``)."""
    return _graphs("scalar", tuple(ops), st.just(()), max_leaves, max_nodes, ())


def tensor_shapes(min_dims: int = 1, max_dims: int = 3, max_side: int = 3
                  ) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(st.integers(1, max_side), min_size=min_dims, max_size=max_dims).map(
        tuple).filter(lambda s: math.prod(s) <= MAX_ELEMENTS)


def tensor_graphs(ops: Sequence[str], max_leaves: int = 3, max_nodes: int = 5
                  ) -> st.SearchStrategy[Graph]:
    """Random babygrad graphs; every sink is summed to a scalar, then the sums are added."""
    return _graphs("tensor", tuple(ops), tensor_shapes(), max_leaves, max_nodes, ("sum",))


def _repairs(x: np.ndarray) -> list[np.ndarray]:
    """Ways to move drawn values into an op's domain, tried in order (identity first)."""
    away = np.where(np.abs(x) < 0.25, 0.5, x)
    return [x, away, np.abs(x) + 0.25]


def _admissible_leaves(op: str, leaves: list[np.ndarray], param: Any) -> list[np.ndarray]:
    for repaired in zip(*(_repairs(x) for x in leaves), strict=True):
        if admissible(OPS[op], list(repaired), param):
            return list(repaired)
    raise AssertionError(f"no repair puts {op} operands in its domain")


MATMUL_BATCHES = (((), ()), ((2,), ()), ((), (2,)), ((2,), (2,)), ((2, 1), (3, 1, 1)),
                  ((1,), (2,)))


def _operand_shapes(draw: st.DrawFn, kind: str, op: str) -> list[tuple[int, ...]]:
    if kind == "scalar":
        return [()] * OPS[op].arity
    if op == "matmul":
        batch_a, batch_b = draw(st.sampled_from(MATMUL_BATCHES))
        m, k, n = (draw(st.integers(1, 3)) for _ in range(3))
        return [batch_a + (m, k), batch_b + (k, n)]
    if op == "broadcast_to":  # small sides: size-1 axes to stretch, room to prepend one
        return [draw(tensor_shapes(max_side=2))]
    min_dims = 2 if op == "transpose" else 1
    shape = draw(tensor_shapes(min_dims=min_dims))
    return [shape] * OPS[op].arity


@st.composite
def op_cases(draw: st.DrawFn, kind: str, op: str) -> tuple[Graph, np.ndarray]:
    """One op on fresh leaves, in its domain, with a drawn output gradient."""
    shapes = _operand_shapes(draw, kind, op)
    params = _params_for(op, shapes[0])
    param = params[draw(st.integers(0, len(params) - 1))]
    leaves = _admissible_leaves(op, [draw(leaf_values(s)) for s in shapes], param)
    graph = Graph(kind, tuple(leaves), (Node(op, tuple(range(len(leaves))), param),))
    out_shape = np.shape(OPS[op].forward(*leaves, param))
    return graph, draw(leaf_values(out_shape))


PRELOADS = (0.5, -1.25, 2.0, 3.5)
"""Gradients a leaf may already hold when an op's ``_backward`` adds into it."""


@st.composite
def accumulate_cases(draw: st.DrawFn, op: str) -> tuple[Graph, float, list[float]]:
    """One micrograd op on leaves whose gradients already hold something: on fresh operands,
    on one node used twice (``x * x``, or ``tanh(x) + tanh(x)`` for a one-operand op), with an
    output gradient and a non-zero preload per leaf."""
    graph, out_grad = draw(op_cases("scalar", op))
    if draw(st.booleans()):
        x = graph.leaves[0]
        node = graph.nodes[0]
        if OPS[op].arity == 2 and admissible(OPS[op], [x, x], node.param):
            graph = Graph("scalar", (x,), (Node(op, (0, 0), node.param),))
        elif OPS[op].arity == 1:
            first, second = Node(op, (0,), node.param), Node(op, (0,), node.param)
            graph = Graph("scalar", (x,), (first, second, Node("add", (1, 2), None)))
    preload = [draw(st.sampled_from(PRELOADS)) for _ in graph.leaves]
    return graph, float(out_grad), preload


@st.composite
def single_op_graphs(draw: st.DrawFn, kind: str, ops: Sequence[str]) -> Graph:
    """A graph of one op (operator or method spelling) on fresh leaves; tensors are summed."""
    op = draw(st.sampled_from(list(ops)))
    graph, _ = draw(op_cases(kind, op))
    return _combine_sinks(graph, ("sum",) if kind == "tensor" else ())


def _broadcast_partner(shape: tuple[int, ...], choice: int) -> tuple[int, ...]:
    """A shape that broadcasts against ``shape``: fewer leading axes, or size-1 axes."""
    partners = [shape[1:] or (1,), tuple(1 if i % 2 == 0 else d for i, d in enumerate(shape)),
                (1,) * len(shape)]
    return partners[choice % len(partners)]


@st.composite
def broadcasting_cases(draw: st.DrawFn, ops: Sequence[str]) -> tuple[Graph, np.ndarray]:
    """An elementwise binary op on operands of different (broadcastable) shapes, with a drawn
    gradient for its (broadcast) output."""
    op = draw(st.sampled_from(list(ops)))
    shape = draw(tensor_shapes(min_dims=2))
    other = _broadcast_partner(shape, draw(st.integers(0, 2)))
    shapes = [shape, other] if draw(st.booleans()) else [other, shape]
    leaves = _admissible_leaves(op, [draw(leaf_values(s)) for s in shapes], None)
    graph = Graph("tensor", tuple(leaves), (Node(op, (0, 1), None),))
    return graph, draw(leaf_values(np.broadcast_shapes(*shapes)))
