"""The probe of ``grader.checks.ops``: one op alone, its forward and its own backward."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from grader.language.graphs import Graph, expression, function_source, names
from grader.worker.encoding import ProbeError, encode
from grader.worker.probes.build import api_namespace, grad_of


def probe_op(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """One op alone: forward, then its own backward with a given output gradient.

    micrograd: set ``out.grad`` and call ``out._backward()``, and say which operands
    ``out._prev`` holds (by index, -1 for any other node); babygrad: call the op's
    ``backward(out_grad, node)``. Nothing else of the student's engine is involved.
    """
    graph = Graph.from_json(case["graph"])
    var = names(graph)
    out_grad = np.asarray(case["out_grad"], dtype=np.float64)
    if graph.kind == "scalar":
        leaves = [engine.Value(float(v)) for v in graph.leaves]
        out = eval(
            expression(graph, len(leaves), "micrograd", var),  # noqa: S307
            {f"{v}": leaf for v, leaf in zip(var, leaves, strict=False)},
        )
        value = encode(out.data, "the result")
        prev = [
            next((i for i, leaf in enumerate(leaves) if node is leaf), -1)
            for node in list(out._prev)[:8]
        ]
        out.grad = float(out_grad)
        out._backward()
        return {
            "values": [value],
            "grads": [grad_of(x, "scalar", f"{v}.grad") for x, v in zip(leaves, var, strict=False)],
            "prev": prev,
        }
    namespace = api_namespace(engine, "tensor")
    leaves = [engine.Tensor(v, requires_grad=True) for v in graph.leaves]
    node = graph.nodes[0]
    op = eval(function_source(node), namespace)  # noqa: S307
    out = op(*leaves)
    value = encode(out.data, "the result")
    grads = op.backward(engine.Tensor(out_grad, requires_grad=False), out)
    if not isinstance(grads, tuple | list):
        grads = (grads,)
    if len(grads) != len(leaves):
        raise ProbeError(f"backward returned {len(grads)} gradients for {len(leaves)} inputs")
    return {
        "values": [value],
        "grads": [encode(getattr(g, "data", g), f"gradient {i}") for i, g in enumerate(grads)],
    }
