"""The graph language: one engine-independent description of an expression graph.

A graph is a list of nodes. The first ones are leaves (concrete float64 values); every other
node applies an op to operands that are *earlier* nodes, so graphs are acyclic by construction
and sharing (``a + a``, diamonds, fan-out) is just an index used twice. The last node is the
output on which ``backward()`` is called.

An op is one row of the op table: its arity, its float64 forward (the grader's own evaluator, also
used by the finite-difference oracle) and its torch forward, its domain, its parameters and how
its operands' shapes relate (what strategies draw), and how to spell it in each student API. The
spelling is a Python expression template, so the code that builds a graph in a student engine and
the snippet shown to the student are the same text.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from grader.language.domains import Domain

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


def _swap_axes(x: np.ndarray, axes: tuple[int, int] | None) -> np.ndarray:
    return np.swapaxes(x, *(axes or (-1, -2)))


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


Shape = tuple[int, ...]
MAX_ELEMENTS = 24
"""No tensor drawn or computed holds more numbers than this: snippets stay short."""
T = TypeVar("T")


class Chooser(Protocol):
    """Hypothesis's ``draw`` as the op table sees it: the table is shared with the worker,
    which blocks hypothesis (``grader.language.strategies`` implements this on ``draw``)."""

    def integer(self, low: int, high: int) -> int: ...

    def one_of(self, options: Sequence[T]) -> T: ...

    def shape(self, min_dims: int, max_side: int) -> Shape: ...


class Operands(Protocol):
    """How a tensor op's operand shapes relate: drawn for the op alone, and which nodes of a
    graph may join the first operand as the second."""

    def draw(self, choose: Chooser, arity: int, domain: Domain) -> list[Shape]: ...

    def partners(self, values: Sequence[np.ndarray], first: int) -> list[int]: ...


@dataclass(frozen=True)
class SameShape:
    """Operands of one shape: every elementwise op, and every op of one operand."""

    min_dims: int = 1
    max_side: int = 3

    def draw(self, choose: Chooser, arity: int, domain: Domain) -> list[Shape]:
        return [choose.shape(self.min_dims, self.max_side)] * arity

    def partners(self, values: Sequence[np.ndarray], first: int) -> list[int]:
        return [i for i, v in enumerate(values) if v.shape == values[first].shape]


MATMUL_BATCHES = (
    ((), ()),
    ((2,), ()),
    ((), (2,)),
    ((2,), (2,)),
    ((2, 1), (3, 1, 1)),
    ((1,), (2,)),
    ((2, 1), (1, 3)),
)
"""Batch axes of ``a`` and ``b``: none, on one side, the same, prepended, and stretched from
size 1 on either side at once (a gradient summed over the wrong batch axes shows there); a
course whose matmul does not stretch them draws the first four (``Domain.batches``)."""


@dataclass(frozen=True)
class MatMulShapes:
    """``a @ b``: a's last axis is b's second to last, the batch axes broadcast."""

    batched: bool = True
    """Operands may have batch axes; without, both are matrices (a course whose contract
    gives the gradients of ``(M, N) @ (N, P)`` only)."""

    def draw(self, choose: Chooser, arity: int, domain: Domain) -> list[Shape]:
        batches = [pair for pair in MATMUL_BATCHES if domain.batches(*pair)]
        batch_a, batch_b = choose.one_of(batches) if self.batched else ((), ())
        m, k, n = (choose.integer(1, 3) for _ in range(3))
        return [batch_a + (m, k), batch_b + (k, n)]

    def partners(self, values: Sequence[np.ndarray], first: int) -> list[int]:
        a = values[first]
        return [
            i
            for i, v in enumerate(values)
            if self._fits(v)
            and self._fits(a)
            and v.shape[-2] == a.shape[-1]
            and _batch_ok(a.shape, v.shape)
        ]

    def _fits(self, operand: np.ndarray) -> bool:
        return operand.ndim >= 2 if self.batched else operand.ndim == 2


def _batch_ok(a: Shape, b: Shape) -> bool:
    try:
        shape = np.broadcast_shapes(a[:-2], b[:-2]) + (a[-2], b[-1])
    except ValueError:
        return False
    return math.prod(shape) <= MAX_ELEMENTS


Params = Callable[[Shape], tuple[Any, ...]]
"""An op's parameter candidates for an operand of this shape (none: the op does not apply)."""


def _no_param(shape: Shape) -> tuple[Any, ...]:
    return (None,)


