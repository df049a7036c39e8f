"""Reverse-mode automatic differentiation over a graph of scalar variables.

A variable computed by a function remembers the variables it was computed from (its
``parents``) and can turn the derivative arriving at it into one derivative per parent
(``chain_rule``). ``topological_sort`` orders the graph from the output back to the leaves and
``backpropagate`` walks that order, handing every leaf the derivative of the output with
respect to it. ``central_difference`` estimates a derivative numerically, to check the others.

Your tasks: ``central_difference`` (task 1.1), ``topological_sort``, ``backpropagate`` and
``_add_contribution`` (task 1.4).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol


def central_difference(f: Any, *vals: Any, arg: int = 0, epsilon: float = 1e-6) -> Any:
    """Estimate the derivative of ``f`` with respect to its argument number ``arg``.

    Use the symmetric (central) difference: evaluate ``f`` once with ``vals[arg]`` raised by
    ``epsilon`` and once with it lowered by ``epsilon``, every other argument unchanged, and
    divide the difference of the two results by ``2 * epsilon``. Its error shrinks like
    ``epsilon**2``; a one-sided difference's only like ``epsilon``.

    Use nothing but ``+``, ``-`` and ``/`` on the values, so that it works for floats and for
    Scalars alike (a derivative check may pass Scalars and read ``.data`` of the result).
    """
    # BEGIN SOLUTION [minitorch.central_difference]:
    #   evaluate f with vals[arg] moved up and down by epsilon; divide by 2 * epsilon
    raised = list(vals)
    lowered = list(vals)
    raised[arg] = raised[arg] + epsilon
    lowered[arg] = lowered[arg] - epsilon
    return (f(*raised) - f(*lowered)) / (2.0 * epsilon)
    # END SOLUTION


class Variable(Protocol):
    """What the graph walk needs from a node (``Scalar`` provides it)."""

    @property
    def unique_id(self) -> int:
        """A number no other variable has: the key to remember a variable by."""
        ...

    def is_leaf(self) -> bool:
        """Made by the user and tracked (it collects a derivative)."""
        ...

    def is_constant(self) -> bool:
        """Not tracked at all: no derivative, no parents, skipped by the walk."""
        ...

    @property
    def parents(self) -> Iterable[Variable]:
        """The variables this one was computed from, in argument order (empty for a leaf)."""
        ...

    def chain_rule(self, d_output: Any) -> Iterable[tuple[Variable, Any]]:
        """(parent, derivative) pairs, given ``d_output``, the derivative arriving here."""
        ...

    def accumulate_derivative(self, x: Any) -> None:
        """Add ``x`` to this leaf's derivative."""
        ...


def topological_sort(variable: Variable) -> Iterable[Variable]:
    """Every non-constant variable ``variable`` depends on, itself included, each exactly once,
    in topological order STARTING FROM THE RIGHT: ``variable`` first, and every variable before
    all of the variables it was computed from (its ``parents``), so the leaves come last.

    Walk depth-first through ``parents`` and return the post-order reversed. Skip constants
    (``is_constant()``; never ask a constant for its parents). Remember the variables you have
    visited by ``unique_id``: a Scalar's ``==`` builds a new Scalar, so Scalars can be neither
    compared nor put in a set. A breadth-first walk is not a topological sort: a variable
    reached both by a short path and by a longer one would come before some variable that
    uses it. Keep your own stack rather than recursing, so a long chain works as well.
    """
    # BEGIN SOLUTION [minitorch.topo]:
    #   depth-first post-order through parents (no constants, visits by unique_id), reversed
    if variable.is_constant():
        return []
    finished: list[Variable] = []
    visited = {variable.unique_id}
    stack = [(variable, iter(variable.parents))]
    while stack:
        node, unexplored = stack[-1]
        for parent in unexplored:
            if parent.is_constant() or parent.unique_id in visited:
                continue
            visited.add(parent.unique_id)
            stack.append((parent, iter(parent.parents)))
            break
        else:
            stack.pop()
            finished.append(node)
    finished.reverse()
    return finished
    # END SOLUTION


def _add_contribution(gathered: dict[int, Any], variable: Variable, amount: Any) -> None:
    """Add ``amount`` to the entry of ``variable`` (by ``unique_id``) in ``gathered``, creating
    the entry when it is the first contribution. Add, never replace: a variable used in several
    places (``x * x``, or reached along two paths) receives one contribution from each, and its
    derivative is their sum.
    """
    # BEGIN SOLUTION [minitorch.accumulate; minitorch.backward]:
    #   start the entry at amount, or add amount to the entry already there
    key = variable.unique_id
    if key in gathered:
        gathered[key] = gathered[key] + amount
    else:
        gathered[key] = amount
    # END SOLUTION


def backpropagate(variable: Variable, deriv: Any) -> None:
    """Give every leaf ``variable`` depends on the derivative of ``variable`` with respect to it.

    ``deriv`` is the derivative arriving at ``variable`` itself (``Scalar.backward()`` passes
    1.0). Get the order from the module-level ``topological_sort(variable)`` (call it by that
    name, so it can be swapped out), and keep a dict from ``unique_id`` to the derivative
    gathered so far, starting with ``deriv`` for ``variable``. Walk the order from its start:
    when a variable is reached, every variable that uses it has already been processed, so its
    entry is complete. A leaf gets its entry through ``accumulate_derivative`` (which adds to
    whatever earlier ``backward`` calls left there); any other variable passes its entry to
    ``chain_rule`` and each (input, derivative) pair it returns is added to the input's entry
    with ``_add_contribution``, constants skipped. Nothing is returned and nothing is reset.
    """
    # BEGIN SOLUTION [minitorch.backward; minitorch.accumulate]:
    #   seed the dict with deriv, then walk the order: leaves accumulate, the rest chain_rule
    gathered: dict[int, Any] = {variable.unique_id: deriv}
    for node in topological_sort(variable):
        d_node = gathered.pop(node.unique_id, 0.0)
        if node.is_leaf():
            node.accumulate_derivative(d_node)
            continue
        for parent, d_parent in node.chain_rule(d_node):
            if not parent.is_constant():
                _add_contribution(gathered, parent, d_parent)
    # END SOLUTION


@dataclass
class Context:
    """What a function's ``forward`` leaves for its ``backward``.

    Attributes:
        no_grad: when True, ``save_for_backward`` keeps nothing.
        saved_values: the values last given to ``save_for_backward``, as a tuple (empty until
            then); ``saved_tensors`` is another name for it.
    """

    no_grad: bool = False
    saved_values: tuple[Any, ...] = ()

    def save_for_backward(self, *values: Any) -> None:
        """Keep ``values`` (all of them, as one tuple) for the backward pass."""
        if not self.no_grad:
            self.saved_values = values

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        return self.saved_values
