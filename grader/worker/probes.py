"""Probes: the experiments run against an engine, answered with plain numbers only.

This module runs inside the sandboxed worker (on the student's engine) and in the trusted
parent (on the reference engine): it imports nothing but numpy and the graph language. It never
judges; it reports what the engine did. Student nodes are tracked by identity (``id``), never by
``==`` or hashing, which real engines override.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from grader.language.graphs import (
    OPS,
    Graph,
    Node,
    build_source,
    expression,
    function_source,
    names,
    param_from_json,
)

Encoded = dict[str, Any]


class ProbeError(Exception):
    """The engine's answer cannot be reported (e.g. a value that is not a number)."""


def encode(value: Any, what: str) -> Encoded:
    """An engine value as ``{"shape", "data"}`` with non-finite numbers spelled as strings.

    Only numbers count: Python ints and floats (honest subclasses included), numpy numbers and
    numeric arrays, each converted to float64. A string that looks like a number, None, or an
    object that merely converts or compares like one is not a number.
    """
    try:
        array = None if isinstance(value, str | bytes) else np.asarray(value)
    except Exception:  # noqa: BLE001 - any failure to convert is the engine's
        array = None
    if array is None or array.dtype.kind not in "biuf":
        raise ProbeError(f"{what} is not a number: {type(value).__name__}")
    flat = [x if math.isfinite(x) else repr(x) for x in array.astype(np.float64).ravel().tolist()]
    return {"shape": list(array.shape), "data": flat}


def grad_of(node: Any, kind: str, what: str) -> Encoded | None:
    grad = node.grad
    if kind == "tensor":
        if grad is None:
            return None
        grad = getattr(grad, "data", grad)
    return encode(grad, what)


def graph_from_json(message: dict[str, Any]) -> Graph:
    leaves = tuple(np.asarray(leaf["data"], dtype=np.float64).reshape(leaf["shape"])
                   for leaf in message["leaves"])
    nodes = tuple(Node(n["op"], tuple(n["args"]), param_from_json(n["param"]))
                  for n in message["nodes"])
    return Graph(message["kind"], leaves, nodes)


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
    graph = graph_from_json(case["graph"])
    nodes = _build(engine, graph, "micrograd" if graph.kind == "scalar" else "tensor")
    nodes[-1].backward()
    return _report(graph, nodes, _own_grads(graph, nodes))


def walk_order(root: Any, operands: Callable[[Any], Any]) -> list[Any]:
    """A known-correct, iterative, identity-based topological order (operands first)."""
    order: list[Any] = []
    visited = {id(root)}
    stack = [(root, iter(operands(root)))]
    while stack:
        node, pending = stack[-1]
        for child in pending:
            if id(child) not in visited:
                visited.add(id(child))
                stack.append((child, iter(operands(child))))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def scalar_walk(root: Any, out_grad: float = 1.0, leaves: Sequence[Any] = ()) -> None:
    """The grader's own ``backward()``: seed the root, then run every node's ``_backward``
    once, output first. Only the closures (and ``_prev``) are the engine's. The closures of
    ``leaves`` are skipped: they do nothing in a correct engine, and an op must hang its
    closure on its result, not on an operand."""
    root.grad = out_grad
    skipped = {id(leaf) for leaf in leaves}
    for node in reversed(walk_order(root, lambda n: n._prev)):
        if id(node) not in skipped:
            node._backward()


def tensor_walk(engine: ModuleType, root: Any) -> dict[int, np.ndarray]:
    """The grader's own ``Tensor.backward``: a float64 ledger filled, output first, from each
    node's ``_op.backward(out_grad, node)``. Only the ops' backward (and ``_op``/``_inputs``)
    are the engine's. The gradient of every node, by ``id``."""
    ledger = {id(root): np.ones(np.shape(root.data))}
    for node in reversed(walk_order(root, lambda n: n._inputs)):
        if node._op is None or id(node) not in ledger:
            continue
        parts = node._op.backward(engine.Tensor(ledger[id(node)], requires_grad=False), node)
        if not isinstance(parts, tuple | list):
            parts = (parts,)
        if len(parts) != len(node._inputs):
            raise ProbeError(f"{type(node._op).__name__}.backward returned {len(parts)} "
                             f"gradients for {len(node._inputs)} inputs")
        for parent, part in zip(node._inputs, parts, strict=True):
            part = np.asarray(getattr(part, "data", part), dtype=np.float64)
            ledger[id(parent)] = ledger[id(parent)] + part if id(parent) in ledger else part
    return ledger


