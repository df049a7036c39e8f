"""Runnable counterexamples for a course graded through an adapter whose walk is a tape (CMU
11-785's mytorch), in the course's own words: its profile's ``api: snippets``, data the
trusted side reads without running the adapter (``grader.language.adapters``).

Its keys are templates: ``imports``, ``leaf`` (``{data}``), ``forwards`` (op -> ``{0}``,
``{1}``), ``backwards`` (op -> the function that gives its inputs' gradients, called as
``backward(grad_output, *inputs)``), ``given`` (op -> the source of a backward the course
gives, defined in the snippet where used), ``tape`` (``{buffer}``: the ``buffer`` key, the
expression that finds the ledger on the tape), ``record`` (``{inputs}``, ``{out}``,
``{updates}``, ``{backward}``), ``parameter`` (``{name}``: the array a parameter's gradient
is routed into), ``walk`` (``{out_grad}``), ``grad`` (``{tensor}``), and for a ledger apart
from the walk ``ledger`` (a line that names it), ``add`` (``{tensor}``, ``{grad}``) and
``get`` (``{tensor}``), and optionally ``answer``: an expression over ``grads`` (each input's
gradient, in order) that is what a backward returns in this course (default: the list),
``walker``: what the feedback calls the walk (default: ``Tensor.backward``),
``ledger_name``: what it calls a ledger apart (default: ``the ledger``), and ``value``
(``{tensor}``): a tensor's numbers as a snippet prints them (``TensorApi.value_source``). The
adapter reads the same keys (``adapters.load_adapter``): each is spelled once, for the
snippets and the grading. What the snippets build is what the adapter records: every op in the
order it was made, every second leaf the tape meets a parameter (the adapter's ``record``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from grader.language.dags import Dag
from grader.language.graphs import Graph, names
from grader.language.tensor_api import TensorApi

Spelling = Mapping[str, Any]


def spelling_of(api: TensorApi | None) -> Spelling | None:
    """How ``api`` spells a tape's snippets (None: its profile spells none)."""
    return api.snippets if api is not None and api.snippets else None


WALKER = "Tensor.backward"
"""What the feedback calls a tensor course's walk where its adapter names none."""


LEDGER = "the ledger"
"""What the feedback calls a ledger apart from the walk where the snippets name none."""


def walker_name(api: TensorApi | None) -> str:
    """What the feedback calls a tensor course's walk: its snippets may name it (``walker``:
    11-785's ``Autograd.backward``), else ``Tensor.backward``."""
    spelling = spelling_of(api)
    return spelling.get("walker", WALKER) if spelling is not None else WALKER


def array_literal(value: np.ndarray) -> str:
    return repr(float(value)) if np.ndim(value) == 0 else repr(np.asarray(value).tolist())


def _array(spelling: Spelling, value: np.ndarray) -> str:
    return spelling["leaf"].format(data=array_literal(value))


class Tape:
    """The lines of one snippet: leaves, ops recorded as made, parameters as the tape meets
    them."""

    def __init__(self, spelling: Spelling) -> None:
        self.spelling = spelling
        self.lines: list[str] = [spelling["imports"]]
        self.helpers: list[str] = []
        self.body: list[str] = [spelling["tape"].format(buffer=spelling.get("buffer", ""))]
        self.outputs: set[str] = set()
        self.leaves: list[str] = []
        self.parameters: set[str] = set()

    def backward(self, op: str) -> str:
        """The function that gives ``op``'s gradients: the student's, or the course's given
        one, defined in the snippet."""
        given = self.spelling.get("given", {}).get(op)
        if given is not None and given not in self.helpers:
            self.helpers.append(given)
        return self.spelling["backwards"][op]

    def record(self, out: str, inputs: Sequence[str], backward: str) -> None:
        updates = []
        for name in inputs:
            if name not in self.outputs and name not in self.leaves:
                self.leaves.append(name)
                if len(self.leaves) % 2 == 0:
                    self.parameters.add(name)
                    self.body.append(self.spelling["parameter"].format(name=name))
            updates.append(self.parameter(name) if name in self.parameters else "None")
        self.outputs.add(out)
        self.body.append(
            self.spelling["record"].format(
                inputs=", ".join(inputs), out=out, updates=", ".join(updates), backward=backward
            )
        )

    def parameter(self, name: str) -> str:
        """The array ``name``'s gradient is routed into (the ``parameter`` line's target)."""
        return self.spelling["parameter"].format(name=name).split("=")[0].strip()

    def grad(self, name: str) -> str:
        return (
            self.parameter(name)
            if name in self.parameters
            else self.spelling["grad"].format(tensor=name)
        )

    def text(self) -> str:
        return "\n".join([*self.lines, *self.helpers, *self.body])


