"""The graph language: one engine-independent description of an expression graph.

A graph is a list of nodes. The first ones are leaves (concrete float64 values); every other
node applies an op to operands that are *earlier* nodes, so graphs are acyclic by construction
and sharing (``a + a``, diamonds, fan-out) is just an index used twice. The last node is the
output on which ``backward()`` is called.

The op table says, for each op, its arity, its float64 forward (the grader's own evaluator, also
used by the finite-difference oracle), its domain, and how to spell it in each student API. The
spelling is a Python expression template, so the code that builds a graph in a student engine and
the snippet shown to the student are the same text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAGNITUDE_CAP = 1e3
"""No node may hold a value larger than this: keeps float32 engines and exp() well behaved."""

KINK_MARGIN = 0.05
"""relu/abs operands stay at least this far from 0, so finite differences never cross the kink."""

POSITIVE_MARGIN = 0.1
"""log, sqrt, fractional powers and divisors need operands at least this far from 0."""


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _transpose(x: np.ndarray, axes: tuple[int, ...] | None) -> np.ndarray:
    """The course convention: ``None`` swaps the last two axes (numpy reverses all of them)."""
    return np.swapaxes(x, -1, -2) if axes is None else np.transpose(x, axes)


def _sum(x: np.ndarray, axes: int | tuple[int, ...] | None) -> np.ndarray:
    return np.asarray(np.sum(x, axis=axes))


def _all(x: np.ndarray, predicate: Callable[[np.ndarray], np.ndarray]) -> bool:
    return bool(np.all(predicate(np.asarray(x))))


def _away_from_zero(x: np.ndarray) -> bool:
    return _all(x, lambda v: np.abs(v) >= KINK_MARGIN)


def _positive(x: np.ndarray) -> bool:
    return _all(x, lambda v: v >= POSITIVE_MARGIN)


def _nonzero_divisor(x: np.ndarray) -> bool:
    return _all(x, lambda v: np.abs(v) >= POSITIVE_MARGIN)


def _power_ok(base: np.ndarray, exponent: float | np.ndarray) -> bool:
    """Integer exponents >= 0 take any base; others need a positive base."""
    exp = np.asarray(exponent)
    integral = _all(exp, lambda e: (e == np.round(e)) & (e >= 0))
    return integral or _positive(base)


def _always(*_: object) -> bool:
    return True


@dataclass(frozen=True)
class Op:
    """One operation of the graph language."""

    name: str
    arity: int
    forward: Callable[..., np.ndarray]
    """float64 forward: ``forward(*operands, param)``."""
    domain: Callable[..., bool] = _always
    """``domain(*operands, param)``: may this op be applied to these concrete values?"""
    micrograd: str | None = None
    """Expression template in the micrograd API (``{0}``, ``{1}`` operands, ``{p}`` param)."""
    tensor: str | None = None
    """Expression template with babygrad's operators and methods."""
    function: str | None = None
    """babygrad ``Function`` class constructor, e.g. ``ops.Reshape({p})``."""
    kink: bool = False
    """Non-differentiable at 0 (relu, abs): graders keep operands away from it."""


def _op(name: str, arity: int, forward: Callable[..., np.ndarray], **kw: Any) -> Op:
    return Op(name=name, arity=arity, forward=forward, **kw)


