"""Blame isolation: a bug planted in one part costs that part's rubric item and nothing else.

For every rubric item (both assignments; the ``*.graphs`` items only mix the others) an engine
that is the reference except for one realistic bug in the part the item names must lose points
on that item and keep full marks on every other item but its assignment's ``*.graphs`` item:
``depends_on`` tells a student what to fix first, it never excuses a second penalty.

The assignments are independent, so each submission carries one micrograd bug and one babygrad
bug at once, and each grade runs every item but the ``*.graphs`` ones (which may lose anyway).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest

from grader.grading import rubric as rubric_module
from grader.layout import DEFAULT_RUBRIC
from tests.grading import grade_items, planted

pytestmark = pytest.mark.slow

MICRO = "micrograd/engine.py"
TENSOR = "babygrad/tensor.py"
OPS = "babygrad/ops.py"
RUBRIC = rubric_module.load(DEFAULT_RUBRIC)


@dataclass(frozen=True)
class Bug:
    """One planted bug: the rubric item it belongs to, a short name, the edits that plant it."""

    item: str
    name: str
    file: str
    edits: tuple[tuple[str, str], ...]

    @property
    def label(self) -> str:
        return f"{self.item}:{self.name}"


RECURSIVE_TOPO = """    order = []
    visited = set()

    def visit(node):
        if id(node) not in visited:
            visited.add(id(node))
            for child in node._prev:
                visit(child)
            order.append(node)

    visit(root)
    return order
"""

ITERATIVE_TOPO = """    order = []
    visited = {id(root)}
    stack = [(root, iter(root._prev))]
    while stack:
        node, operands = stack[-1]
        for child in operands:
            if id(child) not in visited:
                visited.add(id(child))
                stack.append((child, iter(child._prev)))
                break
        else:
            stack.pop()
            order.append(node)
    return order
"""

REVISITING_TOPO = """    order = []
    visited = set()
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            if id(node) not in visited:
                visited.add(id(node))
                order.append(node)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(node._prev))
    return order
"""

TENSOR_WALK = """        order = []
        visited = {id(self)}
        stack = [(self, iter(self._inputs))]
        while stack:
            node, inputs = stack[-1]
            for parent in inputs:
                if id(parent) not in visited:
                    visited.add(id(parent))
                    stack.append((parent, iter(parent._inputs)))
                    break
            else:
                stack.pop()
                order.append(node)
"""

REVISITING_TENSOR_WALK = """        order = []
        visited = set()
        stack = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                if id(node) not in visited:
                    visited.add(id(node))
                    order.append(node)
                continue
            stack.append((node, True))
            stack.extend((parent, False) for parent in reversed(node._inputs))
