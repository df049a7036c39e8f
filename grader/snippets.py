"""Runnable counterexamples in the student's own API.

A graph's snippet is the very source the worker executed to build it (``build_source``), so
what the student runs is what was graded.
"""

from __future__ import annotations

import numpy as np

from grader.given import Dag
from grader.graphs import (
    MICROGRAD_PRIMITIVES,
    Graph,
    build_source,
    expression,
    format_leaf,
    function_source,
    names,
)

IMPORTS = {
    "scalar": "from micrograd.engine import Value",
    "tensor": "from babygrad import Tensor\nfrom babygrad import ops",
}


def _array(value: np.ndarray) -> str:
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


def accumulate_snippet(graph: Graph, out_grad: float, preload: list[float]) -> str:
    """Gradients already holding something, then the op's own ``_backward`` (one op) or the
    grader's walk (several): each leaf should end at what it held plus its contributions."""
    var = names(graph)
    leaves = var[: len(graph.leaves)]
    out = var[graph.output]
    held = [f"{v}.grad = {p!r}  # already there, from another use" for v, p in
            zip(leaves, preload, strict=True)]
    one_op = len(graph.nodes) == 1 and graph.nodes[0].op in MICROGRAD_PRIMITIVES
    helper, run = ([], f"{out}._backward()") if one_op else ([WALK_HELPER], f"walk({out})")
    grads = ", ".join(f"{v}.grad" for v in leaves)
    return "\n".join([IMPORTS["scalar"], *helper, build_source(graph, "micrograd"), *held,
                      f"{out}.grad = {out_grad!r}", run, f"print({grads})"])


def op_snippet(graph: Graph, out_grad: np.ndarray) -> str:
    """One op alone: forward, then only its own backward with a chosen output gradient."""
    var = names(graph)
    leaves = [f"{v} = {format_leaf(value, graph.kind)}"
              for v, value in zip(var, graph.leaves, strict=False)]
    if graph.kind == "scalar":
        grads = ", ".join(f"{v}.grad" for v in var[: len(graph.leaves)])
        body = [f"out = {expression(graph, len(graph.leaves), 'micrograd', var)}",
                f"out.grad = {_array(out_grad)}", "out._backward()", f"print(out.data, {grads})"]
    else:
        node = graph.nodes[0]
        body = [f"op = {function_source(node)}",
                f"out = op({', '.join(var[: len(graph.leaves)])})",
                f"grads = op.backward(Tensor({_array(out_grad)}), out)",
                "print(out.data, grads)"]
    return "\n".join([IMPORTS[graph.kind], *leaves, *body])


def broadcast_snippet(graph: Graph, out_grad: np.ndarray) -> str:
    """One elementwise op on operands of different shapes, then on the same operands broadcast
    beforehand: the first gradients should be the second ones summed back to each shape."""
    var = names(graph)
    a, b = var[:2]
    op = function_source(graph.nodes[0])
    return "\n".join([
        "import numpy as np", IMPORTS["tensor"],
        *(f"{v} = {format_leaf(value, 'tensor')}  # shape {value.shape}"
          for v, value in zip(var, graph.leaves, strict=False)),
        f"g = Tensor({_array(out_grad)})  # shape {out_grad.shape}",
        f"op = {op}",
        f"grads = op.backward(g, op({a}, {b}))",
        "# the same op on operands broadcast beforehand; summed back, these are what grads "
        "should be",
        f"full = {op}",
        f"wide = [Tensor(np.broadcast_to(x.data, g.shape)) for x in ({a}, {b})]",
        "full_grads = full.backward(g, full(*wide))",
        "print([x.data.shape for x in grads], [x.data.shape for x in full_grads])",
        "print(grads, full_grads)"])


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


def chain_snippet(length: int) -> str:
    """A chain of grader nodes as long as the graded one, then the student's ``build_topo``."""
    return "\n".join([IMPORTS["scalar"].replace("Value", "Value, build_topo"), DAG_HELPER,
                      "node = Value(1.0)", f"for _ in range({length}):",
                      "    node = given(Value(0.0, (node,)), (node, 1.0))",
                      "print(len(build_topo(node)))"])


TENSOR_HELPER = '''class Given(Function):
    """The grader's op: out = sum of weight * input; backward is exact."""
    def __init__(self, *weights):
        self.weights = weights
    def forward(self, *arrays):
        return sum(w * a for w, a in zip(self.weights, arrays))
    def backward(self, out_grad, node):
        return tuple(Tensor(w * out_grad.data) for w in self.weights)'''

TENSOR_IMPORTS = "\n".join(["import numpy as np", "from babygrad import Tensor",
                            "from babygrad.ops import Function"])


def tensor_dag_snippet(dag: Dag, shape: tuple[int, ...]) -> str:
    """A grader-made babygrad graph (known-correct ops), then ``Tensor.backward``."""
    lines = [TENSOR_IMPORTS, TENSOR_HELPER]
    lines += [f"n{i} = Tensor(np.full({shape}, {1.0 + i}))" for i in range(dag.leaves)]
    for k, pairs in enumerate(dag.nodes):
        weights = ", ".join(str(w) for _, w in pairs)
        operands = ", ".join(f"n{i}" for i, _ in pairs)
        lines.append(f"n{dag.leaves + k} = Given({weights})({operands})")
    lines += [f"n{dag.size - 1}.backward()", f"print([n.grad for n in (n0, n{dag.size - 1})])"]
    return "\n".join(lines)


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
