"""A grading run draws the same examples whatever source files its process has imported
(``grader.grading.draws``): Hypothesis would otherwise mix constants from them into its draws,
so Gradescope (the grader in site-packages) drew other examples than a checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
        [sys.executable, "draw.py", "pinned" if pinned else "plain",
         "with-module" if with_module else "without"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(REPO), "PYTHONHASHSEED": "0"})
    return proc.stdout.strip()


def test_a_grading_run_draws_the_same_whatever_else_is_imported(tmp_path: Path) -> None:
    assert _digest(tmp_path, True, False) == _digest(tmp_path, True, True)


def test_without_the_pin_an_imported_module_changes_the_draws(tmp_path: Path) -> None:
    """What the pin prevents (and proof the test above can fail)."""
    assert _digest(tmp_path, False, False) != _digest(tmp_path, False, True)
