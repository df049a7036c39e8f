"""The probe of ``grader.checks.broadcasting``: one elementwise ``Function`` on operands of
different shapes, and on the same operands broadcast beforehand."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from grader.language.graphs import Graph, names
from grader.worker.probes.ops import one_op
from grader.worker.shapes import shape_of


def probe_broadcast(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """One elementwise ``Function``, one run per request (``case["run"]``): ``implicit``, on
    operands of different shapes (numpy broadcasts them), or ``explicit``, on the same operands
    broadcast beforehand. Its value and gradients, so the parent can check the explicit run
    against the oracles, then the reduction alone against it."""
    graph = Graph.from_json(case["graph"])
    out_grad = np.asarray(case["out_grad"], dtype=np.float64)
    arrays = (
        graph.leaves
        if case["run"] == "implicit"
        else [np.broadcast_to(v, out_grad.shape).copy() for v in graph.leaves]
    )
    shape = shape_of(engine, "tensor")
    answer = one_op(shape, graph.nodes[0], list(arrays), out_grad, names(graph))
    return {"value": answer["values"][0], "grads": answer["grads"]}
