"""The grader's own parts inside the worker, for the items that grade one part of an engine
alone. They record what the student's code builds and compute no gradient, so reading them
teaches nothing a student must write.

``micrograd.sugar`` grades how ``-``, ``/``, negation and the reflected forms are composed
from the primitives, ``babygrad.tensor_ops`` which op each operator and method reaches, and a
composition run of ``micrograd.accumulate`` which primitives a composition calls: the rest of
the engine is the grader's. Here that rest only records (a ``Record``): every node the build
makes, in the order it is made (a node's operands are always made before it), by identity,
never by ``==`` or hashing; which of the grader's ops made a node, from which earlier nodes,
with which parameter; and, for a node the student's own code made (a number it wrapped, an op
with a closure of its own), what its backward adds into the nodes made before it for a
gradient of one. The grader's ops compute a forward value and nothing else: no ``_backward``,
no derivative. The trusted parent turns the record into gradients with its own oracles
(``grader.checks.records``). No walk over a graph, no ledger and no derivative formula lives
in the worker.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from grader.language.graphs import OPS, param_to_json
from grader.worker.encoding import ProbeError, encode

SCALAR_PRIMITIVES = {
    "__add__": "add",
    "__mul__": "mul",
    "__pow__": "pow",
    "tanh": "tanh",
    "exp": "exp",
    "relu": "relu",
}
"""``Value``'s primitive methods, and the rubric item (``micrograd.ops.*``) of each."""

PRIMITIVE_OPS = {
    "__add__": "add",
    "__mul__": "mul",
    "__pow__": "powk",
    "tanh": "tanh",
    "exp": "exp",
    "relu": "relu",
}
"""The op of the graph language each primitive method records."""

GRADER_OPS: dict[str, tuple[str, str | None]] = {
    op.function.name: (op.name, op.function.keeps) for op in OPS.values() if op.function
}
"""The course's op classes, the graph-language op each computes, and the attribute where the
provided ``__init__`` keeps its parameter."""

MAX_NODES = 400
"""Nodes a recorded build may make to be measured or reported: a graded graph makes a
dozen."""
MAX_MEASURED = 64
"""Numbers in the result of a student's own tensor op whose gradients are measured."""


class Record:
    """Every node a build made, in the order it was made (``nodes``), and what the trusted
    side needs to know of each: the grader's op that made it (``made``), or what the
    student's own backward adds into earlier nodes (``adds``). Nodes made while ``paused``
    are not recorded."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        """Every node seen, which keeps them all alive: no ``id`` is reused while recording."""
        self.made: dict[int, dict[str, Any]] = {}
        self.adds: dict[int, list[list[Any]]] = {}
        self.own: dict[int, tuple[Any, list[int]]] = {}
        """babygrad: a ``Function`` of the student's own, and its inputs, by its result."""
        self.paused = False
        self._index: dict[int, int] = {}

    def add(self, node: Any) -> int:
        """``node``'s number, recording it if it is new."""
        index = self._index.get(id(node))
        if index is None:
            index = self._index[id(node)] = len(self.nodes)
            self.nodes.append(node)
        return index

    def check_size(self) -> None:
        """A record to measure or send holds at most ``MAX_NODES`` nodes."""
        if len(self.nodes) > MAX_NODES:
            raise ProbeError(
                f"building this graph made {len(self.nodes)} nodes: more than {MAX_NODES}"
            )

    def result(self, node: Any, args: list[int]) -> int:
        """A node an op just made from the nodes ``args``: new, so after them."""
        index = self.add(node)
        if args and index <= max(args):
            raise ProbeError("an op returned a node it was given, not a new one")
        return index

    @contextlib.contextmanager
    def pause(self) -> Iterator[None]:
        self.paused = True
        try:
            yield
        finally:
            self.paused = False

    def report(self, named: Sequence[Any]) -> dict[str, Any]:
        """The record in plain numbers, and which node each of ``named`` is."""
        indices = [self.add(node) for node in named]
        self.check_size()
        entries = []
        for index, node in enumerate(self.nodes):
            entry: dict[str, Any] = {
                "value": encode(getattr(node, "data", node), f"the value of node {index}")
            }
            entry.update(self.made.get(index, {}))
            if index in self.adds:
                entry["adds"] = self.adds[index]
            entries.append(entry)
        return {"nodes": entries, "named": indices}


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


# ------------------------------------------------------------------------------ micrograd


