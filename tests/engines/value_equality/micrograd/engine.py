"""A correct micrograd written unlike the reference, the way other students write it: Values
compare and hash by value, plain numbers are never wrapped (``_prev`` holds only the Values an
op used, ``a + 2.0`` has one operand), ``-``, ``/`` and the reflected forms have closures of
their own, tanh comes from ``expm1`` guarded against overflow, and ``backward()`` walks the
graph with a consumer count (Kahn's algorithm) of its own instead of calling ``build_topo``.
The grader must give it full marks, the extra-credit deep chain included."""

import math


def _data(x):
    return x.data if isinstance(x, Value) else x


class Value:
    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op

    def __eq__(self, other):
        return isinstance(other, Value) and self.data == other.data

    def __hash__(self):
        return hash(self.data)

    def __repr__(self):
        return f"Value({self.data!r})"

    def _node(self, data, other, op, local_self, local_other):
        """The result of a binary op; ``local_*`` are the local derivatives (``other`` gets a
        gradient only if it is a Value)."""
        operands = (self, other) if isinstance(other, Value) else (self,)
        out = Value(data, operands, op)

        def _backward():
            self.grad += local_self * out.grad
            if isinstance(other, Value):
                other.grad += local_other * out.grad

        out._backward = _backward
        return out

    def __add__(self, other):
        return self._node(self.data + _data(other), other, "+", 1.0, 1.0)

    def __radd__(self, other):
        return self._node(other + self.data, other, "+", 1.0, 1.0)

    def __sub__(self, other):
        return self._node(self.data - _data(other), other, "-", 1.0, -1.0)

    def __rsub__(self, other):
        return self._node(other - self.data, other, "-", -1.0, 1.0)

    def __mul__(self, other):
        return self._node(self.data * _data(other), other, "*", _data(other), self.data)

    def __rmul__(self, other):
        return self._node(other * self.data, other, "*", other, self.data)

    def __truediv__(self, other):
        d = _data(other)
        return self._node(self.data / d, other, "/", 1.0 / d, -self.data / (d * d))

    def __rtruediv__(self, other):
        return self._node(
            other / self.data, other, "/", -other / (self.data * self.data), 1.0 / self.data
        )

    def __neg__(self):
        return self._node(-self.data, None, "neg", -1.0, 0.0)

    def __pow__(self, k):
        return self._node(self.data**k, None, f"**{k}", k * self.data ** (k - 1), 0.0)

    def tanh(self):
        x = self.data
        if abs(x) > 20.0:
            t = math.copysign(1.0, x)
        else:
            e = math.expm1(2.0 * x)
            t = e / (e + 2.0)
        return self._node(t, None, "tanh", 1.0 - t * t, 0.0)

    def exp(self):
        e = math.exp(self.data)
        return self._node(e, None, "exp", e, 0.0)

    def relu(self):
        positive = self.data > 0
        return self._node(self.data if positive else 0.0, None, "relu", float(positive), 0.0)

    def backward(self):
        consumers = {id(self): 0}
        stack = [self]
        while stack:
            node = stack.pop()
            for child in node._prev:
                if id(child) not in consumers:
                    consumers[id(child)] = 0
                    stack.append(child)
                consumers[id(child)] += 1
        self.grad = 1.0
        ready = [self]
        while ready:
            node = ready.pop()
            node._backward()
            for child in node._prev:
                consumers[id(child)] -= 1
                if consumers[id(child)] == 0:
                    ready.append(child)


def build_topo(root):
    order = []
    seen = {id(root)}
    stack = [[root, 0]]
    while stack:
        frame = stack[-1]
        node, position = frame
        if position == len(node._prev):
            stack.pop()
            order.append(node)
            continue
        frame[1] += 1
        child = node._prev[position]
        if id(child) not in seen:
            seen.add(id(child))
            stack.append([child, 0])
    return order


def zero_grad(root):
    for node in build_topo(root):
        node.grad = 0.0
