"""What the protocol's implementations share: the class attributes most shapes have, a
whole graph built as the student's snippet builds it, and the student's walk."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from grader.language.graphs import Graph
from grader.worker.encoding import ProbeError
from grader.worker.probes.build import build

Weights = Sequence[float]
Nodes = Sequence[Any]
OnBackward = Callable[[Any], None] | None
"""Told each time a stand-in op's backward runs (micrograd: the output's gradient; a tensor
course: the op; a ``Function`` course: ``d_output``)."""


class Shape:
    """A built-in shape: ``engine`` as the runner (or the trusted parent) imported it."""

    kind = "tensor"
    gradient_name = "grad"
    op_gradient = "gradient {i}"
    every_grad = True

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.made: dict[int, Any] = {}
        """What each result ``apply`` made (by id) needs to be asked for its gradients."""

    def build(self, graph: Graph, watch: Any = None) -> list[Any]:
        return build(self.engine, graph, watch)

    def inputs(self, node: Any) -> list[Any] | None:
        return None

    def walk(self, root: Any) -> None:
        root.backward()


def paired(grads: Any, count: int, what: str) -> list[Any]:
    """An op's answer, one gradient per input: a bare one for one input is a 1-tuple, and
    extras are never read (a walk pairs gradients with inputs); ``what`` (``backward returned
    {} derivatives``) says what was wrong with another number."""
    if not isinstance(grads, tuple | list):
        grads = (grads,)
    grads = grads[:count]
    if len(grads) != count:
        raise ProbeError(f"{what.format(len(grads))} for {count} inputs")
    return list(grads)
