"""Scalar and its history as plain classes; ids from itertools.count."""

import itertools

from . import scalar_functions as fn
from .autodiff import backpropagate

_ids = itertools.count(1)
_FRESH = object()
"""Default of ``back``: a new empty history for each leaf (``back=None`` means a constant)."""


class ScalarHistory:
    def __init__(self, last_fn=None, ctx=None, inputs=()):
        self.last_fn = last_fn
        self.ctx = ctx
        self.inputs = inputs


class Scalar:
    def __init__(self, v, back=_FRESH, name=None):
        self.history = ScalarHistory() if back is _FRESH else back
        self.data = float(v)
        self.derivative = None
        self.unique_id = next(_ids)
        self.name = name if name is not None else f"{self.unique_id}"

    def __repr__(self):
        return "Scalar(" + repr(self.data) + ")"

    def __add__(self, b):
        return fn.Add.apply(self, b)

    def __radd__(self, b):
        return fn.Add.apply(self, b)

    def __sub__(self, b):
        return self + fn.Neg.apply(b)

    def __mul__(self, b):
        return fn.Mul.apply(self, b)

    def __rmul__(self, b):
        return fn.Mul.apply(self, b)

    def __truediv__(self, b):
        return self * fn.Inv.apply(b)

    def __rtruediv__(self, b):
        return fn.Inv.apply(self) * b

    def __neg__(self):
        return fn.Neg.apply(self)

    def __lt__(self, b):
        return fn.LT.apply(self, b)

    def __gt__(self, b):
        return fn.LT.apply(b, self)

    def __eq__(self, b):
        return fn.EQ.apply(self, b)

    __hash__ = None

    def __bool__(self):
        return self.data != 0.0

    def log(self):
        return fn.Log.apply(self)

    def exp(self):
        return fn.Exp.apply(self)

    def sigmoid(self):
        return fn.Sigmoid.apply(self)

    def relu(self):
        return fn.ReLU.apply(self)

    def accumulate_derivative(self, x):
        assert self.is_leaf()
        self.derivative = (0.0 if self.derivative is None else self.derivative) + x

    def is_leaf(self):
        return self.history is not None and self.history.last_fn is None

    def is_constant(self):
        return self.history is None

    @property
    def parents(self):
        return self.history.inputs

    def chain_rule(self, d_output):
        h = self.history
        derivatives = h.last_fn._backward(h.ctx, d_output)
        return [(x, derivatives[i]) for i, x in enumerate(h.inputs)]

    def backward(self, d_output=None):
        if d_output is None:
            d_output = 1.0
        backpropagate(self, d_output)
