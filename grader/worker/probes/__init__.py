"""Probes: the experiments run against an engine, answered with plain numbers only.

These modules run inside the sandboxed worker (on the student's engine) and in the trusted
parent (on the reference engine): they import nothing but numpy, the graph language and the
worker's encoding and recording. A probe never judges; it reports what the engine did. Where an
item grades one part alone, the rest is the grader's: its own nodes with known closures
(``stand_ins``), a topological order sent as data, or its recording ops
(``grader.worker.recording``); no probe walks a student's graph or computes a gradient.
Student nodes are tracked by identity (``id``), never by ``==`` or hashing, which real engines
override.

Each probe sits in the module named as the check that asks for it (``grader.checks``):
``graphs``, ``ops``, ``walks``, ``accumulation``, ``broadcasting``, ``differences``,
``variables``; ``build`` builds on the student's engine and encodes what a build answers.
``PROBES`` maps a request's probe name to its function: the runner looks every request up in
this one dict.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from grader.worker.probes.accumulation import probe_accumulate
from grader.worker.probes.broadcasting import probe_broadcast
from grader.worker.probes.differences import probe_central_difference
from grader.worker.probes.graphs import probe_graph, probe_routing, probe_sugar
from grader.worker.probes.ops import probe_op
from grader.worker.probes.variables import probe_backpropagate, probe_variable_topo
from grader.worker.probes.walks import (
    probe_backward,
    probe_deep,
    probe_tensor_backward,
    probe_topo,
    probe_zero_grad,
)
from grader.worker.protocol import Probe

PROBES: dict[str, Callable[[ModuleType, dict[str, Any]], dict[str, Any]]] = {
    Probe.LOAD: lambda engine, case: {},
    Probe.GRAPH: probe_graph,
    Probe.ROUTING: probe_routing,
    Probe.SUGAR: probe_sugar,
    Probe.ACCUMULATE: probe_accumulate,
    Probe.BROADCAST: probe_broadcast,
    Probe.OP: probe_op,
    Probe.TOPO: probe_topo,
    Probe.BACKWARD: probe_backward,
    Probe.ZERO_GRAD: probe_zero_grad,
    Probe.DEEP: probe_deep,
    Probe.TENSOR_BACKWARD: probe_tensor_backward,
    Probe.VARIABLE_TOPO: probe_variable_topo,
    Probe.BACKPROPAGATE: probe_backpropagate,
    Probe.CENTRAL_DIFFERENCE: probe_central_difference,
}
