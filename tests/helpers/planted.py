"""Planted bugs: a fresh copy of the reference engine with a realistic mistake edited in.

One way to plant for every test that grades a broken engine. An ``Edit`` is a file of
``reference/``, a text that must occur there exactly once, and what it becomes; a ``Bug`` is a
named group of edits that costs one rubric item. ``plant`` copies the reference and applies
them, failing loudly (``PlantError``) when an edit's text is not found exactly once: a planted
bug never silently vanishes, nor lands in the wrong place, when the reference is edited.

The catalogue (``MICROGRAD_BUGS``, ``BABYGRAD_BUGS``) has realistic bugs for every rubric item
but the ``*.graphs`` ones: ``tests/grading/test_blame.py`` grades each,
``tests/grading/test_configurations.py`` grades them in every oracle configuration,
``tests/checks/test_named_bugs.py`` checks the classic ones are named.
"""

from __future__ import annotations

import itertools
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.helpers import ENGINES, REPO_ROOT

REFERENCE = REPO_ROOT / "reference"
MICRO = "micrograd/engine.py"
TENSOR = "babygrad/tensor.py"
OPS = "babygrad/ops.py"


class PlantError(Exception):
    """An edit's text does not occur exactly once in its file of the reference."""


@dataclass(frozen=True)
class Edit:
    """``old`` (exactly once in ``file``, relative to reference/) becomes ``new``."""

    file: str
    old: str
    new: str

    @property
    def pair(self) -> tuple[str, str]:
        """``(old, new)``, for ``tests.grading.planted``'s ``{file: [(old, new)]}`` form."""
        return self.old, self.new


@dataclass(frozen=True)
class Bug:
    """One planted bug: the rubric item it belongs to, a short name, the edits that plant it."""

    item: str
    name: str
    edits: tuple[Edit, ...]

    @property
    def label(self) -> str:
        return f"{self.item}:{self.name}"


def bug(item: str, name: str, file: str, pairs: tuple[tuple[str, str], ...]) -> Bug:
    """A bug whose ``(old, new)`` edits are all in one ``file``."""
    return Bug(item, name, tuple(Edit(file, old, new) for old, new in pairs))


def apply(root: Path, edit: Edit) -> None:
    """Apply ``edit`` to the copy of the reference at ``root``."""
    path = root / edit.file
    text = path.read_text()
    count = text.count(edit.old)
    if count != 1:
        raise PlantError(
            f"planted bug: {edit.old!r} occurs {count} times in {edit.file}, not exactly once"
        )
    path.write_text(text.replace(edit.old, edit.new))


def plant(tmp_path: Path, *changes: Bug | Edit, reference: Path = REFERENCE) -> Path:
    """A copy of the reference (this course's, or another course's ``reference``) in
    ``tmp_path / "submission"`` with every bug (or single edit) applied, in order."""
    target = tmp_path / "submission"
    shutil.copytree(reference, target, ignore=shutil.ignore_patterns("__pycache__"))
    for change in changes:
        for edit in change.edits if isinstance(change, Bug) else (change,):
            apply(target, edit)
    return target


def _edits(raw: dict) -> tuple[Edit, ...]:
    """An entry's edits, each in the entry's ``file`` unless it names its own."""
    return tuple(Edit(e.get("file", raw["file"]), e["old"], e["new"]) for e in raw["edits"])


def course_bugs(catalogue: Path) -> tuple[Bug, ...]:
    """Another course's planted bugs, from its ``planted.yaml`` (``tests/engines/<course>/``):
    a list of ``{item, name, file, edits: [{old, new}]}``, edits to that course's reference."""
    return tuple(
        Bug(raw["item"], raw["name"], _edits(raw)) for raw in yaml.safe_load(catalogue.read_text())
    )


def course_deviations(catalogue: Path) -> tuple[Bug, ...]:
    """Another course's correct engines that deviate from its reference within its contract,
    from its ``conforming.yaml``: a list of ``{name, outside, file, edits: [{old, new}]}``,
    ``outside`` the item each would lose were the course's contract not stated ("": not on
    every grade)."""
    return tuple(
        Bug(raw.get("outside", ""), raw["name"], _edits(raw))
        for raw in yaml.safe_load(catalogue.read_text())
    )


# ------------------------------------------------------------------------------ catalogue

TANH_DERIVATIVE = Edit(MICRO, "1.0 - t * t", "1.0 - t")


