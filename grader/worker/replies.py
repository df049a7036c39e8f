"""Each probe's answer as a typed value, decoded once where it arrives (``decode``).

The session (``grader.checks.session``) decodes every ok-result of the worker here before a
check sees it: an answer that is not what its probe sends is ``protocol.InvalidAnswer``, which
the session turns into the student's invalid answer, shown with the example. The case the
probe was asked says how many nodes to expect and how to name them in that verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.language.graphs import Graph, names
from grader.worker.answers import (
    Arrays,
    Change,
    Record,
    arrays,
    changes,
    decode_array,
    expand_runs,
    field,
    ints,
    optional_ints,
    record,
)
from grader.worker.protocol import InvalidAnswer, Probe

Changes = tuple[Change, ...]


@dataclass(frozen=True)
class Built:
    """A graph built on the student's engine: every node's value, and each node's gradient
    (``grads``) or the record of what was built (``record``: its gradients are computed in
    the trusted process, ``grader.checks.records``)."""

    values: Arrays
    grads: Arrays | None = None
    record: Record | None = None
    changed: Changes = ()


@dataclass(frozen=True)
class Accumulated:
    """One run of ``probe_accumulate``: the uses apart (``built``, with whether an op's result
    is one of its operands, and the primitives the engine's operators called), or the leaves'
    gradients after a preloaded backward (``preloaded``)."""

    built: Built | None = None
    operand_returned: bool = False
    used: tuple[str, ...] | None = None
    preloaded: Arrays = ()


@dataclass(frozen=True)
class OpAnswer:
    """One op alone: its value, its gradient for each operand, the inputs its result records
    (``prev``: None where not sent, or not node numbers) and what it changed."""

    value: np.ndarray | None
    grads: Arrays
    prev: tuple[int, ...] | None
    changed: Changes


@dataclass(frozen=True)
class Broadcast:
    """An op on operands broadcast: its value and its two gradients."""

    value: np.ndarray | None
    grads: Arrays


@dataclass(frozen=True)
class Pass:
    """One walk: every node's gradient after it, and the op nodes whose backward ran, in the
    order they ran."""

    grads: Arrays
    calls: tuple[int, ...]


@dataclass(frozen=True)
class Counted:
    """One ``backward()`` over grader closures: every node's gradient after it, and how often
    each node's closure has run so far (``runs``, by node)."""

    grads: Arrays
    runs: tuple[int, ...]


@dataclass(frozen=True)
class Backward:
    """``backward()`` called in turn: one ``Counted`` per call, and what the calls changed."""

    passes: tuple[Counted, ...]
    changed: Changes


@dataclass(frozen=True)
class TensorWalk:
    """``Tensor.backward``: the walk from the root, the one from an op node before it where
    asked (``first``), what both changed, and each node's reads where counted (``reads``)."""

    walk: Pass
    first: Pass | None
    changed: Changes
    reads: tuple[int, ...] | None


@dataclass(frozen=True)
class Zeroed:
    """``zero_grad``: every node's gradient after it, what it changed, and each node's reads
    of its inputs where counted (``reads``)."""

    grads: Arrays
    changed: Changes
    reads: tuple[int, ...] | None


@dataclass(frozen=True)
class Order:
    """A topological order as node numbers, each node's reads of its inputs (``reads``), the
    order from an op node first where asked (``first``) and what the walk changed."""

    order: tuple[int, ...]
    reads: tuple[int, ...] | None = None
    first: tuple[int, ...] | None = None
    changed: Changes = ()


@dataclass(frozen=True)
class Backpropagated:
    """``backpropagate``: what each node's chain rule was given (``received``), what each
    leaf accumulated, and what the walk changed."""

    received: tuple[tuple[np.ndarray, ...], ...]
    accumulated: tuple[tuple[np.ndarray, ...], ...]
    changed: Changes


Answer = (
    Built
    | Accumulated
    | OpAnswer
    | Broadcast
    | Backward
    | TensorWalk
    | Zeroed
    | Order
    | Backpropagated
    | np.ndarray
)
"""What ``decode`` gives: one of the above, or the one array a ``central_difference`` is."""


def _dag_size(case: dict[str, Any]) -> int:
    """The nodes of the grader-made graph (``grader.language.dags.Dag``) the case sends."""
    dag = case["dag"]
    return dag["leaves"] + len(dag["nodes"])


def _node_grads(ok: dict[str, Any], size: int) -> Arrays:
    """Every node's ``.grad``, ``n0``, ``n1``, ... as the snippets name them."""
    return arrays(ok, "grads", [f"n{i}.grad" for i in range(size)])


def _graph(case: dict[str, Any], probe: str, ok: dict[str, Any], grad: str) -> Built:
    graph = Graph.from_json(case["graph"])
    var = names(graph)
    changed = changes(ok, graph.size)
    values = arrays(ok, "values", [f"value of {v}" for v in var])
    if probe == Probe.GRAPH:
        return Built(values, arrays(ok, "grads", [f"{v}.{grad}" for v in var]), changed=changed)
    return Built(values, record=record(ok, graph.kind, graph.size), changed=changed)


def _accumulate(case: dict[str, Any], ok: dict[str, Any]) -> Accumulated:
    graph = Graph.from_json(case["graph"])
    if case["run"] == "preloaded":
        return Accumulated(preloaded=arrays(ok, "preloaded", names(graph)[: len(graph.leaves)]))
    split, _ = graph.split_leaves()
    var = names(split)
    values = arrays(ok, "values", var)
    if "record" in ok:
        built = Built(values, record=record(ok, split.kind, split.size))
    else:
        built = Built(values, arrays(ok, "grads", var[: len(split.leaves)]))
    used = ok.get("used")
    kept = tuple(used) if isinstance(used, list) and all(type(u) is str for u in used) else None
    return Accumulated(built, ok.get("returns_operand") != [], kept)


def _op(case: dict[str, Any], ok: dict[str, Any]) -> OpAnswer:
    graph = Graph.from_json(case["graph"])
    var = names(graph)[: len(graph.leaves)]
    changed = changes(ok, len(graph.leaves) + 1)
    (value,) = arrays(ok, "values", ["out.data"])
    labels = [] if case.get("forward_only") else [f"gradient for {v}" for v in var]
    grads = arrays(ok, "grads", labels) if labels else ()
    return OpAnswer(value, grads, optional_ints(ok.get("prev")), changed)


def _broadcast(ok: dict[str, Any]) -> Broadcast:
    (value,) = arrays({"v": [ok.get("value")]}, "v", ["out.data"])
    return Broadcast(value, arrays(ok, "grads", [f"gradient {i}" for i in range(2)]))


def _pass(ok: dict[str, Any], size: int, lowest: int = 0) -> Pass:
    """One walk's gradients and calls (each a node from ``lowest`` on)."""
    grads = _node_grads(ok, size)
    calls = field(ok, "calls", list)
    if not all(type(i) is int and lowest <= i < size for i in calls):
        raise InvalidAnswer("the record of backward calls")
    return Pass(grads, tuple(calls))


def _counted(ok: dict[str, Any], size: int) -> Counted:
    return Counted(_node_grads(ok, size), ints(ok, "calls", "the counts of closure runs"))


def _backward(case: dict[str, Any], ok: dict[str, Any]) -> Backward:
    size = _dag_size(case)
    changed = changes(ok, size)
    calls = len(case["roots"]) if "roots" in case else case.get("passes", 1)
    results = field(ok, "passes", list)
    if len(results) != calls or not all(isinstance(r, dict) for r in results):
        raise InvalidAnswer("not one result per backward() call")
    return Backward(tuple(_counted(result, size) for result in results), changed)


def _tensor_backward(case: dict[str, Any], ok: dict[str, Any]) -> TensorWalk:
    size = _dag_size(case)
    changed = changes(ok, size)
    lowest = 0 if case.get("wrap_leaves") else case["dag"]["leaves"]
    first = None
    if case.get("first") is not None:
        first = _pass(field(ok, "first", dict), size, lowest)
    return TensorWalk(_pass(ok, size, lowest), first, changed, optional_ints(ok.get("reads")))


def _zero_grad(case: dict[str, Any], ok: dict[str, Any]) -> Zeroed:
    size = _dag_size(case)
    changed = changes(ok, size)
    return Zeroed(_node_grads(ok, size), changed, optional_ints(ok.get("reads")))


def _topo(case: dict[str, Any], ok: dict[str, Any]) -> Order:
    changed = changes(ok, _dag_size(case))
    return Order(ints(ok, "order", "build_topo returned non-nodes"), changed=changed)


NON_VARIABLES = "the order holds non-variables"


def _variable_topo(case: dict[str, Any], ok: dict[str, Any]) -> Order:
    first = None
    if case.get("first") is not None:
        first = ints(ok, "first_order", NON_VARIABLES)
    order = ints(ok, "order", NON_VARIABLES)
    reads = ints(ok, "reads", NON_VARIABLES)
    if len(reads) != _dag_size(case) or min(reads) < 0:
        raise InvalidAnswer("a count of reads per variable")
    return Order(order, reads, first)


def _per_node(ok: dict[str, Any], key: str, what: str) -> tuple[tuple[np.ndarray, ...], ...]:
    """Each node's list of numbers."""
    per_node = field(ok, key, list)
    if not all(isinstance(values, list) for values in per_node):
        raise InvalidAnswer(f"not a list of {what} per node")
    return tuple(
        tuple(decode_array(v, f"n{i}'s {what}") for v in values)
        for i, values in enumerate(per_node)
    )


def _backpropagate(case: dict[str, Any], ok: dict[str, Any]) -> Backpropagated:
    size = _dag_size(case)
    changed = changes(ok, size)
    received = _per_node(ok, "received", "d_output")
    accumulated = _per_node(ok, "accumulated", "derivative")
    if len(received) != size or len(accumulated) != size:
        raise InvalidAnswer("not one list per node")
    return Backpropagated(received, accumulated, changed)


DECODERS: dict[str, Callable[[dict[str, Any], dict[str, Any]], Answer | None]] = {
    Probe.LOAD: lambda case, ok: None,  # imported: nothing to tell
    Probe.ACCUMULATE: _accumulate,
    Probe.BROADCAST: lambda case, ok: _broadcast(ok),
    Probe.OP: _op,
    Probe.TOPO: _topo,
    Probe.BACKWARD: _backward,
    Probe.ZERO_GRAD: _zero_grad,
    Probe.DEEP: lambda case, ok: Order(tuple(expand_runs(ok, "runs", 10 * (case["length"] + 1)))),
    Probe.TENSOR_BACKWARD: _tensor_backward,
    Probe.VARIABLE_TOPO: _variable_topo,
    Probe.BACKPROPAGATE: _backpropagate,
    Probe.CENTRAL_DIFFERENCE: lambda case, ok: decode_array(
        field(ok, "value", dict), "the difference"
    ),
}
"""Each probe's decoder but the graphs' (``decode``), given the case asked and the answer."""


def decode(
    probe: str, case: dict[str, Any], ok: dict[str, Any], grad: str = "grad"
) -> Answer | None:
    """The typed answer of ``probe`` to ``case`` (None: the import's, which tells nothing);
    ``grad``: what the course calls a node's gradient, to name one that is not a number."""
    if probe in (Probe.GRAPH, Probe.ROUTING, Probe.SUGAR):
        return _graph(case, probe, ok, grad)
    return DECODERS[probe](case, ok)
