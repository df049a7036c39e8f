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
FD = numeric.TOLERANCE  # finite differences: ~1e-6 relative error at worst
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


def test_oracle_chain_without_torch_or_reference(monkeypatch):
    """Grading still runs on what remains: reference + finite differences without torch,
    torch + finite differences without the reference, finite differences alone without both."""
    from grader.session import Oracles

    reference = Path(__file__).resolve().parent.parent / "reference"
    assert Oracles(reference).names == ["reference", "pytorch"]
    assert Oracles(None).names == ["pytorch", "finite differences"]
    monkeypatch.setattr(torch_oracle, "available", lambda: False)
    assert Oracles(reference).names == ["reference", "finite differences"]
    assert Oracles(None).names == ["finite differences"]


def test_finite_differences_alone_grade_a_correct_engine_with_their_own_bound(tmp_path):
    """Without reference and torch the rubric's tolerance widens to finite differences' own
    error, so a correct engine keeps full marks."""
    from grader.oracles.reference import load_engine
    from grader.session import Oracles
    from grader.worker import probes

    oracles = Oracles(None)
    oracles.chain = [numeric]
    tight = Tolerance(atol=1e-9, rtol=1e-9)
    assert oracles.tolerance(tight) == numeric.TOLERANCE
    engine = load_engine(Path(__file__).resolve().parent.parent / "reference", "micrograd")

    @settings(max_examples=200, database=None, deadline=None)
    @seed(4)
    @given(scalar_graphs(MICROGRAD_OPS, max_nodes=8))
    def agrees(graph):
        answer = probes.probe_graph(engine, {"graph": graph.to_json()})
        expected = oracles.expected(graph)
        for got, want in zip(answer["grads"], expected.grads, strict=False):
            assert oracles.tolerance(tight).close(np.asarray(got["data"]).reshape(want.shape),
                                                  want)

    agrees()
