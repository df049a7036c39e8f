"""Nothing a student receives does a student's work: not the release's grader (its worker
parts, its checks, anything else it ships), not the feedback it prints.

``grader.release.release.solution_leaks`` checks by behaviour: every function the release
ships and every function its snippets define is tried where a student's ``build_topo``,
``zero_grad``, ``backward()``, ``Tensor.backward``, op closure and op backward go. It must find
what the grader once shipped (``tests/fixtures/leaky_grader.py``: the worker's own walk,
backward, ledger and replacement ops, the ``walk(out)`` every sugar failure printed, and the
broadcasting check's reduction, an ``unbroadcast``), and
nothing in today's release, nor in the snippets of a representative set of failing checks.
Also: the release's GitHub workflow is a valid one.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grader.checks import accumulation, broadcasting, graphs, ops, walks
from grader.checks.session import GradingSession
from grader.language.dags import Dag
from grader.language.graphs import Graph, Node
from grader.language.verdicts import WrongAnswer
from grader.layout import PACKAGE, REPO, TEMPLATES
from grader.release.release import INSTRUCTORS_ONLY, solution_leaks
from tests.fake_worker import error, session, set_entry
from tests.test_checks_fake_worker import DAG, ROUTING, SCALAR, SQUARE, SUGAR, TENSOR, on_run

FIXTURE = Path(__file__).parent / "fixtures" / "leaky_grader.py"


def assert_valid_workflow(path: Path) -> None:
    """``path`` is a GitHub Actions workflow by GitHub's own schema (vendored by
    check-jsonschema, so this needs no network)."""
    pytest.importorskip("check_jsonschema", reason="check-jsonschema is in the dev extra")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_classroom_workflow_is_a_valid_github_workflow(tmp_path):
    assert_valid_workflow(TEMPLATES / "classroom.yml")
    broken = tmp_path / "classroom.yml"
    broken.write_text((TEMPLATES / "classroom.yml").read_text().replace("runs-on:", "run-on:"))
    with pytest.raises(AssertionError):
        assert_valid_workflow(broken)


def release_like(tmp_path: Path) -> Path:
    """What a release holds of code: the stubs and the grader (``build_student`` copies them
    so, then adds the rubric, the README and the workflow)."""
    release = tmp_path / "release"
    shutil.copytree(REPO / "exercises", release / "exercises", ignore=INSTRUCTORS_ONLY)
    shutil.copytree(PACKAGE, release / "grader", ignore=INSTRUCTORS_ONLY)
    return release


def fixture_constant(name: str) -> str:
    """A string constant of the fixture, read without importing it."""
    return next(
        ast.literal_eval(node.value)
        for node in ast.parse(FIXTURE.read_text()).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == name
    )


OLD_SUGAR_SNIPPET = "\n".join(
    [
        "from micrograd.engine import Value",
        fixture_constant("WALK_HELPER"),
        "a = Value(1.5)",
        "b = Value(-2.0)",
        "c = a - b",
        "c.grad = 1.0",
        "walk(c)",
        "print(a.grad, b.grad)",
    ]
)
"""A sugar failure's snippet as the grader printed it before."""


@pytest.mark.slow
def test_the_leak_check_finds_what_the_grader_once_shipped(tmp_path):
    release = release_like(tmp_path)
    shutil.copy(FIXTURE, release / "grader" / "worker" / "leaky.py")
    found = solution_leaks(release, [OLD_SUGAR_SNIPPET])
    module = "grader.worker.leaky."

    def finds(name: str, slot: str) -> bool:
        return any(f.startswith(name) and f.endswith(slot) for f in found)

    assert finds(f"{module}walk_order", "micrograd.topo (build_topo)"), found
    assert finds(f"{module}scalar_walk", "micrograd.backward (Value.backward)"), found
    assert finds(f"{module}tensor_walk", "babygrad.backward (Tensor.backward and its ledger)")
    for op in ("add", "mul", "pow", "tanh", "exp", "relu"):
        assert finds(
            f"{module}scalar_grader_ops(engine), entered,",
            f"micrograd.ops.{op} (its result and closure)",
        ), found
    for name in ("Add", "Mul", "Tanh", "Summation", "Transpose", "BroadcastTo", "MatMul"):
        assert finds(f"{module}grader_ops(engine), entered,", f"babygrad.ops.{name}.backward"), (
            found
        )
    assert finds(f"{module}reduce_to", "babygrad.broadcasting (unbroadcast)"), found
    assert finds("grader.worker.leaky:", "walk does micrograd.backward (Value.backward)")
    assert finds("snippet 0: walk", "micrograd.backward (Value.backward)"), found
    assert not any(f.startswith("not checked") for f in found), found
    assert all("leaky" in f or f.startswith("snippet 0") for f in found), found


# ------------------------------------------------------------- failing checks' snippets


