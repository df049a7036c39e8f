"""An op is one row: a made-up op, ``square``, added to a copy of the project as
docs/development.md's "Adding an op" says (its row of the op table, its reference code, its
rubric items, one grading test per assignment, all by text edits), is graded by the copy's own
grader: full marks for the reference, and the new items lost by an engine whose derivative is
``a`` instead of ``2 * a``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.grading import REPO
from tests.helpers.planted import Edit, apply
from tests.helpers.venvs import assert_confined, overlay_venv

pytestmark = pytest.mark.slow

ITEMS = ("micrograd.ops.square", "babygrad.ops.square")

ROW = """        _op(
            "square",
            1,
            lambda a, p: a * a,
            lambda a, p: a * a,
            micrograd="{0}.square()",
            function=Function("Square"),
        ),
"""

VALUE_SQUARE = '''    def square(self):
        """Return self * self; d(a * a)/da = 2 * a."""
        # BEGIN SOLUTION [micrograd.ops.square]: the local derivative is 2 * x
        out = Value(self.data * self.data, (self,), "square")

        def _backward():
            self.grad += 2 * self.data * out.grad

        out._backward = _backward
        return out
        # END SOLUTION

'''

SQUARE_FUNCTION = '''class Square(Function):
    """a * a"""

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.square]: return a * a
        return a * a
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.square]: the local derivative is 2 * a
        return _grad(out_grad.data * 2 * node._inputs[0].data, node._inputs[0])
        # END SOLUTION


'''

RUBRIC_ITEMS = """
  - {id: micrograd.ops.square, title: "square, forward and backward", points: 4, examples: 15,
     hint: "d(a * a)/da = 2 * a.data."}
  - {id: babygrad.ops.square, title: "Square: forward and backward", points: 3, examples: 15,
     hint: "grad = out_grad * 2 * a."}
"""

GRADING_TEST = """

@graded("{item}")
@given(op_cases("{kind}", "square"))
def test_square_forward_and_backward(grading, case):
    ops.check_op(grading, *case)
"""

WRONG_DERIVATIVE = (
    Edit("micrograd/engine.py", "2 * self.data * out.grad", "self.data * out.grad"),
    Edit("babygrad/ops.py", "out_grad.data * 2 * node", "out_grad.data * node"),
)


def insert(root: Path, file: str, anchor: str, text: str) -> None:
    """``text`` before ``anchor``, which must occur exactly once in ``root / file``."""
    apply(root, Edit(file, anchor, text + anchor))


def with_square(root: Path) -> Path:
    """A copy of the grader, reference, rubric and its profile, with the op ``square`` added."""
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in ("grader", "reference", "courses"):
        shutil.copytree(REPO / folder, root / folder, ignore=ignore)
    shutil.copy2(REPO / "rubric.yaml", root / "rubric.yaml")
    insert(root, "grader/language/graphs.py", '        _op(\n            "matmul",', ROW)
    insert(root, "reference/micrograd/engine.py", "    def relu(self):", VALUE_SQUARE)
    insert(root, "reference/babygrad/ops.py", "class Sqrt(Function):", SQUARE_FUNCTION)
    with (root / "rubric.yaml").open("a") as rubric:
        rubric.write(RUBRIC_ITEMS)
    for item, kind in zip(ITEMS, ("scalar", "tensor"), strict=True):
        suite = root / "grader/grading/suites" / f"test_{item.split('.')[0]}.py"
        with suite.open("a") as tests:
            tests.write(GRADING_TEST.format(item=item, kind=kind))
    return root


def grade(python: Path, project: Path, submission: Path) -> dict:
    """The copy's own grader (the copy's ``grader`` comes first in ``python``'s venv, in the
    parent and in every worker), as ``python -m grader grade`` run in the copy; its items."""
    out = submission.parent / f"{submission.name}.json"
    done = subprocess.run(
        [str(python), "-m", "grader", "grade", "--submission", str(submission), "--json", str(out)],
        cwd=project,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(out.read_text())
    assert_confined(report["protections"])
    return {item["id"]: item for item in report["items"]}


def test_an_op_added_as_one_row_is_graded(tmp_path):
    project = with_square(tmp_path / "project")
    python = overlay_venv(tmp_path / "venv", project)
    correct = grade(python, project, project / "reference")
    assert all(item["status"] == "passed" for item in correct.values()), correct
    assert {i: correct[i]["score"] for i in ITEMS} == {
        "micrograd.ops.square": 4,
        "babygrad.ops.square": 3,
    }

    buggy = tmp_path / "buggy"
    shutil.copytree(project / "reference", buggy)
    for wrong in WRONG_DERIVATIVE:
        apply(buggy, wrong)
    graded = grade(python, project, buggy)
    assert {i: (graded[i]["status"], graded[i]["score"]) for i in ITEMS} == {
        i: ("failed", 0) for i in ITEMS
    }
    assert all(graded[i]["status"] == "passed" for i in graded.keys() - set(ITEMS))
