"""Implicit broadcasting: the reduction of gradients back to each operand's shape, alone."""

from __future__ import annotations

import numpy as np

from grader.checks import bugs
from grader.checks.judge import WrongAnswer, mismatch
from grader.grading.session import GradingSession, recorded
from grader.language.graphs import Graph, Node, format_leaf, function_source, names
from grader.language.snippets import IMPORTS, array_literal
from grader.worker import protocol


def broadcast_snippet(graph: Graph, out_grad: np.ndarray) -> str:
    """One elementwise op on operands of different shapes, then on the same operands broadcast
    beforehand: the first gradients should be the second ones summed back to each shape."""
    var = names(graph)
    a, b = var[:2]
    op = function_source(graph.nodes[0])
    return "\n".join([
        "import numpy as np", IMPORTS["tensor"],
        *(f"{v} = {format_leaf(value, 'tensor')}  # shape {value.shape}"
          for v, value in zip(var, graph.leaves, strict=False)),
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
        "print(grads, full_grads)"])


@recorded
def check_broadcast(session: GradingSession, graph: Graph, out_grad: np.ndarray) -> None:
    """An elementwise op on operands numpy broadcasts implicitly: each gradient must be the
    op's own gradient for the operands broadcast beforehand, summed back to the operand's
    shape. Only that reduction is judged; the op's formulas are its own item's."""
    snippet = broadcast_snippet(graph, out_grad)
    answer = session.ask("babygrad", "broadcast", {"graph": graph.to_json(),
                                                "out_grad": out_grad.tolist()},
                      lambda: snippet)
    shape = out_grad.shape
    leaves = [v.shape for v in graph.leaves]
    runs = {}
    for run, shapes in (("implicit", leaves), ("explicit", [shape] * len(leaves))):
        part = protocol.field(answer, run, dict)
        runs[run] = (*session.decoded({"v": [part.get("value")]}, "v", ["out.data"], [shape],
                                    snippet),
                     session.decoded(part, "grads", [f"gradient {i}" for i in range(2)],
                                   shapes, snippet))
    tol = session.tolerances["babygrad"]
    (value, grads), (full_value, full_grads) = runs["implicit"], runs["explicit"]
    var = names(graph)[: len(leaves)]
    wrong = [m for m in [mismatch("out.data", value, full_value, tol)] if m] if (
        full_value is not None) else []
    # Operands of one shape need no reduction: a gradient of another shape there is the
    # reduction's own mistake (and nothing to sum back).
    wrong += [f"gradient for {v} broadcast beforehand: expected shape {shape}, got shape "
              f"{full.shape}" for v, full in zip(var, full_grads, strict=True)
              if full is not None and full.shape != shape]
    wrong += [m for v, got, full, leaf in zip(var, grads, full_grads, leaves, strict=True)
              if full is not None and full.shape == shape
              and (m := mismatch(f"gradient for {v} (shape {leaf})", got,
                                 summed_back(session, full, value_of(graph, v)), tol))]
    if wrong:
        found = [bugs.BUGS["broadcast-no-sum"].describe()] if any(
            g is not None and g.shape == shape != leaf
            for g, leaf in zip(grads, leaves, strict=True)) else []
        raise WrongAnswer("failed", "broadcast gradients not summed back", wrong[:4],
                           snippet, found)


def value_of(graph: Graph, var: str) -> np.ndarray:
    return graph.leaves[names(graph).index(var)]


def summed_back(session: GradingSession, full: np.ndarray, operand: np.ndarray) -> np.ndarray:
    """A gradient for an operand broadcast to ``full``'s shape, summed back to the operand's
    shape: what ``broadcast_to``'s backward gives for ``full``, asked of the oracles (so the
    grader holds no reduction a student could copy)."""
    graph = Graph("tensor", (operand,), (Node("broadcast_to", (0,), full.shape),))
    return session.oracles.expected(graph, full).grads[0]
