"""Plain float functions (MiniTorch Module 0), given for Module 1.

Every function takes and returns Python floats. The ``*_back`` functions are the derivative of
their namesake with respect to its input, multiplied by ``d``, the derivative arriving from the
output: ``log_back(x, d) = d * d/dx log(x)``. As MiniTorch's own, ``log`` is taken at
``x + EPS``, so that it stays finite at 0, and so is its derivative.
"""

from __future__ import annotations

import math

EPS = 1e-6
"""How far from x log is taken (MiniTorch's own value)."""


def mul(x: float, y: float) -> float:
    """x times y."""
    return x * y


def id(x: float) -> float:
    """x unchanged."""
    return x


def add(x: float, y: float) -> float:
    """x plus y."""
    return x + y


def neg(x: float) -> float:
    """Minus x."""
    return -x


def lt(x: float, y: float) -> float:
    """1.0 when x is strictly less than y, else 0.0."""
    return 1.0 if x < y else 0.0


def eq(x: float, y: float) -> float:
    """1.0 when x equals y exactly, else 0.0."""
    return 1.0 if x == y else 0.0


def max(x: float, y: float) -> float:
    """The larger of x and y."""
    return x if x > y else y


def is_close(x: float, y: float) -> bool:
    """Whether x and y differ by less than 1e-2."""
    return abs(x - y) < 1e-2


def sigmoid(x: float) -> float:
    """1 / (1 + e**-x), computed so that no exponential overflows for large |x|.

    For x >= 0 the exponent -x is never positive; for x < 0 the equivalent form
    e**x / (1 + e**x) is used instead, whose exponent is negative too.
    """
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def relu(x: float) -> float:
    """x when x is positive, else 0.0 (0.0 at x == 0 too)."""
    return x if x > 0 else 0.0


def log(x: float) -> float:
    """Natural logarithm of x + EPS (x must not be negative)."""
    return math.log(x + EPS)


def exp(x: float) -> float:
    """e to the power x."""
    return math.exp(x)


def inv(x: float) -> float:
    """1 / x."""
    return 1.0 / x


def log_back(x: float, d: float) -> float:
    """d times the derivative of log (taken at x + EPS), which is 1 / (x + EPS)."""
    return d / (x + EPS)


def inv_back(x: float, d: float) -> float:
    """d times the derivative of 1 / x at x, which is -1 / x**2."""
    return -d / (x * x)


def relu_back(x: float, d: float) -> float:
    """d times the derivative of relu at x: d where x > 0, 0.0 elsewhere (also at x == 0)."""
    return d if x > 0 else 0.0
