"""The functions a Scalar can go through, each a ``ScalarFunction`` subclass.

A function is a class that is never instantiated: ``forward(ctx, *floats)`` computes the value
from plain floats and may keep what the derivative will need with ``ctx.save_for_backward``;
``backward(ctx, d_output)`` returns the derivative of the output with respect to each input,
times ``d_output`` (the derivative arriving at the output): one float for a one-input function,
a tuple of one float per input otherwise. ``apply`` runs a function on Scalars (or numbers) and
records it in the result's history; ``_backward`` is how ``Scalar.chain_rule`` calls
``backward`` and always gives a tuple.

Your tasks (1.2 and 1.4): ``forward`` and ``backward`` of every function below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import operators
from .autodiff import Context

if TYPE_CHECKING:
    from .scalar import Scalar


def wrap_tuple(x: Any) -> tuple[Any, ...]:
    """``x`` itself when it is a tuple, else the one-element tuple ``(x,)``."""
    return x if isinstance(x, tuple) else (x,)


class ScalarFunction:
    """Base of the functions on Scalars (given)."""

    @classmethod
    def _forward(cls, ctx: Context, *inps: float) -> float:
        return cls.forward(ctx, *inps)  # type: ignore[attr-defined]

    @classmethod
    def _backward(cls, ctx: Context, d_out: float) -> tuple[float, ...]:
        return wrap_tuple(cls.backward(ctx, d_out))  # type: ignore[attr-defined]

    @classmethod
    def apply(cls, *vals: Scalar | float | int) -> Scalar:
        """Run the function on ``vals`` and return the result as a Scalar that remembers it.

        Numbers among ``vals`` are wrapped into new leaf Scalars first (so they take part in
        the history like any input); forward sees plain floats only.
        """
        from .scalar import Scalar, ScalarHistory

        inputs = [v if isinstance(v, Scalar) else Scalar(v) for v in vals]
        ctx = Context(no_grad=False)
        value = cls._forward(ctx, *(x.data for x in inputs))
        assert isinstance(value, float), f"{cls.__name__}.forward returned {type(value)}"
        return Scalar(value, ScalarHistory(cls, ctx, inputs))


class Add(ScalarFunction):
    """f(x, y) = x + y"""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        # BEGIN SOLUTION [minitorch.ops.add]: return the sum of the two floats
        return operators.add(a, b)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple[float, float]:
        """Each input's derivative is 1: both receive ``d_output`` unchanged."""
        # BEGIN SOLUTION [minitorch.ops.add]: pass d_output on to both inputs
        return d_output, d_output
        # END SOLUTION


class Log(ScalarFunction):
    """f(x) = log(x), for x > 0"""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        # BEGIN SOLUTION [minitorch.ops.log]: save the input for backward; return its log
        ctx.save_for_backward(a)
        return operators.log(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """d log(x)/dx = 1 / x (``operators.log_back``)."""
        # BEGIN SOLUTION [minitorch.ops.log]: divide d_output by the saved input
        (a,) = ctx.saved_values
        return operators.log_back(a, d_output)
        # END SOLUTION


class Mul(ScalarFunction):
    """f(x, y) = x * y"""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        # BEGIN SOLUTION [minitorch.ops.mul]: save both inputs for backward; return the product
        ctx.save_for_backward(a, b)
        return operators.mul(a, b)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple[float, float]:
        """Each input's derivative is the other input."""
        # BEGIN SOLUTION [minitorch.ops.mul]: give each input d_output times the other input
        a, b = ctx.saved_values
        return operators.mul(b, d_output), operators.mul(a, d_output)
        # END SOLUTION


class Inv(ScalarFunction):
    """f(x) = 1 / x, for x != 0"""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        # BEGIN SOLUTION [minitorch.ops.inv]: save the input for backward; return its inverse
        ctx.save_for_backward(a)
        return operators.inv(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """d(1/x)/dx = -1 / x**2 (``operators.inv_back``): note the minus sign."""
        # BEGIN SOLUTION [minitorch.ops.inv]: d_output times minus one over the input squared
        (a,) = ctx.saved_values
        return operators.inv_back(a, d_output)
        # END SOLUTION


class Neg(ScalarFunction):
    """f(x) = -x"""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        # BEGIN SOLUTION [minitorch.ops.neg]: return the negated float
        return operators.neg(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """d(-x)/dx = -1."""
        # BEGIN SOLUTION [minitorch.ops.neg]: return d_output negated
        return operators.neg(d_output)
        # END SOLUTION


class Sigmoid(ScalarFunction):
    """f(x) = 1 / (1 + e**-x), computed stably (``operators.sigmoid``)"""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        # BEGIN SOLUTION [minitorch.ops.sigmoid]: compute the sigmoid, save it, return it
        s = operators.sigmoid(a)
        ctx.save_for_backward(s)
        return s
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """With s = sigmoid(x): d sigmoid(x)/dx = s * (1 - s), the OUTPUT's value used twice."""
        # BEGIN SOLUTION [minitorch.ops.sigmoid]: d_output times s * (1 - s) from the saved s
        (s,) = ctx.saved_values
        return d_output * s * (1.0 - s)
        # END SOLUTION


class ReLU(ScalarFunction):
    """f(x) = max(x, 0)"""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        # BEGIN SOLUTION [minitorch.ops.relu]: save the input for backward; return its relu
        ctx.save_for_backward(a)
        return operators.relu(a)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """The derivative is 1 where x > 0 and 0 elsewhere, INCLUDING exactly at x == 0."""
        # BEGIN SOLUTION [minitorch.ops.relu]: let d_output through only where the input > 0
        (a,) = ctx.saved_values
        return operators.relu_back(a, d_output)
        # END SOLUTION


class Exp(ScalarFunction):
    """f(x) = e**x"""

    @staticmethod
    def forward(ctx: Context, a: float) -> float:
        # BEGIN SOLUTION [minitorch.ops.exp]: compute e**x, save it, return it
        out = operators.exp(a)
        ctx.save_for_backward(out)
        return out
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> float:
        """d e**x/dx = e**x: the output's own value."""
        # BEGIN SOLUTION [minitorch.ops.exp]: d_output times the saved output
        (out,) = ctx.saved_values
        return operators.mul(d_output, out)
        # END SOLUTION


class LT(ScalarFunction):
    """f(x, y) = 1.0 if x < y else 0.0"""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        # BEGIN SOLUTION [minitorch.ops.lt]: return 1.0 if a is less than b, else 0.0
        return operators.lt(a, b)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple[float, float]:
        """A step function: flat almost everywhere, so both derivatives are 0.0."""
        # BEGIN SOLUTION [minitorch.ops.lt]: return a zero derivative for each of the two inputs
        return 0.0, 0.0
        # END SOLUTION


class EQ(ScalarFunction):
    """f(x, y) = 1.0 if x == y else 0.0"""

    @staticmethod
    def forward(ctx: Context, a: float, b: float) -> float:
        # BEGIN SOLUTION [minitorch.ops.eq]: return 1.0 if a equals b, else 0.0
        return operators.eq(a, b)
        # END SOLUTION

    @staticmethod
    def backward(ctx: Context, d_output: float) -> tuple[float, float]:
        """Flat almost everywhere, so both derivatives are 0.0."""
        # BEGIN SOLUTION [minitorch.ops.eq]: return a zero derivative for each of the two inputs
        return 0.0, 0.0
        # END SOLUTION
