"""The inputs a course's contract specifies for its ops: what the grader may draw for it.

A course is graded on its own contract and no more. needle's homework 1 takes a summation's
``axes`` as a tuple counted from the front or None in its gradient (its forward tests also
pass an int, so its forward alone is drawn with one; no gradient test does, nor any test
``-1``), batches a
matmul only over leading axes one operand lacks (never stretching a batch axis of size 1) and
has no op of more than two inputs; a correct needle engine may fail outside that, and must
not lose a point for it. A ``Domain`` says which of the forms the op table can draw the course
specifies; the strategies draw inside it only. The default is every form: this course's draws
are the op table's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

AXES_FORMS = ("none", "int", "tuple", "negative")
"""How a summation's ``axes`` may be given: None (every axis), one int, a tuple of ints, and
(``negative``) either of those with an axis counted from the end. A course that names
``int`` or ``tuple`` without ``negative`` counts axes from the front: hw1's tests never pass
``-1``, and its students write ``if i in self.axes`` over ``range(ndim)``."""
MATMUL_BATCHES = ("stretch", "missing")
"""How batched matmul broadcasts its batch axes: as numpy does (``stretch``: also a batch
axis of size 1 against a longer one), or only over leading axes one operand lacks
(``missing``)."""
AXES_OPS = ("sum",)
"""The ops whose parameter is an ``axes``."""


def axes_form(axes: Any) -> str:
    """The form of an ``axes`` parameter (one of ``AXES_FORMS``)."""
    if axes is None:
        return "none"
    if min(axes if isinstance(axes, tuple) else (axes,), default=0) < 0:
        return "negative"
    return "tuple" if isinstance(axes, tuple) else "int"


def batches_prepend(a: Sequence[int], b: Sequence[int]) -> bool:
    """Do two batch shapes broadcast by prepending axes alone: is the shorter the end of the
    longer, axis for axis?"""
    short, long = sorted((tuple(a), tuple(b)), key=len)
    return long[len(long) - len(short) :] == short


@dataclass(frozen=True)
class Domain:
    """The forms of input a course's ops are specified on (a profile's ``domain:``)."""

    axes: tuple[str, ...] = AXES_FORMS
    matmul_batch: str = "stretch"
    max_operands: int | None = None
    """The most inputs any of its ops takes (None: any number, as this course's ``Function``
    does); the grader's own ops in walk and ledger graphs take no more."""
    forward_axes: tuple[str, ...] = ()
    """Forms of ``axes`` the course's forward takes beyond ``axes`` (needle's tests sum with
    ``axes=1``, and none asks a gradient of it): drawn for the op's forward alone."""

    def forward(self) -> Domain:
        """The domain of an op's forward alone: ``axes`` with ``forward_axes``."""
        extra = tuple(f for f in self.forward_axes if f not in self.axes)
        return replace(self, axes=(*self.axes, *extra), forward_axes=()) if extra else self

    def forward_only(self, op: str, param: Any) -> bool:
        """Is ``param`` specified for the op's forward alone (its gradient never asked)?"""
        return op in AXES_OPS and axes_form(param) not in self.axes

    def params(self, op: str, candidates: tuple[Any, ...]) -> tuple[Any, ...]:
        """Those of an op's parameter ``candidates`` the course specifies."""
        if op in AXES_OPS:
            return tuple(p for p in candidates if axes_form(p) in self.axes)
        return candidates

    def batches(self, batch_a: Sequence[int], batch_b: Sequence[int]) -> bool:
        """Does the course's matmul take operands with these batch shapes?"""
        return self.matmul_batch == "stretch" or batches_prepend(batch_a, batch_b)

    def operands(self, op: str, shapes: Sequence[Sequence[int]]) -> bool:
        """Does the course specify ``op`` on operands of these shapes?"""
        if op != "matmul":
            return True
        a, b = shapes
        return self.batches(a[:-2], b[:-2])


EVERY_FORM = Domain()
"""This course's domain: every form the op table draws."""
