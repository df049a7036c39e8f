"""Building on the student's engine, and the plain numbers a build is answered with.

Shared by the probes that build a whole graph (``graphs``, ``accumulation``) and those that
run one op (``ops``, ``broadcasting``): a graph is built with exactly the source a student
would see in a snippet, in the student's own API, and every value and gradient leaves the
worker encoded (``grader.worker.encoding``).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from grader.language.function_api import FunctionApi
from grader.language.graphs import Graph, build_source, names
from grader.language.package import resolve
from grader.language.tensor_api import BABYGRAD_API, TensorApi
from grader.worker.encoding import Encoded, encode
from grader.worker.probes.untouched import Watch
from grader.worker.recording import Record


def api_of(engine: Any) -> TensorApi:
    """A tensor engine's API as the import request gave it (babygrad's by default)."""
    return getattr(engine, "api", BABYGRAD_API)


def functions_of(engine: Any) -> FunctionApi | None:
    """The API of a scalar engine whose ops are classes, as the import request gave it; None
    for micrograd's engine module (whatever globals a student's module holds)."""
    api = getattr(engine, "api", None) if isinstance(engine, SimpleNamespace) else None
    return api if isinstance(api, FunctionApi) else None


def derivative_of(leaf: Any, api: FunctionApi, what: str) -> Encoded:
    """A leaf's derivative; None (it never got one) is 0.0, as the API documents."""
    derivative = getattr(leaf, api.derivative)
    return encode(0.0 if derivative is None else derivative, what)


def grad_of(node: Any, kind: str, what: str, api: TensorApi = BABYGRAD_API) -> Encoded | None:
    """A node's gradient; a tensor that has none yet (None, or no ``grad`` attribute at all,
    as needle's before a backward reaches it) has None."""
    if kind == "scalar":
        return encode(node.grad, what)
    grad = getattr(node, "grad", None)
    return None if grad is None else encode(api.read(grad, array_or_tensor=True), what)


def value_of(node: Any, kind: str, what: str, api: TensorApi = BABYGRAD_API) -> Encoded:
    return encode(node.data if kind == "scalar" else api.read(node), what)


def scalar_data(node: Any) -> Any:
    """A scalar node's value (micrograd's ``Value``, a course's ``Scalar``)."""
    return node.data


def reader(engine: Any, kind: str) -> Callable[[Any], Any]:
    """How a node's value is read in the engine's API, unencoded."""
    return scalar_data if kind == "scalar" else api_of(engine).read


def api_namespace(engine: Any, kind: str) -> dict[str, Any]:
    if functions := functions_of(engine):
        return {functions.scalar: resolve(engine.package, functions.scalar)}
    if kind == "scalar":
        return {"Value": engine.Value}
    return {"Tensor": engine.Tensor, "ops": engine.ops}


def build(engine: Any, graph: Graph, watch: Watch | None = None) -> list[Any]:
    """Build the graph with exactly the source a student would see in a snippet. With a
    ``watch``, each op's forward is watched leaving every node made before it as it found it
    (``Watch.steps``, called between the source's lines: one line per node)."""
    namespace = api_namespace(engine, graph.kind)
    spelling = functions_of(engine) or ("micrograd" if graph.kind == "scalar" else api_of(engine))
    source = build_source(graph, spelling)
    var = names(graph)
    if watch is not None:
        namespace[STEP] = watch.steps(reader(engine, graph.kind), len(graph.leaves))
        source = "\n".join(
            f"{line}\n{STEP}({index}, {var[index]})"
            for index, line in enumerate(source.splitlines())
        )
    exec(compile(source, "<graph>", "exec"), namespace)  # noqa: S102
    return [namespace[v] for v in var]


STEP = "_grader_made"
"""The name ``build`` calls ``Watch.steps``'s function by, between the lines it runs."""


def values(engine: Any, graph: Graph, nodes: list[Any]) -> list[Encoded]:
    api = BABYGRAD_API if graph.kind == "scalar" else api_of(engine)
    return [
        value_of(n, graph.kind, f"the value of {v}", api)
        for n, v in zip(nodes, names(graph), strict=True)
    ]


def report(
    engine: Any, graph: Graph, nodes: list[Any], grads: list[Encoded | None]
) -> dict[str, Any]:
    return {"values": values(engine, graph, nodes), "grads": grads}


def own_grads(engine: Any, graph: Graph, nodes: list[Any]) -> list[Encoded | None]:
    """What the engine itself stored in every node's ``.grad``; with ops that are classes,
    every leaf's derivative (no other node keeps one)."""
    if functions := functions_of(engine):
        leaves = len(graph.leaves)
        return [
            derivative_of(n, functions, f"{v}.{functions.derivative}")
            for n, v in zip(nodes[:leaves], names(graph), strict=False)
        ] + [None] * (len(nodes) - leaves)
    api = BABYGRAD_API if graph.kind == "scalar" else api_of(engine)
    return [
        grad_of(n, graph.kind, f"{v}.grad", api) for n, v in zip(nodes, names(graph), strict=True)
    ]


def recorded(engine: Any, graph: Graph, nodes: list[Any], record: Record) -> dict[str, Any]:
    return {"values": values(engine, graph, nodes), "record": record.report(nodes)}
