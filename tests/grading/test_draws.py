"""What a grading run draws depends on the seed alone: not on the source files its process has
imported (``grader.grading.draws``: Hypothesis would otherwise mix constants from them into its
draws, so Gradescope, with the grader in site-packages, drew other examples than a checkout),
and not on how cheaply the strategies are written."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path

import hypothesis.core
import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers
from hypothesis.strategies import SearchStrategy

from grader.grading.draws import without_local_constants
from grader.grading.prng import without_prng_resets
from grader.language.dags import Dag, dags
from grader.language.graphs import (
    BABYGRAD_BROADCASTING,
    BABYGRAD_GRAPH_OPS,
    BABYGRAD_OP_ITEMS,
    MICROGRAD_COMPOSED,
    MICROGRAD_OPS,
    MICROGRAD_PRIMITIVES,
    Graph,
)
from grader.language.strategies import (
    accumulate_cases,
    broadcasting_cases,
    kink_cases,
    number_operand_cases,
    op_cases,
    scalar_graphs,
    scalar_kink_cases,
    scalar_number_graphs,
    single_op_graphs,
    tensor_backward_cases,
    tensor_graphs,
    tensor_shapes,
)
from grader.layout import REPO

DRAW = """
import hashlib, sys
from hypothesis import Phase, given, seed, settings
from grader.grading.draws import without_local_constants
from grader.language.graphs import BABYGRAD_GRAPH_OPS, MICROGRAD_OPS
from grader.language.strategies import scalar_graphs, tensor_graphs
if sys.argv[1] == "pinned":
    without_local_constants()
if sys.argv[2] == "with-module":
    import unrelated_local_module  # noqa: F401
seen = []
@seed(7)
@settings(max_examples=150, database=None, phases=[Phase.generate])
@given(scalar_graphs(MICROGRAD_OPS, max_leaves=3, max_nodes=8),
       tensor_graphs(BABYGRAD_GRAPH_OPS, max_leaves=3, max_nodes=6))
def draw(scalar, tensor):
    seen.append(repr((scalar, tensor)))
