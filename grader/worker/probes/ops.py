"""The probe of ``grader.checks.ops``: one op alone, its forward and its own backward, through
the protocol (``grader.worker.shapes``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from grader.language.adapters import EngineProtocol
from grader.language.graphs import Graph, Node, names
from grader.worker.encoding import encode
from grader.worker.probes.untouched import OUT_GRAD, Reader, Watch, values_of
from grader.worker.shapes import shape_of


def probe_op(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """One op alone: forward, then its own backward with a given output gradient.

    micrograd: set ``out.grad`` and call ``out._backward()``, and say which operands
    ``out._prev`` holds (by index, -1 for any other node); a tensor engine: call the op's
    own backward (babygrad's ``backward(out_grad, node)``, in the course API's spelling); ops
    that are classes: ``Fn.apply(*leaves)``, then ``Fn.backward(ctx, out_grad)``; a course
    adapter: its ``gradients``. Nothing else of the student's engine is involved. With
    ``case["forward_only"]``, its forward alone (no gradients).
    """
    graph = Graph.from_json(case["graph"])
    out_grad = np.asarray(case["out_grad"], dtype=np.float64)
    shape = shape_of(engine, graph.kind)
    return one_op(
        shape,
        graph.nodes[0],
        list(graph.leaves),
        out_grad,
        names(graph),
        Watch(),
        forward_only=bool(case.get("forward_only")),
    )


def one_op(
    shape: EngineProtocol,
    node: Node,
    arrays: Sequence[Any],
    out_grad: np.ndarray,
    var: Sequence[str],
    watch: Watch | None = None,
    forward_only: bool = False,
) -> dict[str, Any]:
    """``node``'s op alone on leaves holding ``arrays``: its value and its own gradients (none
    with ``forward_only``), the inputs it recorded where the shape grades them (``prev``),
    and with a ``watch`` any value the forward or the backward changed."""
    leaves = [shape.leaf(v) for v in arrays]
    watched = watch or Watch()
    inputs = values_of(leaves, shape.value) if watch is not None else {}
    with watched.phase("forward", inputs, len(leaves)):
        out = shape.apply(node, leaves)
    value = encode(shape.value(out), "the result")
    if forward_only:
        return {"values": [value], "grads": [], **watched.report()}
    recorded = shape.inputs(out)
    upstream, read_upstream = shape.out_grad(out, out_grad)
    given = _and_result(inputs, out, shape.value, read_upstream) if watch is not None else {}
    with watched.phase("backward", given, len(leaves)):
        grads = shape.gradients(out, upstream)
    answer: dict[str, Any] = {
        "values": [value],
        "grads": [
            encode(g, shape.op_gradient.format(i=i, v=v))
            for i, (g, v) in enumerate(zip(grads, var, strict=False))
        ],
    }
    if recorded is not None:
        answer["prev"] = [
            next((i for i, leaf in enumerate(leaves) if made is leaf), -1) for made in recorded
        ]
    return {**answer, **watched.report()}


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
