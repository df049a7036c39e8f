"""Which oracle gives the expected answer, and which confirm a verdict, cheapest first.

The first available of the reference engine, PyTorch and finite differences gives the expected
answer. Before any verdict against a student, another oracle must agree with it; if none does,
the example says nothing about the student and is skipped, never failed. Finite differences
over the grader's own float64 evaluator confirm first: they cost milliseconds, while PyTorch
costs a second and a half to import. PyTorch is asked only where finite differences cannot
decide (their own error near a kink or a steep slope). A correct engine needs no confirmation
at all, so a passing grade never imports torch.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from grader.language import profiles
from grader.language.graphs import Graph
from grader.language.profiles import Profile
from grader.language.verdicts import Tolerance
from grader.oracles import Evaluation, OracleUnavailable, numeric, torch_oracle
from grader.oracles.reference import ReferenceOracle

AGREEMENT = Tolerance(atol=1e-6, rtol=1e-5)
"""How close two exact oracles (reference, PyTorch) must be to confirm each other."""


@dataclass(frozen=True)
class OnCourseOps:
    """One of the grader's own oracles (finite differences, PyTorch) over the op table with
    the graded course's definitions (``grader.language.definitions``): its expected answer is
    the course's, as its reference's is."""

    oracle: ModuleType
    profile: Profile

    @property
    def name(self) -> str:
        return self.oracle.name

    def evaluate_graph(self, graph: Graph, out_grad: np.ndarray | None = None) -> Evaluation:
        table = self.profile.definitions(graph.kind).table
        return self.oracle.evaluate_graph(graph, out_grad, table)


class Oracles:
    """The available oracles: ``primary`` answers, ``confirmers`` (cheapest first) confirm."""

    def __init__(
        self, reference_dir: Path | None, use_torch: bool = True, profile: Profile | None = None
    ) -> None:
        self.profile = profile or profiles.course()
        self.numeric = OnCourseOps(numeric, self.profile)
        available: list[Any] = []
        if reference_dir is not None:
            with contextlib.suppress(OracleUnavailable):
                available.append(ReferenceOracle(reference_dir, self.profile))
        if use_torch and torch_oracle.available():
            available.append(OnCourseOps(torch_oracle, self.profile))
        self.primary = available[0] if available else self.numeric
        self.confirmers = [o for o in (self.numeric, *available) if o is not self.primary]
        self.disagreements = 0

    @property
    def names(self) -> list[str]:
        """Every oracle this grade may consult, in the order it consults them."""
        return [oracle.name for oracle in (self.primary, *self.confirmers)]

    def expected(self, graph: Graph, out_grad: np.ndarray | None = None) -> Evaluation:
        return self.primary.evaluate_graph(graph, out_grad)

    def tolerance(self, rubric: Tolerance, graph: Graph) -> Tolerance:
        """The rubric's bound, widened to finite differences' own error when they are the
        only reference point (no reference, no torch): never a false fail from an oracle; and
        on a graph holding an op the course defines otherwise, by what separates the two."""
        bound = self.profile.definitions(graph.kind).tolerance(rubric, graph)
        if self.primary is not self.numeric:
            return bound
        return Tolerance(
            max(bound.atol, numeric.TOLERANCE.atol), max(bound.rtol, numeric.TOLERANCE.rtol)
        )

    def confirmed(self, graph: Graph, out_grad: np.ndarray | None, first: Evaluation) -> bool:
        """Does another oracle agree with the expected answer? Without a second oracle at all
        the verdict stands (the report says so); where none agrees, it is withdrawn."""
        if not self.confirmers or any(
            self.agrees(oracle, graph, out_grad, first) for oracle in self.confirmers
        ):
            return True
        self.disagreements += 1
        return False

    def agrees(
        self, oracle: Any, graph: Graph, out_grad: np.ndarray | None, first: Evaluation
    ) -> bool:
        """Does ``oracle`` give ``first``, within its own error?"""
        answer = oracle.evaluate_graph(graph, out_grad)
        pairs = [
            *zip(first.values, answer.values, strict=True),
            *zip(first.grads, answer.grads, strict=True),
        ]
        bound = numeric.TOLERANCE if oracle is self.numeric else AGREEMENT
        return all(bound.close(a, b) for a, b in pairs)