def one_bug_of(course: str) -> Bug:
    """A planted bug of any shipped course, for the tests that grade as a user installs the
    grader (a wheel, a Gradescope image): this course's tanh, or the course's first bug."""
    if course == "course":
        return Bug("micrograd.ops.tanh", "tanh-derivative", (TANH_DERIVATIVE,))
    return course_bugs(ENGINES / course / "planted.yaml")[0]


"""The classic: tanh's derivative as ``1 - t`` (an engine that has earned a fail)."""

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

PREORDER_TENSOR_WALK = """        order = []
        visited = set()
        stack = [self]
        while stack:
            node = stack.pop()
            if id(node) in visited:
                continue
            visited.add(id(node))
            order.append(node)
            stack.extend(node._inputs)
        order.reverse()
"""
"""A depth-first walk that lists each tensor when it is first reached, before its inputs: the
output comes first, but a shared tensor may come before one of the tensors that use it (right
on trees, wrong on some DAGs)."""

RELU_BODY = """        out = Value(self.data if self.data > 0 else 0.0, (self,), "relu")

        def _backward():
            self.grad += (1.0 if self.data > 0 else 0.0) * out.grad

        out._backward = _backward
        return out
"""
"""The reference's ``Value.relu`` body (its solution region)."""
RELU_RETURN = "        return out\n        # END SOLUTION\n\n    # ----"
"""``Value.relu``'s return: the last primitive's, just before the composed operations."""

