"""Runnable counterexamples in the student's own API.

A graph's snippet is the very source the worker executed to build it (``build_source``), so
what the student runs is what was graded.
"""

from __future__ import annotations

import numpy as np

from grader.given import Dag
from grader.graphs import (
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


def graph_snippet(graph: Graph) -> str:
    """Build, call ``backward()``, print every leaf's gradient."""
    var = names(graph)
    api = "micrograd" if graph.kind == "scalar" else "tensor"
    leaves = ", ".join(f"{v}.grad" if graph.kind == "scalar" else f"{v}.grad.data"
                       for v in var[: len(graph.leaves)])
    return "\n".join([IMPORTS[graph.kind], build_source(graph, api),
                      f"{var[graph.output]}.backward()", f"print({leaves})"])


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
