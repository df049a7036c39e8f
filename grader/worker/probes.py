"""Probes: the experiments run against an engine, answered with plain numbers only.

This module runs inside the sandboxed worker (on the student's engine) and in the trusted
parent (on the reference engine): it imports nothing but numpy and the graph language. It never
judges; it reports what the engine did. Where an item grades one part alone, the rest is the
grader's: its own nodes with known closures, a topological order sent as data, or its
recording ops (``grader.worker.recording``); no probe walks a student's graph or computes a
gradient. Student nodes are tracked by identity (``id``), never by
``==`` or hashing, which real engines override.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np

from grader.language.graphs import (
    Graph,
    build_source,
    expression,
    function_source,
    names,
)
from grader.worker.encoding import Encoded, ProbeError, encode
from grader.worker.recording import (
    Record,
    closures_newest_first,
    measure_closures,
    measure_functions,
    recording_ops,
    recording_values,
)


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


def _build(engine: ModuleType, graph: Graph, api: str) -> list[Any]:
    """Build the graph with exactly the source a student would see in a snippet."""
    namespace = api_namespace(engine, graph.kind)
    exec(compile(build_source(graph, api), "<graph>", "exec"), namespace)  # noqa: S102
    return [namespace[v] for v in names(graph)]


def _report(graph: Graph, nodes: list[Any], grads: list[Encoded | None]) -> dict[str, Any]:
    var = names(graph)
    return {
        "values": [encode(n.data, f"the value of {v}") for n, v in zip(nodes, var, strict=True)],
        "grads": grads,
    }


def _own_grads(graph: Graph, nodes: list[Any]) -> list[Encoded | None]:
    """What the engine itself stored in every node's ``.grad``."""
    return [grad_of(n, graph.kind, f"{v}.grad") for n, v in zip(nodes, names(graph), strict=True)]