MICROGRAD_BUGS = [
    bug(
        "micrograd.topo",
        "no-visited-check",
        MICRO,
        (("            if id(child) not in visited:\n", "            if True:\n"),),
    ),
    bug(
        "micrograd.topo",
        "root-first",
        MICRO,
        (("    return order\n", "    return order[-1:] + order[:-1]\n"),),
    ),
    bug("micrograd.topo", "reversed", MICRO, (("    return order\n", "    return order[::-1]\n"),)),
    bug("micrograd.topo", "revisits-shared-nodes", MICRO, ((ITERATIVE_TOPO, REVISITING_TOPO),)),
    bug("micrograd.backward", "no-seed", MICRO, (("        self.grad = 1.0\n", ""),)),
    bug(
        "micrograd.backward",
        "walks-forwards",
        MICRO,
        (("for node in reversed(order):", "for node in order:"),),
    ),
    bug(
        "micrograd.backward",
        "resets-gradients",
        MICRO,
        (("        self.grad = 1.0\n", "        zero_grad(self)\n        self.grad = 1.0\n"),),
    ),
    bug(
        "micrograd.backward",
        "root-closure-only",
        MICRO,
        (
            (
                "        for node in reversed(order):\n            node._backward()\n",
                "        self._backward()\n",
            ),
        ),
    ),
    bug(  # right on a fresh graph: a second backward() from an inner node keeps its grad
        "micrograd.backward",
        "seeds-only-at-zero",
        MICRO,
        (
            (
                "        self.grad = 1.0\n",
                "        if self.grad == 0:\n            self.grad = 1.0\n",
            ),
        ),
    ),
    bug(
        "micrograd.accumulate",
        "overwrite",
        MICRO,
        (
            ("self.grad += out.grad\n", "self.grad = out.grad\n"),
            ("other.grad += out.grad", "other.grad = out.grad"),
            ("self.grad += other.data * out.grad", "self.grad = other.data * out.grad"),
            ("other.grad += self.data * out.grad", "other.grad = self.data * out.grad"),
        ),
    ),
    bug(
        "micrograd.accumulate",
        "overwrite-in-mul",
        MICRO,
        (
            ("self.grad += other.data * out.grad", "self.grad = other.data * out.grad"),
            ("other.grad += self.data * out.grad", "other.grad = self.data * out.grad"),
        ),
    ),
    bug(
        "micrograd.accumulate",
        "overwrite-in-pow",
        MICRO,
        (
            (
                "self.grad += k * self.data ** (k - 1) * out.grad",
                "self.grad = k * self.data ** (k - 1) * out.grad",
            ),
        ),
    ),
    bug(
        "micrograd.accumulate",
        "overwrite-in-tanh",
        MICRO,
        (("self.grad += (1.0 - t * t) * out.grad", "self.grad = (1.0 - t * t) * out.grad"),),
    ),
    bug(
        "micrograd.accumulate",
        "overwrite-in-exp",
        MICRO,
        (("self.grad += out.data * out.grad", "self.grad = out.data * out.grad"),),
    ),
    bug(
        "micrograd.accumulate",
        "overwrite-in-relu",
        MICRO,
        (
            (
                "self.grad += (1.0 if self.data > 0 else 0.0) * out.grad",
                "self.grad = (1.0 if self.data > 0 else 0.0) * out.grad",
            ),
        ),
    ),
    bug(
        "micrograd.accumulate",
        "add-hands-on-its-own-grad",
        MICRO,
        (("other.grad += out.grad", "other.grad += self.grad"),),
    ),
    bug(
        "micrograd.zero_grad",
        "root-only",
        MICRO,
        (
            (
                "    seen = {id(root)}\n    stack = [root]\n",
                "    root.grad = 0.0\n    seen = {id(root)}\n    stack = []\n",
            ),
        ),
    ),
    bug(
        "micrograd.zero_grad",
        "skips-leaves",
        MICRO,
        (("        node.grad = 0.0\n", "        if node._prev:\n            node.grad = 0.0\n"),),
    ),
    bug(
        "micrograd.zero_grad",
        "revisits-shared-nodes",
        MICRO,
        (  # right, in exponential time
            ("                seen.add(id(child))\n", ""),
        ),
    ),
    bug(
        "micrograd.zero_grad",
        "no-visited-check",
        MICRO,
        (("            if id(child) not in seen:\n", "            if True:\n"),),
    ),
    bug(  # right where every grad is set: a new root over a trained graph holds 0
        "micrograd.zero_grad",
        "stops-at-zero",
        MICRO,
        (
            (
                "        node = stack.pop()\n        node.grad = 0.0\n",
                "        node = stack.pop()\n        if node.grad == 0.0:\n"
                "            continue  # already reset, and so is all below it\n"
                "        node.grad = 0.0\n",
            ),
        ),
    ),
    bug(
        "micrograd.ops.add",
        "no-chain-rule",
        MICRO,
        (
            (
                "self.grad += out.grad\n            other.grad += out.grad",
                "self.grad += 1.0\n            other.grad += 1.0",
            ),
        ),
    ),
    bug(
        "micrograd.ops.add",
        "number-not-wrapped",
        MICRO,
        (
            (
                'one contribution per operand slot.\n        """\n'
                "        other = other if isinstance(other, Value) else Value(other)\n",
                'one contribution per operand slot.\n        """\n',
            ),
        ),
    ),
    bug(
        "micrograd.ops.mul",
        "own-data",
        MICRO,
        (("self.grad += other.data * out.grad", "self.grad += self.data * out.grad"),),
    ),
    bug(
        "micrograd.ops.mul",
        "number-not-wrapped",
        MICRO,
        (
            (
                'the *other* operand\'s value.\n        """\n'
                "        other = other if isinstance(other, Value) else Value(other)\n",
                'the *other* operand\'s value.\n        """\n',
            ),
        ),
    ),
    bug(
        "micrograd.ops.mul",
        "no-operands",
        MICRO,
        (
            (
                'out = Value(self.data * other.data, (self, other), "*")',
                'out = Value(self.data * other.data, (), "*")',
            ),
        ),
    ),
    bug(
        "micrograd.ops.mul",
        "closure-on-self",
        MICRO,
        (
            (
                "            other.grad += self.data * out.grad\n\n"
                "        out._backward = _backward",
                "            other.grad += self.data * out.grad\n\n"
                "        self._backward = _backward",
            ),
        ),
    ),
    bug(
        "micrograd.ops.pow",
        "exponent-not-lowered",
        MICRO,
        (("k * self.data ** (k - 1) * out.grad", "k * self.data**k * out.grad"),),
    ),
    bug(
        "micrograd.ops.pow",
        "precedence",
        MICRO,
        (("k * self.data ** (k - 1) * out.grad", "k * self.data ** k - 1 * out.grad"),),
    ),
    bug(
        "micrograd.ops.pow",
        "no-closure",
        MICRO,
        (  # the result keeps Value's do-nothing one
            (
                "            self.grad += k * self.data ** (k - 1) * out.grad\n\n"
                "        out._backward = _backward\n",
                "            self.grad += k * self.data ** (k - 1) * out.grad\n\n",
            ),
        ),
    ),
    Bug("micrograd.ops.tanh", "one-minus-t", (TANH_DERIVATIVE,)),
    bug(
        "micrograd.ops.tanh",
        "missing",
        MICRO,
        (  # as Karpathy's micrograd, which has none
            (
                "        t = math.tanh(self.data)\n",
                '        raise NotImplementedError("tanh")\n        t = math.tanh(self.data)\n',
            ),
        ),
    ),
    bug(
        "micrograd.ops.exp",
        "input-not-output",
        MICRO,
        (("self.grad += out.data * out.grad", "self.grad += self.data * out.grad"),),
    ),
    bug(
        "micrograd.ops.exp",
        "exp-of-output",
        MICRO,
        (("self.grad += out.data * out.grad", "self.grad += math.exp(out.data) * out.grad"),),
    ),
    bug(
        "micrograd.ops.exp",
        "raises",
        MICRO,
        (  # TypeError: must be real number, not Value
            ("self.grad += out.data * out.grad", "self.grad += math.exp(out) * out.grad"),
        ),
    ),
    bug(
        "micrograd.ops.relu",
        "passes-everything",
        MICRO,
        (("(1.0 if self.data > 0 else 0.0) * out.grad", "out.grad"),),
    ),
    bug(
        "micrograd.ops.relu",
        "passes-at-zero",
        MICRO,
        (  # the draws keep relu away from 0
            (
                "(1.0 if self.data > 0 else 0.0) * out.grad",
                "(1.0 if self.data >= 0 else 0.0) * out.grad",
            ),
        ),
    ),
    bug(
        "micrograd.ops.relu",
        "returns-operand",
        MICRO,
        (  # right where x > 0, but no node
            (RELU_RETURN, RELU_RETURN.replace("return out", "return self")),
        ),
    ),
    bug("micrograd.ops.relu", "does-nothing", MICRO, ((RELU_BODY, "        return self\n"),)),
    bug(
        "micrograd.sugar",
        "rsub-reversed",
        MICRO,
        (("return other + (-self)", "return self + (-other)"),),
    ),
    bug(
        "micrograd.sugar",
        "rtruediv-reversed",
        MICRO,
        (("return other * self**-1", "return self * other**-1"),),
    ),
    bug(
        "micrograd.sugar",
        "neg-detached",
        MICRO,
        (("return self * -1", "return Value(-self.data)"),),
    ),
    bug("micrograd.deep", "recursive-topo", MICRO, ((ITERATIVE_TOPO, RECURSIVE_TOPO),)),
    bug(
        "micrograd.ops.relu",
        "clamps-its-operand",
        MICRO,
        (  # right value, right gradient: only the operand's data is changed
            (
                '        out = Value(self.data if self.data > 0 else 0.0, (self,), "relu")\n',
                "        self.data = max(self.data, 0.0)\n"
                '        out = Value(self.data, (self,), "relu")\n',
            ),
        ),
    ),
]

