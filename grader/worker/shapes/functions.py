"""A scalar course whose ops are ``Function`` classes (MiniTorch's) through the protocol: an
op is ``Fn.apply(*scalars)``, asked alone with ``Fn.backward(ctx, d_output)`` on the context
its forward filled in; only a leaf keeps a derivative."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from grader.language.function_api import FunctionApi
from grader.language.graphs import Node
from grader.language.package import resolve
from grader.worker.probes.stand_ins import given_function
from grader.worker.shapes.base import Nodes, OnBackward, Shape, Weights, paired


class Functions(Shape):
    """``made``: each result's function and how many inputs it took."""

    kind = "scalar"
    op_gradient = "derivative {i}"
    every_grad = False

    def __init__(self, engine: Any) -> None:
        super().__init__(engine)
        self.api: FunctionApi = engine.api
        self.gradient_name = self.api.derivative

    def leaf(self, data: Any) -> Any:
        return self.api.make_leaf(resolve(self.engine.package, self.api.scalar), data)

    def value(self, node: Any) -> Any:
        return node.data

    def grad(self, node: Any) -> Any:
        """A leaf's derivative; None (it never got one) is 0.0, as the API documents."""
        derivative = getattr(node, self.api.derivative)
        return 0.0 if derivative is None else derivative

    def apply(self, op: Node, inputs: Sequence[Any]) -> Any:
        function = resolve(self.engine.package, self.api.classes[op.op])
        out = getattr(function, self.api.apply)(*(inputs[a] for a in op.args))
        self.made[id(out)] = (function, len(op.args))
        return out

    def out_grad(self, out: Any, array: Any) -> tuple[Any, Callable[[], Any] | None]:
        return float(array), None  # a float: nothing the backward could change

    def gradients(self, out: Any, out_grad: Any) -> list[Any]:
        """``Fn.backward(ctx, d_output)``: a float for one input, a tuple otherwise."""
        function, count = self.made[id(out)]
        grads = getattr(function, self.api.backward)(resolve(out, self.api.context), out_grad)
        return paired(grads, count, f"{self.api.backward} returned {{}} derivatives")

    def stand_in(self, weights: Weights, inputs: Nodes, on_backward: OnBackward = None) -> Any:
        """The grader's function (a subclass of the course's ``Function``), applied with the
        course's ``apply``."""
        base = resolve(self.engine.package, self.api.function)
        function = given_function(base, self.api, list(weights), on_backward or (lambda d: None))
        return getattr(function, self.api.apply)(*inputs)
