"""Hypothesis strategies that draw graphs of the graph language.

Every node draws the same four integers (op, two operand indices, parameter choice), so that
shrinking one choice never shifts the meaning of the others. Domains are enforced from the
concrete values computed while the graph is built (never with ``assume``): an op that is not
admissible on its operands falls back to the next allowed op that is, and finally to the first
leaf. What an op needs (parameters, operand shapes, domain) is read from its row of the op
table. Leaf values sit on a grid of eighths, exact in float32 and short in a snippet.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

from grader.language.dags import Dag
from grader.language.domains import EVERY_FORM, Domain
from grader.language.graphs import (
    MAX_ELEMENTS,
    OPS,
    Graph,
    Node,
    Op,
    admissible,
    admissible_value,
)

LEAF_GRID = 8
LEAF_RANGE = 3.0


def leaf_values(shape: tuple[int, ...] = ()) -> st.SearchStrategy[np.ndarray]:
    """Values on a grid of eighths in [-3, 3].

    Drawn integers shrink towards 0; shifting by one grid unit's worth of eighths makes values
    shrink towards 1.0 instead of 0.0, where relu and abs have their kink.
    """
    return _leaf_values(tuple(shape))


@functools.cache
def _leaf_values(shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    """``leaf_values``, built once per shape: the strategies are drawn from while shrinking,
    hundreds of times a test, and building them anew cost as much as drawing."""
    size = math.prod(shape)
    return st.lists(_GRID, min_size=size, max_size=size).map(
        lambda xs: np.asarray(xs, dtype=np.float64).reshape(shape)
    )


def _grid_value(k: int) -> float:
    shifted = k + LEAF_GRID
    return (shifted if shifted <= _STEPS else -k) / LEAF_GRID


_STEPS = int(LEAF_RANGE * LEAF_GRID)
_GRID = st.integers(-_STEPS, _STEPS).map(_grid_value)
_PICK = st.integers(0, 255)
"""Each of a node's four choices (``_resolve``)."""


def _second_operand(
    kind: str, values: list[np.ndarray], first: int, pick: int, op: Op, domain: Domain
) -> int | None:
    """Choose the second operand: any node for scalars, one the op's shapes allow for tensors
    (and the course's ``domain``)."""
    if kind == "scalar":
        return pick % len(values)
    candidates = [
        i
        for i in op.operands.partners(values, first)
        if domain.operands(op.name, (values[first].shape, values[i].shape))
    ]
    return candidates[pick % len(candidates)] if candidates else None


def _resolve(
    kind: str,
    values: list[np.ndarray],
    ops: Sequence[str],
    draw: tuple[int, int, int, int],
    domain: Domain,
) -> tuple[Node, np.ndarray]:
    """Turn four drawn integers into an admissible node and its value, falling back in a fixed
    order; only parameters and operands in the course's ``domain``."""
    op_pick, first_pick, second_pick, param_pick = draw
    first = first_pick % len(values)
    ordered = list(ops[op_pick % len(ops) :]) + list(ops[: op_pick % len(ops)])
    for operand in (first, 0):
        for name in ordered:
            op = OPS[name]
            args = [operand]
            if op.arity == 2:
                second = _second_operand(kind, values, operand, second_pick, op, domain)
                if second is None:
                    continue
                args.append(second)
            candidates = domain.params(name, op.params(values[operand].shape))
            if not candidates:
                continue
            param = candidates[param_pick % len(candidates)]
            value = admissible_value(op, [values[i] for i in args], param)
            if value is not None and value.size <= MAX_ELEMENTS:
                return Node(name, tuple(args), param), value
    raise AssertionError(f"no admissible op among {ops} on the first leaf")


@st.composite
def _graphs(
    draw: st.DrawFn,
    kind: str,
    ops: Sequence[str],
    shapes: st.SearchStrategy,
    max_leaves: int,
    max_nodes: int,
    combine: Sequence[str],
    domain: Domain,
) -> Graph:
    shape = draw(shapes)
    n_leaves = draw(st.integers(1, max_leaves))
    leaves = tuple(draw(leaf_values(shape)) for _ in range(n_leaves))
    values = list(leaves)
    nodes: list[Node] = []
    n_nodes = draw(st.integers(1, max_nodes))
    for _ in range(n_nodes):
        picks = tuple(draw(_PICK) for _ in range(4))
        node, value = _resolve(kind, values, ops, picks, domain)  # type: ignore[arg-type]
        nodes.append(node)
        values.append(value)
    return combine_sinks(Graph(kind, leaves, tuple(nodes)), combine)


def combine_sinks(graph: Graph, combine: Sequence[str]) -> Graph:
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


def scalar_graphs(
    ops: Sequence[str], max_leaves: int = 3, max_nodes: int = 6
) -> st.SearchStrategy[Graph]:
    """Random micrograd graphs built from ``ops`` (sinks summed with ``+``)."""
    return _graphs("scalar", tuple(ops), st.just(()), max_leaves, max_nodes, (), EVERY_FORM)