def _choices(*values: Any) -> Params:
    """The same candidates whatever the operand's shape (a number)."""
    return lambda shape: values


SCALARS = _choices(2.0, -1.5, 0.5)
DIVISORS = _choices(2.0, -4.0, 0.5)
EXPONENTS = _choices(2, 3, 0.5, -1, 1.5, -0.5)


def transpose_params(shape: Shape) -> tuple[Any, ...]:
    """``None`` (swap the last two) plus permutations that are not their own inverse."""
    ndim = len(shape)
    if ndim < 2:
        return ()
    if ndim == 2:
        return (None, (1, 0))
    perms = [None, (1, 2, 0), (2, 0, 1), (0, 2, 1)]
    if ndim > 3:
        perms = [None, tuple(range(1, ndim)) + (0,), (ndim - 1,) + tuple(range(ndim - 1))]
    return tuple(perms)


def axis_pairs(shape: Shape) -> tuple[Any, ...]:
    """``None`` (the last two) and every pair of axes: what needle's ``transpose`` swaps."""
    ndim = len(shape)
    if ndim < 2:
        return ()
    return (None, *((i, j) for i in range(ndim) for j in range(i + 1, ndim)))


def sum_params(shape: Shape) -> tuple[Any, ...]:
    """Summation over everything, one axis, and a tuple of axes. Axes are numpy's, so an axis
    may count from the end (``-1`` is the last), in a tuple too. A tuple of one axis is drawn
    on every shape with an axis, so a tuple is drawn about as often as an int (an engine that
    takes only None and ints is wrong on a good share of the examples, not on a rare one).
    Tuples of two and three axes mix signs and hold several negative axes, out of order: a
    backward that re-inserts the summed axes in ``sorted`` order without first counting them
    from the front puts them in the wrong place there only."""
    ndim = len(shape)
    params: list[Any] = [None, *range(ndim), *range(-ndim, 0)]
    if ndim >= 1:
        params += [(0,), (-1,)]
    if ndim >= 2:
        params += [(0, ndim - 1), (0, -1), (-2, -1), (ndim - 1, -2)]
    if ndim >= 3:
        params += [(1, -ndim, -1)]
    return tuple(params)


def tuple_sum_params(shape: Shape) -> tuple[Any, ...]:
    """Summation over everything or a tuple of axes counted from the front: each axis alone,
    and the first with the last. What a course whose ``axes`` is ``Optional[tuple]`` takes
    (the babygrad book's); ints and negative axes are numpy's, not its."""
    ndim = len(shape)
    params: list[Any] = [None, *((axis,) for axis in range(ndim))]
    if ndim >= 2:
        params.append((0, ndim - 1))
    return tuple(params)


