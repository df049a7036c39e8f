"""The grader's own functions for grading a course's ``central_difference``, and the number a
central difference of each gives, computed here in plain float64.

Polynomials built from ``+``, ``-``, ``*`` and ``/`` only (what the course's docstring lets
``central_difference`` rely on), each with a second derivative of at least 2 in every
argument: a one-sided difference is off by ``epsilon * f'' / 2`` wherever it is drawn, far
beyond the rounding of any way of writing the central one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

SOURCES = {
    "quartic": "lambda x: x * x * x * x + x * x - 3.0 * x",
    "saddle": "lambda x, y: x * x * y * y + x * x + y * y - 2.0 * x * y",
    "bowl": "lambda x, y, z: x * x + 2.0 * y * y + z * z * z * z + z * z + x * y * z",
}
"""By name: what a case sends, and what a snippet writes."""
CURVES: dict[str, Callable[..., float]] = {
    name: eval(source)  # noqa: S307 - the grader's own constant source
    for name, source in SOURCES.items()
}
"""What the worker calls the course's function on, and the parent differences here."""


def arity(curve: str) -> int:
    """How many arguments ``CURVES[curve]`` takes."""
    return CURVES[curve].__code__.co_argcount


def central(curve: str, values: Sequence[float], arg: int, epsilon: float) -> float:
    """The central difference of ``CURVES[curve]`` in argument ``arg`` at ``values``."""
    f = CURVES[curve]
    up, down = list(values), list(values)
    up[arg] += epsilon
    down[arg] -= epsilon
    return (f(*up) - f(*down)) / (2.0 * epsilon)
