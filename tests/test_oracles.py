"""The three oracles agree on thousands of domain-safe graphs, so a grade never rests on one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from grader.graphs import BABYGRAD_GRAPH_OPS, BABYGRAD_OP_ITEMS, MICROGRAD_OPS
from grader.judge import Tolerance
from grader.oracles import numeric
from grader.oracles.reference import ReferenceOracle
from grader.strategies import op_cases, scalar_graphs, tensor_graphs

torch_oracle = pytest.importorskip("grader.oracles.torch_oracle")
if not torch_oracle.available():
    pytest.skip("torch is not installed", allow_module_level=True)

REF = ReferenceOracle(Path(__file__).resolve().parent.parent / "reference")
# Finite differences carry ~1e-6 relative error at worst; the float64 engines ~1e-15.
FD = Tolerance(atol=1e-5, rtol=1e-4)
EXACT = Tolerance(atol=1e-9, rtol=1e-9)
MANY = settings(max_examples=1000, database=None, deadline=None,
                suppress_health_check=list(HealthCheck))


def agree(graph, out_grad=None):
    ref = REF.evaluate_graph(graph, out_grad)
    tor = torch_oracle.evaluate_graph(graph, out_grad)
    fd = numeric.evaluate_graph(graph, out_grad)
    for name, other, tol in (("torch", tor, EXACT), ("finite differences", fd, FD)):
        for a, b in zip(ref.values, other.values, strict=True):
            assert tol.close(a, b), f"{name} value {b} != reference {a}"
        for a, b in zip(ref.grads, other.grads, strict=True):
            assert tol.close(a, b), f"{name} grad {b} != reference {a}"


@MANY
@seed(1)
@given(scalar_graphs(MICROGRAD_OPS, max_nodes=8))
def test_scalar_graphs(graph):
    agree(graph)


@MANY
@seed(2)
@given(tensor_graphs(BABYGRAD_GRAPH_OPS, max_nodes=6))
def test_tensor_graphs(graph):
    agree(graph)


@pytest.mark.parametrize("op", sorted(set(BABYGRAD_OP_ITEMS.values())))
@settings(max_examples=60, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@seed(3)
@given(data=st.data())
def test_single_tensor_ops(op, data):
    graph, out_grad = data.draw(op_cases("tensor", op))
    agree(graph, np.asarray(out_grad))