OPS: dict[str, Op] = {
    op.name: op
    for op in [
        _op("add", 2, lambda a, b, p: a + b, micrograd="{0} + {1}", tensor="{0} + {1}",
            function="ops.Add()"),
        _op("mul", 2, lambda a, b, p: a * b, micrograd="{0} * {1}", tensor="{0} * {1}",
            function="ops.Mul()"),
        _op("sub", 2, lambda a, b, p: a - b, micrograd="{0} - {1}", tensor="{0} - {1}",
            function="ops.Sub()"),
        _op("div", 2, lambda a, b, p: a / b, domain=lambda a, b, p: _nonzero_divisor(b),
            micrograd="{0} / {1}", tensor="{0} / {1}", function="ops.Div()"),
        _op("pow", 2, lambda a, b, p: np.power(a, b), domain=lambda a, b, p: _positive(a),
            tensor="{0} ** {1}", function="ops.Pow()"),
        _op("neg", 1, lambda a, p: -a, micrograd="-{0}", tensor="-{0}", function="ops.Negate()"),
        _op("log", 1, lambda a, p: np.log(a), domain=lambda a, p: _positive(a),
            tensor="{0}.log()", function="ops.Log()"),
        _op("exp", 1, lambda a, p: np.exp(a), micrograd="{0}.exp()", tensor="{0}.exp()",
            function="ops.Exp()"),
        _op("sqrt", 1, lambda a, p: np.sqrt(a), domain=lambda a, p: _positive(a),
            tensor="{0}.sqrt()", function="ops.Sqrt()"),
        _op("abs", 1, lambda a, p: np.abs(a), domain=lambda a, p: _away_from_zero(a),
            tensor="{0}.abs()", function="ops.Abs()", kink=True),
        _op("relu", 1, lambda a, p: np.maximum(a, 0.0), domain=lambda a, p: _away_from_zero(a),
            micrograd="{0}.relu()", tensor="{0}.relu()", function="ops.ReLU()", kink=True),
        _op("sigmoid", 1, lambda a, p: _sigmoid(a), tensor="{0}.sigmoid()",
            function="ops.Sigmoid()"),
        _op("tanh", 1, lambda a, p: np.tanh(a), micrograd="{0}.tanh()", tensor="{0}.tanh()",
            function="ops.Tanh()"),
        _op("powk", 1, lambda a, p: np.power(a, p), domain=lambda a, p: _power_ok(a, p),
            micrograd="{0} ** {p}", tensor="{0} ** {p}", function="ops.PowerScalar({p})"),
        _op("add_scalar", 1, lambda a, p: a + p, micrograd="{0} + {p}", tensor="{0} + {p}",
            function="ops.AddScalar({p})"),
        _op("mul_scalar", 1, lambda a, p: a * p, micrograd="{0} * {p}", tensor="{0} * {p}",
            function="ops.MulScalar({p})"),
        _op("div_scalar", 1, lambda a, p: a / p, micrograd="{0} / {p}", tensor="{0} / {p}",
            function="ops.DivScalar({p})"),
        _op("radd", 1, lambda a, p: p + a, micrograd="{p} + {0}", tensor="{p} + {0}"),
        _op("rsub", 1, lambda a, p: p - a, micrograd="{p} - {0}", tensor="{p} - {0}"),
        _op("rmul", 1, lambda a, p: p * a, micrograd="{p} * {0}", tensor="{p} * {0}"),
        _op("rdiv", 1, lambda a, p: p / a, domain=lambda a, p: _nonzero_divisor(a),
            micrograd="{p} / {0}", tensor="{p} / {0}"),
        _op("sub_scalar", 1, lambda a, p: a - p, micrograd="{0} - {p}", tensor="{0} - {p}"),
        _op("reshape", 1, lambda a, p: np.reshape(a, p), tensor="{0}.reshape({p})",
            function="ops.Reshape({p})"),
        _op("transpose", 1, _transpose, tensor="{0}.transpose({p})",
            function="ops.Transpose({p})"),
        _op("sum", 1, _sum, tensor="{0}.sum({p})", function="ops.Summation({p})"),
        _op("broadcast_to", 1, lambda a, p: np.broadcast_to(a, p).copy(),
            tensor="{0}.broadcast_to({p})", function="ops.BroadcastTo({p})"),
        _op("matmul", 2, lambda a, b, p: np.matmul(a, b), tensor="{0} @ {1}",
            function="ops.MatMul()"),
    ]
}


@dataclass(frozen=True, eq=False)
class Graph:
    """Leaves (concrete values) followed by op nodes; the last node is the output."""

    kind: str
    """``"scalar"`` (micrograd) or ``"tensor"`` (babygrad)."""
    leaves: tuple[np.ndarray, ...]
    """Each a float64 ``ndarray`` of its own (0-d for a scalar), whatever was passed in."""
    nodes: tuple[Node, ...] = ()

    def __post_init__(self) -> None:
        # numpy arithmetic on a 0-d array yields an ``np.float64`` scalar, on which an in-place
        # write (``leaf.flat[i] = v``) silently goes into a temporary: every graph, wherever it
        # is made, holds fresh float64 arrays instead, so no consumer can be fooled by a type.
        object.__setattr__(self, "leaves",
                           tuple(np.array(v, dtype=np.float64) for v in self.leaves))

    @property
    def size(self) -> int:
        return len(self.leaves) + len(self.nodes)

    @property
    def output(self) -> int:
        return self.size - 1

    def operands(self, index: int) -> tuple[int, ...]:
        return () if index < len(self.leaves) else self.nodes[index - len(self.leaves)].args

    def split_leaves(self) -> tuple[Graph, list[int]]:
        """The same graph with every use of a leaf given a copy of its own (same value), and
        which leaf each copy stands for. Summing the copies' gradients gives each leaf's
        gradient as contributions from separate uses, with nothing to accumulate into."""
        owners: list[int] = []
        nodes = []
        for node in self.nodes:
            args = []
            for arg in node.args:
                if arg < len(self.leaves):
                    owners.append(arg)
                    arg = len(owners) - 1
                else:
                    arg = -arg  # an op node: renumbered below, once every copy is counted
                args.append(arg)
            nodes.append((node, args))
        shift = len(owners) - len(self.leaves)
        renumbered = tuple(Node(node.op, tuple(a if a >= 0 else -a + shift for a in args),
                                node.param) for node, args in nodes)
        return Graph(self.kind, tuple(self.leaves[o] for o in owners), renumbered), owners

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "leaves": [{"shape": list(v.shape), "data": v.ravel().tolist()} for v in self.leaves],
            "nodes": [{"op": n.op, "args": list(n.args), "param": _param_to_json(n.param)}
                      for n in self.nodes],
        }