BABYGRAD_BUGS = [
    bug(
        "babygrad.ops.add",
        "negates-b",
        OPS,
        (
            (
                "return _grad(unbroadcast(g, a.shape), a), _grad(unbroadcast(g, b.shape), b)",
                "return _grad(unbroadcast(g, a.shape), a), _grad(unbroadcast(-g, b.shape), b)",
            ),
        ),
    ),
    bug("babygrad.ops.mul", "own-data", OPS, (("g * b.data, a.shape", "g * a.data, a.shape"),)),
    bug(
        "babygrad.ops.sub",
        "no-minus",
        OPS,
        (("_grad(unbroadcast(-g, b.shape), b)", "_grad(unbroadcast(g, b.shape), b)"),),
    ),
    bug(
        "babygrad.ops.div",
        "b-not-squared",
        OPS,
        (("-g * a.data / (b.data * b.data)", "-g * a.data / b.data"),),
    ),
    bug(
        "babygrad.ops.div",
        "sign-of-b",
        OPS,
        (("-g * a.data / (b.data * b.data)", "g * a.data / (b.data * b.data)"),),
    ),
    bug(
        "babygrad.ops.pow",
        "exponent-dropped",
        OPS,
        (("np.where(y == 0, 0.0, y * np.power(x, y - 1))", "np.power(x, y - 1)"),),
    ),
    bug(
        "babygrad.ops.negate",
        "no-minus",
        OPS,
        (("_grad(-out_grad.data, node._inputs[0])", "_grad(out_grad.data, node._inputs[0])"),),
    ),
    bug(
        "babygrad.ops.log",
        "no-chain-rule",
        OPS,
        (("_grad(out_grad.data / a.data, a)", "_grad(1 / a.data, a)"),),
    ),
    bug(
        "babygrad.ops.exp",
        "input-not-output",
        OPS,
        (
            (
                "out_grad.data * node.data, node._inputs[0]",
                "out_grad.data * node._inputs[0].data, node._inputs[0]",
            ),
        ),
    ),
    bug(
        "babygrad.ops.sqrt",
        "precedence",
        OPS,
        (("out_grad.data / (2 * node.data)", "out_grad.data / 2 * node.data"),),
    ),
    bug(
        "babygrad.ops.abs", "no-sign", OPS, (("out_grad.data * np.sign(a.data)", "out_grad.data"),)
    ),
    bug(
        "babygrad.ops.relu",
        "no-chain-rule",
        OPS,
        (("out_grad.data * (a.data > 0)", "1.0 * (a.data > 0)"),),
    ),
    bug(
        "babygrad.ops.sigmoid",
        "forward-negatives",
        OPS,
        (("np.where(a >= 0, 1 / (1 + e), e / (1 + e))", "np.where(a >= 0, 1 / (1 + e), 1 / e)"),),
    ),
    bug("babygrad.ops.tanh", "one-minus-t", OPS, (("(1 - t * t)", "(1 - t)"),)),
    bug(
        "babygrad.ops.reshape",
        "shape-not-restored",
        OPS,
        (("np.reshape(out_grad.data, a.shape)", "out_grad.data"),),
    ),
    bug(
        "babygrad.ops.transpose",
        "same-axes",
        OPS,
        (
            (
                "np.transpose(out_grad.data, np.argsort(self.axes))",
                "np.transpose(out_grad.data, self.axes)",
            ),
        ),
    ),
    bug(
        "babygrad.ops.summation",
        "axes-lost",
        OPS,
        (
            (
                "np.broadcast_to(np.reshape(out_grad.data, kept), a.shape)",
                "np.broadcast_to(out_grad.data, a.shape)",
            ),
        ),
    ),
    bug(
        "babygrad.ops.broadcast_to",
        "no-sum",
        OPS,
        (("_grad(unbroadcast(out_grad.data, a.shape), a)", "_grad(out_grad.data, a)"),),
    ),
    # Caught only where a tuple of axes mixes signs or holds several negative ones (issue 32):
    # the axes are put back in sorted order without first counting them from the front.
    bug(
        "babygrad.ops.summation",
        "sorted-reinsertion",
        OPS,
        (
            (
                """summed = {axis % a.ndim for axis in summed}
        kept = tuple(1 if i in summed else n for i, n in enumerate(a.shape))
        g = np.broadcast_to(np.reshape(out_grad.data, kept), a.shape)""",
                """g = out_grad.data
        for axis in sorted(summed):
            g = np.expand_dims(g, axis)
        g = np.broadcast_to(g, a.shape)""",
            ),
        ),
    ),
    # Caught only where two or more axes are prepended (issue 32): the reduction sums the
    # leading axes once (``if``) instead of while any remain (``while``).
    bug(
        "babygrad.ops.broadcast_to",
        "sums-one-prepended-axis",
        OPS,
        (
            (
                "return _grad(unbroadcast(out_grad.data, a.shape), a)",
                """g = out_grad.data
        if g.ndim > a.ndim:
            g = g.sum(axis=0)
        stretched = tuple(i for i, n in enumerate(a.shape) if n == 1 and g.shape[i] != 1)
        return _grad(g.sum(axis=stretched, keepdims=True).reshape(a.shape), a)""",
            ),
        ),
    ),
    bug(
        "babygrad.ops.matmul",
        "no-transpose",
        OPS,
        (
            ("np.matmul(g, np.swapaxes(y, -1, -2))", "np.matmul(g, y)"),
            ("np.matmul(np.swapaxes(x, -1, -2), g)", "np.matmul(x, g)"),
        ),
    ),
    bug(
        "babygrad.ops.add_scalar",
        "adds-scalar-to-grad",
        OPS,
        (
            (
                "return _grad(out_grad.data, node._inputs[0])",
                "return _grad(out_grad.data + self.scalar, node._inputs[0])",
            ),
        ),
    ),
    bug(
        "babygrad.ops.mul_scalar",
        "no-scalar",
        OPS,
        (
            (
                "_grad(out_grad.data * self.scalar, node._inputs[0])",
                "_grad(out_grad.data, node._inputs[0])",
            ),
        ),
    ),
    bug(
        "babygrad.ops.divide_scalar",
        "multiplies",
        OPS,
        (
            (
                "_grad(out_grad.data / self.scalar, node._inputs[0])",
                "_grad(out_grad.data * self.scalar, node._inputs[0])",
            ),
        ),
    ),
    bug(
        "babygrad.ops.power_scalar",
        "exponent-not-lowered",
        OPS,
        (("np.power(a.data, self.scalar - 1)", "np.power(a.data, self.scalar)"),),
    ),
    bug(
        "babygrad.tensor_ops",
        "sub-routed-to-add",
        TENSOR,
        (("return ops.sub(self, self._wrap(other))", "return ops.add(self, self._wrap(other))"),),
    ),
    bug(
        "babygrad.tensor_ops",
        "rtruediv-as-truediv",
        TENSOR,
        (
            (
                "return ops.mul_scalar(ops.power_scalar(self, -1), other)",
                "return ops.divide_scalar(self, other)",
            ),
        ),
    ),
    bug(
        "babygrad.tensor_ops",
        "radd-multiplies",
        TENSOR,
        (
            (
                "    def __radd__(self, other):\n        if isinstance(other, _SCALAR_TYPES):\n"
                "            return ops.add_scalar(self, other)",
                "    def __radd__(self, other):\n        if isinstance(other, _SCALAR_TYPES):\n"
                "            return ops.mul_scalar(self, other)",
            ),
        ),
    ),
    bug(
        "babygrad.tensor_ops",
        "rsub-reversed",
        TENSOR,
        (
            (
                "return ops.add_scalar(ops.negate(self), other)",
                "return ops.add_scalar(self, -other)",
            ),
        ),
    ),
    bug(
        "babygrad.broadcasting",
        "notes-style-equal-shapes-only",
        OPS,
        (
            (
                "return _grad(unbroadcast(g, a.shape), a), _grad(unbroadcast(g, b.shape), b)",
                "return _grad(g, a), _grad(g, b)",
            ),
            (
                "_grad(unbroadcast(g * b.data, a.shape), a),\n"
                "            _grad(unbroadcast(g * a.data, b.shape), b),",
                "_grad(g * b.data, a),\n            _grad(g * a.data, b),",
            ),
            (
                "return _grad(unbroadcast(g, a.shape), a), _grad(unbroadcast(-g, b.shape), b)",
                "return _grad(g, a), _grad(-g, b)",
            ),
            (
                "_grad(unbroadcast(g / b.data, a.shape), a),\n"
                "            _grad(unbroadcast(-g * a.data / (b.data * b.data), b.shape), b),",
                "_grad(g / b.data, a),\n            _grad(-g * a.data / (b.data * b.data), b),",
            ),
        ),
    ),
    bug(
        "babygrad.backward",
        "walks-forwards",
        TENSOR,
        (("for node in reversed(order):", "for node in order:"),),
    ),
    bug(
        "babygrad.backward",
        "revisits-shared-tensors",
        TENSOR,
        ((TENSOR_WALK, REVISITING_TENSOR_WALK),),
    ),
    bug(
        "babygrad.backward",
        "grad-on-leaves-only",
        TENSOR,
        (("            if node.requires_grad:\n", "            if node._op is None:\n"),),
    ),
    bug(
        "babygrad.backward",
        "ignores-grad-argument",
        TENSOR,
        (("        if grad is None:\n", "        if True:  # always ones, whatever grad is\n"),),
    ),
    bug(
        "babygrad.backward",
        "grads-tensors-not-requiring-grad",
        TENSOR,
        (
            (
                "            if node.requires_grad:\n"
                "                node.grad = "
                "Tensor(out_grad, requires_grad=False, dtype=node.dtype)\n",
                "            node.grad = Tensor(out_grad, requires_grad=False, dtype=node.dtype)\n",
            ),
            ("                if not parent.requires_grad:\n                    continue\n", ""),
        ),
    ),
    bug("babygrad.backward", "preorder-walk", TENSOR, ((TENSOR_WALK, PREORDER_TENSOR_WALK),)),
    bug(
        "babygrad.accumulate",
        "ledger-overwrites",
        TENSOR,
        (
            (
                "ledger[key] = part.data if key not in ledger else ledger[key] + part.data",
                "ledger[key] = part.data",
            ),
        ),
    ),
    bug(
        "babygrad.accumulate",
        "ledger-keeps-the-first",
        TENSOR,
        (
            (
                "ledger[key] = part.data if key not in ledger else ledger[key] + part.data",
                "ledger[key] = part.data if key not in ledger else ledger[key]",
            ),
        ),
    ),
    bug(  # right wherever each op hands back new arrays, as the reference's do
        "babygrad.accumulate",
        "sums-in-place",
        TENSOR,
        (
            ("        ledger = {id(self): grad.data}\n", "        ledger = {id(self): grad}\n"),
            (
                "node.grad = Tensor(out_grad, requires_grad=False, dtype=node.dtype)\n",
                "node.grad = out_grad\n",
            ),
            (
                "node._op.backward(Tensor(out_grad, requires_grad=False, dtype=None), node)",
                "node._op.backward(out_grad, node)",
            ),
            (
                "ledger[key] = part.data if key not in ledger else ledger[key] + part.data",
                "if key in ledger:\n"
                "                    ledger[key].data += part.data  # into the first one received\n"
                "                else:\n"
                "                    ledger[key] = part",
            ),
        ),
    ),
    bug(
        "babygrad.broadcasting",
        "pow-not-summed-back",
        OPS,
        (
            (
                "return _grad(unbroadcast(g * da, a.shape), a), "
                "_grad(unbroadcast(g * db, b.shape), b)",
                "return _grad(g * da, a), _grad(g * db, b)",
            ),
        ),
    ),
    bug(
        "babygrad.broadcasting",
        "pow-summed-to-the-other-shape",
        OPS,
        (("_grad(unbroadcast(g * db, b.shape), b)", "_grad(unbroadcast(g * db, a.shape), b)"),),
    ),
    bug(
        "babygrad.backward",
        "grads-an-output-not-requiring-grad",
        TENSOR,
        (("            if node.requires_grad:\n", "            if True:\n"),),
    ),
    bug(
        "babygrad.backward",
        "nothing-to-do-for-a-leaf",
        TENSOR,
        (
            (
                "        if grad is None:\n            grad = Tensor(np.ones_like",
                "        if self._op is None:\n            return  # a leaf: nothing to propagate\n"
                "        if grad is None:\n            grad = Tensor(np.ones_like",
            ),
        ),
    ),
    bug(
        "babygrad.ops.summation",
        "negative-axes-not-normalized",
        OPS,
        (("        summed = {axis % a.ndim for axis in summed}\n", ""),),
    ),
    bug(
        "babygrad.ops.relu",
        "passes-gradient-at-zero",
        OPS,
        (("out_grad.data * (a.data > 0)", "out_grad.data * (a.data >= 0)"),),
    ),
    bug(
        "babygrad.ops.abs",
        "divides-by-sign",
        OPS,
        (("out_grad.data * np.sign(a.data)", "out_grad.data / np.sign(a.data)"),),
    ),
    bug(
        "babygrad.ops.relu",
        "forward-into-its-input",
        OPS,
        (  # right value, right gradient (a > 0 where relu(a) > 0): only a's array is changed
            ("return np.where(a > 0, a, 0).astype(a.dtype)", "return np.maximum(a, 0, out=a)"),
        ),
    ),
    bug(
        "babygrad.ops.mul_scalar",
        "scales-out-grad-in-place",
        OPS,
        (  # right gradient, returned in out_grad's own array, changed
            (
                "return _grad(out_grad.data * self.scalar, node._inputs[0])",
                "out_grad.data *= self.scalar\n"
                "        return _grad(out_grad.data, node._inputs[0])",
            ),
        ),
    ),
]


