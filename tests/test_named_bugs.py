"""Named bugs: each classic mistake of grader/checks/bugs.py BUGS, planted in a copy of the
reference, fails its item, is named in the item's ``bugs``, and comes with a small runnable
example."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from grader.checks.bugs import BUGS
from tests.grading import grade_items, planted
from tests.test_blame import ITERATIVE_TOPO, REVISITING_TOPO

MICRO = "micrograd/engine.py"
TENSOR = "babygrad/tensor.py"
OPS = "babygrad/ops.py"


@dataclass(frozen=True)
class Named:
    bug: str
    item: str
    file: str
    edits: tuple[tuple[str, str], ...]
    example: tuple[str, ...]
    """Lines the shrunk example must contain, in this order (its expected minimal form)."""
    max_lines: int
    """The snippet's length (without the grader's helper and imports) is at most this."""
    status: str = "failed"


CASES = [
    Named("overwrite-grad", "micrograd.accumulate", MICRO, (
        ("self.grad += k * self.data ** (k - 1) * out.grad",
         "self.grad = k * self.data ** (k - 1) * out.grad"),),
        ("a = Value(1.0)", "b = a ** 2", "a.grad = 0.5", "b.grad = ", "b._backward()",
         "print(a.grad)"), 6, status="partial"),
    Named("overwrite-grad", "babygrad.accumulate", TENSOR, (
        ("ledger[key] = part.data if key not in ledger else ledger[key] + part.data",
         "ledger[key] = part.data"),),
        ("n0 = Tensor(", "n1 = Given(", "n1.backward()"), 4),
    Named("topo-not-reversed", "micrograd.backward", MICRO, (
        ("for node in reversed(order):", "for node in order:"),),
        ("n0 = Value(1.0)", ".backward()"), 6, status="partial"),
    Named("no-seed", "micrograd.backward", MICRO, (("        self.grad = 1.0\n", ""),),
          ("n0 = Value(1.0)", "n1 = given(Value(0.0, (n0,", "n1.backward()"), 4),
    Named("revisits-shared-nodes", "micrograd.topo", MICRO, ((ITERATIVE_TOPO, REVISITING_TOPO),),
          ("depth = 16", "for _ in range(depth):", "build_topo(node)"), 9, status="partial"),
    Named("no-visited-set", "micrograd.topo", MICRO, (
        ("            if id(child) not in visited:\n", "            if True:\n"),),
        ("n0 = Value(1.0)", "n1 = given(Value(0.0, (n0, n0,)), (n0, 2.0), (n0, 2.0))",
         "print(build_topo(n1))"), 3),
    Named("tanh-derivative", "micrograd.ops.tanh", MICRO, (("1.0 - t * t", "1.0 - t"),),
          ("a = Value(1.0)", "out = a.tanh()", "out.grad = 1.0", "out._backward()"), 5),
    Named("tanh-derivative", "babygrad.ops.tanh", OPS, (("(1 - t * t)", "(1 - t)"),),
          ("a = Tensor([1.0])", "op = ops.Tanh()", "grads = op.backward(Tensor([1.0]), out)"),
          5),
    Named("broadcast-no-sum", "babygrad.ops.broadcast_to", OPS, (
        ("_grad(unbroadcast(out_grad.data, a.shape), a)", "_grad(out_grad.data, a)"),),
        ("a = Tensor([1.0])", "op = ops.BroadcastTo((2,))",
         "grads = op.backward(Tensor([1.0, 1.0]), out)"), 5),
    Named("transpose-same-axes", "babygrad.ops.transpose", OPS, (
        ("np.transpose(out_grad.data, np.argsort(self.axes))",
         "np.transpose(out_grad.data, self.axes)"),),
        ("op = ops.Transpose((1, 2, 0))",), 5),
    Named("summation-shape", "babygrad.ops.summation", OPS, (
        ("np.broadcast_to(np.reshape(out_grad.data, kept), a.shape)",
         "np.broadcast_to(out_grad.data, a.shape)"),),
        ("op = ops.Summation(",), 5),
    Named("matmul-no-transpose", "babygrad.ops.matmul", OPS, (
        ("np.matmul(g, np.swapaxes(y, -1, -2))", "np.matmul(g, y)"),
        ("np.matmul(np.swapaxes(x, -1, -2), g)", "np.matmul(x, g)")),
        ("a = Tensor([[1.0]])", "op = ops.MatMul()"), 6, status="error"),
]


def test_every_named_bug_has_a_planted_case():
    assert {case.bug for case in CASES} == set(BUGS)


def _example(feedback: str) -> list[str]:
    """The first runnable example's own lines: no imports, no grader helper (``given``,
    ``walk``, ``class Given``)."""
    body = feedback.split("```python\n", 1)[1].split("```", 1)[0].splitlines()
    helper = False
    lines = []
    for line in body:
        if line.startswith(("def given(", "def walk(", "class Given(")):
            helper = True
        elif helper and (line.startswith(" ") or not line):
            continue
        else:
            helper = False
            if not line.startswith(("from ", "import ")):
                lines.append(line)
    return lines


@pytest.mark.parametrize("case", CASES, ids=[f"{c.bug}@{c.item}" for c in CASES])
def test_a_planted_classic_bug_is_named_with_a_small_example(tmp_path, case):
    submission = planted(tmp_path, {case.file: list(case.edits)})
    item = grade_items(submission, assignment=case.item.split(".")[0],
                       only=[case.item])[case.item]
    assert item["status"] == case.status, item["feedback"]
    assert item["score"] < item["max_score"]
    assert case.bug in item["bugs"], item["feedback"]
    assert f"Recognised bug: {case.bug}: {BUGS[case.bug].title}" in item["feedback"]
    example = _example(item["feedback"])
    assert len(example) <= case.max_lines, "\n".join(example)
    position = 0
    for expected in case.example:
        found = [i for i, line in enumerate(example) if i >= position and expected in line]
        assert found, f"{expected!r} not in the example:\n" + "\n".join(example)
        position = found[0] + 1
