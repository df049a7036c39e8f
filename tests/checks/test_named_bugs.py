"""Named bugs: each classic mistake of grader/checks/bugs.py BUGS, planted in a copy of the
reference (one bug of ``tests/helpers/planted.py``'s catalogue), fails its item, is named in the
item's ``bugs``, and comes with a small runnable example."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from grader.checks.bugs import BUGS
from tests.helpers.grading import grade_items
from tests.helpers.planted import CATALOGUE, plant


@dataclass(frozen=True)
class Named:
    """A classic bug of ``BUGS`` as planted by one bug of the catalogue (by its label)."""

    bug: str
    planted: str
    example: tuple[str, ...]
    """Lines the shrunk example must contain, in this order (its expected minimal form)."""
    max_lines: int
    """The snippet's length (without the grader's helper and imports) is at most this."""
    status: str = "failed"

    @property
    def item(self) -> str:
        return CATALOGUE[self.planted].item


CASES = [
    Named(
        "overwrite-grad",
        "micrograd.accumulate:overwrite-in-pow",
        (
            "a = Value(1.0)",
            "b = a ** 2",
            "a.grad = 0.5",
            "b.grad = ",
            "b._backward()",
            "print(a.grad)",
        ),
        6,
        status="partial",
    ),
    Named(
        "overwrite-grad",
        "micrograd.accumulate:overwrite-in-mul",
        (
            "a = Value(1.0)",
            "b = a * a",
            "a.grad = 0.5",
            "b.grad = ",
            "b._backward()",
            "print(a.grad)",
        ),
        6,
        status="partial",
    ),
    Named(
        "overwrite-grad",
        "babygrad.accumulate:ledger-overwrites",
        ("n0 = Given(1.0)(Tensor(", "n1 = Given(", "n1.backward()"),
        4,
    ),
    Named(
        "topo-not-reversed",
        "micrograd.backward:walks-forwards",
        ("n0 = Value(1.0)", "micrograd.engine.build_topo = lambda root: [n0, ", ".backward()"),
        7,
        status="partial",
    ),
    Named(
        "no-seed",
        "micrograd.backward:no-seed",
        (
            "n0 = Value(1.0)",
            "n1 = given(Value(0.0, (n0,",
            "micrograd.engine.build_topo = lambda root: [n0, n1]",
            "n1.backward()",
        ),
        5,
    ),
    Named(
        "revisits-shared-nodes",
        "micrograd.topo:revisits-shared-nodes",
        ("depth = 16", "for _ in range(depth):", "build_topo(node)"),
        9,
        status="partial",
    ),
    Named(
        "revisits-shared-nodes",
        "micrograd.zero_grad:revisits-shared-nodes",
        ("depth = 16", "for _ in range(depth):", "zero_grad(nodes[-1])"),
        11,
        status="partial",
    ),
    Named(
        "revisits-shared-nodes",
        "micrograd.zero_grad:no-visited-check",
        ("depth = 16", "for _ in range(depth):", "zero_grad(nodes[-1])"),
        11,
        status="partial",
    ),
    Named(
        "no-visited-set",
        "micrograd.topo:no-visited-check",
        (
            "n0 = Value(1.0)",
            "n1 = given(Value(0.0, (n0, n0,)), (n0, 2.0), (n0, 2.0))",
            "print(build_topo(n1))",
        ),
        3,
    ),
    Named(
        "tanh-derivative",
        "micrograd.ops.tanh:one-minus-t",
        ("a = Value(1.0)", "out = a.tanh()", "out.grad = 1.0", "out._backward()"),
        5,
    ),
    Named(
        "tanh-derivative",
        "babygrad.ops.tanh:one-minus-t",
        (
            "a = Tensor([1.0], requires_grad=True)",
            "op = ops.Tanh()",
            "grads = op.backward(Tensor([1.0], requires_grad=False), out)",
        ),
        5,
    ),
    Named(
        "broadcast-no-sum",
        "babygrad.ops.broadcast_to:no-sum",
        (
            "a = Tensor([1.0], requires_grad=True)",
            "op = ops.BroadcastTo((2,))",
            "grads = op.backward(Tensor([1.0, 1.0], requires_grad=False), out)",
        ),
        5,
    ),
    Named(
        "transpose-same-axes",
        "babygrad.ops.transpose:same-axes",
        ("op = ops.Transpose((1, 2, 0))",),
        5,
    ),
    Named(
        "summation-shape",
        "babygrad.ops.summation:axes-lost",
        ("op = ops.Summation(",),
        5,
        status="error",
    ),
    Named(
        "matmul-no-transpose",
        "babygrad.ops.matmul:no-transpose",
        ("a = Tensor([[1.0]], requires_grad=True)", "op = ops.MatMul()"),
        6,
        status="error",
    ),
]


def test_every_named_bug_has_a_planted_case():
    assert {case.bug for case in CASES} == set(BUGS)


UNNAMED = [
    "micrograd.ops.mul:closure-on-self",
    "micrograd.ops.add:no-chain-rule",
    "micrograd.sugar:neg-detached",
    "micrograd.ops.relu:returns-operand",
    "micrograd.ops.relu:does-nothing",
    "micrograd.ops.relu:passes-at-zero",
    "micrograd.accumulate:add-hands-on-its-own-grad",
    "babygrad.accumulate:ledger-keeps-the-first",
]
"""Bugs that are none of ``BUGS``: where they fail, no classic bug may be named. The first
loses a contribution on shared nodes (its closures replace each other on an operand) without
a ``=`` anywhere, and once cost micrograd.accumulate under the name overwrite-grad; so did a
relu that returns its operand (``return self``: a preloaded gradient lost to no ``=``), and a
``+`` that adds its own gradient into its other operand's (``a - a`` then ends ``a`` at 0
from any preload, as an ``=`` would: the name is kept only where an ``=`` shows alone), and a
ledger that keeps the first contribution and drops the rest (on uses alike, as the shrunk
example's are, it gives what an ``=`` gives: the name needs two unlike uses)."""


@pytest.mark.parametrize("planted", UNNAMED)
def test_a_bug_that_is_no_classic_one_is_not_named(tmp_path, planted):
    bug = CATALOGUE[planted]
    assignment = bug.item.split(".")[0]
    items = grade_items(
        plant(tmp_path, bug),
        assignment=assignment,
        only=[bug.item, f"{assignment}.accumulate", f"{assignment}.graphs"],
    )
    assert items[bug.item]["score"] < items[bug.item]["max_score"]
    assert {item_id: item["bugs"] for item_id, item in items.items() if item["bugs"]} == {}


def _example(feedback: str) -> list[str]:
    """The first runnable example's own lines: no imports, no grader helper (``given``,
    ``recording``, ``class Given``)."""
    body = feedback.split("```python\n", 1)[1].split("```", 1)[0].splitlines()
    helper = False
    lines = []
    for line in body:
        if line.startswith(("def given(", "def recording(", "class Given(")):
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
    submission = plant(tmp_path, CATALOGUE[case.planted])
    item = grade_items(submission, assignment=case.item.split(".")[0], only=[case.item])[case.item]
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