def _reference_text(file: str, start: str, end: str) -> str:
    """The reference's text of ``file`` from ``start`` through ``end``."""
    text = (REFERENCE / file).read_text()
    first = text.index(start)
    return text[first : text.index(end, first) + len(end)]


TENSOR_BACKWARD = _reference_text(TENSOR, "        if grad is None:\n", "ledger[key] + part.data\n")
"""The reference's whole ``Tensor.backward`` body (its solution region)."""

WALK_WITHOUT_OPS = """        order, visited, stack = [], set(), [self]
        while stack:
            node = stack.pop()
            if id(node) not in visited:
                visited.add(id(node))
                order.append(node)
                stack.extend(node._inputs)
        for node in order:
            node.grad = Tensor(np.zeros_like(node.data), requires_grad=False)
        self.grad = Tensor(np.ones_like(self.data), requires_grad=False)
"""

DO_NOTHING_BACKWARDS = [
    bug("babygrad.backward", "pass", TENSOR, ((TENSOR_BACKWARD, "        pass\n"),)),
    bug(
        "babygrad.backward",
        "seeds-and-returns",
        TENSOR,
        (
            (
                TENSOR_BACKWARD,
                "        self.grad = Tensor(np.ones_like(self.data), "
                "requires_grad=False)\n        return\n",
            ),
        ),
    ),
    bug(
        "babygrad.backward",
        "walks-without-op-backward",
        TENSOR,
        ((TENSOR_BACKWARD, WALK_WITHOUT_OPS),),
    ),
]
"""``Tensor.backward`` bodies that do nothing, or nothing that propagates: they serve both
``babygrad.backward`` and ``babygrad.accumulate`` (one region), so each costs both items, all
their points, and is graded by its own test rather than in the catalogue of one-item bugs."""

