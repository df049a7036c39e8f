"""One op alone: its forward value, then its own backward for a chosen output gradient."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from grader.checks import bugs, untouched
from grader.checks.session import (
    GradingSession,
    NotGradable,
    remembers_verdict,
)
from grader.language import tape_snippets
from grader.language.assignments import MICROGRAD, Assignment
from grader.language.figures import graph_figure
from grader.language.graphs import (
    Graph,
    evaluate,
    expression,
    format_leaf,
    names,
)
from grader.language.snippets import array_literal
from grader.language.verdicts import Tolerance, WrongAnswer, mismatch
from grader.worker.answers import Change
from grader.worker.probes.untouched import OUT_GRAD
from grader.worker.protocol import Probe


def leaf_lines(graph: Graph, assignment: Assignment, var: Sequence[str]) -> list[str]:
    """``a = <leaf>`` for each leaf of ``graph``, named by ``var``, in the assignment's API."""
    return [
        f"{v} = {format_leaf(value, graph.kind, assignment.spelling)}"
        for v, value in zip(var, graph.leaves, strict=False)
    ]


def op_snippet(
    graph: Graph, out_grad: np.ndarray, assignment: Assignment, shown: Sequence[int] = ()
) -> str:
    """One op alone: forward, then only its own backward with a chosen output gradient, in
    the assignment's API. With ``shown`` (node numbers, ``OUT_GRAD``), what it prints at the
    end is those values instead: what the op was given, to see whether it changed them."""
    var = names(graph)
    leaves = leaf_lines(graph, assignment, var)
    given = ["out" if i == len(graph.leaves) else var[i] for i in shown if i != OUT_GRAD]
    if functions := assignment.functions:
        function = functions.class_source(graph.nodes[0].op)
        backward = (
            f"{function}.{functions.backward}(out.{functions.context}, {array_literal(out_grad)})"
        )
        body = [
            f"out = {function}.{functions.apply}({', '.join(var[: len(graph.leaves)])})",
            f"print({', '.join(untouched.value_source(assignment, v) for v in given)})"
            if shown
            else f"print(out.data, {backward})",
        ]
        if shown:
            body.insert(1, backward)
    elif graph.kind == "scalar":
        grads = ", ".join(f"{v}.grad" for v in var[: len(graph.leaves)])
        values = [untouched.value_source(assignment, v) for v in given]
        values += ["out.grad"] if OUT_GRAD in shown else []
        body = [
            f"out = {expression(graph, len(graph.leaves), 'micrograd', var)}",
            f"out.grad = {array_literal(out_grad)}",
            "out._backward()",
            f"print({', '.join(values)})" if shown else f"print(out.data, {grads})",
        ]
    elif (spelling := tape_snippets.spelling_of(assignment.api)) is not None:
        named = [*given, *(["g"] if OUT_GRAD in shown else [])]
        return tape_snippets.op_snippet(spelling, graph, out_grad, named)
    elif assignment.api.adapter:  # the op is recorded on its result: ask it there
        api = assignment.api
        body = [
            "import numpy as np",
            f"out = {expression(graph, len(graph.leaves), api, var)}",
            f"print({api.value_source('out')}, "
            f"out.{api.node_op}.{api.backward}(np.array({array_literal(out_grad)})))",
        ]
    else:
        api = assignment.api
        upstream = api.leaf_source(array_literal(out_grad), False)
        body = [
            f"op = {api.function_source(graph.nodes[0])}",
            f"out = op({', '.join(var[: len(graph.leaves)])})",
        ]
        if shown:
            values = [untouched.value_source(assignment, v) for v in given]
            values += [api.value_source("out_grad")] if OUT_GRAD in shown else []
            body += [
                f"out_grad = {upstream}",
                f"grads = op.{api.backward}(out_grad, out)",
                f"print({', '.join(values)})",
            ]
        else:
            body += [
                f"grads = op.{api.backward}({upstream}, out)",
                f"print({api.value_source('out')}, grads)",
            ]
    return "\n".join([assignment.imports, *leaves, *body])


def op_names(graph: Graph, assignment: Assignment) -> untouched.Names:
    """What one op alone is given, and its forward and backward, as the feedback names them."""
    var = names(graph)[: len(graph.leaves)]
    out_grad = "out.grad" if graph.kind == "scalar" else "out_grad"
    return untouched.Names(
        [*(f"its input {v}" for v in var), "its output out"],
        out_grad,
        lambda change: _call(graph, assignment, change.phase),
    )