# The course's op classes, the graph-language op each computes, and the attribute where the
# provided ``__init__`` keeps its parameter.
GRADER_OPS: dict[str, tuple[str, str | None]] = {
    op.function.name: (op.name, op.function.keeps) for op in OPS.values() if op.function}


def numeric_vjp(op: str, param: Any, arrays: list[np.ndarray], g: np.ndarray
                ) -> list[np.ndarray]:
    """``g`` times the Jacobian of the op, by central differences in float64 (operands hold
    at most a few dozen numbers and graded graphs keep them away from kinks and poles)."""
    forward = OPS[op].forward
    grads = []
    for k, x in enumerate(arrays):
        grad = np.zeros(x.shape)
        for index in np.ndindex(*x.shape):
            eps = 1e-6 * max(1.0, abs(float(x[index])))
            up, down = list(arrays), list(arrays)
            up[k], down[k] = x.copy(), x.copy()
            up[k][index] += eps
            down[k][index] -= eps
            grad[index] = float(np.sum(g * (np.asarray(forward(*up, param))
                                             - np.asarray(forward(*down, param))))) / (2 * eps)
        grads.append(grad)
    return grads


def _grader_methods(engine: ModuleType, op: str, attribute: str | None,
                    own_forward: Callable[..., Any]) -> tuple[Callable[..., Any],
                                                              Callable[..., Any]]:
    """The grader's forward and backward for one op class. ``own_forward`` (the engine's) is
    asked only whether it is written yet: an operator reaching an op the student has not
    written is missing, not graded on the grader's op; its answer and any other error of its
    are ignored (that op's own item grades it)."""

    def parameter(function: Any) -> Any:
        if attribute is None:
            return None
        try:
            return getattr(function, attribute)
        except AttributeError:
            raise ProbeError(f"{type(function).__name__} keeps no .{attribute} (the provided "
                             "__init__ stores it there)") from None

    def forward(self: Any, *arrays: Any) -> np.ndarray:
        inputs = [np.array(a, dtype=np.float64) for a in arrays]
        try:
            own_forward(self, *(a.copy() for a in inputs))
        except NotImplementedError:
            raise
        except Exception:  # noqa: BLE001, S110 - wrong or broken: its own item's business
            pass
        self.__dict__["_grader_inputs"] = inputs
        return np.asarray(OPS[op].forward(*inputs, parameter(self)), dtype=np.float64)

    def backward(self: Any, out_grad: Any, node: Any) -> Any:
        g = np.asarray(getattr(out_grad, "data", out_grad), dtype=np.float64)
        grads = [engine.Tensor(x, requires_grad=False) for x in
                 numeric_vjp(op, parameter(self), self.__dict__["_grader_inputs"], g)]
        return grads[0] if len(grads) == 1 else tuple(grads)

    return forward, backward


@contextlib.contextmanager
def _patched(replacements: list[tuple[type, str, Any]]) -> Iterator[None]:
    """Class attributes replaced while inside, restored (or removed again) on the way out."""
    saved = []
    try:
        for cls, name, replacement in replacements:
            saved.append((cls, name, cls.__dict__.get(name, _ABSENT)))
            setattr(cls, name, replacement)
        yield
    finally:
        for cls, name, original in reversed(saved):
            if original is _ABSENT:
                delattr(cls, name)
            else:
                setattr(cls, name, original)


_ABSENT = object()


