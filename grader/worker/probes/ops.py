"""The probe of ``grader.checks.ops``: one op alone, its forward and its own backward."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from grader.language.function_api import FunctionApi
from grader.language.graphs import Graph, expression, names
from grader.language.package import resolve
from grader.worker.encoding import ProbeError, encode
from grader.worker.probes.adapted import adapted, run_op
from grader.worker.probes.build import (
    api_namespace,
    api_of,
    functions_of,
    grad_of,
    scalar_data,
)
from grader.worker.probes.untouched import OUT_GRAD, Reader, Watch, values_of


def probe_op(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """One op alone: forward, then its own backward with a given output gradient.

    micrograd: set ``out.grad`` and call ``out._backward()``, and say which operands
    ``out._prev`` holds (by index, -1 for any other node); a tensor engine: call the op's
    own backward (babygrad's ``backward(out_grad, node)``, in the course API's spelling).
    Nothing else of the student's engine is involved.
    """
    graph = Graph.from_json(case["graph"])
    var = names(graph)
    out_grad = np.asarray(case["out_grad"], dtype=np.float64)
    if functions := functions_of(engine):
        return _function_op(engine, functions, graph, float(out_grad))
    if adapted(engine):
        return run_op(engine, graph.nodes[0], list(graph.leaves), out_grad)
    watch = Watch()
    if graph.kind == "scalar":
        leaves = [engine.Value(float(v)) for v in graph.leaves]
        inputs = values_of(leaves, scalar_data)
        with watch.phase("forward", inputs, len(leaves)):
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
        given = _and_result(inputs, out, scalar_data, lambda: out.grad)
        with watch.phase("backward", given, len(leaves)):
            out._backward()
        return {
            "values": [value],
            "grads": [grad_of(x, "scalar", f"{v}.grad") for x, v in zip(leaves, var, strict=False)],
            "prev": prev,
            **watch.report(),
        }
    api = api_of(engine)
    leaves = [api.make_leaf(engine.Tensor, v, True) for v in graph.leaves]
    op = eval(api.function_source(graph.nodes[0]), api_namespace(engine, "tensor"))  # noqa: S307
    inputs = values_of(leaves, api.read)
    with watch.phase("forward", inputs, len(leaves)):
        out = op(*leaves)
    value = encode(api.read(out), "the result")
    upstream = api.make_leaf(engine.Tensor, out_grad, False)
    given = _and_result(inputs, out, api.read, lambda: api.read(upstream))
    with watch.phase("backward", given, len(leaves)):
        grads = getattr(op, api.backward)(upstream, out)
    if not isinstance(grads, tuple | list):
        grads = (grads,)
    grads = grads[: len(leaves)]  # a walk pairs gradients with inputs: extras are never read
    if len(grads) != len(leaves):
        raise ProbeError(f"{api.backward} returned {len(grads)} gradients for {len(leaves)} inputs")
    return {
        "values": [value],
        "grads": [
            encode(api.read(g, array_or_tensor=True), f"gradient {i}") for i, g in enumerate(grads)
        ],
        **watch.report(),
    }


def _function_op(
    engine: ModuleType, api: FunctionApi, graph: Graph, out_grad: float
) -> dict[str, Any]:
    """An op that is a class: ``Fn.apply(*leaves)``, then ``Fn.backward(ctx, out_grad)`` with
    the context its forward filled in (a float for one input, a tuple otherwise)."""
    scalar = resolve(engine.package, api.scalar)
    leaves = [api.make_leaf(scalar, v) for v in graph.leaves]
    function = resolve(engine.package, api.classes[graph.nodes[0].op])
    watch = Watch()
    inputs = values_of(leaves, scalar_data)
    with watch.phase("forward", inputs, len(leaves)):
        out = getattr(function, api.apply)(*leaves)
    value = encode(out.data, "the result")
    with watch.phase("backward", _and_result(inputs, out, scalar_data), len(leaves)):
        grads = getattr(function, api.backward)(resolve(out, api.context), out_grad)
    if not isinstance(grads, tuple | list):
        grads = (grads,)
    grads = grads[: len(leaves)]  # a walk pairs gradients with inputs: extras are never read
    if len(grads) != len(leaves):
        raise ProbeError(
            f"{api.backward} returned {len(grads)} derivatives for {len(leaves)} inputs"
        )
    return {
        "values": [value],
        "grads": [encode(g, f"derivative {i}") for i, g in enumerate(grads)],
        **watch.report(),
    }


def _and_result(
    inputs: dict[int, Reader],
    out: Any,
    read: Callable[[Any], Any],
    out_grad: Reader | None = None,
) -> dict[int, Reader]:
    """What a backward must leave alone: its inputs' values, the result's (numbered after
    them) and, where it is an object the backward could write into, the gradient it is given
    (a float is not: MiniTorch's ``d_output``)."""
    given = {**inputs, len(inputs): lambda: read(out)}
    if out_grad is not None:
        given[OUT_GRAD] = out_grad
    return given
