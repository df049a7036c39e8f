"""A tensor course's API as data (``grader.language.tensor_api``): the worker's probes and the
snippets speak needle's API (``courses/needle-hw1/profile.yaml``) on both of its layouts, a
correct engine agrees with the oracles, and each planted bug of needle's shows where the
grader looks: its op's own gradient, or the walk and ledger of ``Tensor.backward``.

These are the probes' own proofs, without a grading run; ``tests/flows/test_courses.py`` grades
the same engines and bugs against needle's rubric from end to end."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from grader.checks.ops import op_snippet
from grader.language import profiles
from grader.language.dags import HANDED_BACK_LEDGERS, Dag, dags, diamonds
from grader.language.graphs import OPS, TENSOR_OP_ITEMS, Graph, Node, evaluate
from grader.language.snippets import graph_snippet, tensor_dag_snippet
from grader.language.strategies import tensor_graphs
from grader.layout import COURSES
from grader.oracles import numeric
from grader.worker import probes
from grader.worker.answers import decode_array
from grader.worker.encoding import ProbeError
from grader.worker.engines import load_engine
from grader.worker.runner import student_frames
from tests import helpers
from tests.helpers.planted import course_bugs, plant

NEEDLE = profiles.load(COURSES / "needle-hw1" / "profile.yaml")
ASSIGNMENT = NEEDLE.assignment("tensor")
API = ASSIGNMENT.api
ENGINES = {
    "2023 layout (the reference)": COURSES / "needle-hw1" / "reference",
    "2022 layout": helpers.ENGINES / "needle-hw1" / "layout2022",
}
BUGS = course_bugs(helpers.ENGINES / "needle-hw1" / "planted.yaml")
OP_OF_ITEM = {
    item.removeprefix("needle.ops."): op
    for suffix, op in TENSOR_OP_ITEMS.items()
    if NEEDLE.of("needle").has(op)
    and (item := NEEDLE.item_id(f"babygrad.ops.{suffix}")) is not None
}
"""needle's op items (``needle.ops.<item>``) and the op of the graph language each grades, as
the profile says them."""


def engine(root: Path):
    loaded = load_engine(root, ASSIGNMENT.name, API.package, API.folder)
    loaded.api = API  # as the worker's import request gives it
    loaded.root = root.resolve()  # where its files are: what raises through them is its own
    return loaded


def probed(loaded, probe: Callable[[Any, dict], dict], case: dict) -> dict | None:
    """``probe``'s answer, or None where the engine failed it: it raised (a frame of its own
    files in the traceback, as the worker reports it) or answered what cannot be reported
    (``ProbeError``). Any other exception is the grader's own probe crashing: no verdict on
    the engine, it propagates."""
    try:
        return probe(loaded, case)
    except ProbeError:
        return None
    except Exception as failure:
        if student_frames(failure.__traceback__, loaded.root):
            return None
        raise


def op_graphs(op: str) -> list[Graph]:
    """``op`` alone on operands of a few shapes (matmul: 2-by-3 by 3-by-2, with batch axes on
    one side or on both, of different ranks), once per parameter each."""
    rng = np.random.default_rng(7)
    cases = MATMUL_SHAPES if op == "matmul" else [[s] * OPS[op].arity for s in SHAPES]
    graphs = []
    for shapes in cases:
        for param in OPS[op].params(shapes[0]) or (None,):
            leaves = tuple(rng.uniform(0.5, 2.0, s) for s in shapes)
            graphs.append(Graph("tensor", leaves, (Node(op, tuple(range(len(shapes))), param),)))
    return graphs


SHAPES = [(2, 3), (1, 3), (3, 1), (2, 3, 2), (2, 1, 1)]
"""Ranks 2 and 3, size-1 axes alone and side by side (one kept beside a stretched one)."""
MATMUL_SHAPES = [
    [(2, 3), (3, 2)],
    [(2, 2, 3), (3, 2)],
    [(2, 3), (2, 3, 2)],
    [(2, 2, 2, 3), (2, 3, 2)],
]


def op_agrees(loaded, graph: Graph) -> bool:
    """The op's forward and its own ``gradient`` against finite differences, each leaving
    what it was given as it found it (no ``mutated`` report)."""
    out_grad = np.linspace(-1.0, 1.5, evaluate(graph)[-1].size).reshape(evaluate(graph)[-1].shape)
    got = probed(loaded, probes.probe_op, {"graph": graph.to_json(), "out_grad": out_grad.tolist()})
    if got is None:
        return False
    want = numeric.evaluate_graph(graph, out_grad)
    value = decode_array(got["values"][0], "value")
    grads = [decode_array(g, "grad") for g in got["grads"]]
    return (
        "mutated" not in got
        and close(value, want.values[-1])
        and len(grads) == len(want.grads)
        and all(close(g, w) for g, w in zip(grads, want.grads, strict=True))
    )


def close(got: np.ndarray, want: np.ndarray) -> bool:
    return got.shape == want.shape and np.allclose(got, want, atol=1e-5)


CHAIN = Dag(2, (((0, 2.0), (1, -1.0)), ((2, 0.5),), ((3, 3.0),)))
"""Ops of one input in a row: the first hands back a 1-tuple, the next a bare tensor."""


def walk_agrees(loaded, dag: Dag, seed: tuple[float, float] = (1.0, 1.0)) -> bool:
    """``Tensor.backward(seed)`` over the grader's own ops: exact gradients, each op's
    gradient called once; every other op of one input hands back a 1-tuple, as needle's
    profile says its ops may (``conventions: single_gradient``)."""
    case = {"dag": dag.to_json(), "shape": [2], "grad": list(seed)}
    case["tuples"] = list(dag.tuple_singles())
    got = probed(loaded, probes.probe_tensor_backward, case)
    if got is None:
        return False
    (want,) = dag.backward(1)
    grads = [decode_array(g, "grad") for g in got["grads"]]
    calls = got["calls"]
    return sorted(calls) == list(range(dag.leaves, dag.size)) and all(
        np.allclose(g, w * np.array(seed)) for g, w in zip(grads, want, strict=True)
    )


SECOND_WALK = Dag(3, (((0, 2.0), (1, 2.0)), ((3, 3.0), (2, 1.0))))
"""``y = 2 x0 + 2 x1``, walked from ``y``; then ``z = 3 y + x2``, walked from ``z`` (a walk that
skips what the first saw leaves ``x0.grad`` at 2, not 6)."""


def second_walk_agrees(loaded) -> bool:
    """``y.backward()``, then ``z.backward()`` from a root built on ``y``: each ``.grad`` as
    needle's walk leaves it (overwritten)."""
    case = {"dag": SECOND_WALK.to_json(), "shape": [2], "first": 3}
    got = probed(loaded, probes.probe_tensor_backward, case)
    if got is None:
        return False
    _, want = SECOND_WALK.walks([3, 4], "overwrite")
    grads = [decode_array(g, "grad") for g in got["grads"]]
    return all(np.allclose(g, w * np.ones(2)) for g, w in zip(grads, want, strict=True))


