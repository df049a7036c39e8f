"""A tensor course whose ops are op classes (babygrad, needle) through the protocol, in the
course's spelling (``TensorApi``): an op is its class called on tensors, asked alone with
``backward(out_grad, node)``; every tensor keeps its ``.grad``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from grader.language.graphs import Node
from grader.language.tensor_api import TensorApi
from grader.worker.probes.build import api_namespace, api_of
from grader.worker.probes.stand_ins import given_sum
from grader.worker.shapes.base import Nodes, OnBackward, Shape, Weights, paired


class Tensors(Shape):
    """``made``: each result's op object and how many inputs it took."""

    def __init__(self, engine: Any) -> None:
        super().__init__(engine)
        self.api: TensorApi = api_of(engine)

    def leaf(self, data: Any) -> Any:
        return self.api.make_leaf(self.engine.Tensor, data, True)

    def value(self, node: Any) -> Any:
        return self.api.read(node)

    def grad(self, node: Any) -> Any:
        """A tensor that has none yet (None, or no ``grad`` attribute at all, as needle's
        before a backward reaches it) has None."""
        grad = getattr(node, "grad", None)
        return None if grad is None else self.api.read(grad, array_or_tensor=True)

    def apply(self, op: Node, inputs: Sequence[Any]) -> Any:
        """The op's class called, as a student's operator would (``ops.Transpose((1, 0))``)."""
        function = eval(  # noqa: S307
            self.api.function_source(op), api_namespace(self.engine, "tensor")
        )
        out = function(*(inputs[a] for a in op.args))
        self.made[id(out)] = (function, len(op.args))
        return out

    def out_grad(self, out: Any, array: Any) -> tuple[Any, Callable[[], Any] | None]:
        upstream = self.api.make_leaf(self.engine.Tensor, np.asarray(array), False)
        return upstream, lambda: self.api.read(upstream)

    def gradients(self, out: Any, out_grad: Any) -> list[Any]:
        """``backward(out_grad, node)`` of the op that made ``out``: a bare tensor for one
        input, or a tuple."""
        function, count = self.made[id(out)]
        grads = getattr(function, self.api.backward)(out_grad, out)
        grads = paired(grads, count, f"{self.api.backward} returned {{}} gradients")
        return [self.api.read(g, array_or_tensor=True) for g in grads]

    def stand_in(self, weights: Weights, inputs: Nodes, on_backward: OnBackward = None) -> Any:
        """The grader's op (a subclass of the course's op base class) called on ``inputs``."""
        given = given_sum(self.engine, on_backward or (lambda node: None))
        return given(list(weights))(*inputs)
