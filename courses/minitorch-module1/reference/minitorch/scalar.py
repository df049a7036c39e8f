"""``Scalar``: a float that records how it was computed, so derivatives can flow back.

A Scalar made by the user is a leaf: its history is an empty ``ScalarHistory``. A Scalar made
by a ``ScalarFunction`` keeps, in its history, that function (``last_fn``), the ``Context`` its
forward filled in (``ctx``) and the Scalars it was given (``inputs``). A Scalar whose history
is None is a constant: it is never walked and never gets a derivative.

Your task here (1.3) is ``chain_rule``; the operators below are given.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .autodiff import Context, backpropagate
from .scalar_functions import EQ, LT, Add, Exp, Inv, Log, Mul, Neg, ReLU, ScalarFunction, Sigmoid

ScalarLike = float | int


@dataclass
class ScalarHistory:
    """How a Scalar was computed.

    Attributes:
        last_fn: the ``ScalarFunction`` class that produced it (None for a leaf).
        ctx: the ``Context`` that function's forward filled in (None for a leaf).
        inputs: the Scalars the function was applied to, in argument order (empty for a leaf).
    """

    last_fn: type[ScalarFunction] | None = None
    ctx: Context | None = None
    inputs: Sequence[Scalar] = ()


_LEAF = ScalarHistory()
"""The history every leaf shares by default (nothing in it is ever changed)."""

_created = 0


class Scalar:
    """A float tracked for automatic differentiation.

    Attributes:
        data: the value, always a float.
        history: a ``ScalarHistory``, or None for a constant.
        derivative: None until ``accumulate_derivative`` first gives this leaf a derivative;
            afterwards the sum of everything it was given.
        name: a label for printing (by default the ``unique_id`` as a string).
        unique_id: an integer no other Scalar has; the graph walk remembers Scalars by it.

    ``==`` builds a new Scalar (the ``EQ`` function), so Scalars are not hashable.
    """

    def __init__(self, v: float, back: ScalarHistory | None = _LEAF, name: str | None = None):
        global _created
        _created += 1
        self.unique_id: int = _created
        self.data: float = float(v)
        self.history: ScalarHistory | None = back
        self.derivative: float | None = None
        self.name: str = str(self.unique_id) if name is None else name

    def __repr__(self) -> str:
        return f"Scalar({self.data})"

    # ------------------------------------------------------------------------------ operators

    def __add__(self, b: Scalar | ScalarLike) -> Scalar:
        return Add.apply(self, b)

    def __radd__(self, b: Scalar | ScalarLike) -> Scalar:
        return Add.apply(b, self)

    def __sub__(self, b: Scalar | ScalarLike) -> Scalar:
        return Add.apply(self, Neg.apply(b))

    def __mul__(self, b: Scalar | ScalarLike) -> Scalar:
        return Mul.apply(self, b)

    def __rmul__(self, b: Scalar | ScalarLike) -> Scalar:
        return Mul.apply(b, self)

    def __truediv__(self, b: Scalar | ScalarLike) -> Scalar:
        return Mul.apply(self, Inv.apply(b))

    def __rtruediv__(self, b: Scalar | ScalarLike) -> Scalar:
        return Mul.apply(b, Inv.apply(self))

    def __neg__(self) -> Scalar:
        return Neg.apply(self)

    def __lt__(self, b: Scalar | ScalarLike) -> Scalar:
        return LT.apply(self, b)

    def __gt__(self, b: Scalar | ScalarLike) -> Scalar:
        return LT.apply(b, self)

    def __eq__(self, b: Scalar | ScalarLike) -> Scalar:  # type: ignore[override]
        return EQ.apply(self, b)

    __hash__ = None  # type: ignore[assignment]  (== is an operation, not identity)

    def __bool__(self) -> bool:
        return bool(self.data)

    def log(self) -> Scalar:
        return Log.apply(self)

    def exp(self) -> Scalar:
        return Exp.apply(self)

    def sigmoid(self) -> Scalar:
        return Sigmoid.apply(self)

    def relu(self) -> Scalar:
        return ReLU.apply(self)

    # ------------------------------------------------------------- the Variable protocol

    def accumulate_derivative(self, x: Any) -> None:
        """Add ``x`` to this leaf's derivative (which starts at None, read as 0.0)."""
        assert self.is_leaf(), "only leaves collect derivatives"
        self.derivative = x if self.derivative is None else self.derivative + x

    def is_leaf(self) -> bool:
        """Tracked, and made by the user rather than by a function."""
        return self.history is not None and self.history.last_fn is None

    def is_constant(self) -> bool:
        """Not tracked at all (no history)."""
        return self.history is None

    @property
    def parents(self) -> Iterable[Scalar]:
        """The Scalars this one was computed from (empty for a leaf)."""
        assert self.history is not None, "a constant has no parents"
        return self.history.inputs

    def chain_rule(self, d_output: Any) -> Iterable[tuple[Scalar, Any]]:
        """One (input, derivative) pair per input of the function that made this Scalar, in
        the inputs' order, constants included (the caller skips them).

        ``d_output`` is the derivative arriving at this Scalar. The function's ``_backward``
        (``h.last_fn._backward(h.ctx, d_output)``) turns it into one derivative per input,
        always as a tuple; pair the inputs with it.
        """
        h = self.history
        assert h is not None and h.last_fn is not None and h.ctx is not None
        # BEGIN SOLUTION [minitorch.backward; minitorch.accumulate]:
        #   call the function's _backward with its context, then pair each input with its part
        parts = h.last_fn._backward(h.ctx, d_output)
        return list(zip(h.inputs, parts, strict=True))
        # END SOLUTION

    def backward(self, d_output: float | None = None) -> None:
        """Backpropagate from this Scalar: ``d_output`` (default 1.0) is the derivative
        arriving at it; every leaf it depends on gets its derivative added."""
        backpropagate(self, 1.0 if d_output is None else d_output)