CALLS_OP_BACKWARD_WRONG = [
    bug(
        "babygrad.backward",
        "single-gradient-not-wrapped",
        TENSOR,
        (("            if isinstance(parts, Tensor):\n                parts = (parts,)\n", ""),),
    ),
    bug(
        "babygrad.backward",
        "backward-given-the-root",
        TENSOR,
        (
            (
                "node._op.backward(Tensor(out_grad, requires_grad=False, dtype=None), node)",
                "node._op.backward(Tensor(out_grad, requires_grad=False, dtype=None), self)",
            ),
        ),
    ),
]
"""``Tensor.backward`` calling the ops' backward wrong: a one-input op's bare Tensor taken for
a tuple, or another tensor than the op's output given as ``node``. They serve both
``babygrad.backward`` and ``babygrad.accumulate`` (one region) and cost both, nothing else."""

STATE_BUGS = [
    Bug(
        "micrograd.topo",
        "module-level-visited-set",
        (
            Edit(MICRO, "def build_topo(root):\n", "VISITED = set()\n\n\ndef build_topo(root):\n"),
            Edit(
                MICRO,
                "    visited = {id(root)}\n    stack = [(root, iter(root._prev))]\n",
                "    visited = VISITED\n    visited.add(id(root))\n"
                "    stack = [(root, iter(root._prev))]\n",
            ),
        ),
    ),
    Bug(
        "babygrad.backward",
        "module-level-visited-set",
        (
            Edit(TENSOR, "\nclass Tensor:\n", "\nVISITED = set()\n\n\nclass Tensor:\n"),
            Edit(
                TENSOR,
                "        visited = {id(self)}\n",
                "        visited = VISITED\n        visited.add(id(self))\n",
            ),
        ),
    ),
]
"""A walk whose visited set lives at module level, so it keeps the ids of every walk before:
once those nodes are freed, new nodes that reuse their ids are skipped. Run alone, any example
gives the right answer; after earlier calls, nodes go missing. The walk's region serves two
items (``micrograd.topo`` and ``micrograd.deep``; ``babygrad.backward`` and
``babygrad.accumulate``), which it costs, and no other."""
STATE_BUG_ITEMS = {
    "micrograd.topo": {"micrograd.topo", "micrograd.deep"},
    "babygrad.backward": {"babygrad.backward", "babygrad.accumulate"},
}
"""The items each state bug's region serves."""

