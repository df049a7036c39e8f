"""An engine graded through its course's adapter (``grader.language.adapters``) as the
protocol: the adapter's ``load``, ``leaf``, ``value``, ``apply`` and ``gradients``, and the
grader's walk.

The walk here is the grader's: a course that gives its students ``Tensor.backward`` is not
graded on it (TinyTorch's loses paths through a tensor used twice), so each node's op is asked
for its inputs' gradients once, newest node first, and what reaches each node is summed.
Nothing is differentiated here: every gradient is the student's op's answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from grader.language.graphs import Graph, Node
from grader.worker.encoding import ProbeError
from grader.worker.shapes.base import Nodes, OnBackward, Shape, Weights


class Adapted(Shape):
    every_grad = False

    def __init__(self, engine: Any) -> None:
        self.adapter = engine.adapter
        self.engine = engine.engine
        self.nodes: list[Any] = []
        """Every node made, in order: the grader's walk goes over them newest first."""
        self.args: list[list[int]] = []
        """Each node's inputs, by their place in ``nodes`` (none for a leaf)."""
        self.upstream: list[np.ndarray | None] = []
        """What the grader's walk summed into each node."""

    def _made(self, node: Any, args: list[int]) -> Any:
        self.nodes.append(node)
        self.args.append(args)
        return node

    def _index(self, node: Any) -> int:
        return next(i for i, made in enumerate(self.nodes) if made is node)

    def leaf(self, data: Any) -> Any:
        return self._made(self.adapter.leaf(self.engine, np.asarray(data, np.float64)), [])

    def value(self, node: Any) -> Any:
        return self.adapter.value(node)

    def grad(self, node: Any) -> Any:
        """What the grader's walk summed into ``node``: zero where nothing reached it."""
        index = self._index(node)
        upstream = self.upstream[index] if index < len(self.upstream) else None
        return np.zeros_like(self._value(index)) if upstream is None else upstream

    def _value(self, index: int) -> np.ndarray:
        return np.asarray(self.adapter.value(self.nodes[index]), np.float64)

    def apply(self, op: Node, inputs: Sequence[Any]) -> Any:
        operands = [inputs[a] for a in op.args]
        out = self.adapter.apply(self.engine, op.op, operands, op.param)
        return self._made(out, [self._index(x) for x in operands])

    def build(self, graph: Graph, watch: Any = None) -> list[Any]:
        """Each leaf, then each node applied in turn (watched as the snippet's lines are)."""
        step = watch.steps(self.value, len(graph.leaves)) if watch is not None else None
        nodes: list[Any] = []
        for value in graph.leaves:
            nodes.append(self.leaf(value))
            if step is not None:
                step(len(nodes) - 1, nodes[-1])
        for node in graph.nodes:
            out = self.adapter.apply(
                self.engine, node.op, [nodes[a] for a in node.args], node.param
            )
            nodes.append(self._made(out, list(node.args)))
            if step is not None:
                step(len(nodes) - 1, nodes[-1])
        return nodes

    def out_grad(self, out: Any, array: Any) -> tuple[Any, Callable[[], Any] | None]:
        return np.asarray(array), None

    def gradients(self, out: Any, out_grad: Any) -> list[Any]:
        """The op's answer for each input: None (no gradient) is zero, as the course's walk
        skips it."""
        return self._gradients_at(self._index(out), out_grad)

    def _gradients_at(self, index: int, out_grad: Any) -> list[Any]:
        out = self.nodes[index]
        inputs = [self.nodes[a] for a in self.args[index]]
        grads = list(self.adapter.gradients(self.engine, out, out_grad))
        if len(grads) != len(inputs):
            raise ProbeError(f"apply returned {len(grads)} gradients for {len(inputs)} inputs")
        return [
            np.zeros(np.shape(self.adapter.value(x))) if g is None else np.asarray(g)
            for g, x in zip(grads, inputs, strict=True)
        ]

    def walk(self, root: Any) -> None:
        """The grader's walk: each op asked once, newest first, for a gradient of ones at
        ``root`` (the last node made)."""
        last = len(self.nodes) - 1
        if self.nodes[last] is not root:
            raise ProbeError("the grader's walk starts at the last node made")
        self.upstream = [None] * len(self.nodes)
        self.upstream[last] = np.ones_like(self._value(last))
        for index in range(last, -1, -1):
            if self.upstream[index] is None or not self.args[index]:
                continue
            grads = self._gradients_at(index, self.upstream[index])
            for arg, grad in zip(self.args[index], grads, strict=True):
                before = self.upstream[arg]
                self.upstream[arg] = grad if before is None else before + grad

    def stand_in(self, weights: Weights, inputs: Nodes, on_backward: OnBackward = None) -> Any:
        raise ProbeError("a course adapter's engine is graded on its own ops only")