@dataclass(frozen=True)
class Node:
    """An op applied to earlier nodes (by index) with an optional parameter."""

    op: str
    args: tuple[int, ...]
    param: Any = None


def _param_to_json(param: Any) -> Any:
    if isinstance(param, tuple):
        return {"tuple": [_param_to_json(p) for p in param]}
    return param


def param_from_json(param: Any) -> Any:
    """Inverse of the JSON encoding of node parameters (tuples survive the round trip)."""
    if isinstance(param, dict):
        return tuple(param_from_json(p) for p in param["tuple"])
    return param


def evaluate(graph: Graph, leaves: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    """The grader's own float64 forward pass: the value of every node, in order."""
    values = [np.asarray(v, dtype=np.float64) for v in (leaves or graph.leaves)]
    for node in graph.nodes:
        op = OPS[node.op]
        values.append(np.asarray(op.forward(*(values[i] for i in node.args), node.param),
                                 dtype=np.float64))
    return values


def names(graph: Graph) -> list[str]:
    """Short variable names for snippets: a, b, c, ... then v26, v27, ..."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [letters[i] if i < len(letters) else f"v{i}" for i in range(graph.size)]


def function_source(node: Node) -> str:
    """The babygrad ``Function`` that applies ``node``'s op, e.g. ``ops.Transpose((1, 0))``."""
    template = OPS[node.op].function
    if template is None:
        raise ValueError(f"op {node.op!r} has no babygrad Function")
    return template.format(p=repr(node.param))


def expression(graph: Graph, index: int, api: str, var: list[str]) -> str:
    """The student-API expression that builds node ``index`` from earlier variables."""
    node = graph.nodes[index - len(graph.leaves)]
    template = getattr(OPS[node.op], api)
    if template is None:
        raise ValueError(f"op {node.op!r} has no {api} spelling")
    return template.format(*(var[a] for a in node.args), p=repr(node.param))


def format_leaf(value: np.ndarray, kind: str) -> str:
    if kind == "scalar":
        return f"Value({float(value)!r})"
    return f"Tensor({np.asarray(value).tolist()!r})"


def build_source(graph: Graph, api: str) -> str:
    """Python statements that build the graph in a student engine, one line per node."""
    var = names(graph)
    lines = [f"{var[i]} = {format_leaf(v, graph.kind)}" for i, v in enumerate(graph.leaves)]
    for index in range(len(graph.leaves), graph.size):
        lines.append(f"{var[index]} = {expression(graph, index, api, var)}")
    return "\n".join(lines)


def is_finite_and_capped(value: np.ndarray) -> bool:
    arr = np.asarray(value)
    return bool(np.all(np.isfinite(arr))
                and (arr.size == 0 or np.max(np.abs(arr)) <= MAGNITUDE_CAP))


def admissible(op: Op, operands: Sequence[np.ndarray], param: Any) -> bool:
    """May ``op`` be applied to these concrete operand values (domain and magnitude)?"""
    if not op.domain(*operands, param):
        return False
    with np.errstate(all="ignore"):
        result = op.forward(*operands, param)
    return is_finite_and_capped(result)


# Which ops each assignment's graded graphs use.
MICROGRAD_SUGAR = ("neg", "sub", "div", "radd", "rsub", "rmul", "rdiv", "add_scalar",
                   "sub_scalar", "mul_scalar", "div_scalar")
MICROGRAD_PRIMITIVES = ("add", "mul", "powk", "tanh", "exp", "relu")
"""The ops with a ``_backward`` closure of their own; the sugar is composed from them."""
MICROGRAD_OPS = (*MICROGRAD_PRIMITIVES, *MICROGRAD_SUGAR)
MICROGRAD_COMPOSED = tuple(op for op in MICROGRAD_SUGAR if op not in ("add_scalar", "mul_scalar"))
"""The sugar a student composes: ``a + 2`` and ``a * 2`` are the primitives themselves."""
BABYGRAD_OP_ITEMS = {
    "add": "add", "mul": "mul", "sub": "sub", "div": "div", "pow": "pow", "negate": "neg",
    "log": "log", "exp": "exp", "sqrt": "sqrt", "abs": "abs", "relu": "relu",
    "sigmoid": "sigmoid", "tanh": "tanh", "reshape": "reshape", "transpose": "transpose",
    "summation": "sum", "broadcast_to": "broadcast_to", "matmul": "matmul",
    "add_scalar": "add_scalar", "mul_scalar": "mul_scalar", "divide_scalar": "div_scalar",
    "power_scalar": "powk",
}
"""babygrad rubric item suffix -> op of the graph language."""
BABYGRAD_REFLECTED = ("radd", "rsub", "rmul", "rdiv")
BABYGRAD_GRAPH_OPS = (*BABYGRAD_OP_ITEMS.values(), "sub_scalar")
BABYGRAD_OPERATOR_FORMS = (*BABYGRAD_GRAPH_OPS, *BABYGRAD_REFLECTED)