def recording_values(
    engine: ModuleType,
    record: Record,
    *,
    primitives: bool = True,
    used: set[str] | None = None,
    keep: frozenset[str] = frozenset(),
) -> contextlib.AbstractContextManager[None]:
    """While inside, every ``Value`` made is recorded, in order. With ``primitives``,
    ``Value``'s primitive ops (``+ * **``, tanh, exp, relu) are the grader's: each computes
    its forward value, makes ``Value(data, operands, op)`` with no closure of its own and
    records which op made it from which operands, so whatever the engine composes from them
    (``-``, ``/``, the reflected forms) is recorded as built from them. ``used`` collects
    which primitives were called and ``keep`` names those that stay the engine's own (both by
    ``SCALAR_PRIMITIVES``'s names)."""
    value_class = engine.Value
    original_init = value_class.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        if not record.paused:
            record.add(self)

    replacements: list[tuple[type, str, Any]] = [(value_class, "__init__", __init__)]
    if primitives:
        replacements += _primitives(value_class, record, used, keep)
    return _patched(replacements)


def _primitives(
    value_class: type, record: Record, used: set[str] | None, keep: frozenset[str]
) -> list[tuple[type, str, Any]]:
    def wrap(x: Any) -> Any:
        return x if isinstance(x, value_class) else value_class(x)

    def node(method: str, operands: tuple[Any, ...], param: Any, data: float) -> Any:
        symbol = {"__add__": "+", "__mul__": "*", "__pow__": f"**{param}"}.get(method, method)
        if record.paused:
            return value_class(data, operands, symbol)
        args = [record.add(x) for x in operands]
        out = value_class(data, operands, symbol)
        record.made[record.result(out, args)] = {
            "op": PRIMITIVE_OPS[method],
            "args": args,
            "param": param,
        }
        return out

    def add(self: Any, other: Any) -> Any:
        other = wrap(other)
        return node("__add__", (self, other), None, float(self.data) + float(other.data))

    def mul(self: Any, other: Any) -> Any:
        other = wrap(other)
        return node("__mul__", (self, other), None, float(self.data) * float(other.data))

    def power(self: Any, k: Any) -> Any:
        if type(k) not in (int, float):
            raise ProbeError(f"the exponent of ** is not a number: {type(k).__name__}")
        return node("__pow__", (self,), k, float(self.data) ** k)

    def tanh(self: Any) -> Any:
        return node("tanh", (self,), None, math.tanh(float(self.data)))

    def exp(self: Any) -> Any:
        return node("exp", (self,), None, math.exp(float(self.data)))

    def relu(self: Any) -> Any:
        return node("relu", (self,), None, max(float(self.data), 0.0))

    def noting(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            if used is not None:
                used.add(SCALAR_PRIMITIVES[name])
            return method(*args)

        return call

    methods = {
        "__add__": add,
        "__mul__": mul,
        "__pow__": power,
        "tanh": tanh,
        "exp": exp,
        "relu": relu,
    }
    for name in methods:
        if SCALAR_PRIMITIVES[name] in keep:
            methods[name] = getattr(value_class, name, None)
    return [
        (value_class, name, noting(name, method))
        for name, method in methods.items()
        if method is not None
    ]


def measure_closures(record: Record, skip: Sequence[Any] = ()) -> None:
    """For every recorded node no grader op made (but those in ``skip``): what its
    ``_backward`` adds into each node made before it when its own gradient is 1 and every
    other gradient 0. A leaf's adds nothing; an op of the engine's own adds its local
    derivatives. Every gradient is left at some number: run it after the build."""
    record.check_size()
    skipped = {id(node) for node in skip}
    nodes = list(record.nodes)
    with record.pause():
        for index, node in enumerate(nodes):
            if index in record.made or id(node) in skipped:
                continue
            for other in nodes:
                other.grad = 0.0
            node.grad = 1.0
            node._backward()
            adds = []
            for earlier in range(index):
                added = encode(nodes[earlier].grad, f"a gradient node {index} added")
                if any(x != 0.0 for x in added["data"]):
                    adds.append([earlier, added])
            if adds:
                record.adds[index] = adds


def closures_newest_first(nodes: Sequence[Any], skip: Sequence[Any]) -> None:
    """Each node's ``_backward`` once, the node made last first: the order the nodes were
    made in puts every node after its operands. The closures of ``skip`` (the leaves) are not
    called: they do nothing in a correct engine, and an op must hang its closure on its
    result, not on an operand."""
    skipped = {id(node) for node in skip}
    for node in reversed(nodes):
        if id(node) not in skipped:
            node._backward()


# ------------------------------------------------------------------------------- babygrad


def plain(param: Any, function: type) -> Any:
    """An op's parameter as JSON: None, a number, or a tuple of them (numpy numbers and
    lists, as an engine may hold them, converted)."""
    if isinstance(param, np.generic):
        param = param.item()
    if isinstance(param, list | tuple):
        return param_to_json(tuple(plain(p, function) for p in param))
    if param is None or type(param) in (int, float):
        return param
    raise ProbeError(
        f"{function.__name__} keeps a parameter that is not a number: {type(param).__name__}"
    )


def _parameter(function: Any, attribute: str | None) -> Any:
    if attribute is None:
        return None
    try:
        return getattr(function, attribute)
    except AttributeError:
        raise ProbeError(
            f"{type(function).__name__} keeps no .{attribute} (the provided "
            "__init__ stores it there)"
        ) from None


def _grader_forward(
    op: str, attribute: str | None, own_forward: Callable[..., Any]
) -> Callable[..., Any]:
    """The grader's forward for one op class. ``own_forward`` (the engine's) is asked only
    whether it is written yet: an operator reaching an op the student has not written is
    missing, not graded on the grader's op; its answer and any other error of its are ignored
    (that op's own item grades it)."""

    def forward(self: Any, *arrays: Any) -> np.ndarray:
        inputs = [np.array(a, dtype=np.float64) for a in arrays]
        try:
            own_forward(self, *(a.copy() for a in inputs))
        except NotImplementedError:
            raise
        except Exception:  # noqa: BLE001, S110 - wrong or broken: its own item's business
            pass
        return np.asarray(OPS[op].forward(*inputs, _parameter(self, attribute)), dtype=np.float64)

    return forward


def recording_ops(engine: ModuleType, record: Record) -> contextlib.AbstractContextManager[None]:
    """While inside, every op class of the engine computes the grader's own forward, and
    every ``Function`` call is recorded: which op (or a ``Function`` of the student's own)
    made which tensor from which. Whatever the operators and methods route to, each op they
    reach computes the right value."""
    classes: dict[type, tuple[str, str | None]] = {}
    replacements: list[tuple[type, str, Any]] = []
    for name, (op, attribute) in GRADER_OPS.items():
        cls = getattr(engine.ops, name, None)
        if isinstance(cls, type):
            classes[cls] = (op, attribute)
            replacements.append((cls, "forward", _grader_forward(op, attribute, cls.forward)))
    base = getattr(engine.ops, "Function", None)
    if not isinstance(base, type):
        raise ProbeError("babygrad.ops has no Function class")
    original_call = base.__call__

    def __call__(self: Any, *args: Any) -> Any:
        if record.paused:
            return original_call(self, *args)
        inputs = [record.add(a) for a in args]
        out = original_call(self, *args)
        index = record.result(out, inputs)
        known = classes.get(type(self))
        if known is None:
            record.own[index] = (self, inputs)
        else:
            op, attribute = known
            record.made[index] = {
                "op": op,
                "args": inputs,
                "param": plain(_parameter(self, attribute), type(self)),
            }
        return out

    replacements.append((base, "__call__", __call__))
    return _patched(replacements)


def measure_functions(engine: ModuleType, record: Record) -> None:
    """For every recorded tensor a ``Function`` of the student's own made: its backward
    asked once per number of the result, with a gradient of one there and zero elsewhere;
    what it returns for each input, stacked, is that input's Jacobian (``adds``)."""
    record.check_size()
    with record.pause():
        for index, (function, inputs) in record.own.items():
            out = record.nodes[index]
            value = np.asarray(out.data, dtype=np.float64)
            if value.size > MAX_MEASURED:
                raise ProbeError(
                    f"{type(function).__name__} made {value.size} numbers: more than {MAX_MEASURED}"
                )
            shapes = [np.shape(getattr(record.nodes[i], "data", record.nodes[i])) for i in inputs]
            jacobians = [np.zeros(value.shape + shape) for shape in shapes]
            for position in np.ndindex(*value.shape):
                unit = np.zeros(value.shape)
                unit[position] = 1.0
                parts = function.backward(engine.Tensor(unit, requires_grad=False), out)
                if not isinstance(parts, tuple | list):
                    parts = (parts,)
                parts = parts[: len(inputs)]  # extras are never read by a walk
                if len(parts) != len(inputs):
                    raise ProbeError(
                        f"{type(function).__name__}.backward returned "
                        f"{len(parts)} gradients for {len(inputs)} inputs"
                    )
                for jacobian, shape, part in zip(jacobians, shapes, parts, strict=True):
                    part = np.asarray(getattr(part, "data", part), dtype=np.float64)
                    if part.shape != shape:
                        raise ProbeError(
                            f"{type(function).__name__}.backward returned a "
                            f"gradient of shape {part.shape} for an input of "
                            f"shape {shape}"
                        )
                    jacobian[position] = part
            record.adds[index] = [
                [i, encode(jacobian, f"the gradients of node {index}")]
                for i, jacobian in zip(inputs, jacobians, strict=True)
            ]
