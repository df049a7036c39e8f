"""The probes of ``grader.checks.walks``: the student's ``build_topo``, ``backward()``,
``zero_grad`` and ``Tensor.backward`` over graphs of the grader's stand-in parts
(``grader.worker.probes.stand_ins``), so only the walk is the student's."""

from __future__ import annotations

import contextlib
import gc
import operator
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np

from grader.worker.encoding import Encoded, ProbeError, encode
from grader.worker.probes.build import api_of, grad_of, scalar_data
from grader.worker.probes.stand_ins import (
    CountedInputs,
    given_scalar,
    given_tensor,
    own_singles_are_tuples,
)
from grader.worker.probes.untouched import OUT_GRAD, Watch, values_of
from grader.worker.shapes import Adapted, shape_of


def _scalar_grads(nodes: list[Any]) -> list[Encoded | None]:
    return [grad_of(n, "scalar", f"node {i} grad") for i, n in enumerate(nodes)]


def _walk_order(engine: ModuleType, nodes: list[Any]) -> list[Any]:
    """The student's ``build_topo`` from the last node, at most ten entries a node."""
    return list(engine.build_topo(nodes[-1]))[: 10 * len(nodes)]


def _indices(order: list[Any], nodes: list[Any]) -> list[int]:
    """``order`` as node indices (-1: not one of ours)."""
    index = {id(n): i for i, n in enumerate(nodes)}
    return [index.get(id(n), -1) for n in order]


def _topo_indices(engine: ModuleType, nodes: list[Any]) -> dict[str, Any]:
    """The student's ``build_topo`` from the last node, as indices (-1: not one of ours)."""
    return {"order": _indices(_walk_order(engine, nodes), nodes)}


def index_runs(indices: list[int]) -> list[list[int]]:
    """``indices`` as ``[first, count]`` runs of consecutive ones (``grader.worker.answers.
    expand_runs`` reads them back): a chain walked leaves first is one run, where its 100,001
    numbers cost more to write, send and read than the walk itself."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and i != -1 and runs[-1][0] + runs[-1][1] == i:
            runs[-1][1] += 1
        else:
            runs.append([i, 1])
    return runs


def _walked(nodes: list[Any], watch: Watch) -> contextlib.AbstractContextManager[None]:
    """A walk over scalar nodes, watched leaving every node's value as it found it."""
    return watch.phase("walk", values_of(nodes, scalar_data))


