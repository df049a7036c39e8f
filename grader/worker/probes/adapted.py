"""The probes of an engine graded through its course's adapter (``grader.language.adapters``):
one op alone, and a whole graph built with the student's ops and walked by the grader.

The walk here is the grader's: a course that gives its students ``Tensor.backward`` is not
graded on it (TinyTorch's loses paths through a tensor used twice), so each node's op is asked
for its inputs' gradients once, newest node first, and what reaches each node is summed.
Nothing is differentiated here: every gradient is the student's op's answer.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from grader.language.graphs import Graph, Node
from grader.worker.encoding import Encoded, ProbeError, encode


def adapted(engine: Any) -> bool:
    """Is ``engine`` graded through a course adapter?"""
    return isinstance(engine, SimpleNamespace) and hasattr(engine, "adapter")


def _gradients(engine: Any, out: Any, out_grad: np.ndarray, inputs: list[Any]) -> list[Any]:
    """The op's answer for each input: None (no gradient) is zero, as the course's walk
    skips it."""
    grads = list(engine.adapter.gradients(engine.engine, out, out_grad))
    if len(grads) != len(inputs):
        raise ProbeError(f"apply returned {len(grads)} gradients for {len(inputs)} inputs")
    return [
        np.zeros(np.shape(engine.adapter.value(x))) if g is None else np.asarray(g)
        for g, x in zip(grads, inputs, strict=True)
    ]


def run_op(
    engine: Any, node: Node, arrays: list[np.ndarray], out_grad: np.ndarray
) -> dict[str, Any]:
    """One op alone on leaves holding ``arrays``: its value and its own gradients."""
    adapter = engine.adapter
    leaves = [adapter.leaf(engine.engine, np.asarray(a, np.float64)) for a in arrays]
    out = adapter.apply(engine.engine, node.op, leaves, node.param)
    grads = _gradients(engine, out, out_grad, leaves)
    return {
        "values": [encode(adapter.value(out), "the result")],
        "grads": [encode(g, f"gradient {i}") for i, g in enumerate(grads)],
    }


def walk_graph(engine: Any, graph: Graph) -> dict[str, Any]:
    """Build ``graph`` with the student's ops, then the grader's walk: each op asked once,
    newest first, for a gradient of ones at the last node. Reported: every value, and each
    leaf's summed gradient."""
    adapter = engine.adapter
    nodes = [adapter.leaf(engine.engine, np.asarray(v, np.float64)) for v in graph.leaves]
    for node in graph.nodes:
        nodes.append(
            adapter.apply(engine.engine, node.op, [nodes[a] for a in node.args], node.param)
        )
    values = [np.asarray(adapter.value(n), np.float64) for n in nodes]
    upstream: list[np.ndarray | None] = [None] * len(nodes)
    upstream[-1] = np.ones_like(values[-1])
    leaves = len(graph.leaves)
    for index in range(len(nodes) - 1, leaves - 1, -1):
        if upstream[index] is None:
            continue
        args = graph.nodes[index - leaves].args
        grads = _gradients(engine, nodes[index], upstream[index], [nodes[a] for a in args])
        for arg, grad in zip(args, grads, strict=True):
            upstream[arg] = grad if upstream[arg] is None else upstream[arg] + grad
    encoded: list[Encoded | None] = [
        encode(np.zeros_like(values[i]) if upstream[i] is None else upstream[i], f"gradient {i}")
        for i in range(leaves)
    ]
    return {
        "values": [encode(v, f"the value of node {i}") for i, v in enumerate(values)],
        "grads": encoded + [None] * (len(nodes) - leaves),
    }
