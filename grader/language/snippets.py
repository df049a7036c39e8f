"""Runnable counterexamples in the student's own API.

A graph's snippet is the very source the worker executed to build it (``build_source``), so
what the student runs is what was graded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from grader.language.dags import Dag
from grader.language.graphs import (
    Graph,
    build_source,
    names,
)

IMPORTS = {
    "scalar": "from micrograd.engine import Value",
    "tensor": "from babygrad import Tensor\nfrom babygrad import ops",
}


def array_literal(value: np.ndarray) -> str:
    """A float or a nested list, as a snippet spells an array."""
    return repr(float(value)) if value.ndim == 0 else repr(value.tolist())


WALK_HELPER = '''def walk(out):
    """The grader's own backward(): each node's _backward once, output first."""
    order, seen = [], set()
    def visit(node):
        if id(node) not in seen:
            seen.add(id(node))
            for child in node._prev:
                visit(child)
            order.append(node)
    visit(out)
    for node in reversed(order):
        node._backward()'''

RESULTS_WALK_HELPER = '''def walk(out, leaves):
    """The grader's own backward(): each node's _backward once, output first; a leaf's
    does nothing, so it is not called: an op's closure belongs on its result."""
    order, seen = [], set()
    def visit(node):
        if id(node) not in seen:
            seen.add(id(node))
            for child in node._prev:
                visit(child)
            order.append(node)
    visit(out)
    for node in reversed(order):
        if not any(node is leaf for leaf in leaves):
            node._backward()'''
"""The accumulate probe's walk: ``walk(out, (a, b))`` skips the closures of a and b."""


def graph_snippet(graph: Graph, walk: bool = False) -> str:
    """Build, call ``backward()`` (or, with ``walk``, the grader's own walk), print every
    leaf's gradient."""
    var = names(graph)
    api = "micrograd" if graph.kind == "scalar" else "tensor"
    leaves = ", ".join(f"{v}.grad" if graph.kind == "scalar" else f"{v}.grad.data"
                       for v in var[: len(graph.leaves)])
    out = var[graph.output]
    run = [WALK_HELPER, f"{out}.grad = 1.0", f"walk({out})"] if walk else [f"{out}.backward()"]
    return "\n".join([IMPORTS[graph.kind], build_source(graph, api), *run, f"print({leaves})"])


DAG_HELPER = '''def given(out, *pairs):
    """The grader's node: its _backward adds weight * out.grad into each operand."""
    def _backward():
        for operand, weight in pairs:
            operand.grad += weight * out.grad
    out._backward = _backward
    return out'''


def dag_snippet(dag: Dag, call: str) -> str:
    """A grader-made micrograd graph (known-correct closures), then ``call`` on its root."""
    lines = [IMPORTS["scalar"].replace("Value", "Value, build_topo, zero_grad"), DAG_HELPER]
    lines += [f"n{i} = Value({1.0 + i})" for i in range(dag.leaves)]
    for k, pairs in enumerate(dag.nodes):
        index = dag.leaves + k
        operands = ", ".join(f"n{i}" for i, _ in pairs)
        weights = ", ".join(f"(n{i}, {w})" for i, w in pairs)
        lines.append(f"n{index} = given(Value(0.0, ({operands},)), {weights})")
    lines.append(call.format(root=f"n{dag.size - 1}"))
    return "\n".join(lines)


TENSOR_HELPER = '''class Given(Function):
    """The grader's op: out = sum of weight * input; backward is exact."""
    ran = []  # the tensors whose backward ran, in order
    def __init__(self, *weights):
        self.weights = weights
    def forward(self, *arrays):
        return sum(w * a for w, a in zip(self.weights, arrays))
    def backward(self, out_grad, node):
        if node._op is not self:
            raise ValueError("backward was called with a tensor that is not this op's output")
        Given.ran.append(node)
        parts = [Tensor(w * out_grad.data, requires_grad=False) for w in self.weights]
        return parts[0] if len(parts) == 1 else tuple(parts)  # one input: a bare Tensor'''

TENSOR_IMPORTS = "\n".join(["import numpy as np", "from babygrad import Tensor",
                            "from babygrad.ops import Function"])


def tensor_dag_snippet(dag: Dag, shape: tuple[int, ...], frozen: Sequence[int] = (),
                       grad: np.ndarray | None = None, order: bool = False,
                       wrap_leaves: bool = False) -> str:
    """A grader-made babygrad graph (known-correct ops), then ``Tensor.backward`` (with
    ``grad`` if given); the leaves in ``frozen`` do not require grad; ``wrap_leaves``: each
    leaf is ``Given(1.0)`` of a tensor. ``order``: also print which tensors' backward ran, in
    order (as node numbers)."""
    lines = [TENSOR_IMPORTS, TENSOR_HELPER]
    for i in range(dag.leaves):
        leaf = f"Tensor(np.full({shape}, {1.0 + i}), requires_grad={i not in frozen})"
        lines.append(f"n{i} = Given(1.0)({leaf})" if wrap_leaves else f"n{i} = {leaf}")
    for k, pairs in enumerate(dag.nodes):
        weights = ", ".join(str(w) for _, w in pairs)
        operands = ", ".join(f"n{i}" for i, _ in pairs)
        lines.append(f"n{dag.leaves + k} = Given({weights})({operands})")
    root = f"n{dag.size - 1}"
    upstream = "" if grad is None else (
        f"Tensor(np.array({np.asarray(grad).tolist()!r}), requires_grad=False)")
    lines += [f"{root}.backward({upstream})", f"print([n.grad for n in (n0, {root})])"]
    if order:
        nodes = ", ".join(f"n{i}" for i in range(dag.size))
        lines += [f"nodes = [{nodes}]",
                  "print([next(i for i, m in enumerate(nodes) if m is n) for n in Given.ran])"]
    return "\n".join(lines)
