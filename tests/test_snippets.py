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

from grader.checks.walks import chain_snippet, diamond_snippet
from grader.language.dags import Dag, diamonds, shallow
from grader.language.snippets import dag_snippet, tensor_dag_snippet
from grader.oracles.reference import load_engine
from grader.worker import probes, protocol
from tests.grading import REFERENCE

DAGS = [diamonds(2), shallow(3, (0.5, -2.0, 1.0)),
        Dag(2, (((0, 1.0), (1, -1.5)), ((2, 2.0), (0, 0.25)), ((3, 1.0), (2, 1.0))))]


def run(snippet: str) -> str:
    """``snippet`` run as a student would, beside the reference's packages."""
    done = subprocess.run([sys.executable, "-c", snippet], cwd=REFERENCE, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def decoded(grads: list) -> list[np.ndarray]:
    return [protocol.decode_array(g, "grad") for g in grads]


@pytest.mark.parametrize("dag", DAGS, ids=range(len(DAGS)))
def test_a_micrograd_dag_snippet_builds_the_probed_graph(dag):
    every = ", ".join(f"n{i}.grad" for i in range(dag.size))
    printed = ast.literal_eval(run(dag_snippet(dag, f"{{root}}.backward()\nprint([{every}])")))
    probed = probes.probe_backward(load_engine(REFERENCE, "micrograd"), {"dag": dag.to_json()})
    assert np.allclose(printed, decoded(probed["passes"][0]["grads"]))
    assert np.allclose(printed, dag.backward(1)[0])


@pytest.mark.parametrize("dag", DAGS, ids=range(len(DAGS)))
def test_a_babygrad_dag_snippet_builds_the_probed_graph(dag):
    every = ", ".join(f"n{i}.grad.data.tolist()" for i in range(dag.size))
    snippet = tensor_dag_snippet(dag, (2,)) + f"\nimport json\nprint(json.dumps([{every}]))"
    printed = json.loads(run(snippet).splitlines()[-1])
    probed = probes.probe_tensor_backward(load_engine(REFERENCE, "babygrad"),
                                          {"dag": dag.to_json(), "shape": [2]})
    assert np.allclose(printed, decoded(probed["grads"]))


def test_the_walk_cost_and_chain_snippets_run():
    assert run(chain_snippet(2000)).strip() == "2001"
    for assignment in ("micrograd", "babygrad"):
        assert run(diamond_snippet(assignment)).startswith("16 levels:")
