"""The probes of ``grader.checks.variables``: a scalar course's walk whose ops are classes
(MiniTorch's ``topological_sort`` and ``backpropagate``), over the grader's own variables or
over the course's scalars with the grader's functions
(``grader.worker.probes.stand_ins``), so only the walk is the student's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

from grader.language.function_api import FunctionApi
from grader.language.package import resolve
from grader.worker.encoding import encode
from grader.worker.probes.build import functions_of, scalar_data
from grader.worker.probes.stand_ins import given_scalars, given_variables
from grader.worker.probes.untouched import Watch, values_of
from grader.worker.shapes import shape_of

MISSING = object()


def probe_variable_topo(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """The student's ``topological_sort`` over the grader's variables, reported as node
    indices (-1: not one of ours), with how often each node's parents were read. With
    ``case["constant_root"]``, called on the constant parent of the first node in
    ``case["constants"]`` instead (nothing to order). With ``case["first"]``, the order from
    that op node first (``first_order``), then the root's, built on it."""
    api = functions_of(engine)
    constants = case.get("constants", [])
    nodes, _, _, reads = given_variables(engine, api, case["dag"], constants)
    index = {id(n): i for i, n in enumerate(nodes)}
    root = nodes[constants[0]]._inputs[-1] if case.get("constant_root") else nodes[-1]
    topological_sort = resolve(engine.package, api.topological_sort)

    def indices(order: Any) -> list[int]:
        return [index.get(id(n), -1) for n in list(order)[: 10 * len(nodes)]]

    first = {}
    if case.get("first") is not None:  # an order from an op node below the root, before it
        first = {"first_order": indices(topological_sort(nodes[case["first"]]))}
    return {"order": indices(topological_sort(root)), "reads": reads, **first}


def probe_backpropagate(engine: ModuleType, case: dict[str, Any]) -> dict[str, Any]:
    """The student's ``backpropagate(root, case["seed"])`` (MiniTorch 2020's: of the two in
    the course's holder, ``api.pair``) with ``topological_sort`` swapped for one that returns
    ``case["order"]`` (node numbers, the output first: the parent drew the graph, so it knows
    one), or with ``case["order"]`` None the student's own (their pair end to end, or a walk
    that orders itself). Over the grader's variables (``given_variables``: the walk and its ledger
    are the student's), or with ``case["scalars"]`` over the course's own scalars and the
    grader's functions (``given_scalars``: the scalar's ``chain_rule`` is the student's too).
    Reported: what each node's chain rule was given and what each leaf accumulated, and any
    value the walk changed."""
    api, watch = functions_of(engine), Watch()
    if case.get("scalars"):
        nodes, received = given_scalars(shape_of(engine, "scalar"), case["dag"])
        accumulated, watched = None, values_of(nodes, scalar_data)
    else:
        nodes, received, accumulated, _ = given_variables(
            engine, api, case["dag"], case.get("constants", [])
        )
        watched = {}  # the grader's own variables hold no value
    backpropagate = resolve(engine.package, api.backpropagate)
    start = (nodes[-1], float(case["seed"]))
    if api.pair:  # MiniTorch's 2020 walk starts from one VariableWithDeriv
        start = (resolve(engine.package, api.pair)(*start),)
    with watch.phase("walk", watched):
        if case["order"] is None:
            backpropagate(*start)
        else:
            with _given_order(engine, api, [nodes[i] for i in case["order"]]):
                backpropagate(*start)
    if accumulated is None:
        leaves = case["dag"]["leaves"]
        accumulated = [
            [] if (derivative := getattr(n, api.derivative)) is None else [derivative]
            for n in nodes[:leaves]
        ] + [[] for _ in nodes[leaves:]]
    return {
        "received": [
            [encode(d, f"node {i}'s d_output") for d in ds] for i, ds in enumerate(received)
        ],
        "accumulated": [
            [encode(x, f"node {i}'s derivative") for x in xs] for i, xs in enumerate(accumulated)
        ],
        **watch.report(),
    }


@contextmanager
def _given_order(engine: ModuleType, api: FunctionApi, given: list[Any]) -> Iterator[None]:
    """While inside, the course's ``topological_sort`` (looked up by its module-level name)
    returns ``given``."""
    module_path, _, name = api.topological_sort.rpartition(".")
    module = resolve(engine.package, module_path) if module_path else engine.package
    original = getattr(module, name, MISSING)
    setattr(module, name, lambda variable: list(given))
    try:
        yield
    finally:
        if original is MISSING:
            delattr(module, name)  # an engine without one is told so by its own item
        else:
            setattr(module, name, original)