def grader_ops(engine: ModuleType) -> contextlib.AbstractContextManager[None]:
    """Every op class of the engine computes with the grader's own forward and backward while
    inside: whatever the operators and methods route to, each op they reach is correct."""
    replacements = []
    for name, (op, attribute) in GRADER_OPS.items():
        cls = getattr(engine.ops, name, None)
        if isinstance(cls, type):
            forward, backward = _grader_methods(engine, op, attribute, cls.forward)
            replacements += [(cls, "forward", forward), (cls, "backward", backward)]
    return _patched(replacements)


SCALAR_PRIMITIVES = {"__add__": "add", "__mul__": "mul", "__pow__": "pow", "tanh": "tanh",
                     "exp": "exp", "relu": "relu"}
"""``Value``'s primitive methods, and the rubric item (``micrograd.ops.*``) of each."""


def scalar_grader_ops(engine: ModuleType, used: set[str] | None = None,
                      keep: frozenset[str] = frozenset()
                      ) -> contextlib.AbstractContextManager[None]:
    """``Value``'s primitive ops (``+ * **``, tanh, exp, relu) are the grader's while inside:
    each builds ``Value(data, operands, op)`` with an exact, accumulating ``_backward``, so
    whatever the engine composes from them (``-``, ``/``, the reflected forms) is built on
    correct parts. ``used`` collects which primitives were called and ``keep`` names those
    that stay the engine's own (both by ``SCALAR_PRIMITIVES``'s names)."""
    value_class = engine.Value

    def wrap(x: Any) -> Any:
        return x if isinstance(x, value_class) else value_class(x)

    def node(data: float, op: str, local: list[tuple[Any, float]]) -> Any:
        out = value_class(data, tuple(operand for operand, _ in local), op)

        def _backward() -> None:
            for operand, derivative in local:
                operand.grad += derivative * out.grad

        out._backward = _backward
        return out

    def add(self: Any, other: Any) -> Any:
        other = wrap(other)
        return node(float(self.data) + float(other.data), "+", [(self, 1.0), (other, 1.0)])

    def mul(self: Any, other: Any) -> Any:
        other = wrap(other)
        a, b = float(self.data), float(other.data)
        return node(a * b, "*", [(self, b), (other, a)])

    def power(self: Any, k: float) -> Any:
        x = float(self.data)
        return node(x ** k, f"**{k}", [(self, k * x ** (k - 1))])

    def tanh(self: Any) -> Any:
        t = math.tanh(float(self.data))
        return node(t, "tanh", [(self, 1.0 - t * t)])

    def exp(self: Any) -> Any:
        e = math.exp(float(self.data))
        return node(e, "exp", [(self, e)])

    def relu(self: Any) -> Any:
        x = float(self.data)
        return node(max(x, 0.0), "relu", [(self, 1.0 if x > 0 else 0.0)])

    def noting(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            if used is not None:
                used.add(SCALAR_PRIMITIVES[name])
            return method(*args)
        return call

    methods = {"__add__": add, "__mul__": mul, "__pow__": power, "tanh": tanh, "exp": exp,
               "relu": relu}
    for name in methods:
        if SCALAR_PRIMITIVES[name] in keep:
            methods[name] = getattr(value_class, name, None)
    return _patched([(value_class, name, noting(name, method))
                     for name, method in methods.items() if method is not None])


def probe_routing(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Build with operators and methods on the grader's ops (``grader_ops``), then walk with
    the grader's own ledger (``tensor_walk``): only which ops the operators and methods reach
    is the engine's."""
    graph = graph_from_json(case["graph"])
    with grader_ops(engine):
        nodes = _build(engine, graph, "tensor")
        ledger = tensor_walk(engine, nodes[-1])
    grads = [None if id(n) not in ledger else encode(ledger[id(n)], f"{v}.grad")
             for n, v in zip(nodes, names(graph), strict=True)]
    return _report(graph, nodes, grads)


def probe_sugar(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Build with micrograd's operators on the grader's primitive ops (``scalar_grader_ops``),
    then walk with the grader's own walk: only how ``-``, ``/``, negation and the reflected
    forms are composed is the engine's."""
    graph = graph_from_json(case["graph"])
    with scalar_grader_ops(engine):
        nodes = _build(engine, graph, "micrograd")
        scalar_walk(nodes[-1])
    return _report(graph, nodes, _own_grads(graph, nodes))


def probe_accumulate(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Do the engine's ``_backward`` closures add into gradients that already hold something?

    Three runs of the grader's walk (the leaves' closures skipped), one per request:
    ``separate``, the graph with every use of a leaf split into a fresh copy (nothing to
    accumulate into), on the engine's own ops: every node's value and every copy's gradient,
    for the parent to check against the oracles (a run that is wrong here grades nothing);
    ``preloaded``, the graph as drawn, shared leaves included, with each leaf's gradient
    preloaded: each leaf's gradient; ``composition``, the separate run on the grader's
    primitive ops (``scalar_grader_ops``) but those named in ``own``: the same, and which
    primitives the engine's operators called, to find which must work before the example
    can be graded. Both runs on the uses apart also say which op nodes' results are one of
    their own operands (``returns_operand``, by identity): such a result is no node of its
    own (the walk seeds the operand and skips its closure), so the example cannot tell ``=``
    from ``+=``."""
    graph = graph_from_json(case["graph"])
    out_grad = float(case["out_grad"])
    run = case["run"]
    if run == "preloaded":
        nodes = _build(engine, graph, "micrograd")
        for leaf, preload in zip(nodes, case["preload"], strict=False):
            leaf.grad = float(preload)
        scalar_walk(nodes[-1], out_grad, nodes[: len(graph.leaves)])
        return {"preloaded": [encode(n.grad, f"gradient of leaf {i}")
                              for i, n in enumerate(nodes[: len(graph.leaves)])]}
    split, _ = graph.split_leaves()
    used: set[str] = set()
    with (scalar_grader_ops(engine, used, frozenset(case["own"])) if run == "composition"
          else contextlib.nullcontext()):
        copies = _build(engine, split, "micrograd")
        scalar_walk(copies[-1], out_grad, copies[: len(split.leaves)])
    answer = _report(split, copies, _own_grads(split, copies)[: len(split.leaves)])
    answer["returns_operand"] = [
        index for index, node in enumerate(split.nodes, len(split.leaves))
        if any(copies[index] is copies[arg] for arg in node.args)]
    if run == "composition":
        answer["used"] = sorted(used)
    return answer


def probe_broadcast(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """One elementwise ``Function``, one run per request (``case["run"]``): ``implicit``, on
    operands of different shapes (numpy broadcasts them), or ``explicit``, on the same operands
    broadcast beforehand. Its value and gradients, so the parent can check the explicit run
    against the oracles, then the reduction alone against it."""
    graph = graph_from_json(case["graph"])
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
    graph = graph_from_json(case["graph"])
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
    """The student's ``backward()`` over grader closures, with a known-correct ``build_topo``
    substituted, so only the walk itself (seed, order, each closure once) is observed."""
    nodes, calls = _given_scalar(engine, case["dag"])
    original = getattr(engine, "build_topo", None)
    engine.build_topo = lambda root: walk_order(root, lambda n: n._prev)
    try:
        passes = []
        for _ in range(case.get("passes", 1)):
            nodes[-1].backward()
            passes.append({"grads": _scalar_grads(nodes), "calls": list(calls)})
    finally:
        engine.build_topo = original
    return {"passes": passes}


def probe_zero_grad(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Every node's grad made non-zero, then the student's ``zero_grad(root)``, with a
    known-correct ``build_topo`` substituted (a ``zero_grad`` may walk with it: whether that
    is right, or fast, is ``micrograd.topo``'s question). With ``case["count_reads"]``, also
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
    engine.build_topo = lambda root: walk_order(root, lambda n: n._prev)
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
