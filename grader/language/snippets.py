"""Runnable counterexamples in the student's own API.

A graph's snippet builds it with the very lines the worker executed (``build_lines``), so what
the student runs is what was graded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from grader.language import tape_snippets
from grader.language.assignments import MICROGRAD, Assignment
from grader.language.dags import Dag
from grader.language.graphs import Graph, build_lines, names
from grader.language.tensor_api import TensorApi


def array_literal(value: np.ndarray) -> str:
    """A float or a nested list, as a snippet spells an array."""
    return repr(float(value)) if value.ndim == 0 else repr(value.tolist())


@dataclass(frozen=True)
class GraphText:
    """A graph as the student's API writes it, read once for every verdict about it: the
    snippet that builds it, walks it and prints the leaves' gradients (``source``), each
    node's variable (``names``) and the line of the course's API that makes it (``lines``),
    the line that walks it (``walk``), and each node's gradient as the snippet reads it
    (``gradients``: ``a.grad``, MiniTorch's ``a.derivative``, or a tape's entry)."""

    source: str
    names: tuple[str, ...]
    lines: tuple[str, ...]
    walk: str
    gradients: tuple[str, ...]


def graph_text(graph: Graph, assignment: Assignment) -> GraphText:
    """``graph`` in ``assignment``'s API, every part a verdict shows made here at once: the
    snippet builds it, calls ``backward()`` on the output and prints every leaf's gradient (a
    tape's: records each op, walks the tape, ``grader.language.tape_snippets``)."""
    var = names(graph)
    lines = build_lines(graph, assignment.spelling, var)
    if graph.kind == "tensor" and (spelling := tape_snippets.spelling_of(assignment.api)):
        source, walk, gradients = tape_snippets.graph_snippet(spelling, graph, var)
        return GraphText(source, tuple(var), tuple(lines), walk, tuple(gradients))
    walk = f"{var[graph.output]}.backward()"
    leaves = ", ".join(_grad_source(v, assignment) for v in var[: len(graph.leaves)])
    source = "\n".join([assignment.imports, *lines, walk, f"print({leaves})"])
    grad = assignment.functions.derivative if assignment.functions else "grad"
    return GraphText(source, tuple(var), tuple(lines), walk, tuple(f"{v}.{grad}" for v in var))


def graph_snippet(graph: Graph, assignment: Assignment) -> str:
    """``graph_text``'s snippet alone."""
    return graph_text(graph, assignment).source


def _grad_source(var: str, assignment: Assignment) -> str:
    """A leaf's gradient, as the assignment's API reads it."""
    if functions := assignment.functions:
        return f"{var}.{functions.derivative}"
    return (
        f"{var}.grad" if assignment.kind == "scalar" else assignment.api.grad_source(f"{var}.grad")
    )


RECORDING = """made = []  # every Value, in the order it is made
init = Value.__init__
def recording(self, *args, **kwargs):
    init(self, *args, **kwargs)
    made.append(self)
Value.__init__ = recording"""
"""A snippet's record of every ``Value`` its build makes, as the grader records them: until
``Value.__init__ = init``."""


DAG_HELPER = '''def given(out, *pairs):
    """The grader's node: its _backward adds weight * out.grad into each operand."""
    def _backward():
        for operand, weight in pairs:
            operand.grad += weight * out.grad
    out._backward = _backward
    return out'''


def dag_snippet(dag: Dag, call: str) -> str:
    """A grader-made micrograd graph (known-correct closures), then ``call`` on its root. It
    imports the engine's functions ``call`` uses: an API without them (Karpathy's micrograd has
    no module-level ``build_topo`` or ``zero_grad``) still runs the snippet."""
    used = [name for name in ("build_topo", "zero_grad") if f"{name}(" in call]
    lines = [MICROGRAD.imports.replace("Value", ", ".join(["Value", *used])), DAG_HELPER]
    lines += [f"n{i} = Value({1.0 + i})" for i in range(dag.leaves)]
    for k, pairs in enumerate(dag.nodes):
        index = dag.leaves + k
        operands = ", ".join(f"n{i}" for i, _ in pairs)
        weights = ", ".join(f"(n{i}, {w})" for i, w in pairs)
        lines.append(f"n{index} = given(Value(0.0, ({operands},)), {weights})")
    lines.append(call.format(root=f"n{dag.size - 1}"))
    return "\n".join(lines)


