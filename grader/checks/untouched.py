"""Ops and walks leave what they are given as they found it: the worker's ``mutated`` report
(``grader.worker.probes.untouched``), validated and turned into a verdict.

An op's forward computes a new value from its inputs; its backward reads ``out_grad``, the
result and its inputs and returns new gradients; a walk writes gradients. Writing into any of
those values instead (``np.maximum(a, 0, out=a)``, ``out_grad.data *= 2``, ``node.data += 1``)
changes numbers the rest of the graph shares, right as the op's own answer may look. The check
that asked the probe names what each number is (``Names``); a change costs that check's item.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from grader.language.assignments import Assignment
from grader.language.verdicts import WrongAnswer, show
from grader.worker import protocol
from grader.worker.probes.untouched import MAX_REPORTED, OUT_GRAD

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


FIELDS = {"phase", "target", "during", "before", "after"}
"""The keys of one reported change, exactly."""


@dataclass(frozen=True)
class Change:
    """One value a call changed: in which ``phase``, which ``target`` (a node's number, or
    ``OUT_GRAD``), while which node's op ran (``during``, None: a whole walk)."""

    phase: str
    target: int
    during: int | None
    before: np.ndarray
    after: np.ndarray

    def describe(self) -> str:
        """Before and after, and by how much where the shape held."""
        text = f"it was {show(self.before)} before, {show(self.after)} after"
        if self.before.shape == self.after.shape:
            with np.errstate(invalid="ignore", over="ignore"):
                moved = np.abs(self.after - self.before)
            largest = moved[np.isfinite(moved)].max(initial=0.0)
            if largest > 0:
                text += f" (largest change {largest:.6g})"
        return text


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


def changes(answer: dict[str, Any], nodes: int) -> list[Change]:
    """The answer's report, validated (``protocol.InvalidAnswer`` if malformed): the values
    that really differ, of ``nodes`` numbered nodes or the gradient given."""
    report = answer.get("mutated", [])
    if not isinstance(report, list) or len(report) > MAX_REPORTED:
        raise protocol.InvalidAnswer("the report of changed values is not a short list")
    found = []
    for entry in report:
        if not isinstance(entry, dict) or set(entry) != FIELDS:
            raise protocol.InvalidAnswer("a changed value is not reported as one")
        phase, target, during = entry["phase"], entry["target"], entry["during"]
        if (
            phase not in REASONS
            or type(target) is not int
            or not OUT_GRAD <= target < nodes
            or not (during is None or (type(during) is int and 0 <= during < nodes))
        ):
            raise protocol.InvalidAnswer("a changed value names no value of this example")
        before = protocol.decode_array(entry["before"], "a value before the call")
        after = protocol.decode_array(entry["after"], "a value after the call")
        if not np.array_equal(before, after, equal_nan=True):
            found.append(Change(phase, target, during, before, after))
    return found


def decoded(answer: dict[str, Any], nodes: int, snippet: str) -> list[Change]:
    """``changes``, where a malformed report is the student's error, shown with ``snippet``."""
    try:
        return changes(answer, nodes)
    except protocol.InvalidAnswer as exc:
        raise WrongAnswer("error", f"invalid answer: {exc}", [], snippet) from None


def fail(found: list[Change], names: Names, snippet: str) -> None:
    """A ``WrongAnswer`` shown with ``snippet`` if the call changed anything it was given."""
    if found:
        raise WrongAnswer(
            "failed",
            REASONS[found[0].phase],
            [*(names.line(change) for change in found[:4]), FIXES[found[0].phase]],
            snippet,
        )


def fail_nodes(
    found: list[Change],
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
    found: list[Change], size: int, walk: str, assignment: Assignment, snippet: str
) -> None:
    """``fail_nodes`` for the walk ``walk`` over a grader-made graph of ``size`` nodes
    (``n0``, ``n1``, ...)."""
    var = [f"n{i}" for i in range(size)]
    fail_nodes(found, var, lambda change: walk, assignment, snippet)
