"""The probes of ``grader.checks.graphs``: whole graphs built with operators and methods, on
the engine's own ops (``graph``) or on the grader's recording ops (``routing``, ``sugar``)."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from grader.language.adapters import EngineProtocol
from grader.language.graphs import Graph, names
from grader.worker.encoding import Encoded, encode
from grader.worker.probes.build import build, recorded
from grader.worker.probes.untouched import Watch, values_of
from grader.worker.recording import (
    Record,
    measure_closures,
    measure_functions,
    recording_ops,
    recording_values,
)
from grader.worker.shapes import shape_of


def probe_graph(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Build with operators and methods, call ``backward()`` on the output, report everything,
    and every node's value an op or the walk changed (``untouched``); through a course adapter,
    the grader's walk over the student's ops. All through the protocol
    (``grader.worker.shapes``)."""
    graph = Graph.from_json(case["graph"])
    shape = shape_of(engine, graph.kind)
    watch = Watch()
    nodes = shape.build(graph, watch)
    with watch.phase("backward", values_of(nodes, shape.value)):
        shape.walk(nodes[-1])
    var = names(graph)
    leaves = len(graph.leaves)
    return {
        "values": [
            encode(shape.value(n), f"the value of {v}") for n, v in zip(nodes, var, strict=True)
        ],
        "grads": [
            kept_grad(shape, n, f"{v}.{shape.gradient_name}")
            if i < leaves or shape.every_grad
            else None
            for i, (n, v) in enumerate(zip(nodes, var, strict=True))
        ],
        **watch.report(),
    }


def kept_grad(shape: EngineProtocol, node: Any, what: str) -> Encoded | None:
    """The gradient the engine keeps for ``node``: a tensor that has none yet has None; a
    scalar always holds one (None there is not a number)."""
    grad = shape.grad(node)
    return None if grad is None and shape.kind == "tensor" else encode(grad, what)


def probe_routing(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Build with operators and methods on the grader's forwards, recording which op made
    which tensor (``recording_ops``); a ``Function`` of the student's own is asked its
    gradients (``measure_functions``). Reported: every node's value and the record, from
    which the parent computes the gradients: only which ops the operators and methods reach
    is the engine's."""
    graph = Graph.from_json(case["graph"])
    record = Record()
    with recording_ops(engine, record):
        nodes = build(engine, graph)
        measure_functions(engine, record)
    return recorded(engine, graph, nodes, record)


def probe_sugar(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Build with micrograd's operators on the grader's primitive ops, recording which op made
    which node (``recording_values``); a node of the engine's own is asked what its closure
    adds (``measure_closures``). Reported: every node's value and the record, from which the
    parent computes the gradients: only how ``-``, ``/``, negation and the reflected forms
    are composed is the engine's."""
    graph = Graph.from_json(case["graph"])
    record = Record()
    with recording_values(engine, record):
        nodes = build(engine, graph)
        measure_closures(record)
    return recorded(engine, graph, nodes, record)
