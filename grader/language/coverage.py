"""Contract coverage: which dimensions of a course's documented domain an example reaches, and
the explicit examples (strata) that reach every one of them at every seed.

A dimension is one documented kind of input: a rank, an ``axes`` form, a number of prepended
axes, a size-1 axis stretched in one position, a frozen leaf, a shared node... Random draws
reach each only by luck of the seed, so every grading test that has strata also runs them, as
explicit examples: the smallest known inputs that together reach every dimension the test's
op can reach in the course's domain (``op_strata``, ``broadcast_strata``, ``backward_strata``,
``dag_strata``). Their leaf values and gradients sit on the strategies' grid of eighths.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grader.language.dags import Dag
from grader.language.domains import EVERY_FORM, Domain
from grader.language.graphs import (
    MATMUL_BATCHES,
    MAX_ELEMENTS,
    OPS,
    Graph,
    MatMulShapes,
    Node,
    SameShape,
)
from grader.language.strategies import (
    NUMBER_OPERANDS,
    PRELOADS,
    UPSTREAM,
    admissible_leaves,
    broadcast_partners,
    combine_sinks,
)

MAX_RANK = 4
DEEP = 4
"""Ops on the longest path from a leaf to the root that make a ``deep chain``."""
LEFT_NUMBERS = ("radd", "rsub", "rmul", "rdiv")
SEVERAL_PREPENDED_STRETCHED = "prepended several and stretched"
KEPT_BESIDE_STRETCHED = "size-1 axis {} kept beside a stretched one"
"""A size-1 axis that stays size 1 while another is stretched, by its position in the result:
a gradient that reads an axis's target at another position (``target[prepended - i]``) sums
the kept one, which changes nothing, and not the stretched one, which only a kept axis at
that other position shows (``(2, 1, 1)`` to ``(2, 2, 1)``)."""
SEVERAL_BATCH_AXES = (((2, 2), ()), ((), (2, 2)), ((2, 2), (2,)), ((2,), (2, 2)))
"""Batch axes of a matmul's operands the draws (``MATMUL_BATCHES``) do not give, only the
strata: several on one side, all of them prepended to the other operand, which has none or
fewer (``(2, 3, 5, 4) @ (3, 4, 6)``: a gradient summed back by the difference of the ranks
of the result and the operand, or reshaped to it, goes wrong only where both have some)."""
PRELOAD = PRELOADS[0]
KEPT_BEFORE_SUMMED = "a kept axis before a summed one"
SHARED_ON_SHARED = "a shared node on shared inputs"
"""A node two ops use, whose inputs other ops use too: a walk may reach its inputs first, so a
visited set that takes a node in only when the walk goes on into one of its inputs never takes
this one in, and lists it (runs its backward) twice."""
KINKED = ("relu", "abs")
BESIDE_KINK = ("just below the kink", "just above the kink")
"""Values within one of a kink at 0, on each side: where a threshold written off by one
(``x > -1``, ``x >= 1``) shows, which values further out and the kink itself do not."""


def _axes_dimensions(axes: Any) -> set[str]:
    if axes is None:
        return {"axes None"}
    if isinstance(axes, int):
        return {"axes negative int" if axes < 0 else "axes int"}
    dims = {f"axes tuple of {len(axes)}"}
    negative = sum(a < 0 for a in axes)
    if negative and negative < len(axes):
        dims.add("axes mixed signs")
    if negative > 1:
        dims.add("axes several negative")
    return dims


def _broadcast_dimensions(operand: Sequence[int], result: Sequence[int]) -> set[str]:
    """Prepended axes and stretched positions (counted in ``result``) of one operand; whether
    it has both, several axes prepended to an operand of two or more with one stretched (a
    reduction that sums the first prepended axis alone reads the stretched one's position off
    by the others, and sums an axis that was never stretched); and the positions of size-1
    axes kept beside a stretched one (``KEPT_BESIDE_STRETCHED``)."""
    extra = len(result) - len(operand)
    dims = {f"prepended {extra}"} if extra or tuple(operand) != tuple(result) else set()
    ones = [extra + i for i, d in enumerate(operand) if d == 1]
    stretched = {f"stretched axis {k}" for k in ones if result[k] != 1}
    if extra > 1 and len(operand) > 1 and stretched:
        dims.add(SEVERAL_PREPENDED_STRETCHED)
    if stretched:
        dims |= {KEPT_BESIDE_STRETCHED.format(k) for k in ones if result[k] == 1}
    return dims | stretched


def _kept_before_summed(shape: tuple[int, ...], axes: Any) -> bool:
    """Does a summation keep an axis of two or more before an axis it sums? Its gradient must
    then put ``out_grad`` back along the kept axes: broadcast from the right as it is, it lines
    up with the wrong ones (or with none). Summing only leading axes hides that."""
    if axes is None or not shape:
        return False
    summed = {a % len(shape) for a in (axes if isinstance(axes, tuple) else (axes,))}
    return any(
        shape[k] > 1 and k < max(summed, default=-1) for k in range(len(shape)) if k not in summed
    )


def _around_kink(x: np.ndarray) -> set[str]:
    """The kink (0) and ``BESIDE_KINK`` that the values of ``x`` reach."""
    reached = (np.any(x == 0), np.any((x >= -1) & (x < 0)), np.any((x > 0) & (x <= 1)))
    return {name for name, hit in zip(("kink", *BESIDE_KINK), reached, strict=True) if hit}


def graph_dimensions(graph: Graph) -> set[str]:
    """The dimensions one graph of the graph language reaches."""
    values = [np.asarray(v) for v in graph.leaves]
    dims = {f"rank {v.ndim}" for v in values} if graph.kind == "tensor" else set()
    for node in graph.nodes:
        operands = [values[i] for i in node.args]
        value = np.asarray(OPS[node.op].forward(*operands, node.param))
        values.append(value)
        if node.op in ("sum", "sum_tuple"):
            dims |= _axes_dimensions(node.param)
            if _kept_before_summed(operands[0].shape, node.param):
                dims.add(KEPT_BEFORE_SUMMED)
        elif node.op == "broadcast_to":
            dims |= _broadcast_dimensions(operands[0].shape, node.param)
        elif node.op in ("matmul", "matmul_2d"):
            dims.add(_batch_dimension(operands[0].shape[:-2], operands[1].shape[:-2]))
        elif len(operands) == 2 and operands[0].shape != operands[1].shape:
            for side, operand in zip(("left", "right"), operands, strict=True):
                dims |= _broadcast_dimensions(operand.shape, value.shape)
                if operand.size < value.size:
                    dims.add(f"broadcast on the {side}")
        if node.op in NUMBER_OPERANDS:
            dims.add(f"number on the {'left' if node.op in LEFT_NUMBERS else 'right'}")
        if node.op in KINKED:
            dims |= _around_kink(operands[0])
    if _longest_chain(graph.nodes, len(graph.leaves)) >= DEEP:
        dims.add("deep chain")
    if _shared(node.args for node in graph.nodes):
        dims.add("shared nodes")
    return dims


def _batch_dimension(a: Sequence[int], b: Sequence[int]) -> str:
    if not a and not b:
        return "batch none"
    if not a or not b:
        return "batch on one side" if len(a or b) == 1 else "batch of several on one side"
    if tuple(a) == tuple(b):
        return "batch same"
    if 1 in (*a, *b) and np.broadcast_shapes(tuple(a), tuple(b)) not in (tuple(a), tuple(b)):
        return "batch stretched on both sides"
    if len(a) == len(b):
        return "batch stretched"
    return f"batch prepended to {'b' if len(a) > len(b) else 'a'}"


def _shared(uses: Iterable[Sequence[int]]) -> bool:
    counts: dict[int, int] = {}
    for args in uses:
        for arg in args:
            counts[arg] = counts.get(arg, 0) + 1
    return any(count > 1 for count in counts.values())


def _longest_chain(nodes: Sequence[Any], leaves: int) -> int:
    depth = [0] * leaves
    for node in nodes:
        args = node.args if isinstance(node, Node) else [i for i, _ in node]
        depth.append(1 + max((depth[i] for i in args), default=0))
    return max(depth, default=0)


def _upstream_dimension(upstream: np.ndarray | None) -> str:
    if upstream is None or np.all(np.asarray(upstream) == 1.0):
        return "default upstream"
    return "random upstream"


def dag_dimensions(dag: Dag) -> set[str]:
    dims = {"shared nodes"} if _shared([i for i, _ in n] for n in dag.nodes) else set()
    users = Counter(i for node in dag.nodes for i in {j for j, _ in node})
    if any(
        users[dag.leaves + k] > 1 and all(users[i] > 1 for i, _ in node)
        for k, node in enumerate(dag.nodes)
    ):
        dims.add(SHARED_ON_SHARED)
    if _longest_chain(dag.nodes, dag.leaves) >= DEEP:
        dims.add("deep chain")
    return dims


def dimensions(example: Any) -> set[str]:
    """The dimensions one drawn example of any grading test reaches (its arguments, by name)."""
    dims: set[str] = set()
    for value in example.values() if isinstance(example, dict) else (example,):
        dims |= _value_dimensions(value)
    return dims


def _value_dimensions(value: Any) -> set[str]:
    if isinstance(value, Graph):
        return graph_dimensions(value)
    if isinstance(value, Dag):
        return dag_dimensions(value)
    if isinstance(value, tuple) and value and isinstance(value[0], Graph):
        graph, upstream = value[:2]  # and, for micrograd's ledger, the leaves' preloads
        return graph_dimensions(graph) | {_upstream_dimension(upstream)}
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], Dag):
        return dag_dimensions(value[0])  # a graph and the node walked first (second_walks)
    if isinstance(value, tuple) and value and isinstance(value[0], Dag):
        dag, shape, frozen, upstream = value
        dims = dag_dimensions(dag) | {f"rank {len(shape)}", _upstream_dimension(upstream)}
        if dag.size == 1:
            dims.add("lone leaf")
        elif len(frozen) == dag.leaves:
            dims.add("nothing requires grad")
        else:
            dims.add("frozen leaves" if frozen else "every leaf trainable")
        return dims
    return set()


def _grid(shape: Sequence[int], start: int) -> np.ndarray:
    """Fixed values on the grid of eighths in [-3, 3], never 0 (kinks are drawn apart)."""
    size = math.prod(shape)
    steps = [((start + 7 * k) % 47) - 23 for k in range(size)]
    return np.asarray([(s or 1) / 8 for s in steps], dtype=np.float64).reshape(tuple(shape))


def _upstream(shape: Sequence[int]) -> np.ndarray:
    size = math.prod(shape)
    return np.asarray([UPSTREAM[k % len(UPSTREAM)] for k in range(size)]).reshape(tuple(shape))


def _case(
    op: str, shapes: Sequence[Sequence[int]], param: Any, domain: Domain
) -> tuple[Graph, np.ndarray] | None:
    """``op`` on fixed leaves of ``shapes`` (moved into its domain of values) with a fixed
    upstream gradient; None where the course's ``domain`` or the grader's bounds exclude it."""
    row = OPS[op]
    if param not in domain.params(op, row.params(tuple(shapes[0]))) or not domain.operands(
        op, shapes
    ):
        return None
    try:
        leaves = admissible_leaves(op, [_grid(s, 3 + 11 * i) for i, s in enumerate(shapes)], param)
    except AssertionError:
        return None
    out = np.shape(row.forward(*leaves, param))
    if math.prod(out) > MAX_ELEMENTS:
        return None
    graph = Graph("tensor", tuple(leaves), (Node(op, tuple(range(len(leaves))), param),))
    return graph, _upstream(out)


def _small_shapes(min_rank: int) -> list[tuple[int, ...]]:
    """Shapes of sides 2 and 1 (and 3, below rank 3), ranks ``min_rank`` to 4."""
    return [
        shape
        for rank in range(min_rank, MAX_RANK + 1)
        for shape in itertools.product((2, 1, 3) if rank < 3 else (2, 1), repeat=rank)
    ]


Candidate = tuple[str, Sequence[Sequence[int]], Any]
"""An op alone, its operands' shapes and its parameter."""


