"""Grader-made graphs: known-correct local gradients, to grade the walk apart from the ops.

A ``Dag`` has leaves and nodes; each node lists ``(operand, weight)`` pairs and its backward adds
``weight * out.grad`` into each operand. The expected result of any walk over it is computed here,
in plain Python, so ``backward()``, ``build_topo``, ``zero_grad`` and ``Tensor.backward`` are
graded without trusting a single student op.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

WEIGHTS = (2.0, -1.0, 0.5, 3.0, -0.25)


@dataclass(frozen=True)
class Dag:
    leaves: int
    nodes: tuple[tuple[tuple[int, float], ...], ...]

    @property
    def size(self) -> int:
        return self.leaves + len(self.nodes)

    def operands(self, index: int) -> list[int]:
        return [] if index < self.leaves else [i for i, _ in self.nodes[index - self.leaves]]

    def to_json(self) -> dict[str, Any]:
        return {"leaves": self.leaves, "nodes": [[list(p) for p in pairs] for pairs in self.nodes]}

    def reachable(self) -> set[int]:
        seen = {self.size - 1}
        for index in range(self.size - 1, -1, -1):
            if index in seen:
                seen.update(self.operands(index))
        return seen

    def backward(self, passes: int = 1) -> list[list[float]]:
        """Gradients of every node after each ``backward()`` call, as the contract defines it:
        the root's grad is set to 1.0, nothing is ever reset, closures accumulate with +=.

        Nodes the root does not reach keep 0.0. Any valid order gives the same numbers, since a
        node's closure runs only after every consumer has added into it.
        """
        return self.backward_from([self.size - 1] * passes)

    def backward_from(self, roots: list[int], held: Sequence[float] = ()) -> list[list[float]]:
        """Gradients of every node after ``backward()`` on each of ``roots`` in turn, the
        nodes holding ``held`` before the first (none: 0.0), as a training loop runs an
        engine: each call sets its root's grad to 1.0, whatever it held, and adds into the
        nodes that root reaches (a node's closure passes on all its grad holds); the nodes it
        does not reach keep theirs."""
        grads = list(held) or [0.0] * self.size
        history = []
        for root in roots:
            live = self.upto(root).reachable()
            grads[root] = 1.0
            for index in range(root, self.leaves - 1, -1):
                if index in live:
                    for operand, weight in self.nodes[index - self.leaves]:
                        grads[operand] += weight * grads[index]
            history.append(list(grads))
        return history

    def tuple_singles(self, wrap_leaves: bool = False) -> tuple[int, ...]:
        """The ops of one input whose backward hands a walk a 1-tuple where the course's ops
        return a bare tensor or a 1-tuple (``conventions: single_gradient``): every other one
        in the order they are made, the first included, so any graph with one has one of each
        form after it. With ``wrap_leaves`` leaf ``i``'s op of one tensor is node ``i``."""
        singles = list(range(self.leaves)) if wrap_leaves else []
        singles += [self.leaves + k for k, pairs in enumerate(self.nodes) if len(pairs) == 1]
        return tuple(singles[::2])

    def upto(self, root: int) -> Dag:
        """The graph as it stood when node ``root`` was made: its nodes up to ``root`` (the
        same numbers), ``root`` the last."""
        return Dag(self.leaves, self.nodes[: root - self.leaves + 1])

    def walks(self, roots: list[int], grads: str) -> list[list[float | None]]:
        """Every node's gradient after each ledger walk from ``roots`` in turn (each a fresh
        ``backward()`` with a ledger of its own, from a root seeded with 1.0), as a course
        whose second walk ``grads`` (``overwrite``: each node it reaches gets this walk's
        gradient; ``accumulate``: its gradient is added to what the node held). None: no walk
        reached the node yet."""
        held: list[float | None] = [None] * self.size
        history = []
        for root in roots:
            sub = self.upto(root)
            (own,) = sub.backward()
            for index in sub.reachable():
                before = held[index]
                accumulated = grads == "accumulate" and before is not None
                held[index] = own[index] + before if accumulated else own[index]
            history.append(list(held))
        return history

    def unrolled(self) -> tuple[Dag, list[int]]:
        """The tree this DAG stands for: every use of a node gets a copy of the node (and of
        everything under it) of its own, so no node receives more than one contribution; and
        which node of this DAG each node of the tree copies. Exponential in the sharing: meant
        for the small DAGs drawn by ``dags``."""
        leaves: list[int] = []
        nodes: list[tuple[tuple[int, float], ...]] = []
        inner: list[int] = []

        def copy(index: int) -> tuple[str, int]:
            if index < self.leaves:
                leaves.append(index)
                return "leaf", len(leaves) - 1
            pairs = tuple((copy(o), w) for o, w in self.nodes[index - self.leaves])
            nodes.append(pairs)  # type: ignore[arg-type]
            inner.append(index)
            return "node", len(nodes) - 1

        copy(self.size - 1)

        def number(ref: tuple[str, int]) -> int:
            return ref[1] if ref[0] == "leaf" else len(leaves) + ref[1]

        tree = Dag(
            len(leaves),
            tuple(
                tuple((number(r), w) for r, w in pairs)  # type: ignore[misc]
                for pairs in nodes
            ),
        )
        return tree, [*leaves, *inner]

    def topo_problems(self, order: list[int], root_first: bool = False) -> list[str]:
        """Why ``order`` (leaves first) is not a valid topological order of the nodes the root
        reaches, worded for an order given the root first where ``root_first`` says so (then
        ``order`` is that order reversed)."""
        before, last = ("after", "first") if root_first else ("before", "last")
        live = self.reachable()
        problems = []
        counts: dict[int, int] = {}
        for index in order:
            counts[index] = counts.get(index, 0) + 1
        if -1 in counts:
            problems.append("it contains objects that are not nodes of the graph")
        repeated = sorted(i for i, c in counts.items() if c > 1 and i >= 0)
        if repeated:
            problems.append(f"node(s) {repeated} appear more than once")
        missing = sorted(live - set(counts))
        if missing:
            problems.append(f"node(s) {missing} are missing")
        position = {index: p for p, index in enumerate(order)}
        for index in sorted(live & set(position)):
            late = [o for o in self.operands(index) if position.get(o, -1) > position[index]]
            if late:
                problems.append(f"node {index} comes {before} its operand(s) {sorted(set(late))}")
                break
        if order and order[-1] != self.size - 1:
            problems.append(f"the root is not {last}")
        return problems


@st.composite
def dags(
    draw: st.DrawFn,
    max_leaves: int = 3,
    max_nodes: int = 6,
    arity: int = 2,
    shared: bool = True,
    max_operands: int | None = None,
) -> Dag:
    """Random DAGs whose root reaches every node: reuse, diamonds and fan-out come free.

    ``shared=False`` draws trees instead: every node is an operand exactly once (a node whose
    inputs are all taken has fewer operands), so no node ever collects two contributions.
    Nodes nothing uses are gathered into a root of their own, with ``max_operands`` (a
    course's most inputs of an op, ``Domain.max_operands``) at most: a chain of such roots."""
    leaves = draw(st.integers(1, max_leaves))
    count = draw(st.integers(1, max_nodes))
    nodes = []
    for k in range(count):
        size = leaves + k
        if shared:
            pairs = tuple(
                (draw(st.integers(0, size - 1)), WEIGHTS[draw(st.integers(0, 4))])
                for _ in range(arity)
            )
        else:
            free = sorted(set(range(size)) - {i for n in nodes for i, _ in n})
            pairs = tuple(
                (free.pop(draw(st.integers(0, len(free) - 1))), WEIGHTS[draw(st.integers(0, 4))])
                for _ in range(min(arity, len(free)))
            )
        nodes.append(pairs)
    dag = Dag(leaves, tuple(nodes))
    unused = sorted(set(range(dag.size - 1)) - {i for n in nodes for i, _ in n})
    if unused:
        nodes += _gathered([dag.size - 1, *unused], max_operands or len(unused) + 1)
    return Dag(leaves, tuple(nodes))


@st.composite
def second_walks(draw: st.DrawFn, max_operands: int | None = None) -> tuple[Dag, int]:
    """A tree (``dags(shared=False)``: nothing to sum, so only the walk is graded) and an op
    node of it other than the root, to walk first: the root is then a new root built on a
    graph already walked (``y = f(x); y.backward(); z = g(y, w); z.backward()``)."""
    dag = draw(_trees(max_operands))
    return dag, draw(st.integers(dag.leaves, dag.size - 2))


@functools.cache
def _trees(max_operands: int | None) -> st.SearchStrategy[Dag]:
    """``second_walks``' trees of two op nodes or more, built once per ``max_operands``: a new
    filter is validated and its lambda's source read on its first draw, every example."""
    return dags(shared=False, max_operands=max_operands).filter(lambda d: len(d.nodes) >= 2)


def _gathered(sinks: list[int], max_operands: int) -> list[tuple[tuple[int, float], ...]]:
    """Nodes that add up ``sinks`` (weight 1; the first is the last node drawn), each of at
    most ``max_operands`` inputs: one node, or a chain whose every link takes the previous one
    and the next sinks. Nothing is drawn: the draws of a course whose ops take any number of
    inputs stay as they were."""
    after = sinks[0] + 1
    nodes = [tuple((i, 1.0) for i in sinks[:max_operands])]
    rest = sinks[max_operands:]
    while rest:
        taken, rest = rest[: max_operands - 1], rest[max_operands - 1 :]
        nodes.append(tuple((i, 1.0) for i in [after + len(nodes) - 1, *taken]))
    return nodes


def diamonds(depth: int) -> Dag:
    """A chain of ``depth`` diamonds over one leaf: each level uses the node below twice and
    joins the two halves again. A walk that visits a shared node again does 2**depth visits;
    every gradient is exactly 1."""
    nodes: list[tuple[tuple[int, float], ...]] = []
    top = 0
    for _ in range(depth):
        nodes += [((top, 1.0),), ((top, 1.0),)]
        left = 1 + len(nodes) - 2
        nodes.append(((left, 0.5), (left + 1, 0.5)))
        top = len(nodes)
    return Dag(1, tuple(nodes))


def shallow(leaves: int, weights: tuple[float, ...]) -> Dag:
    """A root whose operands are all leaves: a second backward exactly doubles their grads."""
    return Dag(leaves, (tuple((i, weights[i % len(weights)]) for i in range(leaves)),))


IN_USE_BACKWARDS: tuple[tuple[Dag, tuple[int, ...], tuple[float, ...]], ...] = (
    # y = 2a + 3b, z = 0.5y + a: z.backward(), then y.backward() (y holds 0.5: set to 1)
    (Dag(2, (((0, 2.0), (1, 3.0)), ((2, 0.5), (0, 1.0)))), (3, 2), ()),
    # y = 2a + 3b, every grad held from an earlier step, y's 2.0: y.backward() sets it to 1
    (Dag(2, (((0, 2.0), (1, 3.0)),)), (2,), (0.5, -1.0, 2.0)),
)
"""``backward()`` as a training loop calls it on a graph already holding gradients: the nodes
it is called on in turn, and the grads every node holds first (none: 0). Fixed, so that a
``backward()`` that seeds only a root whose grad is still 0 fails at every seed; the walk
from an inner node reaches only leaves below it, where PyTorch's gradients agree."""

TRAINED_ZERO_GRADS: tuple[tuple[Dag, tuple[float, ...]], ...] = (
    # y = a + b after a step; a new root z = 2y, its grad still 0
    (Dag(2, (((0, 1.0), (1, 1.0)), ((2, 2.0),))), (1.5, -2.0, 1.0, 0.0)),
    # the same under an inner node left at 0 (u = y), and a root over u and a
    (
        Dag(2, (((0, 1.0), (1, 1.0)), ((2, 1.0),), ((3, 1.0), (0, 1.0)))),
        (1.5, -2.0, 0.75, 0.0, 1.0),
    ),
)
"""``zero_grad`` from a new root over a trained graph: the graph and every node's grad before.
A root, or an inner node, whose grad is 0 still has nodes below it to reset."""

HANDED_BACK_LEDGERS: tuple[Dag, ...] = (
    Dag(2, (((0, 1.0), (1, 1.0)), ((0, 1.0), (2, 1.0)))),  # s = a + b; r = a + s
    Dag(1, (((0, 1.0), (0, 1.0)), ((1, 1.0), (0, 1.0)))),  # s = a + a; r = s + a
)
"""Sums of 1s only, for ops that hand ``out_grad`` back unchanged to every input (as Add
does): a tensor used twice gets two tensors holding one array."""
