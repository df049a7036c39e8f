"""micrograd's shape through the protocol: a ``Value`` per node, each op's gradient a
``_backward`` closure that adds into its operands' ``.grad``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from grader.language.graphs import Node, node_expression
from grader.worker.shapes.base import Nodes, OnBackward, Shape, Weights


class Closures(Shape):
    """``made``: each result's operands, whose ``.grad`` its closure fills."""

    kind = "scalar"
    op_gradient = "{v}.grad"

    def leaf(self, data: Any) -> Any:
        return self.engine.Value(float(data))

    def value(self, node: Any) -> Any:
        return node.data

    def grad(self, node: Any) -> Any:
        return node.grad

    def apply(self, op: Node, inputs: Sequence[Any]) -> Any:
        var = [f"{chr(ord('a') + i)}" if i < 26 else f"v{i}" for i in range(len(inputs))]
        out = eval(  # noqa: S307
            node_expression(op, "micrograd", var), dict(zip(var, inputs, strict=True))
        )
        self.made[id(out)] = [inputs[a] for a in op.args]
        return out

    def out_grad(self, out: Any, array: Any) -> tuple[Any, Callable[[], Any] | None]:
        out.grad = float(np.asarray(array))
        return out.grad, lambda: out.grad

    def gradients(self, out: Any, out_grad: Any) -> list[Any]:
        out._backward()
        return [x.grad for x in self.made[id(out)]]

    def inputs(self, node: Any) -> list[Any] | None:
        return list(node._prev)[:8]

    def stand_in(self, weights: Weights, inputs: Nodes, on_backward: OnBackward = None) -> Any:
        """A ``Value`` of the grader's, holding 0.0 (no walk item reads it), whose closure adds
        each weight times ``out.grad`` into its operand (``on_backward`` told ``out.grad``
        first)."""
        out = self.engine.Value(0.0, tuple(inputs), "given")
        pairs = list(zip(inputs, weights, strict=True))

        def _backward() -> None:
            if on_backward is not None:
                on_backward(out.grad)
            for operand, weight in pairs:
                operand.grad += weight * out.grad

        out._backward = _backward
        return out
