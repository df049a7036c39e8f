"""micrograd's ``Value`` (Karpathy's lecture API), written another way round.

Differences from the course reference, none of them visible through the API:

- every op states its local derivatives when the node is built, and one helper (``_attach``)
  turns them into the node's ``_backward`` closure;
- ``tanh`` is built from ``math.exp`` (in a form that cannot overflow), not ``math.tanh``;
- ``-``, unary ``-`` and ``/`` have closures of their own instead of being composed from
  ``+``, ``*`` and ``**``; the reflected forms wrap the number and use the forward operator;
- ``backward`` orders the graph with an explicit stack instead of recursion (so deep chains
  work), still inside a nested ``build_topo`` and still with a visited set.
"""

import math


def _attach(out, *links):
    """Give ``out`` a closure that adds ``local * out.grad`` to each ``(operand, local)``.

    An operand listed twice (``a * a``) simply receives two contributions.
    """

    def _backward():
        for operand, local in links:
            operand.grad += local * out.grad

    out._backward = _backward
    return out


def _as_value(x):
    return x if isinstance(x, Value) else Value(x)


class Value:
    """A scalar with a gradient slot; see the module docstring."""

    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    # binary operations ------------------------------------------------------------------

    def __add__(self, other):
        other = _as_value(other)
        out = Value(self.data + other.data, (self, other), "+")
        return _attach(out, (self, 1), (other, 1))

    def __sub__(self, other):
        other = _as_value(other)
        out = Value(self.data - other.data, (self, other), "-")
        return _attach(out, (self, 1), (other, -1))

    def __mul__(self, other):
        other = _as_value(other)
        out = Value(self.data * other.data, (self, other), "*")
        return _attach(out, (self, other.data), (other, self.data))

    def __truediv__(self, other):
        other = _as_value(other)
        inverse = 1 / other.data
        out = Value(self.data * inverse, (self, other), "/")
        # d(a/b)/da = 1/b and d(a/b)/db = -a/b**2
        return _attach(out, (self, inverse), (other, -self.data * inverse * inverse))

    def __pow__(self, exponent):
        """``self ** exponent`` for an int or float exponent only."""
        if not isinstance(exponent, (int, float)):
            raise TypeError("Value ** only takes an int or float exponent")
        out = Value(self.data**exponent, (self,), f"**{exponent}")
        return _attach(out, (self, exponent * self.data ** (exponent - 1)))

    # reflected and unary forms ------------------------------------------------------------

    def __radd__(self, other):
        return _as_value(other) + self

    def __rsub__(self, other):
        return _as_value(other) - self

    def __rmul__(self, other):
        return _as_value(other) * self

    def __rtruediv__(self, other):
        return _as_value(other) / self

    def __neg__(self):
        out = Value(-self.data, (self,), "neg")
        return _attach(out, (self, -1))

    # functions ----------------------------------------------------------------------------

    def relu(self):
        """max(0, x); no gradient for x <= 0 (none at exactly 0 either)."""
        positive = self.data > 0
        out = Value(self.data if positive else 0, (self,), "ReLU")
        return _attach(out, (self, 1 if positive else 0))

    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")
        return _attach(out, (self, out.data))

    def tanh(self):
        # tanh(x) = sign(x) * (1 - e**(-2|x|)) / (1 + e**(-2|x|)), which never overflows
        x = self.data
        shrink = math.exp(-2 * abs(x))
        t = math.copysign((1 - shrink) / (1 + shrink), x)
        out = Value(t, (self,), "tanh")
        # 1 - t**2 = 4 e**(-2|x|) / (1 + e**(-2|x|))**2, without cancellation near |t| = 1
        return _attach(out, (self, 4 * shrink / (1 + shrink) ** 2))

    # backpropagation ----------------------------------------------------------------------

    def backward(self):
        def build_topo(root):
            order, visited = [], set()
            stack = [(root, False)]
            while stack:
                node, children_done = stack.pop()
                if children_done:
                    order.append(node)
                elif node not in visited:
                    visited.add(node)
                    stack.append((node, True))
                    for child in node._prev:
                        if child not in visited:
                            stack.append((child, False))
            return order

        topo = build_topo(self)
        self.grad = 1
        for node in topo[::-1]:
            node._backward()
