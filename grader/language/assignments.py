"""The two assignments, each one value in every vocabulary the grader speaks.

The rubric and the packages name an assignment (``micrograd``, ``babygrad``); the graph
language names the kind of graph it grades (``scalar``, ``tensor``); the op table spells its
operators in a column of its own (``OpRow.micrograd``, ``OpRow.tensor``); a snippet opens with
its imports. One ``Assignment`` carries all four, so nothing translates one into another by
hand."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Assignment:
    name: str
    """The rubric's item prefix and the package a submission holds."""
    kind: str
    """The kind of ``Graph`` it grades: ``scalar`` or ``tensor``."""
    spelling: str
    """The op table's column that writes an op in its API (``grader.language.graphs.OpRow``)."""
    imports: str
    """What a runnable snippet for it starts with."""


MICROGRAD = Assignment("micrograd", "scalar", "micrograd", "from micrograd.engine import Value")
BABYGRAD = Assignment(
    "babygrad", "tensor", "tensor", "from babygrad import Tensor\nfrom babygrad import ops"
)
ASSIGNMENTS = {a.name: a for a in (MICROGRAD, BABYGRAD)}
"""By name, in the rubric's order."""
NAMES = tuple(ASSIGNMENTS)
"""``("micrograd", "babygrad")``: what ``--assignment`` accepts besides ``all``."""


def of_kind(kind: str) -> Assignment:
    """The assignment that grades graphs of ``kind``."""
    return next(a for a in ASSIGNMENTS.values() if a.kind == kind)
