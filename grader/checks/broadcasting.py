"""Implicit broadcasting: the reduction of gradients back to each operand's shape, alone."""

from __future__ import annotations

import numpy as np

from grader.checks import bugs
from grader.checks.session import GradingSession, NotGradable, remembers_verdict
from grader.language import tape_snippets
from grader.language.assignments import BABYGRAD
from grader.language.graphs import (
    BABYGRAD_OP_ITEMS,
    Graph,
    Node,
    expression,
    format_leaf,
    function_source,
    names,
)
from grader.language.snippets import array_literal
from grader.language.tensor_api import TensorApi
from grader.language.verdicts import WrongAnswer, mismatch
from grader.worker.protocol import Probe


def broadcast_snippet(graph: Graph, out_grad: np.ndarray, api: TensorApi | None = None) -> str:
    """One elementwise op on operands of different shapes, then on the same operands broadcast
    beforehand: the first gradients should be the second ones summed back to each shape. A
    course graded through an adapter asks the op recorded on the result, in its own API."""
    if (spelling := tape_snippets.spelling_of(api)) is not None:
        shapes = f"  # shape {out_grad.shape}; operands {[v.shape for v in graph.leaves]}"
        return tape_snippets.op_snippet(spelling, graph, out_grad, comment=shapes)
    var = names(graph)
    own = api if api is not None and api.adapter else None
    head = [
        "import numpy as np",
        own.imports if own else BABYGRAD.imports,
        *(
            f"{v} = {format_leaf(value, 'tensor', own or 'tensor')}  # shape {value.shape}"
            for v, value in zip(var, graph.leaves, strict=False)
        ),
    ]
    if own is not None:
        return "\n".join(
            [
                *head,
                f"out = {expression(graph, len(graph.leaves), own, var)}",
                f"g = np.array({array_literal(out_grad)})  # shape {out_grad.shape}",
                "# each gradient, summed back to its input's shape, should be g's share of it",
                f"print(out.{own.node_op}.{own.backward}(g))",
            ]
        )
    a, b = var[:2]
    op = function_source(graph.nodes[0])
    return "\n".join(
        [
            *head,
            f"g = Tensor({array_literal(out_grad)}, requires_grad=False)  # shape {out_grad.shape}",
            f"op = {op}",
            f"grads = op.backward(g, op({a}, {b}))",
            "# the same op on operands broadcast beforehand; summed back, these are what grads "
            "should be",
            f"full = {op}",
            f"wide = [Tensor(np.broadcast_to(x.data, g.shape), requires_grad=True) "
            f"for x in ({a}, {b})]",
            "full_grads = full.backward(g, full(*wide))",
            "print([x.data.shape for x in grads], [x.data.shape for x in full_grads])",
            "print(grads, full_grads)",
        ]
    )


BROADCAST_OP_ITEMS = {op: item for item, op in BABYGRAD_OP_ITEMS.items()}
"""Each elementwise op's rubric item suffix (``babygrad.ops.<item>``): it grades the formulas."""


def widened(graph: Graph, shape: tuple[int, ...]) -> Graph:
    """The same op on its operands broadcast to ``shape`` beforehand: nothing to sum back."""
    return Graph(graph.kind, tuple(np.broadcast_to(v, shape) for v in graph.leaves), graph.nodes)


def generic(graph: Graph) -> Graph:
    """The same op on operands of the same shapes holding fixed, distinct values inside every
    elementwise op's domain (bases and divisors positive): an op wrong there is wrong, whatever
    values the drawn example shrank to (``a ** a`` and ``a ** b`` agree where ``a == b``)."""
    return Graph(
        graph.kind,
        tuple(
            np.linspace(0.6 + 0.5 * i, 1.7 + 0.4 * i, max(v.size, 1)).reshape(v.shape)
            for i, v in enumerate(graph.leaves)
        ),
        graph.nodes,
    )


