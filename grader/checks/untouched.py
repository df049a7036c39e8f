"""Ops and walks leave what they are given as they found it: the worker's ``mutated`` report
(``grader.worker.probes.untouched``, decoded as ``grader.worker.answers.Change``s) turned into
a verdict.

An op's forward computes a new value from its inputs; its backward reads ``out_grad``, the
result and its inputs and returns new gradients; a walk writes gradients. Writing into any of
those values instead (``np.maximum(a, 0, out=a)``, ``out_grad.data *= 2``, ``node.data += 1``)
changes numbers the rest of the graph shares, right as the op's own answer may look. The check
that asked the probe names what each number is (``Names``); a change costs that check's item.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from grader.language.assignments import Assignment
from grader.language.verdicts import WrongAnswer
from grader.worker.answers import Change
from grader.worker.probes.untouched import OUT_GRAD

REASONS = {
    "forward": "forward changed its input in place",
    "backward": "backward changed a value it was given in place",
    "walk": "the walk changed a value in place",
}
"""The score table's line, by the phase of the first change."""
FIXES = {
    "forward": (
        "Make the result a new value: never write into an input (out= naming its array, "
        "+=, -=, *=, slice assignment, or assigning its .data). Other nodes of the graph "
        "share it."
    ),
    "backward": (
        "Return new gradients: never write into out_grad, the node or its inputs (out=, "
        "+=, *=, assigning .data); the rest of the graph shares them. Only gradients are "
        "written, where the API says so."
    ),
    "walk": (
        "A walk writes gradients only: the nodes' values, and the gradient it is given, "
        "stay as they were (no +=, out= or assignment into them)."
    ),
}
"""What to do instead, by phase."""


@dataclass(frozen=True)
class Names:
    """How a check names what its call was given and the call itself, for the feedback."""

    targets: Sequence[str]
    """Each node's name, by number (``a``, ``out``, ``n3``)."""
    out_grad: str
    """The gradient the call was given (``out_grad``, ``out.grad``, ``the grad argument``)."""
    caller: Callable[[Change], str]
    """Who changed it (``ReLU.forward``, ``c = a.relu()``, ``backward()``)."""

    def line(self, change: Change) -> str:
        what = self.out_grad if change.target == OUT_GRAD else self.targets[change.target]
        return f"{self.caller(change)} changed {what} in place: {change.describe()}"


def value_source(assignment: Assignment, node: str) -> str:
    """A node's value, as a snippet in the assignment's API reads it."""
    return f"{node}.data" if assignment.kind == "scalar" else assignment.api.value_source(node)


def fail(found: Sequence[Change], names: Names, snippet: str) -> None:
    """A ``WrongAnswer`` shown with ``snippet`` if the call changed anything it was given."""
    if found:
        raise WrongAnswer(
            "failed",
            REASONS[found[0].phase],
            [*(names.line(change) for change in found[:4]), FIXES[found[0].phase]],
            snippet,
        )


def fail_nodes(
    found: Sequence[Change],
    var: Sequence[str],
    caller: Callable[[Change], str],
    assignment: Assignment,
    snippet: str,
) -> None:
    """``fail`` for a call over a graph whose nodes are named ``var`` (the gradient given is
    ``backward()``'s argument); the snippet then prints the values changed."""
    changed = dict.fromkeys(
        value_source(assignment, var[c.target]) for c in found if c.target != OUT_GRAD
    )
    shown = f"{snippet}\nprint({', '.join(changed)})" if changed else snippet
    fail(found, Names(var, "the gradient given to backward()", caller), shown)


def fail_walk(
    found: Sequence[Change], size: int, walk: str, assignment: Assignment, snippet: str
) -> None:
    """``fail_nodes`` for the walk ``walk`` over a grader-made graph of ``size`` nodes
    (``n0``, ``n1``, ...)."""
    var = [f"n{i}" for i in range(size)]
    fail_nodes(found, var, lambda change: walk, assignment, snippet)
