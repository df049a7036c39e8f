"""A correct babygrad Tensor written unlike the reference: float64 by default, ``==`` compares
elementwise (so a Tensor cannot be hashed), a number on the left of ``/`` becomes a constant
Tensor divided by a ``Div``, and ``backward`` orders the graph with an explicit two-phase stack
and keeps Tensors, not arrays, in its ledger; its methods are made in a loop. The grader must
give it full marks."""

import numpy as np

NDArray = np.ndarray
NUMBERS = (int, float, np.integer, np.floating)


class Tensor:
    __array_ufunc__ = None

    def __init__(self, data, requires_grad=True, dtype="float64"):
        if isinstance(data, Tensor):
            data = data.data
        self.data = np.array(data, dtype=dtype)
        self.grad = None
        self.requires_grad = requires_grad
        self._op = None
        self._inputs = ()

    shape = property(lambda self: self.data.shape)
    ndim = property(lambda self: self.data.ndim)
    dtype = property(lambda self: self.data.dtype)

    def __eq__(self, other):
        return Tensor(self.data == getattr(other, "data", other), requires_grad=False)

    def __repr__(self):
        return f"Tensor({self.data.tolist()})"

    def _constant(self, other):
        return other if isinstance(other, Tensor) else Tensor(other, requires_grad=False)

    def __add__(self, other):
        if isinstance(other, NUMBERS):
            return ops.add_scalar(self, other)
        return ops.add(self, self._constant(other))

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, NUMBERS):
            return ops.add_scalar(self, -other)
        return ops.sub(self, self._constant(other))

    def __rsub__(self, other):
        return ops.add_scalar(ops.negate(self), other)

    def __mul__(self, other):
        if isinstance(other, NUMBERS):
            return ops.mul_scalar(self, other)
        return ops.mul(self, self._constant(other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, NUMBERS):
            return ops.divide_scalar(self, other)
        return ops.divide(self, self._constant(other))

    def __rtruediv__(self, other):
        return ops.divide(self._constant(other), self)

    def __pow__(self, other):
        if isinstance(other, NUMBERS):
            return ops.power_scalar(self, other)
        return ops.power(self, self._constant(other))

    def __neg__(self):
        return ops.negate(self)

    def __matmul__(self, other):
        return ops.matmul(self, self._constant(other))

    def backward(self, grad=None):
        seed = np.ones_like(self.data) if grad is None else getattr(grad, "data", grad)
        order = []
        finished = set()
        stack = [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                finished.add(id(node))
                order.append(node)
            elif id(node) not in finished:
                stack.append((node, True))
                stack.extend(
                    (parent, False)
                    for parent in reversed(node._inputs)
                    if id(parent) not in finished
                )
        ledger = {id(self): Tensor(seed, requires_grad=False)}
        for node in reversed(order):
            if id(node) not in ledger:
                continue
            total = ledger[id(node)]
            if node.requires_grad:
                node.grad = total
            if node._op is None:
                continue
            parts = node._op.backward(total, node)
            for parent, part in zip(node._inputs, _as_tuple(parts), strict=True):
                if id(parent) in ledger:
                    part = Tensor(ledger[id(parent)].data + part.data, requires_grad=False)
                ledger[id(parent)] = part


def _as_tuple(parts):
    return parts if isinstance(parts, tuple | list) else (parts,)


def _method(function):
    def method(self, *args):
        return getattr(ops, function)(self, *args)

    return method


METHODS = {
    "reshape": "reshape",
    "transpose": "transpose",
    "sum": "summation",
    "broadcast_to": "broadcast_to",
    "log": "log",
    "exp": "exp",
    "sqrt": "sqrt",
    "abs": "abs",
    "relu": "relu",
    "sigmoid": "sigmoid",
    "tanh": "tanh",
}
for _name, _function in METHODS.items():
    setattr(Tensor, _name, _method(_function))


from . import ops  # noqa: E402