def _call(graph: Graph, assignment: Assignment, phase: str) -> str:
    """The call of ``phase`` (forward or backward) of the op alone, as the course names it:
    asked only of a change found (an adapter's op may have no class to name)."""
    op = graph.nodes[0].op
    if functions := assignment.functions:
        return f"{functions.classes[op]}.{getattr(functions, phase)}"
    if graph.kind == "scalar":
        applied = expression(graph, len(graph.leaves), "micrograd", names(graph))
        return applied if phase == "forward" else f"the _backward of out = {applied}"
    return f"{assignment.api.class_name(op)}.{getattr(assignment.api, phase)}"


PHASES = ("forward", "backward")
"""The calls an op is made of, named as the course's API names its methods."""


def judge_untouched(
    found: Sequence[Change],
    graph: Graph,
    out_grad: np.ndarray,
    assignment: Assignment,
) -> None:
    """The op left what it was given as it found it (``untouched``), else a verdict whose
    snippet prints those values."""
    shown = sorted({change.target for change in found})
    untouched.fail(
        found, op_names(graph, assignment), op_snippet(graph, out_grad, assignment, shown)
    )


@remembers_verdict
def check_op(session: GradingSession, graph: Graph, out_grad: np.ndarray) -> None:
    """One op alone: its forward value, then its own backward for ``out_grad``; its forward
    alone where the course gives its forward that parameter, never its gradient
    (``Domain.forward_only``: needle's summation over one int axis)."""
    node = graph.nodes[0]
    domain = session.profile.of(session.assignment(graph.kind).name).domain
    if domain.forward_only(node.op, node.param):
        judge_forward(session, graph, out_grad)
    else:
        judge_op(session, graph, out_grad)


FORWARD_ONLY = (
    "Here the op is given its parameter as the course's own tests give its forward alone "
    "(summation(x, axes=1): one axis, an int); no gradient is asked of it."
)
"""Said where an op goes wrong on a parameter the course specifies for its forward alone."""


def forward_snippet(graph: Graph, assignment: Assignment) -> str:
    """One op of a tensor course's op classes, its forward alone: printing its value."""
    api = assignment.api
    var = names(graph)[: len(graph.leaves)]
    leaves = leaf_lines(graph, assignment, var)
    applied = f"out = {api.function_source(graph.nodes[0])}({', '.join(var)})"
    return "\n".join([assignment.imports, *leaves, applied, f"print({api.value_source('out')})"])


def judge_forward(session: GradingSession, graph: Graph, out_grad: np.ndarray) -> None:
    """``check_op``'s forward alone, judged by the grader's own evaluator."""
    own = session.assignment(graph.kind)
    snippet = forward_snippet(graph, own)
    case = {"graph": graph.to_json(), "out_grad": out_grad.tolist(), "forward_only": True}
    try:
        answer = session.ask(own.name, Probe.OP, case, snippet)
    except WrongAnswer as failure:  # their forward raised on it
        failure.details = [*failure.details, FORWARD_ONLY]
        raise
    judge_untouched(answer.changed, graph, out_grad, own)
    value = answer.value
    tol = session.oracles.tolerance(session.tolerances[own.name], graph)
    if wrong := mismatch("forward: out.data", value, evaluate(graph)[-1], tol):
        raise WrongAnswer("failed", "wrong forward value", [wrong, FORWARD_ONLY], snippet)


def judge_op(session: GradingSession, graph: Graph, out_grad: np.ndarray) -> None:
    """``check_op``'s verdict, not recorded on the running test (``check_kink`` asks it of an
    example of its own first)."""
    expected = session.oracles.expected(graph, out_grad)
    assignment = session.assignment(graph.kind).name
    snippet = op_snippet(graph, out_grad, session.assignment(graph.kind))
    try:
        answer = session.ask(
            assignment, Probe.OP, {"graph": graph.to_json(), "out_grad": out_grad.tolist()}, snippet
        )
    except WrongAnswer as failure:  # their code raised: a classic bug may raise just so
        failure.bugs = bugs.diagnose_op_error(graph, out_grad, failure.reason, failure.details)
        raise
    judge_untouched(answer.changed, graph, out_grad, session.assignment(graph.kind))
    var = names(graph)[: len(graph.leaves)]
    value, grads = answer.value, answer.grads
    tol = session.oracles.tolerance(session.tolerances[assignment], graph)
    wrong = mismatch("forward: out.data", value, expected.values[-1], tol)
    wrong_grads = [
        m
        for v, got, exp in zip(var, grads, expected.grads, strict=True)
        if (m := mismatch(f"backward: gradient for {v}", got, exp, tol))
    ]
    if (wrong or wrong_grads) and not session.oracles.confirmed(graph, out_grad, expected):
        return

    def draw() -> dict:
        return graph_figure(
            graph,
            expected.values,
            [*graph.leaves, value],
            [*expected.grads, out_grad],
            [*grads, out_grad],
            tol,
        )

    if wrong:
        raise WrongAnswer("failed", "wrong forward value", [wrong], snippet, draw=draw)
    if wrong_grads:
        found = bugs.diagnose_op(graph, out_grad, grads, tol)
        raise WrongAnswer("failed", "wrong gradient in backward", wrong_grads, snippet, found, draw)
    if graph.kind == "scalar" and not session.assignment("scalar").functions:
        _check_prev(answer.prev, graph, var)