def probe_graph(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Build with operators and methods, call ``backward()`` on the output, report everything."""
    graph = Graph.from_json(case["graph"])
    nodes = _build(engine, graph, "micrograd" if graph.kind == "scalar" else "tensor")
    nodes[-1].backward()
    return _report(graph, nodes, _own_grads(graph, nodes))


def probe_routing(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Build with operators and methods on the grader's forwards, recording which op made
    which tensor (``recording_ops``); a ``Function`` of the student's own is asked its
    gradients (``measure_functions``). Reported: every node's value and the record, from
    which the parent computes the gradients: only which ops the operators and methods reach
    is the engine's."""
    graph = Graph.from_json(case["graph"])
    record = Record()
    with recording_ops(engine, record):
        nodes = _build(engine, graph, "tensor")
        measure_functions(engine, record)
    return _recorded(graph, nodes, record)


def probe_sugar(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Build with micrograd's operators on the grader's primitive ops, recording which op made
    which node (``recording_values``); a node of the engine's own is asked what its closure
    adds (``measure_closures``). Reported: every node's value and the record, from which the
    parent computes the gradients: only how ``-``, ``/``, negation and the reflected forms
    are composed is the engine's."""
    graph = Graph.from_json(case["graph"])
    record = Record()
    with recording_values(engine, record):
        nodes = _build(engine, graph, "micrograd")
        measure_closures(record)
    return _recorded(graph, nodes, record)


def _recorded(graph: Graph, nodes: list[Any], record: Record) -> dict[str, Any]:
    var = names(graph)
    return {"values": [encode(n.data, f"the value of {v}")
                       for n, v in zip(nodes, var, strict=True)],
            "record": record.report(nodes)}


def probe_accumulate(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Do the engine's ``_backward`` closures add into gradients that already hold something?

    The graph is built with every ``Value`` made recorded in order; then each one's closure
    runs once, the one made last first (``closures_newest_first``; the leaves' closures
    skipped). One run per request: ``separate``, the graph with every use of a leaf split into
    a fresh copy (nothing to accumulate into), on the engine's own ops: every node's value and
    every copy's gradient, for the parent to check against the oracles (a run that is wrong
    here grades nothing); ``preloaded``, the graph as drawn, shared leaves included, with each
    leaf's gradient preloaded: each leaf's gradient; ``composition``, the separate build on
    the grader's recording primitives (``recording_values``) but those named in ``own``: the
    values, the record (the parent computes the gradients from it) and which primitives the
    engine's operators called, to find which must work before the example can be graded.
    Both runs on the uses apart also say which op nodes' results are one of their own
    operands (``returns_operand``, by identity): such a result is no node of its own (nothing
    new is recorded, so its operand is seeded and never walked into), so the example cannot
    tell ``=`` from ``+=``."""
    graph = Graph.from_json(case["graph"])
    out_grad = float(case["out_grad"])
    run = case["run"]
    record = Record()
    if run == "preloaded":
        with recording_values(engine, record, primitives=False):
            nodes = _build(engine, graph, "micrograd")
        leaves = nodes[: len(graph.leaves)]
        for leaf, preload in zip(leaves, case["preload"], strict=False):
            leaf.grad = float(preload)
        nodes[-1].grad = out_grad
        closures_newest_first(record.nodes, leaves)
        return {"preloaded": [encode(n.grad, f"gradient of leaf {i}")
                              for i, n in enumerate(leaves)]}
    split, _ = graph.split_leaves()
    if run == "composition":
        used: set[str] = set()
        with recording_values(engine, record, used=used, keep=frozenset(case["own"])):
            copies = _build(engine, split, "micrograd")
            measure_closures(record, copies[: len(split.leaves)])
        return {**_recorded(split, copies, record), "used": sorted(used),
                "returns_operand": returns_operand(split, copies)}
    with recording_values(engine, record, primitives=False):
        copies = _build(engine, split, "micrograd")
    copies[-1].grad = out_grad
    closures_newest_first(record.nodes, copies[: len(split.leaves)])
    return {**_report(split, copies, _own_grads(split, copies)[: len(split.leaves)]),
            "returns_operand": returns_operand(split, copies)}


def returns_operand(graph: Graph, built: list[Any]) -> list[int]:
    """The op nodes whose result is one of their own operands (by identity)."""
    return [index for index, node in enumerate(graph.nodes, len(graph.leaves))
            if any(built[index] is built[arg] for arg in node.args)]


def probe_broadcast(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """One elementwise ``Function``, one run per request (``case["run"]``): ``implicit``, on
    operands of different shapes (numpy broadcasts them), or ``explicit``, on the same operands
    broadcast beforehand. Its value and gradients, so the parent can check the explicit run
    against the oracles, then the reduction alone against it."""
    graph = Graph.from_json(case["graph"])
    out_grad = np.asarray(case["out_grad"], dtype=np.float64)
    arrays = (graph.leaves if case["run"] == "implicit"
              else [np.broadcast_to(v, out_grad.shape).copy() for v in graph.leaves])
    op = eval(function_source(graph.nodes[0]), api_namespace(engine, "tensor"))  # noqa: S307
    inputs = [engine.Tensor(v, requires_grad=True) for v in arrays]
    out = op(*inputs)
    grads = op.backward(engine.Tensor(out_grad, requires_grad=False), out)
    if not isinstance(grads, tuple | list) or len(grads) != len(inputs):
        raise ProbeError(f"backward must return {len(inputs)} gradients")
    return {"value": encode(out.data, "the result"),
            "grads": [encode(getattr(g, "data", g), f"gradient {i}") for i, g in enumerate(grads)]}


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
        out = eval(expression(graph, len(leaves), "micrograd", var),  # noqa: S307
                   {f"{v}": leaf for v, leaf in zip(var, leaves, strict=False)})
        value = encode(out.data, "the result")
        prev = [next((i for i, leaf in enumerate(leaves) if node is leaf), -1)
                for node in list(out._prev)[:8]]
        out.grad = float(out_grad)
        out._backward()
        return {"values": [value], "grads": [grad_of(x, "scalar", f"{v}.grad")
                                              for x, v in zip(leaves, var, strict=False)],
                "prev": prev}
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
    return {"values": [value],
            "grads": [encode(getattr(g, "data", g), f"gradient {i}") for i, g in enumerate(grads)]}


def _given_scalar(engine: ModuleType, dag: dict[str, Any]) -> tuple[list[Any], list[int]]:
    """A micrograd graph whose ``_backward`` closures are the grader's: each adds a known
    weight times ``out.grad`` into its operands and counts its calls."""
    nodes = [engine.Value(1.0 + i) for i in range(dag["leaves"])]
    calls = [0] * (dag["leaves"] + len(dag["nodes"]))

    def closure(out: Any, pairs: list[tuple[Any, float]], index: int) -> Callable[[], None]:
        def _backward() -> None:
            calls[index] += 1
            for operand, weight in pairs:
                operand.grad += weight * out.grad
        return _backward

    for pairs in dag["nodes"]:
        operands = [(nodes[i], float(w)) for i, w in pairs]
        out = engine.Value(0.0, tuple(o for o, _ in operands), "given")
        out._backward = closure(out, operands, len(nodes))
        nodes.append(out)
    return nodes, calls


def _scalar_grads(nodes: list[Any]) -> list[Encoded | None]:
    return [grad_of(n, "scalar", f"node {i} grad") for i, n in enumerate(nodes)]


def _topo_indices(engine: ModuleType, nodes: list[Any]) -> dict[str, Any]:
    """The student's ``build_topo`` from the last node, as indices (-1: not one of ours)."""
    index = {id(n): i for i, n in enumerate(nodes)}
    order = engine.build_topo(nodes[-1])
    return {"order": [index.get(id(n), -1) for n in list(order)[: 10 * len(nodes)]]}


def probe_topo(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """The student's ``build_topo`` on a grader-made graph, reported as node indices."""
    return _topo_indices(engine, _given_scalar(engine, case["dag"])[0])


def probe_backward(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """The student's ``backward()`` over grader closures, with ``build_topo`` substituted by
    one that returns ``case["order"]`` (node numbers: the parent drew the graph, so it knows
    a topological order of the nodes the root reaches), so only the walk itself (seed, order
    reversed, each closure once) is observed."""
    nodes, calls = _given_scalar(engine, case["dag"])
    order = [nodes[i] for i in case["order"]]
    original = getattr(engine, "build_topo", None)
    engine.build_topo = lambda root: list(order)
    try:
        passes = []
        for _ in range(case.get("passes", 1)):
            nodes[-1].backward()
            passes.append({"grads": _scalar_grads(nodes), "calls": list(calls)})
    finally:
        engine.build_topo = original
    return {"passes": passes}


def probe_zero_grad(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Every node's grad made non-zero, then the student's ``zero_grad(root)``, with
    ``build_topo`` substituted by one that returns ``case["order"]`` (node numbers, a correct
    order the parent knows: a ``zero_grad`` may walk with it, and whether the student's is
    right, or fast, is ``micrograd.topo``'s question). With ``case["count_reads"]``, also
    how often each node's ``_prev`` was read (``reads``, as ``_CountedInputs`` counts)."""
    nodes, _ = _given_scalar(engine, case["dag"])
    for i, node in enumerate(nodes):
        node.grad = 0.5 + i
    reads = [0] * len(nodes)
    if case.get("count_reads"):
        for index, node in enumerate(nodes):
            counted = _CountedInputs(node._prev)
            counted.reads, counted.index = reads, index
            node._prev = counted
    original = getattr(engine, "build_topo", None)
    order = [nodes[i] for i in case["order"]]
    engine.build_topo = lambda root: list(order)
    try:
        engine.zero_grad(nodes[-1])
    finally:
        engine.build_topo = original
    answer: dict[str, Any] = {"grads": _scalar_grads(nodes)}
    if case.get("count_reads"):
        answer["reads"] = list(reads)
    return answer


def probe_deep(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """The student's ``build_topo`` over a long chain of nodes. They need no ``_backward``:
    ``build_topo`` never calls one, and making 100,000 closures would cost more than the walk."""
    nodes = [engine.Value(1.0)]
    for _ in range(case["length"]):
        nodes.append(engine.Value(0.0, (nodes[-1],), "given"))
    return _topo_indices(engine, nodes)


class _CountedInputs(tuple):
    """A node's ``_inputs`` that count each time a walk reads them (iterates, measures or
    indexes them): a walk that goes into a shared tensor again from every path to it reads
    that tensor's inputs once per path, a correct walk a few times at most."""

    reads: list[int]
    index: int

    def _read(self) -> None:
        self.reads[self.index] += 1

    def __iter__(self) -> Iterator[Any]:
        self._read()
        return super().__iter__()

    def __len__(self) -> int:
        self._read()
        return super().__len__()

    def __getitem__(self, key: Any) -> Any:
        self._read()
        return super().__getitem__(key)


NOT_THE_OUTPUT = "backward was called with a tensor that is not this op's output"
"""The grader's ops need ``backward(out_grad, node)``'s ``node`` to be their own output, as
the course's ops do (they read its inputs and its value)."""


def _given_tensor(engine: ModuleType, case: dict[str, Any]
                  ) -> tuple[list[Any], list[int], list[int]]:
    """A babygrad graph made of the grader's own weighted-sum ``Function``s; the leaves in
    ``case["frozen"]`` do not require grad. A one-input op's backward returns a bare Tensor,
    which the ops' docstring allows, the others a tuple; each op's backward checks that it is
    given its own output (``NOT_THE_OUTPUT``). With ``case["wrap_leaves"]`` each leaf is the
    grader's op of one tensor (weight 1), so that when the walk reaches it shows in the
    calls. Also the node indices whose op's backward ran, in call order, and (with
    ``case["count_reads"]``) how often each node's ``_inputs`` were read, both filled in as
    the student's walk runs."""
    calls: list[int] = []

    class GivenSum(engine.ops.Function):
        def __init__(self, weights: list[float], index: int) -> None:
            self.weights = weights
            self.index = index

        def forward(self, *arrays: np.ndarray) -> np.ndarray:
            return sum(w * np.asarray(a, np.float64)
                       for w, a in zip(self.weights, arrays, strict=True))

        def backward(self, out_grad: Any, node: Any) -> Any:
            if node._op is not self:
                raise ValueError(NOT_THE_OUTPUT)
            calls.append(self.index)
            grad = np.asarray(getattr(out_grad, "data", out_grad), np.float64)
            parts = [engine.Tensor(w * grad, requires_grad=False) for w in self.weights]
            return parts[0] if len(parts) == 1 else tuple(parts)  # as the ops' docstring says

    dag = case["dag"]
    shape = tuple(case["shape"])
    frozen = set(case.get("frozen", ()))
    nodes = [engine.Tensor(np.full(shape, 1.0 + i), requires_grad=i not in frozen)
             for i in range(dag["leaves"])]
    if case.get("wrap_leaves"):
        nodes = [GivenSum([1.0], i)(leaf) for i, leaf in enumerate(nodes)]
    for pairs in dag["nodes"]:
        op = GivenSum([float(w) for _, w in pairs], len(nodes))
        nodes.append(op(*(nodes[i] for i, _ in pairs)))
    reads = [0] * len(nodes)
    if case.get("count_reads"):
        for index, node in enumerate(nodes):
            if node._op is not None:
                counted = _CountedInputs(node._inputs)
                counted.reads, counted.index = reads, index
                node._inputs = counted
    return nodes, calls, reads


def probe_tensor_backward(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """The student's ``Tensor.backward`` over grader-made ops: the walk and the ledger. Called
    as ``backward()``, or with ``case["grad"]`` as ``backward(Tensor(grad))``. Reported: every
    node's gradient, which op nodes' backward ran in which order (``calls``), and with
    ``case["count_reads"]`` how often each node's inputs were read (``reads``)."""
    nodes, calls, reads = _given_tensor(engine, case)
    if case.get("grad") is None:
        nodes[-1].backward()
    else:
        grad = np.asarray(case["grad"], dtype=np.float64).reshape(tuple(case["shape"]))
        nodes[-1].backward(engine.Tensor(grad, requires_grad=False))
    answer: dict[str, Any] = {
        "grads": [grad_of(n, "tensor", f"node {i} grad") for i, n in enumerate(nodes)],
        "calls": list(calls)}
    if case.get("count_reads"):
        answer["reads"] = list(reads)
    return answer


PROBES: dict[str, Callable[[ModuleType, dict[str, Any]], dict[str, Any]]] = {
    "load": lambda engine, case: {},
    "graph": probe_graph,
    "routing": probe_routing,
    "sugar": probe_sugar,
    "accumulate": probe_accumulate,
    "broadcast": probe_broadcast,
    "op": probe_op,
    "topo": probe_topo,
    "backward": probe_backward,
    "zero_grad": probe_zero_grad,
    "deep": probe_deep,
    "tensor_backward": probe_tensor_backward,
}