def op_snippet(
    spelling: Spelling,
    graph: Graph,
    out_grad: np.ndarray,
    shown: Sequence[str] = (),
    comment: str = "",
) -> str:
    """One op alone: its forward, then its backward function with a chosen gradient, as the
    course's tests call it; with ``shown``, those variables printed after it instead (what
    the op was given, to see whether it changed them)."""
    tape = Tape(spelling)
    var = names(graph)
    node = graph.nodes[0]
    inputs = [var[a] for a in node.args]
    tape.body = [
        f"{v} = {_array(spelling, value)}" for v, value in zip(var, graph.leaves, strict=False)
    ]
    tape.body.append(f"out = {spelling['forwards'][node.op].format(*inputs)}")
    tape.body.append(f"g = {_array(spelling, out_grad)}{comment}")
    call = f"{tape.backward(node.op)}(g, {', '.join(inputs)})"
    if shown:
        tape.body += [call, f"print({', '.join(shown)})"]
    else:
        tape.body.append(f"print(out, {call})")
    return tape.text()


def graph_snippet(
    spelling: Spelling, graph: Graph, var: Sequence[str]
) -> tuple[str, str, list[str]]:
    """Build with the forwards, record every op on the tape as it is made, walk it from the
    output, print every leaf's gradient, each node named by ``var``: the snippet, its line that
    walks the tape, and how it reads each node's gradient (a parameter's array, else the
    buffer's entry), for a verdict to name a gradient as the snippet prints it."""
    tape = Tape(spelling)
    tape.body += [
        f"{v} = {_array(spelling, value)}" for v, value in zip(var, graph.leaves, strict=False)
    ]
    for index, node in enumerate(graph.nodes, len(graph.leaves)):
        inputs = [var[a] for a in node.args]
        tape.body.append(f"{var[index]} = {spelling['forwards'][node.op].format(*inputs)}")
        tape.record(var[index], inputs, tape.backward(node.op))
    walk = spelling["walk"].format(out_grad=f"np.ones_like({var[graph.output]})")
    gradients = [tape.grad(v) for v in var]
    tape.body += [walk, f"print({', '.join(gradients[: len(graph.leaves)])})"]
    return tape.text(), walk, gradients


def given_helper(spelling: Spelling, hands_back: bool) -> str:
    """The grader's op as the tape records it: a backward giving each input its weight times
    the output's gradient (``hands_back``: the gradient itself where the weight is 1, as
    add_backward may hand it back), answered as the course's backwards answer."""
    part = "grad_output if w == 1 else w * grad_output" if hands_back else "w * grad_output"
    return f'''ran = []  # the grader's ops whose backward ran, in order (node numbers)
def given(index, *weights):
    """The grader's op n<index>: out = sum of weight * input; its backward is exact."""
    def backward(grad_output, *inputs):
        ran.append(index)
        grads = [{part} for w in weights]
        return {spelling.get("answer", "grads")}
    return backward'''


def _dag_nodes(
    tape: Tape, dag: Dag, shape: tuple[int, ...], wrap_leaves: bool, record: bool
) -> list[str]:
    """The grader's graph on the tape (``record``) or only built: every node's name."""
    nodes = []
    for i in range(dag.leaves):
        leaf = f"np.full({shape}, {1.0 + i})"
        if wrap_leaves:
            tape.body.append(f"l{i} = {leaf}")
            tape.body.append(f"n{i} = 1.0 * l{i}")
            if record:
                tape.record(f"n{i}", [f"l{i}"], f"given({i}, 1.0)")
        else:
            tape.body.append(f"n{i} = {leaf}")
        nodes.append(f"n{i}")
    for index, pairs in enumerate(dag.nodes, dag.leaves):
        total = " + ".join(f"{w} * n{i}" for i, w in pairs)
        tape.body.append(f"n{index} = {total}")
        if record:
            weights = ", ".join(str(w) for _, w in pairs)
            tape.record(f"n{index}", [f"n{i}" for i, _ in pairs], f"given({index}, {weights})")
        nodes.append(f"n{index}")
    return nodes