@functools.cache
def tensor_shapes(
    min_dims: int = 1, max_dims: int = 3, max_side: int = 3
) -> st.SearchStrategy[tuple[int, ...]]:
    """Shapes of at most ``MAX_ELEMENTS`` elements (built once per arguments: Hypothesis reads
    a filter's source each time one is made)."""
    return (
        st.lists(st.integers(1, max_side), min_size=min_dims, max_size=max_dims)
        .map(tuple)
        .filter(lambda s: math.prod(s) <= MAX_ELEMENTS)
    )


def tensor_graphs(
    ops: Sequence[str], max_leaves: int = 3, max_nodes: int = 5, domain: Domain = EVERY_FORM
) -> st.SearchStrategy[Graph]:
    """Random babygrad graphs in the course's ``domain``; every sink is summed to a scalar
    (over every axis: None is in every course's domain), then the sums are added."""
    return _graphs("tensor", tuple(ops), tensor_shapes(), max_leaves, max_nodes, ("sum",), domain)


def _repairs(x: np.ndarray) -> list[np.ndarray]:
    """Ways to move drawn values into an op's domain, tried in order (identity first)."""
    away = np.where(np.abs(x) < 0.25, 0.5, x)
    return [x, away, np.abs(x) + 0.25]


def admissible_leaves(op: str, leaves: list[np.ndarray], param: Any) -> list[np.ndarray]:
    """The drawn operands moved into ``op``'s domain, all alike; last, each apart from the
    others (lt needs its two operands unequal)."""
    spread = [x + 0.5 * i for i, x in enumerate(leaves)]
    for repaired in [*zip(*(_repairs(x) for x in leaves), strict=True), spread]:
        if admissible(OPS[op], list(repaired), param):
            return list(repaired)
    raise AssertionError(f"no repair puts {op} operands in its domain")