UNBROADCAST_BODY = _reference_text(
    OPS, "    shape = tuple(shape)\n", "return grad.reshape(shape)\n"
)
"""The reference's whole ``unbroadcast`` body (its solution region)."""

UNBROADCAST_BUGS = [
    bug(
        "babygrad.broadcasting",
        "unbroadcast-returns-zeros",
        OPS,
        ((UNBROADCAST_BODY, "    return np.zeros(shape, dtype=grad.dtype)\n"),),
    ),
    bug(
        "babygrad.broadcasting",
        "unbroadcast-returns-its-input",
        OPS,
        ((UNBROADCAST_BODY, "    return grad\n"),),
    ),
]
"""``unbroadcast`` gone wrong: its region serves ``babygrad.broadcasting`` and also every op
whose backward calls it (those items may lose too). Returning zeros sums nothing: the
operands broadcast beforehand are wrong as well, so ``babygrad.broadcasting`` is not gradable
and scores 0; returning its input is right where nothing needs summing and fails it."""

UNBROADCAST_CALLERS = {
    f"babygrad.ops.{op}" for op in ("add", "mul", "sub", "div", "pow", "broadcast_to", "matmul")
}
"""The items whose op's backward calls ``unbroadcast`` in the reference."""

CATALOGUE = {b.label: b for b in MICROGRAD_BUGS + BABYGRAD_BUGS}
"""Every planted bug, by label (``item:name``)."""

PAIRS = list(itertools.zip_longest(MICROGRAD_BUGS, BABYGRAD_BUGS))
"""The assignments are independent: one submission carries a micrograd bug and a babygrad bug."""


def pair_label(pair: tuple[Bug | None, Bug | None]) -> str:
    return "+".join(b.label for b in pair if b is not None)


GROWN = (
    "loop-to-condition",
    "in-place-out",
    "in-place-augment",
    "insert-sorted",
    "insert-reversed",
    "keep-state",
    "slice-drop-first",
    "slice-drop-last",
)
"""The operators issue 32 added, for mistakes the others could not make: the audit's
mutants of them are grown bugs as these are planted ones."""