def dag_gradients(
    api: TensorApi, dag: Dag, wrap_leaves: bool = False, ledger: bool = False
) -> list[str]:
    """How the snippets of a walk item read each node's gradient, so that a verdict names it
    as the snippet prints it: ``n0.grad`` where ``api`` spells no snippets; else as
    ``dag_snippet`` does (a parameter's array, else the buffer's entry) or, with ``ledger``
    where a ledger apart is spelled, as ``ledger_snippet`` does (its entry)."""
    spelling = spelling_of(api)
    if spelling is None:
        return [f"n{i}.grad" for i in range(dag.size)]
    if ledger and "ledger" in spelling:
        return [spelling["get"].format(tensor=f"n{i}") for i in range(dag.size)]
    tape = Tape(spelling)
    return [tape.grad(n) for n in _dag_nodes(tape, dag, (1,), wrap_leaves, record=True)]


def ledger_name(api: TensorApi) -> str:
    """What the feedback calls a ledger apart from the walk (``ledger_name``)."""
    spelling = spelling_of(api)
    return spelling.get("ledger_name", LEDGER) if spelling is not None else LEDGER


def dag_snippet(
    spelling: Spelling,
    dag: Dag,
    shape: tuple[int, ...],
    grad: np.ndarray | None = None,
    order: bool = False,
    wrap_leaves: bool = False,
    hands_back: bool = False,
) -> str:
    """The grader's ops (exact backwards) recorded on the student's tape, then the student's
    walk (with ``grad`` if given, else ones): every tensor's gradient but the output's, and
    with ``order`` which ops' backward ran, in order."""
    tape = Tape(spelling)
    tape.helpers.append(given_helper(spelling, hands_back))
    nodes = _dag_nodes(tape, dag, shape, wrap_leaves, record=True)
    upstream = f"np.ones({shape})" if grad is None else _array(spelling, np.asarray(grad))
    tape.body.append(spelling["walk"].format(out_grad=upstream))
    tape.body.append(f"print([{', '.join(tape.grad(n) for n in nodes[:-1])}])")
    if order:
        tape.body.append("print(ran)")
    return tape.text()


def ledger_snippet(
    spelling: Spelling,
    dag: Dag,
    shape: tuple[int, ...],
    wrap_leaves: bool = False,
    hands_back: bool = False,
) -> str:
    """The grader's walk over the grader's ops, summing into the student's ledger: each op's
    backward once, newest first, its inputs' gradients added; every tensor's entry printed."""
    tape = Tape(spelling)
    nodes = _dag_nodes(tape, dag, shape, wrap_leaves, record=False)
    operands = {
        index: [(f"n{i}", w) for i, w in pairs] for index, pairs in enumerate(dag.nodes, dag.leaves)
    }
    if wrap_leaves:
        operands.update({i: [(f"l{i}", 1.0)] for i in range(dag.leaves)})
    tape.body.append(spelling["ledger"])
    tape.body.append("# the grader's walk: each op's backward once, newest first, into your ledger")
    root = dag.size - 1
    for index in range(root, -1, -1):
        if index not in operands:
            continue
        source = (
            f"np.ones({shape})" if index == root else spelling["get"].format(tensor=f"n{index}")
        )
        tape.body.append(f"g = {source}  # what reached n{index}")
        for name, w in operands[index]:
            part = "g" if hands_back and w == 1.0 else f"{w} * g"
            tape.body.append(spelling["add"].format(tensor=name, grad=part))
    entries = ", ".join(spelling["get"].format(tensor=n) for n in nodes[:-1])
    tape.body.append(f"print([{entries}])")
    return tape.text()


def diamonds_snippet(spelling: Spelling, depth: int) -> str:
    """``depth`` diamonds of the grader's ops on the tape (n0 the leaf, then left, right and
    their mean on each level), walked: which ops' backward ran, in order."""
    tape = Tape(spelling)
    tape.helpers.append(given_helper(spelling, False))
    record = spelling["record"]
    tape.body += [
        "nodes = [np.ones(1)]",
        f"for _ in range({depth}):",
        "    top, k = nodes[-1], len(nodes)",
        "    left, right = 1.0 * top, 1.0 * top",
        "    " + record.format(inputs="top", out="left", updates="None", backward="given(k, 1.0)"),
        "    "
        + record.format(inputs="top", out="right", updates="None", backward="given(k + 1, 1.0)"),
        "    nodes += [left, right, 0.5 * left + 0.5 * right]",
        "    "
        + record.format(
            inputs="left, right",
            out="nodes[-1]",
            updates="None, None",
            backward="given(k + 2, 0.5, 0.5)",
        ),
        spelling["walk"].format(out_grad="np.ones(1)"),
        "print(ran)",
    ]
    return tape.text()