def reshape_params(shape: Shape) -> tuple[Any, ...]:
    size = math.prod(shape)
    candidates = [(size,), (1, size)]
    for d in range(2, size):
        if size % d == 0:
            candidates.append((d, size // d))
    return tuple(c for c in candidates if c != shape) or ((size,),)


PREPENDS = ((2,), (3, 2), (2, 1, 2))
"""Leading axes ``broadcast_to`` puts in front: one, two or three (a gradient must sum all of
them away, not only the first)."""


def broadcast_params(shape: Shape) -> tuple[Any, ...]:
    """Stretch size-1 axes, and prepend one to three axes: the two things broadcasting does.
    Where there are several size-1 axes, also each stretched alone, the others kept: a
    gradient must sum over the stretched axes only, which stretching them all at once cannot
    tell, and must read each axis's target at its own position (``target[prepended - i]``
    for ``target[prepended + i]`` reads a kept axis's where a stretched one's is, and leaves
    the stretched axis unsummed, from ``(2, 1, 1)`` to ``(2, 2, 1)``)."""
    ones = [i for i, d in enumerate(shape) if d == 1]
    stretched = tuple(2 if d == 1 else d for d in shape)
    params = []
    if stretched != shape:
        params.append(stretched)
    if len(ones) > 1:
        params += [tuple(2 if i == one else d for i, d in enumerate(shape)) for one in ones]
    params += [prefix + shape for prefix in PREPENDS]
    return tuple(p for p in params if math.prod(p) <= MAX_ELEMENTS)


@dataclass(frozen=True)
class Function:
    """A babygrad ``Function`` class: its name in ``ops`` and the attribute in which the
    provided ``__init__`` keeps the op's parameter (None: it takes none)."""

    name: str
    keeps: str | None = None

    def source(self, param: Any) -> str:
        """``ops.Name(param)``, None too, as the course's own functions build one
        (``transpose(a, axes=None)`` is ``Transpose(axes)(a)``): a class whose parameter has
        no default is built as the course builds it; ``ops.Name()`` where it takes none."""
        return f"ops.{self.name}({param!r})" if self.keeps else f"ops.{self.name}()"


@dataclass(frozen=True)
class Op:
    """One operation of the graph language: all the grader needs to draw, run and spell it."""

    name: str
    arity: int
    forward: Callable[..., np.ndarray]
    """float64 forward: ``forward(*operands, param)``."""
    torch: Callable[..., Any]
    """The same on torch tensors, for the PyTorch oracle (which imports torch, not this)."""
    domain: Callable[..., bool] = _always
    """``domain(*operands, param)``: may this op be applied to these concrete values?"""
    params: Params = _no_param
    operands: Operands = SameShape()
    micrograd: str | None = None
    """Expression template in the micrograd API (``{0}``, ``{1}`` operands, ``{p}`` param)."""
    tensor: str | None = None
    """Expression template with babygrad's operators and methods."""
    function: Function | None = None
    ties: bool = False
    """Draw the operands of the op alone equal half the time (``eq`` is 1 only there)."""

    @property
    def takes_param(self) -> bool:
        """Does the op take a parameter (None among its draws, for a default)?"""
        return self.params is not _no_param


def _op(
    name: str, arity: int, forward: Callable[..., np.ndarray], torch: Callable[..., Any], **kw: Any
) -> Op:
    return Op(name=name, arity=arity, forward=forward, torch=torch, **kw)


def _torch_transpose(x: Any, axes: tuple[int, ...] | None) -> Any:
    return x.transpose(-1, -2) if axes is None else x.permute(*axes)


def _torch_swap_axes(x: Any, axes: tuple[int, int] | None) -> Any:
    return x.transpose(*(axes or (-1, -2)))


def _torch_sum(x: Any, axes: int | tuple[int, ...] | None) -> Any:
    return x.sum() if axes is None else x.sum(dim=axes)


OPS: dict[str, Op] = {
    op.name: op
    for op in [
        _op(
            "add",
            2,
            lambda a, b, p: a + b,
            lambda a, b, p: a + b,
            micrograd="{0} + {1}",
            tensor="{0} + {1}",
            function=Function("Add"),
        ),
        _op(
            "mul",
            2,
            lambda a, b, p: a * b,
            lambda a, b, p: a * b,
            micrograd="{0} * {1}",
            tensor="{0} * {1}",
            function=Function("Mul"),
        ),
        _op(
            "sub",
            2,
            lambda a, b, p: a - b,
            lambda a, b, p: a - b,
            micrograd="{0} - {1}",
            tensor="{0} - {1}",
            function=Function("Sub"),
        ),
        _op(
            "div",
            2,
            lambda a, b, p: a / b,
            lambda a, b, p: a / b,
            domain=lambda a, b, p: _nonzero_divisor(b),
            micrograd="{0} / {1}",
            tensor="{0} / {1}",
            function=Function("Div"),
        ),
        _op(
            "pow",
            2,
            lambda a, b, p: np.power(a, b),
            lambda a, b, p: a**b,
            domain=lambda a, b, p: _positive(a),
            tensor="{0} ** {1}",
            function=Function("Pow"),
        ),
        _op(
            "neg",
            1,
            lambda a, p: -a,
            lambda a, p: -a,
            micrograd="-{0}",
            tensor="-{0}",
            function=Function("Negate"),
        ),
        _op(
            "log",
            1,
            lambda a, p: np.log(a),
            lambda a, p: a.log(),
            domain=lambda a, p: _positive(a),
            tensor="{0}.log()",
            function=Function("Log"),
        ),
        _op(
            "exp",
            1,
            lambda a, p: np.exp(a),
            lambda a, p: a.exp(),
            micrograd="{0}.exp()",
            tensor="{0}.exp()",
            function=Function("Exp"),
        ),
        _op(
            "sqrt",
            1,
            lambda a, p: np.sqrt(a),
            lambda a, p: a.sqrt(),
            domain=lambda a, p: _positive(a),
            tensor="{0}.sqrt()",
            function=Function("Sqrt"),
        ),
        _op(
            "abs",
            1,
            lambda a, p: np.abs(a),
            lambda a, p: a.abs(),
            domain=lambda a, p: _away_from_zero(a),
            tensor="{0}.abs()",
            function=Function("Abs"),
        ),
        _op(
            "relu",
            1,
            lambda a, p: np.maximum(a, 0.0),
            lambda a, p: a.relu(),
            domain=lambda a, p: _away_from_zero(a),
            micrograd="{0}.relu()",
            tensor="{0}.relu()",
            function=Function("ReLU"),
        ),
        _op(
            "sigmoid",
            1,
            lambda a, p: _sigmoid(a),
            lambda a, p: a.sigmoid(),
            tensor="{0}.sigmoid()",
            function=Function("Sigmoid"),
        ),
        _op(
            "tanh",
            1,
            lambda a, p: np.tanh(a),
            lambda a, p: a.tanh(),
            micrograd="{0}.tanh()",
            tensor="{0}.tanh()",
            function=Function("Tanh"),
        ),
        _op(
            "powk",
            1,
            lambda a, p: np.power(a, p),
            lambda a, p: a**p,
            domain=lambda a, p: _power_ok(a, p),
            params=EXPONENTS,
            micrograd="{0} ** {p}",
            tensor="{0} ** {p}",
            function=Function("PowerScalar", "scalar"),
        ),
        _op(
            "add_scalar",
            1,
            lambda a, p: a + p,
            lambda a, p: a + p,
            params=SCALARS,
            micrograd="{0} + {p}",
            tensor="{0} + {p}",
            function=Function("AddScalar", "scalar"),
        ),
        _op(
            "mul_scalar",
            1,
            lambda a, p: a * p,
            lambda a, p: a * p,
            params=SCALARS,
            micrograd="{0} * {p}",
            tensor="{0} * {p}",
            function=Function("MulScalar", "scalar"),
        ),
        _op(
            "div_scalar",
            1,
            lambda a, p: a / p,
            lambda a, p: a / p,
            params=DIVISORS,
            micrograd="{0} / {p}",
            tensor="{0} / {p}",
            function=Function("DivScalar", "scalar"),
        ),
        _op(
            "radd",
            1,
            lambda a, p: p + a,
            lambda a, p: p + a,
            params=SCALARS,
            micrograd="{p} + {0}",
            tensor="{p} + {0}",
        ),
        _op(
            "rsub",
            1,
            lambda a, p: p - a,
            lambda a, p: p - a,
            params=SCALARS,
            micrograd="{p} - {0}",
            tensor="{p} - {0}",
        ),
        _op(
            "rmul",
            1,
            lambda a, p: p * a,
            lambda a, p: p * a,
            params=SCALARS,
            micrograd="{p} * {0}",
            tensor="{p} * {0}",
        ),
        _op(
            "rdiv",
            1,
            lambda a, p: p / a,
            lambda a, p: p / a,
            params=DIVISORS,
            domain=lambda a, p: _nonzero_divisor(a),
            micrograd="{p} / {0}",
            tensor="{p} / {0}",
        ),
        # Ops of scalar APIs whose ops are classes (MiniTorch's Inv, LT, EQ): graded one at a
        # time; lt and eq have no derivative to draw in a graph (zero wherever they are smooth).
        # lt is drawn away from its step, where finite differences can judge it; eq's operands
        # are equal half the time (only there is it 1), where its neighbours are all 0.
        _op(
            "inv",
            1,
            lambda a, p: 1.0 / a,
            lambda a, p: 1.0 / a,
            domain=lambda a, p: _nonzero_divisor(a),
        ),
        _op(
            "lt",
            2,
            lambda a, b, p: (a < b).astype(np.float64),
            lambda a, b, p: (a < b).to(a.dtype) + 0.0 * (a + b),
            domain=lambda a, b, p: _nonzero_divisor(a - b),
        ),
        _op(
            "eq",
            2,
            lambda a, b, p: (a == b).astype(np.float64),
            lambda a, b, p: (a == b).to(a.dtype) + 0.0 * (a + b),
            ties=True,
        ),
        _op(
            "sub_scalar",
            1,
            lambda a, p: a - p,
            lambda a, p: a - p,
            params=SCALARS,
            micrograd="{0} - {p}",
            tensor="{0} - {p}",
        ),
        _op(
            "reshape",
            1,
            lambda a, p: np.reshape(a, p),
            lambda a, p: a.reshape(p),
            params=reshape_params,
            tensor="{0}.reshape({p})",
            function=Function("Reshape", "shape"),
        ),
        _op(
            "transpose",
            1,
            _transpose,
            _torch_transpose,
            params=transpose_params,
            operands=SameShape(min_dims=2),
            tensor="{0}.transpose({p})",
            function=Function("Transpose", "axes"),
        ),
        # needle's transpose: it swaps two axes, the last two by default (babygrad has no
        # class for it: a course that does names it in its profile). Drawn on three axes or
        # more: on two, the default and the one pair are the same swap, so a default that
        # swaps the first two axes would pass unseen.
        _op(
            "swap_axes",
            1,
            _swap_axes,
            _torch_swap_axes,
            params=axis_pairs,
            operands=SameShape(min_dims=3),
            tensor="{0}.transpose({p})",
        ),
        _op(
            "sum",
            1,
            _sum,
            _torch_sum,
            params=sum_params,
            tensor="{0}.sum({p})",
            function=Function("Summation", "axes"),
        ),
        # small sides: size-1 axes to stretch, room to prepend one
        _op(
            "broadcast_to",
            1,
            lambda a, p: np.broadcast_to(a, p).copy(),
            lambda a, p: a.broadcast_to(p),
            params=broadcast_params,
            operands=SameShape(max_side=2),
            tensor="{0}.broadcast_to({p})",
            function=Function("BroadcastTo", "shape"),
        ),
        _op(
            "matmul",
            2,
            lambda a, b, p: np.matmul(a, b),
            lambda a, b, p: a @ b,
            operands=MatMulShapes(),
            tensor="{0} @ {1}",
            function=Function("MatMul"),
        ),
    ]
}


def _narrowed(name: str, wide: str, **changes: Any) -> Op:
    """An op of the table drawn in a narrower domain: a course whose contract takes less than
    numpy does lists it instead, and names its class (``classes:``)."""
    return dataclasses.replace(OPS[wide], name=name, function=None, **changes)


OPS.update(
    (op.name, op)
    for op in (
        _narrowed("sum_tuple", "sum", params=tuple_sum_params),
        _narrowed("matmul_2d", "matmul", operands=MatMulShapes(batched=False)),
    )
)


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
        object.__setattr__(
            self, "leaves", tuple(np.array(v, dtype=np.float64) for v in self.leaves)
        )

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
        renumbered = tuple(
            dataclasses.replace(node, args=tuple(a if a >= 0 else -a + shift for a in args))
            for node, args in nodes
        )
        return Graph(self.kind, tuple(self.leaves[o] for o in owners), renumbered), owners

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "leaves": [{"shape": list(v.shape), "data": v.ravel().tolist()} for v in self.leaves],
            "nodes": [
                {"op": n.op, "args": list(n.args), "param": param_to_json(n.param)}
                | ({"form": n.form} if n.form else {})
                for n in self.nodes
            ],
        }

    @classmethod
    def from_json(cls, message: dict[str, Any]) -> Graph:
        """The graph ``to_json`` wrote (leaves as float64, tuple parameters kept apart)."""
        leaves = tuple(
            np.asarray(leaf["data"], dtype=np.float64).reshape(leaf["shape"])
            for leaf in message["leaves"]
        )
        nodes = tuple(
            Node(n["op"], tuple(n["args"]), param_from_json(n["param"]), n.get("form", 0))
            for n in message["nodes"]
        )
        return cls(message["kind"], leaves, nodes)


@dataclass(frozen=True)
class Node:
    """An op applied to earlier nodes (by index) with an optional parameter."""

    op: str
    args: tuple[int, ...]
    param: Any = None
    form: int = 0
    """Which of the course's spellings applies the op: 0 its operator or method
    (``Spelling.template``), k its k-th further one (``a.matmul(b)`` beside ``a @ b``:
    ``TensorApi.spellings``), each routed by a test of its own."""


def respelled(graph: Graph, op: str, form: int) -> Graph:
    """``graph`` with every node of ``op`` applied by the course's spelling ``form``."""
    nodes = tuple(dataclasses.replace(n, form=form) if n.op == op else n for n in graph.nodes)
    return Graph(graph.kind, graph.leaves, nodes)


def param_to_json(param: Any) -> Any:
    """A node's parameter as JSON (tuples kept apart from lists: ``param_from_json``)."""
    if isinstance(param, tuple):
        return {"tuple": [param_to_json(p) for p in param]}
    return param


def param_from_json(param: Any) -> Any:
    """Inverse of the JSON encoding of node parameters (tuples survive the round trip)."""
    if isinstance(param, dict):
        return tuple(param_from_json(p) for p in param["tuple"])
    return param


def evaluate(
    graph: Graph, leaves: Sequence[np.ndarray] | None = None, ops: Mapping[str, Op] = OPS
) -> list[np.ndarray]:
    """The grader's own float64 forward pass: the value of every node, in order (``ops``: the
    op table with a course's own definitions, ``grader.language.definitions``)."""
    values = [np.asarray(v, dtype=np.float64) for v in (leaves or graph.leaves)]
    for node in graph.nodes:
        op = ops[node.op]
        values.append(
            np.asarray(op.forward(*(values[i] for i in node.args), node.param), dtype=np.float64)
        )
    return values


def names(graph: Graph) -> list[str]:
    """Short variable names for snippets: a, b, c, ... then v26, v27, ..."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [letters[i] if i < len(letters) else f"v{i}" for i in range(graph.size)]


def function_source(node: Node) -> str:
    """The babygrad ``Function`` that applies ``node``'s op, e.g. ``ops.Transpose((1, 0))``."""
    function = OPS[node.op].function
    if function is None:
        raise ValueError(f"op {node.op!r} has no babygrad Function")
    return function.source(node.param)


class Spelling(Protocol):
    """A course's own spelling of the op table and of a leaf
    (``grader.language.tensor_api.TensorApi``, ``grader.language.function_api.FunctionApi``)."""

    def template(self, op: str, form: int = 0) -> str: ...

    def leaf_source(self, data: str, requires_grad: bool) -> str: ...


def expression(graph: Graph, index: int, api: str | Spelling, var: Sequence[str]) -> str:
    """The student-API expression that builds node ``index`` from earlier variables: in the
    op table's ``api`` column, or in a tensor course's own spelling."""
    return node_expression(graph.nodes[index - len(graph.leaves)], api, var)


def node_expression(node: Node, api: str | Spelling, var: Sequence[str]) -> str:
    """``expression`` of one node, its arguments' variables named by ``var``."""
    if isinstance(api, str):
        template = getattr(OPS[node.op], api) if not node.form else None
    else:
        template = api.template(node.op, node.form)
    if template is None:
        raise ValueError(f"op {node.op!r} has no {api} spelling")
    # None is every method's default (``t.transpose()``, ``t.sum()``): spelled as a student
    # would, the argument is left out and the default is what is run.
    if node.param is None:
        return without_param(template).format(*(var[a] for a in node.args), p="")
    return template.format(*(var[a] for a in node.args), p=repr(node.param))


def without_param(template: str) -> str:
    """``template`` with the argument ``{p}`` fills taken out, keyword and comma included
    (``ops.summation({0}, axes={p})`` -> ``ops.summation({0})``, ``{0}.transpose(*{p})`` ->
    ``{0}.transpose()``): an empty ``{p}`` alone
    would leave ``axes=)``, a syntax error a student would be shown as theirs."""
    template = re.sub(r",\s*(\w+\s*=\s*|\*)?\{p\}", "", template)
    return re.sub(r"\(\s*(\w+\s*=\s*|\*)?\{p\}\s*,?\s*", "(", template)


def format_leaf(value: np.ndarray, kind: str, api: str | Spelling = "tensor") -> str:
    if kind == "scalar":
        data = repr(float(value))
        return f"Value({data})" if isinstance(api, str) else api.leaf_source(data, True)
    data = repr(np.asarray(value).tolist())
    if isinstance(api, str):
        return f"Tensor({data}, requires_grad=True)"
    return api.leaf_source(data, True)


def build_source(graph: Graph, api: str | Spelling) -> str:
    """Python statements that build the graph in a student engine, one line per node."""
    return "\n".join(build_lines(graph, api, names(graph)))


def build_lines(graph: Graph, api: str | Spelling, var: Sequence[str]) -> list[str]:
    """The statement that builds each node in a student engine, its variable named by ``var``
    (``var[i] = ...``): a verdict about a node names the line that made it."""
    lines = [f"{var[i]} = {format_leaf(v, graph.kind, api)}" for i, v in enumerate(graph.leaves)]
    for index in range(len(graph.leaves), graph.size):
        lines.append(f"{var[index]} = {expression(graph, index, api, var)}")
    return lines


def is_finite_and_capped(value: np.ndarray) -> bool:
    arr = np.asarray(value)
    return bool(
        np.all(np.isfinite(arr)) and (arr.size == 0 or np.max(np.abs(arr)) <= MAGNITUDE_CAP)
    )


def admissible_value(op: Op, operands: Sequence[np.ndarray], param: Any) -> np.ndarray | None:
    """``op``'s value on these concrete operands if it may be applied to them (domain and
    magnitude), else None."""
    if not op.domain(*operands, param):
        return None
    with np.errstate(all="ignore"):
        value = np.asarray(op.forward(*operands, param), dtype=np.float64)
    return value if is_finite_and_capped(value) else None


def admissible(op: Op, operands: Sequence[np.ndarray], param: Any) -> bool:
    """May ``op`` be applied to these concrete operand values (domain and magnitude)?"""
    return admissible_value(op, operands, param) is not None


# Which ops each assignment's graded graphs use.
MICROGRAD_SUGAR = (
    "neg",
    "sub",
    "div",
    "radd",
    "rsub",
    "rmul",
    "rdiv",
    "add_scalar",
    "sub_scalar",
    "mul_scalar",
    "div_scalar",
)
MICROGRAD_PRIMITIVES = ("add", "mul", "powk", "tanh", "exp", "relu")
"""The ops with a ``_backward`` closure of their own; the sugar is composed from them."""
MICROGRAD_OPS = (*MICROGRAD_PRIMITIVES, *MICROGRAD_SUGAR)
SCALAR_FUNCTION_OPS = ("log", "sigmoid", "inv", "lt", "eq")
"""Ops only scalar courses whose ops are classes have (MiniTorch's Log, Sigmoid, Inv, LT, EQ)."""
SCALAR_FUNCTION_GRAPH_OPS = (*MICROGRAD_OPS, "log", "sigmoid")
"""The ops their random graphs may draw: lt and eq are graded one at a time (their derivative
is zero wherever they are smooth)."""
MICROGRAD_COMPOSED = tuple(op for op in MICROGRAD_SUGAR if op not in ("add_scalar", "mul_scalar"))
"""The sugar a student composes: ``a + 2`` and ``a * 2`` are the primitives themselves."""
BABYGRAD_OP_ITEMS = {
    "add": "add",
    "mul": "mul",
    "sub": "sub",
    "div": "div",
    "pow": "pow",
    "negate": "neg",
    "log": "log",
    "exp": "exp",
    "sqrt": "sqrt",
    "abs": "abs",
    "relu": "relu",
    "sigmoid": "sigmoid",
    "tanh": "tanh",
    "reshape": "reshape",
    "transpose": "transpose",
    "summation": "sum",
    "broadcast_to": "broadcast_to",
    "matmul": "matmul",
    "add_scalar": "add_scalar",
    "mul_scalar": "mul_scalar",
    "divide_scalar": "div_scalar",
    "power_scalar": "powk",
}
"""babygrad rubric item suffix -> op of the graph language."""
BABYGRAD_BROADCASTING = ("add", "mul", "sub", "div", "pow")
"""The elementwise ops whose operands may broadcast implicitly (``babygrad.broadcasting``)."""
BABYGRAD_REFLECTED = ("radd", "rsub", "rmul", "rdiv")
BABYGRAD_GRAPH_OPS = (*BABYGRAD_OP_ITEMS.values(), "sub_scalar")
BABYGRAD_OPERATOR_FORMS = (*BABYGRAD_GRAPH_OPS, *BABYGRAD_REFLECTED)
OTHER_TENSOR_OPS = ("swap_axes", "sum_tuple", "matmul_2d")
"""Ops only other courses have: needle's transpose swaps two axes; the babygrad book sums over
a tuple of axes and multiplies matrices."""
TENSOR_OP_ITEMS = {**BABYGRAD_OP_ITEMS, **{op: op for op in OTHER_TENSOR_OPS}}
"""Every tensor course's op items: babygrad's, and those of ops only other courses have,
which a course's profile lists to grade them."""
TENSOR_GRAPH_OPS = (*BABYGRAD_GRAPH_OPS, *OTHER_TENSOR_OPS)
TENSOR_OPERATOR_FORMS = (*BABYGRAD_OPERATOR_FORMS, *OTHER_TENSOR_OPS)
"""Every tensor course's operators and methods, each routed to the op it applies."""
