"""Comparisons, made only in the trusted parent on validated float64 arrays."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

SMALL = 32
"""Arrays of at most this many float64 numbers are compared as Python floats: the same IEEE
operations on each element, without numpy's cost per call (4-7 us against 1-2): a grading run
compares thousands of arrays of a few numbers."""


@dataclass(frozen=True)
class Tolerance:
    """``|got - expected| <= atol + rtol * |expected|`` elementwise, as ``np.isclose``.

    Both bounds matter: a relative bound alone fails an honest float32 engine near zero, an
    absolute bound alone fails large values.
    """

    atol: float
    rtol: float

    def close(self, got: np.ndarray, expected: np.ndarray) -> bool:
        if got.shape != expected.shape:
            return False
        if got.size <= SMALL and got.dtype == expected.dtype == np.float64:
            atol, rtol = self.atol, self.rtol
            pairs = zip(got.ravel().tolist(), expected.ravel().tolist(), strict=True)
            return all(abs(g - e) <= atol + rtol * abs(e) for g, e in pairs)
        with np.errstate(invalid="ignore"):  # abs and .all(): np.abs and np.all, less overhead
            return bool((abs(got - expected) <= self.atol + self.rtol * abs(expected)).all())


@dataclass
class WrongAnswer(Exception):
    """A verdict against the student, with everything the feedback needs."""

    status: str
    """``failed`` (wrong numbers), ``error`` (their code raised), ``invalid`` (not numbers)."""
    reason: str
    """One line for the score table."""
    details: list[str] = field(default_factory=list)
    snippet: str = ""
    bugs: list[str] = field(default_factory=list)
    draw: Callable[[], dict] | None = None
    """Makes the counterexample's picture data (``grader.language.figures``), where there is a
    graph. Called for the reported (shrunk) example only: Hypothesis meets hundreds of failing
    examples while it shrinks, and drawing each would cost more than checking it."""

    @property
    def figure(self) -> dict | None:
        return None if self.draw is None else self.draw()

    def __str__(self) -> str:
        return "\n".join([self.reason, *self.details, self.snippet])


def show(array: np.ndarray) -> str:
    """A number, or an array with its shape first: the nested brackets of a 4-D array are hard
    to count, and a wrong shape is often the point. A tall array starts on its own line."""
    if array.ndim == 0:
        return f"{float(array):.6g}"
    values = np.array2string(
        array, precision=4, suppress_small=True, separator=", ", max_line_width=80, threshold=30
    )
    lines = [line for line in values.splitlines() if line.strip()]  # no blank block separators
    return f"shape {array.shape}" + ("\n" if len(lines) > 1 else " ") + "\n".join(lines)


def mismatch(
    label: str, got: np.ndarray | None, expected: np.ndarray, tol: Tolerance
) -> str | None:
    """A feedback line when ``got`` is not ``expected`` within tolerance, else None (several
    lines when an array spans several: expected, then got)."""
    if got is None:
        return f"{label}: expected {show(expected)}, got None (never set)"
    if got.shape != expected.shape:
        return f"{label}: expected shape {expected.shape}, got shape {got.shape}"
    if tol.close(got, expected):
        return None
    wanted, answer = show(expected), show(got)
    if "\n" in wanted + answer:
        return f"{label}:\nexpected {wanted}\ngot {answer}"
    return f"{label}: expected {wanted}, got {answer}"