"""

MICROGRAD_BUGS = [
    Bug("micrograd.topo", "no-visited-check", MICRO, (
        ("            if id(child) not in visited:\n", "            if True:\n"),)),
    Bug("micrograd.topo", "root-first", MICRO, (
        ("    return order\n", "    return order[-1:] + order[:-1]\n"),)),
    Bug("micrograd.topo", "reversed", MICRO, (
        ("    return order\n", "    return order[::-1]\n"),)),
    Bug("micrograd.topo", "revisits-shared-nodes", MICRO, ((ITERATIVE_TOPO, REVISITING_TOPO),)),
    Bug("micrograd.backward", "no-seed", MICRO, (("        self.grad = 1.0\n", ""),)),
    Bug("micrograd.backward", "walks-forwards", MICRO, (
        ("for node in reversed(order):", "for node in order:"),)),
    Bug("micrograd.backward", "resets-gradients", MICRO, (
        ("        self.grad = 1.0\n", "        zero_grad(self)\n        self.grad = 1.0\n"),)),
    Bug("micrograd.backward", "root-closure-only", MICRO, (
        ("        for node in reversed(order):\n            node._backward()\n",
         "        self._backward()\n"),)),
    Bug("micrograd.accumulate", "overwrite", MICRO, (
        ("self.grad += out.grad\n", "self.grad = out.grad\n"),
        ("other.grad += out.grad", "other.grad = out.grad"),
        ("self.grad += other.data * out.grad", "self.grad = other.data * out.grad"),
        ("other.grad += self.data * out.grad", "other.grad = self.data * out.grad"))),
    Bug("micrograd.accumulate", "overwrite-in-mul", MICRO, (
        ("self.grad += other.data * out.grad", "self.grad = other.data * out.grad"),
        ("other.grad += self.data * out.grad", "other.grad = self.data * out.grad"))),
    Bug("micrograd.accumulate", "overwrite-in-pow", MICRO, (
        ("self.grad += k * self.data ** (k - 1) * out.grad",
         "self.grad = k * self.data ** (k - 1) * out.grad"),)),
    Bug("micrograd.accumulate", "overwrite-in-tanh", MICRO, (
        ("self.grad += (1.0 - t * t) * out.grad", "self.grad = (1.0 - t * t) * out.grad"),)),
    Bug("micrograd.accumulate", "overwrite-in-exp", MICRO, (
        ("self.grad += out.data * out.grad", "self.grad = out.data * out.grad"),)),
    Bug("micrograd.accumulate", "overwrite-in-relu", MICRO, (
        ("self.grad += (1.0 if self.data > 0 else 0.0) * out.grad",
         "self.grad = (1.0 if self.data > 0 else 0.0) * out.grad"),)),
    Bug("micrograd.zero_grad", "root-only", MICRO, (
        ("    seen = {id(root)}\n    stack = [root]\n",
         "    root.grad = 0.0\n    seen = {id(root)}\n    stack = []\n"),)),
    Bug("micrograd.zero_grad", "skips-leaves", MICRO, (
        ("        node.grad = 0.0\n", "        if node._prev:\n            node.grad = 0.0\n"),)),
    Bug("micrograd.ops.add", "no-chain-rule", MICRO, (
        ("self.grad += out.grad\n            other.grad += out.grad",
         "self.grad += 1.0\n            other.grad += 1.0"),)),
    Bug("micrograd.ops.mul", "own-data", MICRO, (
        ("self.grad += other.data * out.grad", "self.grad += self.data * out.grad"),)),
    Bug("micrograd.ops.pow", "exponent-not-lowered", MICRO, (
        ("k * self.data ** (k - 1) * out.grad", "k * self.data**k * out.grad"),)),
    Bug("micrograd.ops.pow", "precedence", MICRO, (
        ("k * self.data ** (k - 1) * out.grad", "k * self.data ** k - 1 * out.grad"),)),
    Bug("micrograd.ops.tanh", "one-minus-t", MICRO, (("1.0 - t * t", "1.0 - t"),)),
    Bug("micrograd.ops.exp", "input-not-output", MICRO, (
        ("self.grad += out.data * out.grad", "self.grad += self.data * out.grad"),)),
    Bug("micrograd.ops.exp", "exp-of-output", MICRO, (
        ("self.grad += out.data * out.grad", "self.grad += math.exp(out.data) * out.grad"),)),
    Bug("micrograd.ops.relu", "passes-everything", MICRO, (
        ("(1.0 if self.data > 0 else 0.0) * out.grad", "out.grad"),)),
    Bug("micrograd.sugar", "rsub-reversed", MICRO, (
        ("return other + (-self)", "return self + (-other)"),)),
    Bug("micrograd.sugar", "rtruediv-reversed", MICRO, (
        ("return other * self**-1", "return self * other**-1"),)),
    Bug("micrograd.sugar", "neg-detached", MICRO, (
        ("return self * -1", "return Value(-self.data)"),)),
    Bug("micrograd.deep", "recursive-topo", MICRO, ((ITERATIVE_TOPO, RECURSIVE_TOPO),)),
]

BABYGRAD_BUGS = [
    Bug("babygrad.ops.add", "negates-b", OPS, (
        ("return _grad(unbroadcast(g, a.shape), a), _grad(unbroadcast(g, b.shape), b)",
         "return _grad(unbroadcast(g, a.shape), a), _grad(unbroadcast(-g, b.shape), b)"),)),
    Bug("babygrad.ops.mul", "own-data", OPS, (("g * b.data, a.shape", "g * a.data, a.shape"),)),
    Bug("babygrad.ops.sub", "no-minus", OPS, (
        ("_grad(unbroadcast(-g, b.shape), b)", "_grad(unbroadcast(g, b.shape), b)"),)),
    Bug("babygrad.ops.div", "b-not-squared", OPS, (
        ("-g * a.data / (b.data * b.data)", "-g * a.data / b.data"),)),
    Bug("babygrad.ops.div", "sign-of-b", OPS, (
        ("-g * a.data / (b.data * b.data)", "g * a.data / (b.data * b.data)"),)),
    Bug("babygrad.ops.pow", "exponent-dropped", OPS, (
        ("np.where(y == 0, 0.0, y * np.power(x, y - 1))", "np.power(x, y - 1)"),)),
    Bug("babygrad.ops.negate", "no-minus", OPS, (
        ("_grad(-out_grad.data, node._inputs[0])", "_grad(out_grad.data, node._inputs[0])"),)),
    Bug("babygrad.ops.log", "no-chain-rule", OPS, (
        ("_grad(out_grad.data / a.data, a)", "_grad(1 / a.data, a)"),)),
    Bug("babygrad.ops.exp", "input-not-output", OPS, (
        ("out_grad.data * node.data, node._inputs[0]",
         "out_grad.data * node._inputs[0].data, node._inputs[0]"),)),
    Bug("babygrad.ops.sqrt", "precedence", OPS, (
        ("out_grad.data / (2 * node.data)", "out_grad.data / 2 * node.data"),)),
    Bug("babygrad.ops.abs", "no-sign", OPS, (
        ("out_grad.data * np.sign(a.data)", "out_grad.data"),)),
    Bug("babygrad.ops.relu", "no-chain-rule", OPS, (
        ("out_grad.data * (a.data > 0)", "1.0 * (a.data > 0)"),)),
    Bug("babygrad.ops.sigmoid", "forward-negatives", OPS, (
        ("np.where(a >= 0, 1 / (1 + e), e / (1 + e))", "np.where(a >= 0, 1 / (1 + e), 1 / e)"),)),
    Bug("babygrad.ops.tanh", "one-minus-t", OPS, (("(1 - t * t)", "(1 - t)"),)),
    Bug("babygrad.ops.reshape", "shape-not-restored", OPS, (
        ("np.reshape(out_grad.data, a.shape)", "out_grad.data"),)),
    Bug("babygrad.ops.transpose", "same-axes", OPS, (
        ("np.transpose(out_grad.data, np.argsort(self.axes))",
         "np.transpose(out_grad.data, self.axes)"),)),
    Bug("babygrad.ops.summation", "axes-lost", OPS, (
        ("np.broadcast_to(np.reshape(out_grad.data, kept), a.shape)",
         "np.broadcast_to(out_grad.data, a.shape)"),)),
    Bug("babygrad.ops.broadcast_to", "no-sum", OPS, (
        ("_grad(unbroadcast(out_grad.data, a.shape), a)", "_grad(out_grad.data, a)"),)),
    Bug("babygrad.ops.matmul", "no-transpose", OPS, (
        ("np.matmul(g, np.swapaxes(y, -1, -2))", "np.matmul(g, y)"),
        ("np.matmul(np.swapaxes(x, -1, -2), g)", "np.matmul(x, g)"))),
    Bug("babygrad.ops.add_scalar", "adds-scalar-to-grad", OPS, (
        ("return _grad(out_grad.data, node._inputs[0])",
         "return _grad(out_grad.data + self.scalar, node._inputs[0])"),)),
    Bug("babygrad.ops.mul_scalar", "no-scalar", OPS, (
        ("_grad(out_grad.data * self.scalar, node._inputs[0])",
         "_grad(out_grad.data, node._inputs[0])"),)),
    Bug("babygrad.ops.divide_scalar", "multiplies", OPS, (
        ("_grad(out_grad.data / self.scalar, node._inputs[0])",
         "_grad(out_grad.data * self.scalar, node._inputs[0])"),)),
    Bug("babygrad.ops.power_scalar", "exponent-not-lowered", OPS, (
        ("np.power(a.data, self.scalar - 1)", "np.power(a.data, self.scalar)"),)),
    Bug("babygrad.tensor_ops", "sub-routed-to-add", TENSOR, (
        ("return ops.sub(self, self._wrap(other))", "return ops.add(self, self._wrap(other))"),)),
    Bug("babygrad.tensor_ops", "rtruediv-as-truediv", TENSOR, (
        ("return ops.mul_scalar(ops.power_scalar(self, -1), other)",
         "return ops.divide_scalar(self, other)"),)),
    Bug("babygrad.tensor_ops", "radd-multiplies", TENSOR, (
        ("    def __radd__(self, other):\n        if isinstance(other, _SCALAR_TYPES):\n"
         "            return ops.add_scalar(self, other)",
         "    def __radd__(self, other):\n        if isinstance(other, _SCALAR_TYPES):\n"
         "            return ops.mul_scalar(self, other)"),)),
    Bug("babygrad.tensor_ops", "rsub-reversed", TENSOR, (
        ("return ops.add_scalar(ops.negate(self), other)",
         "return ops.add_scalar(self, -other)"),)),
    Bug("babygrad.broadcasting", "notes-style-equal-shapes-only", OPS, (
        ("return _grad(unbroadcast(g, a.shape), a), _grad(unbroadcast(g, b.shape), b)",
         "return _grad(g, a), _grad(g, b)"),
        ("_grad(unbroadcast(g * b.data, a.shape), a),\n"
         "            _grad(unbroadcast(g * a.data, b.shape), b),",
         "_grad(g * b.data, a),\n            _grad(g * a.data, b),"),
        ("return _grad(unbroadcast(g, a.shape), a), _grad(unbroadcast(-g, b.shape), b)",
         "return _grad(g, a), _grad(-g, b)"),
        ("_grad(unbroadcast(g / b.data, a.shape), a),\n"
         "            _grad(unbroadcast(-g * a.data / (b.data * b.data), b.shape), b),",
         "_grad(g / b.data, a),\n            _grad(-g * a.data / (b.data * b.data), b),"))),
    Bug("babygrad.backward", "walks-forwards", TENSOR, (
        ("for node in reversed(order):", "for node in order:"),)),
    Bug("babygrad.backward", "revisits-shared-tensors", TENSOR, (
        (TENSOR_WALK, REVISITING_TENSOR_WALK),)),
    Bug("babygrad.backward", "grad-on-leaves-only", TENSOR, (
        ("            if node.requires_grad:\n", "            if node._op is None:\n"),)),
    Bug("babygrad.accumulate", "ledger-overwrites", TENSOR, (
        ("ledger[key] = part.data if key not in ledger else ledger[key] + part.data",
         "ledger[key] = part.data"),)),
]

PAIRS = list(itertools.zip_longest(MICROGRAD_BUGS, BABYGRAD_BUGS))


def allowed_to_lose(bug: Bug) -> set[str]:
    return {bug.item, f"{bug.item.split('.')[0]}.graphs"}


def test_every_item_has_a_planted_bug():
    planted_items = {bug.item for bug in MICROGRAD_BUGS + BABYGRAD_BUGS}
    graded = {item.id for item in RUBRIC.items if not item.id.endswith(".graphs")}
    assert graded - planted_items == set()
    assert planted_items - graded == set()


def _label(pair: tuple[Bug | None, Bug | None]) -> str:
    return "+".join(bug.label for bug in pair if bug is not None)


@pytest.mark.parametrize("pair", PAIRS, ids=[_label(p) for p in PAIRS])
def test_a_planted_bug_costs_its_item_and_its_dependents_only(tmp_path, pair):
    bugs = [bug for bug in pair if bug is not None]
    edits: dict[str, list[tuple[str, str]]] = {}
    for bug in bugs:
        edits.setdefault(bug.file, []).extend(bug.edits)
    submission = planted(tmp_path, edits)
    assignments = {bug.item.split(".")[0] for bug in bugs}
    allowed = set().union(*(allowed_to_lose(bug) for bug in bugs))
    # The *.graphs items may lose anyway: grading them (and shrinking) would only cost time.
    only = [item.id for item in RUBRIC.items if item.assignment in assignments
            and not item.id.endswith(".graphs")]
    items = grade_items(submission, only=only)
    assert set(items) == set(only)
    problems = []
    for bug in bugs:
        mine = items[bug.item]
        if mine["score"] >= mine["max_score"]:
            problems.append(f"{bug.label} was not caught: {bug.item} kept full marks")
    for item_id, item in items.items():
        if item_id not in allowed and (item["status"] != "passed"
                                       or item["score"] < item["max_score"]):
            problems.append(f"{item_id} lost points ({item['status']}) for "
                            f"{', '.join(b.label for b in bugs)}:\n{item['feedback'][:1500]}")
    assert not problems, "\n\n".join(problems)
