"""Building on the student's engine, and the plain numbers a build is answered with.

Shared by the probes that build a whole graph (``graphs``, ``accumulation``) and those that
run one op (``ops``, ``broadcasting``): a graph is built with exactly the source a student
would see in a snippet, in the student's own API, and every value and gradient leaves the
worker encoded (``grader.worker.encoding``).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from grader.language.graphs import Graph, build_source, names
from grader.worker.encoding import Encoded, encode
from grader.worker.recording import Record


def grad_of(node: Any, kind: str, what: str) -> Encoded | None:
    grad = node.grad
    if kind == "tensor":
        if grad is None:
            return None
        grad = getattr(grad, "data", grad)
    return encode(grad, what)


def api_namespace(engine: ModuleType, kind: str) -> dict[str, Any]:
    if kind == "scalar":
        return {"Value": engine.Value}
    return {"Tensor": engine.Tensor, "ops": engine.ops}


def build(engine: ModuleType, graph: Graph, api: str) -> list[Any]:
    """Build the graph with exactly the source a student would see in a snippet."""
    namespace = api_namespace(engine, graph.kind)
    exec(compile(build_source(graph, api), "<graph>", "exec"), namespace)  # noqa: S102
    return [namespace[v] for v in names(graph)]


def report(graph: Graph, nodes: list[Any], grads: list[Encoded | None]) -> dict[str, Any]:
    var = names(graph)
    return {
        "values": [encode(n.data, f"the value of {v}") for n, v in zip(nodes, var, strict=True)],
        "grads": grads,
    }


def own_grads(graph: Graph, nodes: list[Any]) -> list[Encoded | None]:
    """What the engine itself stored in every node's ``.grad``."""
    return [grad_of(n, graph.kind, f"{v}.grad") for n, v in zip(nodes, names(graph), strict=True)]


def recorded(graph: Graph, nodes: list[Any], record: Record) -> dict[str, Any]:
    var = names(graph)
    return {
        "values": [encode(n.data, f"the value of {v}") for n, v in zip(nodes, var, strict=True)],
        "record": record.report(nodes),
    }