class _Draws:
    """The op table's ``Chooser`` on Hypothesis's ``draw``."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def one_of(self, options: Sequence[Any]) -> Any:
        return self.draw(st.sampled_from(options))

    def shape(self, min_dims: int, max_side: int) -> tuple[int, ...]:
        return self.draw(tensor_shapes(min_dims=min_dims, max_side=max_side))


@st.composite
def op_cases(
    draw: st.DrawFn, kind: str, op: str, domain: Domain = EVERY_FORM
) -> tuple[Graph, np.ndarray]:
    """One op on fresh leaves, in its domain of values and the course's ``domain`` of forms
    (an op's own test passes ``Domain.forward()``, the forms of its forward alone too: every
    other test asks a gradient of what it draws), with a drawn output gradient."""
    row = OPS[op]
    shapes = (
        [()] * row.arity if kind == "scalar" else row.operands.draw(_Draws(draw), row.arity, domain)
    )
    params = domain.params(op, row.params(shapes[0]))
    param = params[draw(st.integers(0, len(params) - 1))]
    leaves = admissible_leaves(op, [draw(leaf_values(s)) for s in shapes], param)
    if row.ties and draw(st.booleans()):
        leaves = [leaves[0]] * row.arity
    graph = Graph(kind, tuple(leaves), (Node(op, tuple(range(len(leaves))), param),))
    out_shape = np.shape(row.forward(*leaves, param))
    return graph, draw(leaf_values(out_shape))


@st.composite
def kink_cases(draw: st.DrawFn, op: str) -> tuple[Graph, np.ndarray]:
    """One op with a kink at 0 (relu, abs) on a tensor of exact zeros, which ``op_cases``
    never draws (finite differences cannot judge there), with a drawn output gradient."""
    shape = draw(tensor_shapes())
    graph = Graph("tensor", (np.zeros(shape),), (Node(op, (0,), None),))
    return graph, draw(leaf_values(shape))


@st.composite
def scalar_kink_cases(draw: st.DrawFn, op: str) -> tuple[Graph, np.ndarray]:
    """One micrograd op with a kink at 0 (relu) on a leaf that is exactly 0.0 or -0.0, with
    a drawn output gradient that is never 0 (``UPSTREAM``), so a gradient let through at the
    kink shows."""
    leaf = np.asarray(draw(st.sampled_from((0.0, -0.0))))
    graph = Graph("scalar", (leaf,), (Node(op, (0,), None),))
    return graph, np.asarray(draw(st.sampled_from(UPSTREAM)))


UPSTREAM = (0.5, -1.5, 2.0, -0.25, 3.0, -2.0)
"""Values of a drawn upstream gradient for ``Tensor.backward(grad)``: never 1.0, so a
``backward`` that ignores ``grad`` (seeding with ones) is wrong on every element."""


@st.composite
def tensor_backward_cases(
    draw: st.DrawFn,
    dag_strategy: st.SearchStrategy[Dag],
    shapes: st.SearchStrategy[tuple[int, ...]],
    edges: bool = False,
    frozen_leaves: bool = True,
) -> tuple[Dag, tuple[int, ...], tuple[int, ...], np.ndarray | None]:
    """A grader-made graph for ``Tensor.backward``, its tensors' shape, the leaves that do not
    require grad (never all of them: the root must require grad), and the gradient to call
    ``backward`` with: None (the default, ones) or drawn from ``UPSTREAM``. Shrinks towards
    every leaf requiring grad and the default.

    ``edges``: instead, the two graphs where ``backward`` has nothing to propagate, half the
    time each (Hypothesis draws a rarer choice too unevenly to count on it in a few dozen
    examples): every leaf frozen, so that nothing requires grad, the tensor ``backward`` is
    called on included, and no ``.grad`` may be set; or a lone leaf, ``backward`` called on
    it, whose gradient is then the upstream gradient.

    ``frozen_leaves=False``: no leaf is frozen, for an API whose ``Tensor.backward`` gives
    every input a gradient (``walk.frozen_leaves``); the edge is then always the lone leaf."""
    dag = draw(dag_strategy)
    shape = draw(shapes)
    frozen = [i for i in range(dag.leaves) if frozen_leaves and draw(st.booleans())]
    if len(frozen) == dag.leaves:
        frozen = frozen[1:]
    if edges:
        if not frozen_leaves or draw(st.booleans()):
            dag, frozen = Dag(1, ()), []
        else:
            frozen = list(range(dag.leaves))
    return dag, shape, tuple(frozen), draw(_upstream(shape))


@functools.cache
def _upstream(shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray | None]:
    """``tensor_backward_cases``' gradient for ``backward``, built once per shape: a new
    strategy is validated on its first draw, every example."""
    size = math.prod(shape)
    upstream = st.lists(st.sampled_from(UPSTREAM), min_size=size, max_size=size).map(
        lambda xs: np.asarray(xs, dtype=np.float64).reshape(shape)
    )
    return st.none() | upstream


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


NUMBER_OPERANDS = (
    "add_scalar",
    "mul_scalar",
    "div_scalar",
    "sub_scalar",
    "radd",
    "rsub",
    "rmul",
    "rdiv",
)
"""The ops whose parameter is a plain number operand (``a + 2``, ``2 / a``)."""


def _ints_where_whole(draw: st.DrawFn, graph: Graph) -> Graph:
    """Each whole number operand written as an int half the time (``a + 2``, as the
    docstrings' examples write them), else as drawn (a float)."""
    nodes = tuple(
        Node(n.op, n.args, int(n.param))
        if n.op in NUMBER_OPERANDS
        and isinstance(n.param, float)
        and n.param.is_integer()
        and draw(st.booleans())
        else n
        for n in graph.nodes
    )
    return Graph(graph.kind, graph.leaves, nodes)


@st.composite
def number_operand_cases(draw: st.DrawFn, op: str, with_number: str) -> tuple[Graph, np.ndarray]:
    """One micrograd op on fresh leaves (``op_cases``) or, half the time, its spelling with a
    plain number on the right (``with_number``: ``add_scalar`` for ``a + 2``): the operator
    must wrap the number itself, an int or a float."""
    graph, out_grad = draw(op_cases("scalar", draw(st.sampled_from((op, with_number)))))
    return _ints_where_whole(draw, graph), out_grad


@st.composite
def scalar_number_graphs(draw: st.DrawFn, ops: Sequence[str]) -> Graph:
    """``single_op_graphs`` of micrograd ops, numbers an int or a float (``2 - a``)."""
    return _ints_where_whole(draw, draw(single_op_graphs("scalar", ops)))


@st.composite
def single_op_graphs(
    draw: st.DrawFn, kind: str, ops: Sequence[str], domain: Domain = EVERY_FORM
) -> Graph:
    """A graph of one op (operator or method spelling) on fresh leaves, in the course's
    ``domain`` of forms; tensors are summed."""
    op = draw(st.sampled_from(list(ops)))
    graph, _ = draw(op_cases(kind, op, domain))
    return combine_sinks(graph, ("sum",) if kind == "tensor" else ())


def broadcast_partners(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The shapes that broadcast against ``shape`` the grader draws: one to three leading axes
    fewer (a gradient must sum every prepended axis away, not only the first), a size-1 axis in
    each position, every other axis of size 1, and every axis of size 1."""
    fewer = [shape[k:] for k in range(1, min(3, len(shape) - 1) + 1)]
    ones = [tuple(1 if i == j else d for i, d in enumerate(shape)) for j in range(len(shape))]
    partners = [
        *fewer,
        *ones,
        tuple(1 if i % 2 == 0 else d for i, d in enumerate(shape)),
        (1,) * len(shape),
    ]
    return [p for p in dict.fromkeys(partners) if p != shape] or [(1,)]


@st.composite
def broadcasting_cases(draw: st.DrawFn, ops: Sequence[str]) -> tuple[Graph, np.ndarray]:
    """An elementwise binary op on operands of different (broadcastable) shapes, with a drawn
    gradient for its (broadcast) output."""
    op = draw(st.sampled_from(list(ops)))
    shape = draw(tensor_shapes(min_dims=2, max_dims=4))
    other = draw(st.sampled_from(broadcast_partners(shape)))
    shapes = [shape, other] if draw(st.booleans()) else [other, shape]
    leaves = admissible_leaves(op, [draw(leaf_values(s)) for s in shapes], None)
    graph = Graph("tensor", tuple(leaves), (Node(op, (0, 1), None),))
    return graph, draw(leaf_values(np.broadcast_shapes(*shapes)))
