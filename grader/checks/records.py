"""Gradients of a build the worker recorded (``grader.worker.recording``), computed here.

Where an item grades one part of an engine alone (``micrograd.sugar``, ``babygrad.tensor_ops``,
the composition runs of ``micrograd.accumulate``), the worker builds the graph on the grader's
recording ops and reports what was built: every node in the order it was made, which of the
grader's ops made it from which earlier nodes, and what the backward of a node of the
student's own adds into earlier nodes for a gradient of one. The gradients follow from that
here, in the trusted process: nodes are taken from the last made back to the first (the order
they were made in is topological), and each passes its gradient on to its operands with the
local gradient of its op, asked of the oracles on that op alone (the reference, PyTorch or
finite differences: the same that give the expected answer) or, for a node of the student's
own, with what the worker measured. The worker never computes a gradient; its record arrives
decoded (``grader.worker.answers.Record``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from grader.checks.session import GradingSession
from grader.language.graphs import Graph, Node
from grader.worker import protocol
from grader.worker.answers import Made, Record
from grader.worker.encoding import ProbeError


def local_gradients(
    session: GradingSession, kind: str, node: Made, operands: list[np.ndarray], g: np.ndarray
) -> tuple[np.ndarray, ...]:
    """``g`` passed back through one of the grader's ops, by the oracles on that op alone."""
    graph = Graph(kind, tuple(operands), (Node(node.op, tuple(range(len(operands))), node.param),))
    try:
        grads = session.oracles.expected(graph, g).grads
    except (
        ValueError,
        TypeError,
        ArithmeticError,
        IndexError,
        KeyError,
        ProbeError,
        protocol.InvalidAnswer,
    ) as exc:
        raise protocol.InvalidAnswer(
            f"a recorded {node.op} cannot be differentiated: {type(exc).__name__}"
        ) from None
    return tuple(np.asarray(part, dtype=np.float64) for part in grads)


def gradients(
    session: GradingSession, kind: str, made: Sequence[Made], root: int, seed: np.ndarray
) -> list[np.ndarray | None]:
    """Every recorded node's gradient when ``root``'s is ``seed``; None for a node the root
    does not reach."""
    grads: list[np.ndarray | None] = [None] * len(made)
    grads[root] = np.asarray(seed, dtype=np.float64) * np.ones(made[root].value.shape)
    for index in range(root, -1, -1):
        g = grads[index]
        node = made[index]
        if g is None or (node.op is None and not node.adds):
            continue
        if node.op is not None:
            parts = zip(
                node.args,
                local_gradients(session, kind, node, [made[a].value for a in node.args], g),
                strict=True,
            )
        else:
            parts = ((j, np.tensordot(g, jacobian, axes=g.ndim)) for j, jacobian in node.adds)
        for operand, part in parts:
            before = grads[operand]
            grads[operand] = part if before is None else before + part
    return grads


def named_gradients(
    session: GradingSession, kind: str, record: Record, seed: float = 1.0
) -> list[np.ndarray | None]:
    """The gradient of each named node of the graph, its output seeded with ``seed``: a
    micrograd node the output does not reach holds 0.0, a babygrad one None (as the engines
    leave them)."""
    grads = gradients(session, kind, record.made, record.named[-1], np.float64(seed))
    found = [grads[i] for i in record.named]
    if kind == "scalar":
        found = [np.float64(0.0) if g is None else g for g in found]
    return found
