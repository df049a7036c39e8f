"""micrograd's ``Value`` as the lecture builds it, and nothing more: ``+``, ``*``, ``**`` by a
number, ``tanh`` and ``exp`` each with a closure of its own; ``2 * a``, ``a / b``, ``-a``,
``a - b`` and ``2 + a`` composed from them; ``backward`` with ``build_topo`` nested inside it.
There is no ``relu``, and no ``2 - a`` or ``2 / a``: the lecture never writes them.
"""

import math


class Value:
    """A number in a graph, with the gradient of the graph's output with respect to it."""

    def __init__(self, data, _children=(), _op="", label=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op
        self.label = label

    def __repr__(self):
        return f"Value(data={self.data})"

    def __add__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        total = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += total.grad
            other.grad += total.grad

        total._backward = _backward
        return total

    def __mul__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        product = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += product.grad * other.data
            other.grad += product.grad * self.data

        product._backward = _backward
        return product

    def __pow__(self, k):
        assert isinstance(k, (int, float)), "a Value is raised to an int or float only"
        power = Value(self.data**k, (self,), f"**{k}")

        def _backward():
            self.grad += power.grad * k * self.data ** (k - 1)

        power._backward = _backward
        return power

    def __rmul__(self, other):
        return self * other

    def __radd__(self, other):
        return self + other

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __truediv__(self, other):
        return self * other**-1

    def tanh(self):
        e2x = math.exp(2 * self.data)
        t = (e2x - 1) / (e2x + 1)
        result = Value(t, (self,), "tanh")

        def _backward():
            self.grad += result.grad * (1 - t * t)

        result._backward = _backward
        return result

    def exp(self):
        result = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += result.grad * result.data

        result._backward = _backward
        return result

    def backward(self):
        order = []
        seen = set()

        def build_topo(node):
            if node in seen:
                return
            seen.add(node)
            for operand in node._prev:
                build_topo(operand)
            order.append(node)

        build_topo(self)
        self.grad = 1.0
        for node in order[::-1]:
            node._backward()