def handed_back_agrees(loaded) -> bool:
    """``Tensor.backward()`` over the grader's ops handing ``out_grad`` back unchanged to
    every input, as needle's EWiseAdd does: exact gradients on every tensor."""
    for dag in HANDED_BACK_LEDGERS:
        case = {"dag": dag.to_json(), "shape": [2], "hands_back": True}
        got = probed(loaded, probes.probe_tensor_backward, case)
        if got is None:
            return False
        (want,) = dag.backward(1)
        grads = [decode_array(g, "grad") for g in got["grads"]]
        if not all(np.allclose(g, w * np.ones(2)) for g, w in zip(grads, want, strict=True)):
            return False
    return True


def walk_is_right(loaded) -> bool:
    return (
        second_walk_agrees(loaded)
        and handed_back_agrees(loaded)
        and all(
            walk_agrees(loaded, dag, seed)
            for dag in (diamonds(3), _shared_twice(), CHAIN)
            for seed in ((1.0, 1.0), (0.5, -1.5))
        )
    )


def test_the_profile_spells_needles_api():
    assert ASSIGNMENT.name == "needle"
    assert ASSIGNMENT.imports == "from needle import Tensor\nfrom needle import ops"
    assert API.engine_file == "python/needle/__init__.py"
    assert API.leaf_source("x", False) == 'Tensor(x, dtype="float64", requires_grad=False)'
    assert API.function_source(Node("swap_axes", (0,), (0, 2))) == "ops.Transpose((0, 2))"
    assert API.function_source(Node("sum", (0,), None)) == "ops.Summation(None)"
    assert API.template("log") == "ops.log({0})"