def _cover(candidates: Iterable[Candidate], domain: Domain) -> list[tuple[Graph, np.ndarray]]:
    """A case of each candidate, in order, that reaches a dimension no case before it reached.
    A candidate's dimensions are read first on leaves of ones (the shapes and the parameter
    decide them): only the few that add one are built (``_case``: values in the op's domain)."""
    chosen: list[tuple[Graph, np.ndarray]] = []
    reached: set[str] = {"random upstream"}
    for op, shapes, param in candidates:
        node = Node(op, tuple(range(len(shapes))), param)
        sketch = Graph("tensor", tuple(np.ones(tuple(s)) for s in shapes), (node,))
        if graph_dimensions(sketch) <= reached:
            continue
        case = _case(op, shapes, param, domain)
        if case is not None:
            chosen.append(case)
            reached |= dimensions(case)
    return chosen


def _op_candidates(op: str, domain: Domain) -> Iterator[tuple[list[tuple[int, ...]], Any]]:
    """Every small input of ``op`` alone, smallest ranks first."""
    row = OPS[op]
    if isinstance(row.operands, SameShape):
        min_rank = 0 if row.operands.min_dims == 1 else row.operands.min_dims
        for shape in _small_shapes(min_rank):
            if max(shape, default=1) <= row.operands.max_side:
                for param in row.params(shape):
                    yield [shape] * row.arity, param
        return
    batched = isinstance(row.operands, MatMulShapes) and row.operands.batched
    for batch_a, batch_b in (*MATMUL_BATCHES, *SEVERAL_BATCH_AXES) if batched else [((), ())]:
        yield [batch_a + (2, 3), batch_b + (3, 2)], None


