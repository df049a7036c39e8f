"""The probe of ``grader.checks.accumulation``: micrograd's closures run on gradients that
already hold something, and on the uses of every leaf taken apart."""

from __future__ import annotations

from types import ModuleType
from typing import Any

from grader.language.graphs import Graph
from grader.worker.encoding import encode
from grader.worker.probes.build import build, own_grads, recorded, report
from grader.worker.recording import (
    Record,
    closures_newest_first,
    measure_closures,
    recording_values,
)


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
            nodes = build(engine, graph)
        leaves = nodes[: len(graph.leaves)]
        for leaf, preload in zip(leaves, case["preload"], strict=False):
            leaf.grad = float(preload)
        nodes[-1].grad = out_grad
        closures_newest_first(record.nodes, leaves)
        return {
            "preloaded": [encode(n.grad, f"gradient of leaf {i}") for i, n in enumerate(leaves)]
        }
    split, _ = graph.split_leaves()
    if run == "composition":
        used: set[str] = set()
        with recording_values(engine, record, used=used, keep=frozenset(case["own"])):
            copies = build(engine, split)
            measure_closures(record, copies[: len(split.leaves)])
        return {
            **recorded(engine, split, copies, record),
            "used": sorted(used),
            "returns_operand": returns_operand(split, copies),
        }
    with recording_values(engine, record, primitives=False):
        copies = build(engine, split)
    copies[-1].grad = out_grad
    closures_newest_first(record.nodes, copies[: len(split.leaves)])
    return {
        **report(engine, split, copies, own_grads(engine, split, copies)[: len(split.leaves)]),
        "returns_operand": returns_operand(split, copies),
    }


def returns_operand(graph: Graph, built: list[Any]) -> list[int]:
    """The op nodes whose result is one of their own operands (by identity)."""
    return [
        index
        for index, node in enumerate(graph.nodes, len(graph.leaves))
        if any(built[index] is built[arg] for arg in node.args)
    ]
