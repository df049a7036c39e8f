"""An engine graded through its course's adapter (``grader.language.adapters``) as the
protocol: the adapter's ``load``, ``leaf``, ``value``, ``apply`` and ``gradients``, and the
walk: the student's, through the adapter's walk hooks (``record``, ``walk``, ``grad``), or
else the grader's.

The grader's walk is for a course that gives its students ``Tensor.backward`` and does not
grade it (TinyTorch's loses paths through a tensor used twice): each node's op is asked for
its inputs' gradients once, newest node first, and what reaches each node is summed. The
student's walk (CMU 11-785's tape) gets a fresh tape, every op node made recorded on it in
the order they were made, then runs. Nothing is differentiated here: every gradient is the
student's op's answer or the grader's stand-in's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from grader.language.adapters import WALK_HOOKS
from grader.language.graphs import Graph, Node
from grader.worker.encoding import ProbeError
from grader.worker.shapes.base import Nodes, OnBackward, Shape, Weights

Backward = Callable[[Any], list[Any]]
"""The grader's stand-in's backward: each input's gradient, given the output's."""
Ledger = tuple[Callable[[Any, Any], None], Callable[[Any], Any]]
"""A student's ledger, as an adapter's ``ledger`` gives it: add a gradient into a tensor's
entry, and read a tensor's entry (None: none)."""


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
        self.walks = all(hasattr(self.adapter, name) for name in WALK_HOOKS)
        """Is the walk the student's (the adapter's walk hooks)?"""
        self.backwards: list[Backward | None] = []
        """Each node's backward as it is recorded: None for the student's own op (or a leaf),
        the grader's stand-in's otherwise."""
        self.tape: Any = None
        """The student's tape of the last walk (the adapter's ``tape``)."""
        self.ledger: Ledger | None = None
        """The student's ledger the grader's last walk summed into (the adapter's
        ``ledger``)."""

    def _made(self, node: Any, args: list[int], backward: Backward | None = None) -> Any:
        self.nodes.append(node)
        self.args.append(args)
        self.backwards.append(backward)
        return node

    def _index(self, node: Any) -> int:
        return next(i for i, made in enumerate(self.nodes) if made is node)

    def leaf(self, data: Any) -> Any:
        return self._made(self.adapter.leaf(self.engine, np.asarray(data, np.float64)), [])

    def value(self, node: Any) -> Any:
        return self.adapter.value(node)

    def grad(self, node: Any) -> Any:
        """What the student's walk left for ``node`` (None: nothing), or what the grader's
        summed into it (zero where nothing reached it)."""
        if self.ledger is not None:
            return self.ledger[1](node)
        if self.walks:
            return None if self.tape is None else self.adapter.grad(self.tape, node)
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

    def walk(self, root: Any, out_grad: Any = None, ledger: bool = False) -> None:
        """The student's walk from ``root`` handed ``out_grad`` (None: ones) on a fresh tape
        of theirs, every op node made recorded on it first, in order; with ``ledger``, where
        the adapter gives the student's ledger apart (``ledger``), the grader's walk over it
        instead; without the walk hooks, the grader's walk over its own ledger."""
        if out_grad is None:
            out_grad = np.ones_like(np.asarray(self.adapter.value(root), np.float64))
        out_grad = np.asarray(out_grad, np.float64)
        if not self.walks:
            self._graders_walk(root, out_grad)
            return
        self.tape = self.adapter.tape(self.engine)
        if ledger and hasattr(self.adapter, "ledger"):
            self.ledger = self.adapter.ledger(self.tape)
            self._graders_walk(root, out_grad, self.ledger)
            return
        for index, args in enumerate(self.args):
            if args:
                inputs = [self.nodes[a] for a in args]
                self.adapter.record(self.tape, inputs, self.nodes[index], self.backwards[index])
        self.adapter.walk(self.tape, root, out_grad)

    def _graders_walk(self, root: Any, out_grad: Any, ledger: Ledger | None = None) -> None:
        """Each op asked once, newest first, from ``root`` (the last node made), what reaches
        each node summed in ``ledger`` (the student's ``add`` and ``get``) or the grader's
        own (``upstream``)."""
        last = len(self.nodes) - 1
        if self.nodes[last] is not root:
            raise ProbeError("the grader's walk starts at the last node made")
        self.upstream = [None] * len(self.nodes)
        self.upstream[last] = out_grad
        for index in range(last, -1, -1):
            if not self.args[index]:
                continue
            upstream = (
                self.upstream[index]
                if ledger is None or index == last
                else ledger[1](self.nodes[index])
            )
            if upstream is None:
                continue
            backward = self.backwards[index]
            grads = self._gradients_at(index, upstream) if backward is None else backward(upstream)
            for arg, grad in zip(self.args[index], grads, strict=True):
                if ledger is not None:
                    ledger[0](self.nodes[arg], grad)
                    continue
                before = self.upstream[arg]
                self.upstream[arg] = grad if before is None else before + grad

    def stand_in(
        self,
        weights: Weights,
        inputs: Nodes,
        on_backward: OnBackward = None,
        hands_back: bool = False,
    ) -> Any:
        """The grader's weighted-sum op over ``inputs``, recorded on the student's tape at the
        next walk: its value the weighted sum, its backward each weight times ``out_grad``
        (``on_backward`` told the output first); with ``hands_back``, ``out_grad`` itself to
        every input of weight 1, as the course's add_backward may hand it back."""
        if not self.walks:
            raise ProbeError("a course adapter's engine is graded on its own ops only")
        values = [np.asarray(self.adapter.value(x), np.float64) for x in inputs]
        total = sum(w * v for w, v in zip(weights, values, strict=True))
        out = self.adapter.leaf(self.engine, np.asarray(total, np.float64))

        def backward(out_grad: Any) -> list[Any]:
            if on_backward is not None:
                on_backward(out)
            grad = np.asarray(out_grad)
            return [
                grad if hands_back and w == 1.0 else w * np.asarray(grad, np.float64)
                for w in weights
            ]

        return self._made(out, [self._index(x) for x in inputs], backward)