@functools.cache
def op_strata(op: str, domain: Domain) -> list[tuple[Graph, np.ndarray]]:
    """Explicit examples of ``op`` alone that reach every dimension it has in ``domain``; for
    a kinked op, also values on each side of its kink (``BESIDE_KINK``)."""
    candidates = [(op, shapes, param) for shapes, param in _op_candidates(op, domain)]
    cases = _cover(candidates, domain)
    # then the params the course gives its forward alone (``Domain.forward_only``), apart: the
    # gradient's cases above are the same as where there is none
    alone = [c for c in candidates if domain.forward_only(op, c[2])]
    cases += _cover(alone, domain.forward()) if alone else []
    if op in KINKED:
        shape = (2, 3)
        beside = np.asarray([[-0.5, 0.5, -0.125], [0.125, -0.875, 0.875]])
        cases.append((Graph("tensor", (beside,), (Node(op, (0,), None),)), _upstream(shape)))
    return cases


@functools.cache
def broadcast_strata(ops: tuple[str, ...]) -> dict[str, list[tuple[Graph, np.ndarray]]]:
    """Explicit examples of each of ``ops`` on operands that broadcast, every way the draws
    do, by op: each op's test reaches every way on its own, so a reduction that misses one
    (prepended axes never summed) fails every op's test at every seed, not those the seed
    happened to give that way."""
    shapes = [
        pair
        for shape in _small_shapes(2)
        for other in [*broadcast_partners(shape), *_prepended_and_stretched(shape)]
        for pair in ([shape, other], [other, shape])
    ]
    return {op: _cover(((op, pair, None) for pair in shapes), EVERY_FORM) for op in ops}


