"""A course's own definition of an op, where it is not the op table's exact one.

MiniTorch's ``operators.py`` (Module 0, which Module 1 builds on) defines ``log(x)`` as
``math.log(x + EPS)`` and ``log_back(x, d)`` as ``d / (x + EPS)``, with ``EPS = 1e-6``. Its own
tests compare with a tolerance of 1e-2, so its students write either that or the exact log, in
either half. The grader's oracles compute the course's definition (so that they agree with a
reference written as the course writes it), and a comparison on a graph holding a defined op
admits what separates the two readings (``slack``): no student loses a point for following
either, while every real bug (a wrong derivative, a missing factor) stays far outside it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from grader.language.graphs import OPS, POSITIVE_MARGIN, Graph, Op
from grader.language.verdicts import Tolerance

SLACK_FACTOR = 2.0
"""Moving log's operand by eps moves its value and its derivative by at most eps / x relative,
x >= ``POSITIVE_MARGIN`` where graphs draw it: eps / margin. Over 3000 drawn MiniTorch graphs
holding a log, every mix of the two readings (forward, backward) stayed within 0.72 of that
bound (as ``Tolerance`` measures, atol = rtol); twice the bound leaves room."""


@dataclass(frozen=True)
class Definitions:
    """An assignment's own definitions of ops (a profile's ``definitions:``)."""

    log_eps: float = 0.0
    """The course's log is ``log(x + log_eps)`` (0: the exact log)."""

    @functools.cached_property
    def table(self) -> Mapping[str, Op]:
        """The op table with the course's definitions, for the grader's own oracles."""
        if not self.log_eps:
            return OPS
        eps = self.log_eps
        shifted = dataclasses.replace(
            OPS["log"],
            forward=lambda a, p: np.log(a + eps),
            torch=lambda a, p: (a + eps).log(),
        )
        return {**OPS, "log": shifted}

    def tolerance(self, bound: Tolerance, graph: Graph) -> Tolerance:
        """``bound``, widened on a graph holding a defined op by what separates the course's
        definition from the exact op (either reading, in either half, is the course's)."""
        if not self.log_eps or all(node.op != "log" for node in graph.nodes):
            return bound
        slack = SLACK_FACTOR * self.log_eps / POSITIVE_MARGIN
        return Tolerance(bound.atol + slack, bound.rtol + slack)


EXACT = Definitions()
"""This course's definitions: the op table's own."""