def fails(tamper: Callable[[dict[str, Any], Any], Any]) -> dict[str, Callable[..., Any]]:
    """Every probe answered by ``tamper``."""
    return {
        probe: tamper
        for probe in (
            "graph",
            "routing",
            "sugar",
            "accumulate",
            "broadcast",
            "op",
            "topo",
            "backward",
            "zero_grad",
            "deep",
            "tensor_backward",
        )
    }


RAISES = fails(lambda case, answer: error("RuntimeError: planted", "engine.py:1 in f"))
"""The engine raises on every probe: each check's failure carries its snippet."""

BROADCAST = Graph(
    "tensor",
    (np.array([[0.5, -1.0, 2.0], [1.0, 2.0, -0.5]]), np.array([1.5, 0.5, -2.0])),
    (Node("add", (0, 1)),),
)
TANH = Graph("scalar", (0.5,), (Node("tanh", (0,)),))
TENSOR_TANH = Graph("tensor", (np.array([0.5, -1.0]),), (Node("tanh", (0,)),))
CHAIN = Dag(1, (((0, 1.0),), ((1, 2.0),)))

FAILING_CHECKS: list[tuple[str, dict[str, Any], Callable[..., None], tuple[Any, ...]]] = [
    ("micrograd.graphs", RAISES, graphs.check_graph, (SCALAR,)),
    ("micrograd.graphs", fails(set_entry("grads", 0, 3.0)), graphs.check_graph, (SQUARE,)),
    ("babygrad.graphs", RAISES, graphs.check_graph, (TENSOR,)),
    ("micrograd.sugar", RAISES, graphs.check_graph, (SUGAR, "sugar")),
    ("babygrad.tensor_ops", RAISES, graphs.check_graph, (ROUTING, "routing")),
    ("micrograd.ops.tanh", RAISES, ops.check_op, (TANH, np.float64(1.5))),
    ("babygrad.ops.tanh", RAISES, ops.check_op, (TENSOR_TANH, np.array([1.0, -2.0]))),
    ("micrograd.topo", RAISES, walks.check_topo, (DAG,)),
    ("micrograd.backward", RAISES, walks.check_backward, (DAG,)),
    ("micrograd.zero_grad", RAISES, walks.check_zero_grad, (DAG,)),
    ("micrograd.deep", RAISES, walks.check_deep, (100,)),
    ("babygrad.backward", RAISES, walks.check_tensor_backward, (CHAIN, (2,))),
    ("babygrad.backward", RAISES, walks.check_walk_order, (DAG,)),
    (
        "micrograd.accumulate",
        {"accumulate": on_run("preloaded", set_entry("preloaded", 0, 3.0))},
        accumulation.check_accumulate,
        (SQUARE, 1.0, [0.5]),
    ),
    (
        "micrograd.accumulate",
        {"accumulate": on_run("preloaded", set_entry("preloaded", 0, 9.0))},
        accumulation.check_accumulate,
        (Graph("scalar", (1.5, -2.0), (Node("sub", (0, 1)),)), 2.0, [0.5, 1.0]),
    ),
    ("babygrad.accumulate", RAISES, accumulation.check_ledger, (DAG, (2,))),
    (
        "babygrad.broadcasting",
        {"broadcast": on_run("implicit", RAISES["broadcast"])},
        broadcasting.check_broadcast,
        (BROADCAST, np.array([[1.0, -2.0, 0.5], [0.25, 1.0, -1.0]])),
    ),
]
"""A failure of every check (most by an engine that raises), each with the snippet it
prints. (Broadcasting raises only where the operands are broadcast implicitly: raising on those
broadcast beforehand is the op's item's, and grades nothing there.)"""


def failing_snippets() -> list[str]:
    snippets = []
    for item, tamper, check, args in FAILING_CHECKS:
        grading: GradingSession = session(item, tamper)
        with pytest.raises(WrongAnswer) as raised:
            check(grading, *args)
        assert raised.value.snippet, (item, check.__name__)
        snippets.append(raised.value.snippet)
    return snippets


@pytest.mark.slow
def test_nothing_the_release_ships_or_prints_does_a_students_work(tmp_path, monkeypatch):
    snippets = failing_snippets()
    assert len(snippets) == len(FAILING_CHECKS)
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert solution_leaks(release_like(tmp_path), snippets) == []
    # the probe calls the grader's functions that make folders, and refuses their removal
    assert list(temporary.iterdir()) == []


@pytest.mark.slow
def test_every_failing_checks_snippet_still_runs():
    """Without the grader's walk, each snippet is still runnable as it is: on the reference
    (whose answers the tampered worker misreported), each prints and exits cleanly."""
    for snippet in failing_snippets():
        run = subprocess.run(
            [sys.executable, "-c", snippet],
            cwd=REPO / "reference",
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0 and run.stdout, (snippet, run.stderr)
