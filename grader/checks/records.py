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
own, with what the worker measured. The worker never computes a gradient.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.checks.session import GradingSession
from grader.language.graphs import (
    MICROGRAD_PRIMITIVES,
    OPS,
    Graph,
    Node,
    param_from_json,
)
from grader.worker import protocol
from grader.worker.encoding import ProbeError
from grader.worker.recording import MAX_NODES

RECORDED_OPS = {
    "scalar": frozenset(MICROGRAD_PRIMITIVES),
    "tensor": frozenset(op.name for op in OPS.values() if op.function),
}
"""The ops the grader's recording parts make, in each kind of graph."""


@dataclass(frozen=True)
class Made:
    """One recorded node: its value; the grader's op that made it (``op``, from the nodes
    ``args``, with ``param``), or what the student's own backward adds into earlier nodes for
    a gradient of one (``adds``: node, Jacobian of this node's value by that node's)."""

    value: np.ndarray
    op: str | None = None
    args: tuple[int, ...] = ()
    param: Any = None
    adds: tuple[tuple[int, np.ndarray], ...] = ()


def _param(raw: Any) -> Any:
    """A parameter as the graph language holds it: None, a number or a tuple of ints."""
    param = param_from_json(raw)
    flat = param if isinstance(param, tuple) else (param,)
    if param is not None and not all(type(p) in (int, float) for p in flat):
        raise protocol.InvalidAnswer("a recorded op's parameter is not a number")
    return param


def parse(answer: dict[str, Any], kind: str) -> tuple[list[Made], list[int]]:
    """The recorded nodes and which of them each named node of the graph is."""
    record = protocol.field(answer, "record", dict)
    entries = protocol.field(record, "nodes", list)
    named = protocol.field(record, "named", list)
    if not entries or len(entries) > MAX_NODES:
        raise protocol.InvalidAnswer(f"{len(entries)} recorded nodes")
    if not all(type(i) is int and 0 <= i < len(entries) for i in named):
        raise protocol.InvalidAnswer("the named nodes are not recorded nodes")
    made: list[Made] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not set(entry) <= {
            "value",
            "op",
            "args",
            "param",
            "adds",
        }:
            raise protocol.InvalidAnswer(f"recorded node {index} is malformed")
        value = protocol.decode_array(entry.get("value"), f"the value of node {index}")
        if "op" in entry:
            op, args = entry["op"], entry.get("args")
            if (
                op not in RECORDED_OPS[kind]
                or not isinstance(args, list)
                or not all(type(a) is int and 0 <= a < index for a in args)
                or len(args) != OPS[op].arity
            ):
                raise protocol.InvalidAnswer(f"recorded node {index} is not an op of the grader")
            made.append(Made(value, op, tuple(args), _param(entry.get("param"))))
            continue
        adds = []
        for pair in protocol.field(entry, "adds", list) if "adds" in entry else []:
            if not (
                isinstance(pair, list)
                and len(pair) == 2
                and type(pair[0]) is int
                and 0 <= pair[0] < index
            ):
                raise protocol.InvalidAnswer(f"what node {index} adds is malformed")
            jacobian = protocol.decode_array(pair[1], f"what node {index} adds")
            if jacobian.shape != value.shape + made[pair[0]].value.shape:
                raise protocol.InvalidAnswer(f"what node {index} adds has shape {jacobian.shape}")
            adds.append((pair[0], jacobian))
        made.append(Made(value, adds=tuple(adds)))
    return made, named


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
    session: GradingSession, kind: str, made: list[Made], root: int, seed: np.ndarray
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
    session: GradingSession, kind: str, answer: dict[str, Any], count: int, seed: float = 1.0
) -> list[np.ndarray | None]:
    """The gradient of each of the ``count`` named nodes of the graph, its output seeded with
    ``seed``: a micrograd node the output does not reach holds 0.0, a babygrad one None (as
    the engines leave them). ``protocol.InvalidAnswer`` for a record that is not one."""
    made, named = parse(answer, kind)
    if len(named) != count:
        raise protocol.InvalidAnswer(f"{len(named)} named nodes for {count}")
    grads = gradients(session, kind, made, named[-1], np.float64(seed))
    found = [grads[i] for i in named]
    if kind == "scalar":
        found = [np.float64(0.0) if g is None else g for g in found]
    return found
