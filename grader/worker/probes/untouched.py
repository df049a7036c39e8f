"""What a call into the student's code must leave as it found it, watched from inside the worker.

An op's forward and backward, and a walk, may write gradients (that is their contract) but never
the values they are given: their inputs' values, ``out_grad``, the result's value, the graph's
nodes. A ``Watch`` copies each such value before a call and compares it after (exactly, NaN
equal to NaN); a value that differs is reported as plain numbers, before and after, under the
answer's ``mutated`` key. The worker never judges: the trusted parent decodes the report and
checks that the two arrays really differ (``grader.worker.answers``), then names what changed
(``grader.checks.untouched``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from grader.worker.encoding import encode

OUT_GRAD = -1
"""The target that is the gradient a call was given (``out_grad``, micrograd's ``out.grad``,
the argument of ``Tensor.backward(grad)``); every other target is a node's number."""
MAX_REPORTED = 8
"""Changes reported per answer: the first ones say what a student needs to fix."""

Reader = Callable[[], Any]
"""Reads one watched value afresh (a rebinding of ``.data`` is a change too)."""


def _copy(read: Reader) -> np.ndarray | None:
    """A float64 copy of the value ``read`` returns; None for one that is not a number array
    (or cannot be read): the value checks judge those, this watch does not."""
    try:
        return np.array(read(), dtype=np.float64)
    except Exception:  # noqa: BLE001 - whatever the engine's value does is judged elsewhere
        return None


def _same(before: np.ndarray | None, after: np.ndarray | None) -> bool:
    """Equal, NaN to NaN (the same bytes first: the usual answer, and the fast one); a value
    that could not be read is not judged here."""
    if before is None or after is None:
        return True
    return before.shape == after.shape and (
        before.tobytes() == after.tobytes() or np.array_equal(before, after, equal_nan=True)
    )


class Watch:
    """The changes seen by every ``phase`` watched so far, for one answer."""

    def __init__(self) -> None:
        self.changes: list[dict[str, Any]] = []

    @contextlib.contextmanager
    def phase(
        self, phase: str, targets: Mapping[int, Reader], during: int | None = None
    ) -> Iterator[None]:
        """Copy every target before the block and report those that differ after it.
        ``phase`` is ``forward``, ``backward`` or ``walk``; ``during`` the node whose op ran,
        where the call is one op's."""
        before = {target: _copy(read) for target, read in targets.items()}
        yield
        for target, read in targets.items():
            self._compare(phase, target, during, before[target], _copy(read))

    def steps(self, read: Callable[[Any], Any], ops_from: int) -> Callable[[int, Any], None]:
        """A forward built one node at a time: the function to call after each node is made
        (its number, the node). Each node from ``ops_from`` on is an op's, which must have
        left every node made before it as it found it; a change is reported once, with the
        op that made it (``during``)."""
        made: list[tuple[Reader, np.ndarray | None]] = []

        def step(index: int, node: Any) -> None:
            if index >= ops_from:
                for target, (reader, before) in enumerate(made):
                    after = _copy(reader)
                    if self._compare("forward", target, index, before, after):
                        made[target] = (reader, after)

            def reader() -> Any:
                return read(node)

            made.append((reader, _copy(reader)))

        return step

    def _compare(
        self,
        phase: str,
        target: int,
        during: int | None,
        before: np.ndarray | None,
        after: np.ndarray | None,
    ) -> bool:
        """Report a change of ``target``; whether there was one."""
        if _same(before, after):
            return False
        if len(self.changes) < MAX_REPORTED:
            self.changes.append(
                {
                    "phase": phase,
                    "target": target,
                    "during": during,
                    "before": encode(before, "a value before the call"),
                    "after": encode(after, "a value after the call"),
                }
            )
        return True

    def report(self) -> dict[str, Any]:
        """The answer's ``mutated`` entry, or nothing when nothing changed (the usual answer
        stays as it was)."""
        return {"mutated": self.changes} if self.changes else {}


def values_of(nodes: list[Any], read: Callable[[Any], Any]) -> dict[int, Reader]:
    """Every node's value as a target, by its number."""
    return {index: (lambda node=node: read(node)) for index, node in enumerate(nodes)}
