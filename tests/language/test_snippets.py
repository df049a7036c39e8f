"""A grader-made graph's snippet builds the graph the worker graded: run with the reference,
it prints the gradients the worker's probe reports for the same graph, so the two spellings
(``grader.language.snippets`` for students, ``grader.worker.probes`` for the worker) cannot
drift apart unnoticed. (For drawn graphs the snippet *is* the code the worker ran.)"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import numpy as np
import pytest

from grader.checks.accumulation import accumulate_snippet
from grader.checks.walks import chain_snippet, diamond_snippet, diamond_walk_snippet
from grader.language.assignments import BABYGRAD, MICROGRAD
from grader.language.dags import Dag, diamonds, shallow
from grader.language.graphs import Graph, Node
from grader.language.snippets import dag_snippet, tensor_dag_snippet
from grader.language.tensor_api import BABYGRAD_API
from grader.worker import answers, probes
from grader.worker.engines import load_engine
from tests.helpers.grading import REFERENCE

DAGS = [
    diamonds(2),
    shallow(3, (0.5, -2.0, 1.0)),
    Dag(2, (((0, 1.0), (1, -1.5)), ((2, 2.0), (0, 0.25)), ((3, 1.0), (2, 1.0)))),
]


def run(snippet: str) -> str:
    """``snippet`` run as a student would, beside the reference's packages."""
    done = subprocess.run(
        [sys.executable, "-c", snippet], cwd=REFERENCE, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def decoded(grads: list) -> list[np.ndarray | None]:
    return [None if g is None else answers.decode_array(g, "grad") for g in grads]


@pytest.mark.parametrize("dag", DAGS, ids=range(len(DAGS)))
def test_a_micrograd_dag_snippet_builds_the_probed_graph(dag):
    every = ", ".join(f"n{i}.grad" for i in range(dag.size))
    printed = ast.literal_eval(run(dag_snippet(dag, f"{{root}}.backward()\nprint([{every}])")))
    probed = probes.probe_backward(
        load_engine(REFERENCE, "micrograd"),
        {"dag": dag.to_json(), "order": sorted(dag.reachable())},
    )
    assert np.allclose(printed, decoded(probed["passes"][0]["grads"]))
    assert np.allclose(printed, dag.backward(1)[0])


VARIANTS = {
    "default": {},
    "frozen": {"frozen": [1]},
    "upstream": {"grad": [0.5, -1.5]},
    "wrapped": {"wrap_leaves": True},
}
"""How a check may call ``Tensor.backward``: leaf 1 not requiring grad, an upstream gradient,
each leaf the grader's op of a tensor."""


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dag", DAGS, ids=range(len(DAGS)))
def test_a_babygrad_dag_snippet_builds_the_probed_graph(dag, variant):
    options = VARIANTS[variant]
    every = ", ".join(
        f"None if n{i}.grad is None else n{i}.grad.data.tolist()" for i in range(dag.size)
    )
    snippet = tensor_dag_snippet(
        BABYGRAD_API,
        dag,
        (2,),
        frozen=options.get("frozen", ()),
        grad=options.get("grad") and np.array(options["grad"]),
        order=True,
        wrap_leaves=options.get("wrap_leaves", False),
    )
    lines = run(snippet + f"\nimport json\nprint(json.dumps([{every}]))").splitlines()
    printed = json.loads(lines[-1])
    probed = probes.probe_tensor_backward(
        load_engine(REFERENCE, "babygrad"), {"dag": dag.to_json(), "shape": [2], **options}
    )
    assert [g is None for g in printed] == [g is None for g in probed["grads"]]
    assert all(
        np.allclose(p, q)
        for p, q in zip(printed, decoded(probed["grads"]), strict=True)
        if p is not None
    )
    assert ast.literal_eval(lines[-2]) == probed["calls"]  # the order backward ran in


def test_the_walk_cost_and_chain_snippets_run():
    assert run(chain_snippet(2000)).strip() == "2001"
    for assignment in (MICROGRAD, BABYGRAD):
        assert run(diamond_snippet(assignment)).startswith("16 levels:")
    lines = run(diamond_walk_snippet(BABYGRAD_API, 3)).splitlines()
    assert lines[0] == "without .grad: []"
    assert lines[1] == f"backward ran on: {list(range(9, 0, -1))}"


ACCUMULATED = {
    "a * a": Graph("scalar", (3.0,), (Node("mul", (0, 0)),)),
    "tanh(a) + tanh(a)": Graph(
        "scalar", (0.5,), (Node("tanh", (0,)), Node("tanh", (0,)), Node("add", (1, 2)))
    ),
    "a - b": Graph("scalar", (1.5, -2.0), (Node("sub", (0, 1)),)),
}


@pytest.mark.parametrize("graph", ACCUMULATED.values(), ids=ACCUMULATED)
def test_an_accumulate_snippet_prints_what_the_probe_reports(graph):
    """With preloaded gradients, the op's own closure (one op) or the grader's walk that skips
    the leaves' closures (several), as ``probe_accumulate``'s preloaded run."""
    preload = [0.5, -1.25][: len(graph.leaves)]
    printed = [float(x) for x in run(accumulate_snippet(graph, 2.0, preload)).split()]
    answer = probes.probe_accumulate(
        load_engine(REFERENCE, "micrograd"),
        {"graph": graph.to_json(), "out_grad": 2.0, "preload": preload, "run": "preloaded"},
    )
    assert printed == [float(decoded([g])[0]) for g in answer["preloaded"]]