def _prepended_and_stretched(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Partners of ``shape`` the draws do not give, only the strata: two or more leading axes
    fewer, two or more left, and the last of size 1 (stretched, where ``shape``'s is not)."""
    if shape[-1] == 1:
        return []
    return [(*shape[k:-1], 1) for k in range(2, len(shape) - 1)]


def backward_strata(edges: bool, frozen_leaves: bool, max_operands: int | None) -> list[Any]:
    """``tensor_backward_cases``'s dimensions, explicitly: a deep chain with a frozen leaf and
    a random upstream, and every leaf trainable with the default; or (``edges``) a lone leaf,
    and every leaf frozen."""
    chain = Dag(2, (((0, 2.0), (1, -1.0)), ((2, 0.5),), ((3, 3.0),), ((4, -0.25),)))
    shape = (2, 3)
    if edges:
        cases = [(Dag(1, ()), shape, (), _upstream(shape))]
        if frozen_leaves:
            cases.append((chain, shape, (0, 1), None))
        return cases
    if max_operands is not None and max_operands < 2:
        chain = Dag(1, (((0, 2.0),), ((1, 0.5),), ((2, 3.0),), ((3, -0.25),)))
    frozen = (0,) if frozen_leaves and chain.leaves > 1 else ()
    return [(chain, shape, frozen, _upstream(shape)), (chain, (), (), None)]


SPECIAL_VALUES = (0.0, -1.25)
"""Operand values an op item reaches at every seed wherever the op's domain allows them:
zero (a derivative written as ``out / self`` divides by it; the draws give it only by luck)
and, for a micrograd leaf, a negative number (the tensor grid mixes signs already)."""


def _with_zeros(x: np.ndarray) -> np.ndarray:
    """``x`` with every other element (the first included) exactly 0."""
    zeroed = np.array(x, dtype=np.float64, copy=True)
    zeroed.reshape(-1)[::2] = 0.0
    return zeroed


def special_strata(op: str, domain: Domain) -> list[tuple[Graph, np.ndarray]]:
    """``op`` alone (on its smallest explicit example's shapes) with one operand at a time
    holding zeros, where its domain of values allows them (not at a kink, a pole or a log)."""
    row = OPS[op]
    cases = []
    for graph, upstream in op_strata(op, domain)[:1]:
        node = graph.nodes[0]
        for side in range(row.arity):
            leaves = list(graph.leaves)
            leaves[side] = _with_zeros(leaves[side])
            if row.domain(*leaves, node.param):
                cases.append((Graph("tensor", tuple(leaves), graph.nodes), upstream))
    return cases


def scalar_special_strata(op: str) -> list[Graph]:
    """A micrograd ``op`` alone with one operand at a time at each of ``SPECIAL_VALUES``, where
    its domain allows it, the other at a leaf every op takes; a power by a number also with
    each exponent of its contract, on that leaf."""
    row = OPS[op]
    params = row.params(())
    chosen = params if op == "powk" else params[:1]
    graphs = [
        Graph("scalar", (SCALAR_LEAF,), (Node(op, (0,), param),))
        for param in (chosen if len(chosen) > 1 else ())
    ]
    for param in chosen:
        for side in range(row.arity):
            for value in SPECIAL_VALUES:
                leaves = [SCALAR_LEAF] * row.arity
                leaves[side] = np.asarray(value)
                if row.domain(*leaves, param):
                    node = Node(op, tuple(range(row.arity)), param)
                    graphs.append(Graph("scalar", tuple(leaves), (node,)))
    return graphs


def kink_strata(op: str) -> list[tuple[Graph, np.ndarray]]:
    """``op`` (relu, abs) on exact zeros, as ``kink_cases`` draws it."""
    shape = (2, 3)
    return [(Graph("tensor", (np.zeros(shape),), (Node(op, (0,), None),)), _upstream(shape))]


def routing_strata(op: str, domain: Domain = EVERY_FORM) -> list[Graph]:
    """``op`` alone, summed, where it takes a number (on the left or the right), or axes (some
    of them, not None: a method that drops its axes reaches the op all the same, and only the
    axes it passes on tell): the number or the axes are then reached by construction, as the
    drawn graphs of ``single_op_graphs`` reach them."""
    if op in NUMBER_OPERANDS:
        params = OPS[op].params((2, 3))[:1]
    elif op in ("sum", "sum_tuple"):
        params = tuple(p for p in domain.params(op, OPS[op].params((2, 3))) if p is not None)[:1]
    else:
        return []
    cases = [_case(op, [(2, 3)], param, domain) for param in params]
    return [combine_sinks(case[0], ("sum",)) for case in cases if case is not None]


SCALAR_LEAF, SCALAR_UPSTREAM = np.asarray(1.25), np.asarray(UPSTREAM[0])
"""A micrograd leaf in every op's domain of values, and an upstream gradient that is not 1."""


def scalar_kink_strata(op: str) -> list[tuple[Graph, np.ndarray]]:
    """``op`` (relu) on exactly 0.0, as ``scalar_kink_cases`` draws it."""
    return [(Graph("scalar", (np.asarray(0.0),), (Node(op, (0,), None),)), SCALAR_UPSTREAM)]


def scalar_beside_kink_strata(op: str) -> list[Graph]:
    """``op`` (relu) on a leaf on each side of its kink, within one of it (``BESIDE_KINK``)."""
    if op not in KINKED:
        return []
    return [Graph("scalar", (np.asarray(x),), (Node(op, (0,), None),)) for x in (-0.5, 0.5)]


def scalar_number_strata(op: str) -> list[Graph]:
    """``op`` (``a + 2``, ``2 - a``) with its number an int and a float, where it takes one."""
    if op not in NUMBER_OPERANDS:
        return []
    number = OPS[op].params(())[0]
    return [
        Graph("scalar", (SCALAR_LEAF,), (Node(op, (0,), param),))
        for param in (int(number), float(number))
    ]


def shared_strata(op: str) -> list[tuple[Graph, float, list[float]]]:
    """``op`` on one leaf used twice (``x * x``, ``tanh(x) + tanh(x)``), its gradient preloaded,
    as ``accumulate_cases`` draws half the time."""
    param = OPS[op].params(())[0]
    if OPS[op].arity == 2:
        nodes: tuple[Node, ...] = (Node(op, (0, 0), param),)
    else:
        nodes = (Node(op, (0,), param), Node(op, (0,), param), Node("add", (1, 2), None))
    return [(Graph("scalar", (SCALAR_LEAF,), nodes), float(SCALAR_UPSTREAM), [PRELOAD])]


SUGAR_STRATA = ("sub", "div")
"""Composed operators that between them call every primitive the sugar is built from (+, *,
**): a preload lost in one primitive's closure fails the sugar's ledger test at every seed,
not only where the seed drew an operator built on it."""


def accumulate_strata(had: Sequence[str]) -> list[tuple[Graph, float, list[float]]]:
    """``shared_strata`` of a ledger test of the ops ``had``: of its one op, or of the sugar
    operators of ``SUGAR_STRATA`` it has."""
    chosen = [op for op in SUGAR_STRATA if op in had] if len(had) > 1 else []
    return [case for op in (chosen or had[:1]) for case in shared_strata(op)]


def dag_strata() -> list[Dag]:
    """A DAG with shared nodes (a diamond) deep enough to be a deep chain."""
    return [Dag(1, (((0, 2.0),), ((1, 0.5), (1, -1.0)), ((2, 3.0),), ((3, 0.5), (1, 2.0))))]


def walk_strata() -> list[Dag]:
    """``dag_strata`` and a DAG with a shared node on shared inputs (``SHARED_ON_SHARED``): the
    walk's order alone is judged on it, so the ledger's tests keep their draws."""
    return [
        *dag_strata(),
        Dag(1, (((0, 2.0),), ((0, 0.5), (1, -1.0)), ((0, 3.0), (1, 2.0)), ((3, 1.0), (2, 1.0)))),
    ]


@dataclass(frozen=True)
class ItemCoverage:
    """One item's examples at one seed, and how many reach each dimension."""

    item: str
    examples: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    required: frozenset[str] = frozenset()
    """The dimensions its explicit examples reach: every one of its contract."""

    @property
    def missing(self) -> list[str]:
        return sorted(d for d in self.required if not self.counts[d])

    def to_json(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "examples": self.examples,
            "counts": dict(sorted(self.counts.items())),
            "required": sorted(self.required),
            "missing": self.missing,
        }


GRAPH_RANKS = ((2,), (2, 3), (2, 1, 3))
"""A leaf of each rank a whole graph's draws give (``tensor_shapes``): the draws alone reach
each only by luck (rank 2 in 2 of 40 of a graphs item's examples at one seed)."""
GRAPH_BINARY = ("mul", "add", "sub", "div")
GRAPH_UNARY = ("exp", "tanh", "sigmoid", "neg", "relu")
"""One-input ops on a graph stratum's product: any value is in their domain (not log's)."""


@functools.cache
def graph_strata(had: tuple[str, ...], domain: Domain) -> list[Graph]:
    """Whole graphs of the course's ops (``had``) whose leaves reach every rank of
    ``GRAPH_RANKS``, and a product of two matrices where the course has one: an op of two
    leaves, then one of one input where the course has one, every sink summed to a number as
    the draws sum theirs (``combine_sinks``)."""
    binary = next((op for op in GRAPH_BINARY if op in had), None)
    unary = next((op for op in GRAPH_UNARY if op in had), None)
    chains = [(binary, [shape, shape]) for shape in GRAPH_RANKS] if binary else []
    product = next((op for op in ("matmul_2d", "matmul") if op in had), None)
    if product is not None:
        chains.append((product, [(2, 3), (3, 2)]))
    graphs = []
    for op, shapes in chains:
        if not domain.operands(op, shapes):
            continue
        leaves = admissible_leaves(op, [_grid(s, 3 + 11 * i) for i, s in enumerate(shapes)], None)
        nodes = [Node(op, (0, 1), None)] + ([Node(unary, (2,), None)] if unary else [])
        graphs.append(combine_sinks(Graph("tensor", tuple(leaves), tuple(nodes)), ("sum",)))
    return graphs