def probe_topo(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """The student's ``build_topo`` on a grader-made graph, reported as node indices."""
    nodes, watch = given_scalar(shape_of(engine, "scalar"), case["dag"])[0], Watch()
    with _walked(nodes, watch):
        answer = _topo_indices(engine, nodes)
    return {**answer, **watch.report()}


def probe_backward(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """The student's ``backward()`` over grader closures, with ``build_topo`` substituted by
    one that returns ``case["order"]`` (node numbers: the parent drew the graph, so it knows
    a topological order of the nodes the root reaches), so only the walk itself (seed, order
    reversed, each closure once) is observed. Called ``case["passes"]`` times on the root, or
    on each ``[node, order]`` of ``case["roots"]`` in turn (a graph in use: a second backward
    from an inner node), every node's grad first set to ``case["held"]`` where given (a
    graph that already holds gradients)."""
    nodes, calls = given_scalar(shape_of(engine, "scalar"), case["dag"])
    if case.get("held"):
        for node, grad in zip(nodes, case["held"], strict=True):
            node.grad = grad
    roots = case.get("roots") or [[len(nodes) - 1, case["order"]]] * case.get("passes", 1)
    watch = Watch()
    passes = []
    for root, order in roots:
        with _given_order(engine, nodes, order), _walked(nodes, watch):
            nodes[root].backward()
        passes.append({"grads": _scalar_grads(nodes), "calls": list(calls)})
    return {"passes": passes, **watch.report()}


@contextlib.contextmanager
def _given_order(engine: ModuleType, nodes: list[Any], order: list[int] | None) -> Iterator[None]:
    """While inside, the engine's ``build_topo`` returns ``order`` (node numbers); with None
    (the course's walk builds its order inside ``backward()``) the engine is left alone."""
    if order is None:
        yield
        return
    given = [nodes[i] for i in order]
    missing = object()
    original = getattr(engine, "build_topo", missing)
    engine.build_topo = lambda root: list(given)
    try:
        yield
    finally:
        if original is missing:
            del engine.build_topo  # an engine without one is told so by micrograd.topo
        else:
            engine.build_topo = original


def probe_zero_grad(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """Every node's grad made non-zero (or ``case["held"]``: a trained graph under a new
    root whose grad is still 0), then the student's ``zero_grad(root)``, with
    ``build_topo`` substituted by one that returns ``case["order"]`` (node numbers, a correct
    order the parent knows: a ``zero_grad`` may walk with it, and whether the student's is
    right, or fast, is ``micrograd.topo``'s question). With ``case["count_reads"]``, also
    how often each node's ``_prev`` was read (``reads``, as ``CountedInputs`` counts)."""
    nodes, _ = given_scalar(shape_of(engine, "scalar"), case["dag"])
    held = case.get("held") or [0.5 + i for i in range(len(nodes))]
    for node, grad in zip(nodes, held, strict=True):
        node.grad = grad
    reads = [0] * len(nodes)
    if case.get("count_reads"):
        for index, node in enumerate(nodes):
            counted = CountedInputs(node._prev)
            counted.reads, counted.index = reads, index
            node._prev = counted
    watch = Watch()
    with _given_order(engine, nodes, case["order"]), _walked(nodes, watch):
        engine.zero_grad(nodes[-1])
    answer: dict[str, Any] = {"grads": _scalar_grads(nodes), **watch.report()}
    if case.get("count_reads"):
        answer["reads"] = list(reads)
    return answer


def probe_deep(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """The student's ``build_topo`` over a long chain of nodes. They need no ``_backward``:
    ``build_topo`` never calls one, and making 100,000 closures would cost more than the walk."""
    with _uncollected():
        nodes = [engine.Value(1.0)]
        for _ in range(case["length"]):
            nodes.append(engine.Value(0.0, (nodes[-1],), "given"))
        order = _walk_order(engine, nodes)
        if len(order) == len(nodes) and all(map(operator.is_, order, nodes)):
            return {"runs": [[0, len(nodes)]]}  # leaves first: the usual answer, read directly
        return {"runs": index_runs(_indices(order, nodes))}


@contextlib.contextmanager
def _uncollected() -> Iterator[None]:
    """No automatic garbage collection while a long chain is alive: each one would scan every
    node, and they took more than half of a correct ``build_topo``'s time over 100,000 nodes
    (the chain has no cycles to find; what the walk drops, reference counting frees). What
    earlier requests left for the collector is collected first, as those collections did while
    the chain grew: the chain's nodes then take that memory, and so the ids a walk that keeps
    ids between calls (a module-level visited set) has seen before."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def probe_tensor_backward(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """The student's ``Tensor.backward`` over grader-made ops: the walk and the ledger. Called
    as ``backward()``, or with ``case["grad"]`` as ``backward(Tensor(grad))``; with
    ``case["first"]``, ``backward()`` from that op node first (its gradients and calls
    reported under ``first``), then from the root built on it. Reported: every
    node's gradient, which op nodes' backward ran in which order (``calls``), and with
    ``case["count_reads"]`` how often each node's inputs were read (``reads``), and any value
    the walk changed. A walk that raises on the grader's one-input ops' bare Tensors runs again
    on 1-tuples where the student's own ops give those (``own_singles_are_tuples``): it need
    only take what its own ops give."""
    shape = shape_of(engine, "tensor")
    if isinstance(shape, Adapted):
        return _adapted_backward(shape, case)
    try:
        return _tensor_backward(engine, case, single_as_tuple=False)
    except Exception:
        if not own_singles_are_tuples(engine):
            raise
    return _tensor_backward(engine, case, single_as_tuple=True)


def _adapted_backward(shape: Adapted, case: dict[str, Any]) -> dict[str, Any]:
    """``probe_tensor_backward`` through a course adapter's walk hooks: the grader's
    weighted-sum ops recorded on the student's tape (``Adapted.stand_in``), then the student's
    walk. A tape keeps no gradient for the output it is handed one for (a tape that gives it a
    spot in its buffer leaves zeros there): the output's is what it was handed. No leaf is
    frozen (the profile's ``frozen_leaves`` is never ``no_grad`` where a tape is graded), and a
    walk never starts at an inner node (``walk.roots``)."""
    if case.get("first") is not None or case.get("frozen"):
        raise ProbeError("a course adapter's walk starts at its output, and freezes no leaf")
    calls: list[int] = []
    index: dict[int, int] = {}
    dag, array = case["dag"], tuple(case["shape"])
    hands_back = bool(case.get("hands_back"))
    nodes = [shape.leaf(np.full(array, 1.0 + i)) for i in range(dag["leaves"])]

    def stand_in(weights: list[float], operands: list[Any]) -> Any:
        out = shape.stand_in(
            weights, operands, lambda made: calls.append(index[id(made)]), hands_back
        )
        index[id(out)] = len(index)
        return out

    if case.get("wrap_leaves"):
        nodes = [stand_in([1.0], [leaf]) for leaf in nodes]
    else:
        index.update((id(leaf), i) for i, leaf in enumerate(nodes))
    for pairs in dag["nodes"]:
        nodes.append(stand_in([float(w) for _, w in pairs], [nodes[i] for i, _ in pairs]))
    grad = case.get("grad")
    out_grad = np.ones(array) if grad is None else np.asarray(grad, np.float64).reshape(array)
    watch = Watch()
    given = values_of(nodes, shape.value)
    with watch.phase("walk", given):
        # a copy: the course never says it is kept; the ledger items sum in the student's
        # ledger apart from their walk where the adapter gives it (``ledger``)
        shape.walk(nodes[-1], out_grad.copy(), ledger=bool(case.get("ledger")))
    # the output's, whatever the tape keeps for it (a spot of zeros the course never reads)
    grads = [*(shape.grad(n) for n in nodes[:-1]), out_grad]
    return {
        **watch.report(),
        "grads": [None if g is None else encode(g, f"node {i} grad") for i, g in enumerate(grads)],
        "calls": list(calls),
    }


def _tensor_backward(
    engine: ModuleType, case: dict[str, Any], single_as_tuple: bool
) -> dict[str, Any]:
    nodes, calls, reads = given_tensor(engine, case, single_as_tuple)
    api, watch = api_of(engine), Watch()
    given = values_of(nodes, api.read)
    first: dict[str, Any] = {}
    if case.get("first") is not None:  # a walk from an op node below the root, before it
        with watch.phase("walk", given):
            nodes[case["first"]].backward()
        first = {
            "first": {
                "grads": [grad_of(n, "tensor", f"node {i} grad", api) for i, n in enumerate(nodes)],
                "calls": list(calls),
            }
        }
        del calls[:]
    if case.get("grad") is None:
        with watch.phase("walk", given):
            nodes[-1].backward()
    else:
        grad = np.asarray(case["grad"], dtype=np.float64).reshape(tuple(case["shape"]))
        upstream = api.make_leaf(engine.Tensor, grad, False)
        with watch.phase("walk", {**given, OUT_GRAD: lambda: api.read(upstream)}):
            nodes[-1].backward(upstream)
    answer: dict[str, Any] = {
        **watch.report(),
        "grads": [grad_of(n, "tensor", f"node {i} grad", api) for i, n in enumerate(nodes)],
        "calls": list(calls),
        **first,
    }
    if case.get("count_reads"):
        answer["reads"] = list(reads)
    return answer