def _beforehand(
    session: GradingSession, graph: Graph, out_grad: np.ndarray
) -> list[np.ndarray] | bool:
    """The op on its operands broadcast beforehand (nothing to sum back): its value and
    gradients if they are the oracles'; False if they are not (the request failed, the answer
    is not numbers, or the numbers are wrong); True if they are not and the oracles disagree
    among themselves, so nothing can be said."""
    shape = out_grad.shape
    wide = widened(graph, shape)
    expected = session.oracles.expected(wide, out_grad)
    answer = session.try_ask(
        session.assignment("tensor").name,
        Probe.BROADCAST,
        {"graph": graph.to_json(), "out_grad": out_grad.tolist(), "run": "explicit"},
    )
    if answer is None:
        return False
    explicit = [answer.value, *answer.grads]
    tol = session.oracles.tolerance(session.tolerances[session.assignment("tensor").name], wide)
    if not any(
        mismatch("", got, want, tol)
        for got, want in zip(explicit, [expected.values[-1], *expected.grads], strict=True)
    ):
        return explicit
    return not session.oracles.confirmed(wide, out_grad, expected)


@remembers_verdict
def check_broadcast(session: GradingSession, graph: Graph, out_grad: np.ndarray) -> None:
    """An elementwise op on operands numpy broadcasts implicitly: each gradient must be the
    op's own gradient for the operands broadcast beforehand, summed back to the operand's
    shape. Only that reduction is judged; the op's formulas are its own item's.

    The operands broadcast beforehand run first, as drawn and holding ``generic`` values, and
    must give the oracles' value and gradients (their backward goes through the student's
    reduction too, where nothing needs summing): where they do not (the op raised, hung,
    crashed, is missing or is wrong), the example is not gradable until the op's item passes
    (``NotGradable``); a reduction wrong even there leaves nothing to compare with, and earns
    nothing."""
    snippet = broadcast_snippet(graph, out_grad, session.assignment("tensor").api)
    explicit = _beforehand(session, graph, out_grad)
    gate = (
        explicit if isinstance(explicit, bool) else _beforehand(session, generic(graph), out_grad)
    )
    if gate is True:
        return  # the oracles disagree on the operands broadcast beforehand: say nothing
    if gate is False:
        if session.failures.get(session.current_test) is not None:
            return  # shrinking a failure found before: this example is simply not it
        item = f"babygrad.ops.{BROADCAST_OP_ITEMS[graph.nodes[0].op]}"
        raise NotGradable((session.profile.item_id(item) or item,))
    case = {"graph": graph.to_json(), "out_grad": out_grad.tolist()}
    shape = out_grad.shape
    leaves = [v.shape for v in graph.leaves]
    full_value, *full_grads = explicit
    answer = session.ask(
        session.assignment("tensor").name, Probe.BROADCAST, {**case, "run": "implicit"}, snippet
    )
    value, grads = answer.value, answer.grads
    tol = session.tolerances[session.assignment("tensor").name]
    var = names(graph)[: len(leaves)]
    wrong = [m for m in [mismatch("out.data", value, full_value, tol)] if m]
    wrong += [
        m
        for v, got, full, leaf in zip(var, grads, full_grads, leaves, strict=True)
        if (
            m := mismatch(
                f"gradient for {v} (shape {leaf})",
                got,
                summed_back(session, full, value_of(graph, v)),
                tol,
            )
        )
    ]
    if wrong:
        found = (
            [bugs.BUGS["broadcast-no-sum"].describe()]
            if any(
                g is not None and g.shape == shape != leaf
                for g, leaf in zip(grads, leaves, strict=True)
            )
            else []
        )
        raise WrongAnswer(
            "failed", "broadcast gradients not summed back", wrong[:4], snippet, found
        )


def value_of(graph: Graph, var: str) -> np.ndarray:
    return graph.leaves[names(graph).index(var)]


def summed_back(session: GradingSession, full: np.ndarray, operand: np.ndarray) -> np.ndarray:
    """A gradient for an operand broadcast to ``full``'s shape, summed back to the operand's
    shape: what ``broadcast_to``'s backward gives for ``full``, asked of the oracles (so the
    grader holds no reduction a student could copy)."""
    graph = Graph("tensor", (operand,), (Node("broadcast_to", (0,), full.shape),))
    return session.oracles.expected(graph, full).grads[0]