def tensor_helper(api: TensorApi, hands_back: bool = False, tuples: bool = False) -> str:
    """The grader's op, a subclass of the course's op base class (``hands_back``: it hands
    ``out_grad`` itself to every input of weight 1, as Add does; ``tuples``: one made
    ``as_tuple=True`` hands its one input's gradient back as a 1-tuple)."""
    upstream = api.value_source("out_grad")
    part = api.leaf_source(f"w * {upstream}", False)
    if hands_back:
        part = f"out_grad if w == 1 else {part}"
    single = (
        "parts[0] if len(parts) == 1 else tuple(parts)  # one input: a bare Tensor"
        if not tuples
        else "tuple(parts) if len(parts) > 1 or self.as_tuple else parts[0]"
    )
    init = (
        "def __init__(self, *weights):\n        self.weights = weights"
        if not tuples
        else "def __init__(self, *weights, as_tuple=False):\n"
        "        self.weights = weights\n"
        "        self.as_tuple = as_tuple  # one input: a 1-tuple, as the course's ops may return"
    )
    return f'''class Given({api.function}):
    """The grader's op: out = sum of weight * input; backward is exact."""
    ran = []  # the tensors whose backward ran, in order
    {init}
    def {api.forward}(self, *arrays):
        return sum(w * a for w, a in zip(self.weights, arrays))
    def {api.backward}(self, out_grad, node):
        if node.{api.node_op} is not self:
            raise ValueError("backward was called with a tensor that is not this op's output")
        Given.ran.append(node)
        parts = [{part} for w in self.weights]
        return {single}'''


def tensor_imports(api: TensorApi) -> str:
    return "\n".join(
        [
            "import numpy as np",
            f"from {api.package} import Tensor",
            f"from {api.package}.ops import {api.function}",
        ]
    )


def tensor_dag_snippet(
    api: TensorApi,
    dag: Dag,
    shape: tuple[int, ...],
    frozen: Sequence[int] = (),
    grad: np.ndarray | None = None,
    order: bool = False,
    wrap_leaves: bool = False,
    hands_back: bool = False,
    tuples: Sequence[int] = (),
) -> str:
    """A grader-made babygrad graph (known-correct ops), then ``Tensor.backward`` (with
    ``grad`` if given); the leaves in ``frozen`` do not require grad; ``wrap_leaves``: each
    leaf is ``Given(1.0)`` of a tensor; ``hands_back``: ops hand ``out_grad`` itself back
    (``tensor_helper``); the ops of one input at the node indices ``tuples`` hand their
    gradient back as a 1-tuple (``Dag.tuple_singles``). ``order``: also print which tensors'
    backward ran, in order (as node numbers). A tape records the grader's ops and walks
    (``tape_snippets.dag_snippet``)."""
    if (spelling := tape_snippets.spelling_of(api)) is not None:
        return tape_snippets.dag_snippet(spelling, dag, shape, grad, order, wrap_leaves, hands_back)
    lines = [tensor_imports(api), tensor_helper(api, hands_back, bool(tuples))]

    def given(index: int, weights: str) -> str:
        return f"Given({weights}, as_tuple=True)" if index in tuples else f"Given({weights})"

    for i in range(dag.leaves):
        leaf = api.leaf_source(f"np.full({shape}, {1.0 + i})", i not in frozen)
        lines.append(f"n{i} = {given(i, '1.0')}({leaf})" if wrap_leaves else f"n{i} = {leaf}")
    for k, pairs in enumerate(dag.nodes):
        weights = ", ".join(str(w) for _, w in pairs)
        operands = ", ".join(f"n{i}" for i, _ in pairs)
        lines.append(f"n{dag.leaves + k} = {given(dag.leaves + k, weights)}({operands})")
    root = f"n{dag.size - 1}"
    upstream = (
        "" if grad is None else api.leaf_source(f"np.array({np.asarray(grad).tolist()!r})", False)
    )
    lines += [f"{root}.backward({upstream})", f"print([n.grad for n in (n0, {root})])"]
    if order:
        nodes = ", ".join(f"n{i}" for i in range(dag.size))
        lines += [
            f"nodes = [{nodes}]",
            "print([next(i for i, m in enumerate(nodes) if m is n) for n in Given.ran])",
        ]
    return "\n".join(lines)