KINK_GRADIENT = 0.0
"""The gradient relu and abs pass back where their operand is exactly 0, their kink: none,
PyTorch's, and charged only where the course's profile quotes the course's words for it
(``kinks: zero``). Finite differences straddle the kink and cannot confirm it, so no oracle is
asked: this is the value the course's text gives, not a derivative the grader computes."""
EXACT = Tolerance(0.0, 0.0)


def away_from_kink(graph: Graph) -> Graph:
    """The same op with each exact 0 of its operand replaced by 1.5 or -1.5 (alternately, the
    first positive): where the op is smooth and the oracles can judge it."""
    (x,) = graph.leaves
    sides = np.where(np.arange(x.size) % 2 == 0, 1.5, -1.5).reshape(x.shape)
    return Graph(graph.kind, (np.where(x == 0, sides, x),), graph.nodes)


@remembers_verdict
def check_kink(session: GradingSession, graph: Graph, out_grad: np.ndarray) -> None:
    """An op with a kink at 0 (micrograd's relu, babygrad's relu and abs) on an operand that
    is exactly 0 (or -0.0), which ``op_cases`` never draws: its forward value (the grader's own
    evaluator), then its own backward for ``out_grad`` (never 0), which must be exactly
    ``KINK_GRADIENT`` on every element, the convention the course's words give (quoted in the
    feedback from its profile's ``conventions: kinks``).

    No gradient at all is that convention's answer, so an op that does nothing would earn it:
    the same op away from its kink (``away_from_kink``) runs first and must match the oracles,
    else this example is not gradable until it does (``NotGradable``)."""
    try:
        judge_op(session, away_from_kink(graph), out_grad)
    except WrongAnswer:
        if session.failures.get(session.current_test) is not None:
            return  # shrinking a failure found before: this example is simply not it
        raise NotGradable((f"{session.current_item} (away from 0)",)) from None
    assignment = session.assignment(graph.kind).name
    snippet = op_snippet(graph, out_grad, session.assignment(graph.kind))
    answer = session.ask(
        assignment, Probe.OP, {"graph": graph.to_json(), "out_grad": out_grad.tolist()}, snippet
    )
    judge_untouched(answer.changed, graph, out_grad, session.assignment(graph.kind))
    (x,) = graph.leaves
    value, (grad,) = answer.value, answer.grads
    if wrong := mismatch(
        "forward: out.data", value, evaluate(graph)[-1], session.tolerances[assignment]
    ):
        raise WrongAnswer("failed", "wrong forward value at 0", [wrong], snippet)
    if wrong := mismatch("backward: gradient for a", grad, np.full(x.shape, KINK_GRADIENT), EXACT):
        assignment_of_kind = session.assignment(graph.kind)
        if graph.kind == "tensor":
            applied = assignment_of_kind.api.function_source(graph.nodes[0])
        elif functions := assignment_of_kind.functions:
            applied = functions.class_source(graph.nodes[0].op)
        else:
            applied = "relu"
        words = session.profile.of(assignment).convention("kinks").words
        raise WrongAnswer(
            "failed",
            "wrong gradient at 0",
            [wrong, f"{applied} passes no gradient where its operand is exactly 0.", words],
            snippet,
        )


def _check_prev(prev: tuple[int, ...] | None, graph: Graph, var: list[str]) -> None:
    """A micrograd result records its operands in ``_prev`` (a tuple, list or set: any order),
    or no walk ever reaches them (``prev``: as node numbers; None where the answer sent none)."""
    snippet = "\n".join(
        [
            MICROGRAD.imports,
            *(f"{v} = {format_leaf(x, 'scalar')}" for v, x in zip(var, graph.leaves, strict=True)),
            f"out = {expression(graph, len(graph.leaves), 'micrograd', var)}",
            f"print({', '.join(f'any(p is {v} for p in out._prev)' for v in var)})",
        ]
    )
    if prev is None:
        raise WrongAnswer("error", "invalid answer: out._prev", [], snippet)
    lost = [v for i, v in enumerate(var) if i not in prev]
    if lost:
        raise WrongAnswer(
            "failed",
            "the result does not record its operands in _prev",
            [
                f"out._prev must hold {', '.join(var)} (the very objects): "
                f"{', '.join(lost)} {'is' if len(lost) == 1 else 'are'} not in it"
            ],
            snippet,
        )
