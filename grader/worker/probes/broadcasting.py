"""The probe of ``grader.checks.broadcasting``: one elementwise ``Function`` on operands of
different shapes, and on the same operands broadcast beforehand."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from grader.language.graphs import Graph, function_source
from grader.worker.encoding import ProbeError, encode
from grader.worker.probes.adapted import adapted, run_op
from grader.worker.probes.build import api_namespace


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
    if adapted(engine):
        answer = run_op(engine, graph.nodes[0], list(arrays), out_grad)
        return {"value": answer["values"][0], "grads": answer["grads"]}
    op = eval(function_source(graph.nodes[0]), api_namespace(engine, "tensor"))  # noqa: S307
    inputs = [engine.Tensor(v, requires_grad=True) for v in arrays]
    out = op(*inputs)
    grads = op.backward(engine.Tensor(out_grad, requires_grad=False), out)
    if not isinstance(grads, tuple | list) or len(grads) != len(inputs):
        raise ProbeError(f"backward must return {len(inputs)} gradients")
    return {
        "value": encode(out.data, "the result"),
        "grads": [encode(getattr(g, "data", g), f"gradient {i}") for i, g in enumerate(grads)],
    }