draw()
print(hashlib.sha256("".join(seen).encode()).hexdigest())
"""

MODULE = "WIDTH, HEIGHT, PICK = 173, 137, 211\nSCALE = 7.25\n"
"""Constants a grading draw could take: integers in its ranges that no grader module holds."""


def _digest(tmp_path: Path, pinned: bool, with_module: bool) -> str:
    (tmp_path / "unrelated_local_module.py").write_text(MODULE)
    (tmp_path / "draw.py").write_text(DRAW)
    proc = subprocess.run(
        [
            sys.executable,
            "draw.py",
            "pinned" if pinned else "plain",
            "with-module" if with_module else "without",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0"},
    )
    return proc.stdout.strip()


def test_a_grading_run_draws_the_same_whatever_else_is_imported(tmp_path: Path) -> None:
    assert _digest(tmp_path, True, False) == _digest(tmp_path, True, True)


def test_without_the_pin_an_imported_module_changes_the_draws(tmp_path: Path) -> None:
    """What the pin prevents (and proof the test above can fail)."""
    assert _digest(tmp_path, False, False) != _digest(tmp_path, False, True)


def _plain(value: object) -> object:
    """A drawn example as plain data that names every bit of it (float bits, array bytes)."""
    if isinstance(value, np.ndarray):
        return ["array", value.dtype.str, list(value.shape), value.tobytes().hex()]
    if isinstance(value, Dag):
        return ["dag", value.leaves, _plain(value.nodes)]
    if isinstance(value, Graph):
        return [
            "graph",
            value.kind,
            _plain(value.leaves),
            [[n.op, list(n.args), repr(n.param)] for n in value.nodes],
        ]
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, float):
        return float.hex(value)
    return value


def _suite_strategies() -> dict[str, SearchStrategy[object]]:
    """The kinds of strategy the grading suites draw from, over their own op lists."""
    drawn: dict[str, SearchStrategy[object]] = {
        "scalar graphs": scalar_graphs(MICROGRAD_OPS, max_leaves=3, max_nodes=8),
        "tensor graphs": tensor_graphs(BABYGRAD_GRAPH_OPS, max_leaves=3, max_nodes=6),
        "single tensor ops": single_op_graphs("tensor", BABYGRAD_GRAPH_OPS),
        "scalar accumulation": st.sampled_from(MICROGRAD_PRIMITIVES).flatmap(accumulate_cases),
        "tensor backward": tensor_backward_cases(dags(shared=False), tensor_shapes()),
        "tensor backward, nothing to propagate": tensor_backward_cases(
            dags(shared=False), tensor_shapes(), edges=True
        ),
    }
    for op in sorted(set(BABYGRAD_OP_ITEMS.values())):
        drawn[f"tensor {op}"] = op_cases("tensor", op)
    for op in ("relu", "abs"):
        drawn[f"tensor {op} at 0"] = kink_cases(op)
    for op in BABYGRAD_BROADCASTING:
        drawn[f"broadcasting {op}"] = broadcasting_cases((op,))
    for op in MICROGRAD_PRIMITIVES:
        drawn[f"scalar {op}"] = op_cases("scalar", op)
    drawn["scalar relu at 0"] = scalar_kink_cases("relu")
    for op, with_number in (("add", "add_scalar"), ("mul", "mul_scalar")):
        drawn[f"scalar {op} or {with_number}"] = number_operand_cases(op, with_number)
    drawn["scalar sugar"] = scalar_number_graphs(MICROGRAD_COMPOSED)
    return drawn


DRAWS_DIGEST = "dc3ebd1a5f56a1b2"
"""What the seed below draws from ``_suite_strategies``. A change to a strategy that changes a
draw changes every grade's examples and counterexamples: make it on purpose, then update this.
A change that only makes drawing cheaper must leave it as it is."""


def draws_digest() -> str:
    """The digest of 40 examples of each of ``_suite_strategies``, drawn with one seed."""
    digest = hashlib.sha256()
    for name, strategy in _suite_strategies().items():
        seen: list[object] = []

        @seed(11)
        @settings(
            max_examples=40,
            database=None,
            phases=[Phase.generate],
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(strategy)
        def draw(example: object) -> None:
            seen.append(_plain(example))  # noqa: B023 - called before the loop moves on

        draw()
        digest.update(json.dumps([name, seen]).encode())
    return digest.hexdigest()[:16]


def test_the_strategies_draw_what_they_always_drew(monkeypatch) -> None:
    monkeypatch.setattr(providers, "_get_local_constants", providers._get_local_constants)
    monkeypatch.setattr(hypothesis.core, "deterministic_PRNG", hypothesis.core.deterministic_PRNG)
    without_local_constants()
    without_prng_resets()  # as a grading run: the generators' reset drew nothing
    assert draws_digest() == DRAWS_DIGEST


def _global_draws() -> list[tuple[float, float]]:
    """What each of a Hypothesis test's examples reads from Python's and numpy's global
    random generators, the first example having seeded both."""
    read: list[tuple[float, float]] = []

    @seed(3)
    @settings(max_examples=5, database=None, phases=[Phase.generate])
    @given(st.integers())
    def body(_: int) -> None:
        if not read:
            random.seed(11)
            np.random.seed(11)
        read.append((random.random(), float(np.random.random())))

    body()
    return read


def test_a_grading_run_leaves_the_global_random_generators_alone(monkeypatch) -> None:
    """Hypothesis seeds both generators before each example, so every example reads the same
    numbers; a grading run does not (``grader.grading.prng``): the numbers run on from the
    first example's seed, as in a replayed run, which calls the bodies without Hypothesis."""
    monkeypatch.setattr(hypothesis.core, "deterministic_PRNG", hypothesis.core.deterministic_PRNG)
    reset = _global_draws()
    assert len(reset) == 5 and len(set(reset[1:])) == 1
    without_prng_resets()
    left_alone = _global_draws()
    assert len(set(left_alone)) == 5
    random.seed(11)
    np.random.seed(11)
    assert left_alone == [(random.random(), float(np.random.random())) for _ in range(5)]