@pytest.mark.parametrize("root", ENGINES.values(), ids=ENGINES)
@pytest.mark.parametrize("op", OP_OF_ITEM.values())
def test_each_op_of_a_correct_engine_agrees_with_the_oracles(root, op):
    if op not in NEEDLE.as_uploaded(root).of("needle").ops:
        pytest.skip(f"the edition of {root.name} has no {op} op")
    loaded = engine(root)
    assert all(op_agrees(loaded, graph) for graph in op_graphs(op))


@pytest.mark.parametrize("root", ENGINES.values(), ids=ENGINES)
def test_a_correct_walk_and_ledger_are_exact(root):
    loaded = engine(root)
    assert walk_is_right(loaded)

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(dags(max_nodes=6))
    def agrees(dag):
        assert walk_agrees(loaded, dag)

    agrees()


@pytest.mark.parametrize("root", ENGINES.values(), ids=ENGINES)
def test_random_graphs_of_a_correct_engine_match_the_oracles(root):
    loaded = engine(root)
    ops = NEEDLE.as_uploaded(root).of("needle").ops  # the 2022 edition draws no pow

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(tensor_graphs(ops, max_leaves=3, max_nodes=5))
    def agrees(graph):
        got = probes.probe_graph(loaded, {"graph": graph.to_json()})
        want = numeric.evaluate_graph(graph)
        grads = [decode_array(g, "grad") for g in got["grads"][: len(graph.leaves)]]
        assert all(np.allclose(g, w, atol=1e-4) for g, w in zip(grads, want.grads, strict=True))

    agrees()


@pytest.mark.parametrize("bug", BUGS, ids=[f"{b.item}:{b.name}" for b in BUGS])
def test_each_planted_bug_shows_where_its_item_looks(tmp_path, bug):
    """An op's bug shows in that op's own gradient (and in no other op's); a walk's or a
    ledger's bug shows in ``Tensor.backward`` over the grader's ops."""
    loaded = engine(plant(tmp_path, bug, reference=ENGINES["2023 layout (the reference)"]))
    item = bug.item.removeprefix("needle.ops.")
    if item in OP_OF_ITEM:
        assert not all(op_agrees(loaded, g) for g in op_graphs(OP_OF_ITEM[item]))
        others = [op for name, op in OP_OF_ITEM.items() if name != item]
        assert all(op_agrees(loaded, g) for op in others for g in op_graphs(op))
    else:
        assert not walk_is_right(loaded)


def _shared_twice() -> Dag:
    """n2 = n0 + n1, n3 = n2 + n2... as weighted sums: n2 reached along two paths."""
    return Dag(2, (((0, 1.0), (1, 2.0)), ((2, 0.5), (0, 1.0)), ((2, 3.0), (3, 1.0))))


def run_in_needle(source: str, root: Path) -> str:
    environment = {**os.environ, "PYTHONPATH": str(root / API.folder)}
    return subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, check=True, env=environment
    ).stdout


@pytest.mark.parametrize("root", ENGINES.values(), ids=ENGINES)
def test_the_snippets_run_in_needles_own_api(root):
    graph = op_graphs("sum")[1]
    assert run_in_needle(op_snippet(graph, np.ones(3), ASSIGNMENT), root).strip()
    built = Graph(
        "tensor",
        (np.ones((2, 2)), np.full((2, 2), 2.0)),
        (Node("mul", (0, 1), None), Node("log", (2,), None), Node("sum", (3,), None)),
    )
    assert run_in_needle(graph_snippet(built, ASSIGNMENT), root).strip()
    lines = run_in_needle(tensor_dag_snippet(API, diamonds(2), (2,), order=True), root)
    assert lines.splitlines()[-1] == "[6, 5, 4, 3, 2, 1]"
