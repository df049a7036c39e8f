"""A babygrad after chapter 3 of the book, written the way its author writes his own engine:
the package called baby and imported by that name (``from baby.tensor import Tensor``), numbers
routed to the scalar ops, a - b composed from Add and Negate, a recursive depth-first order,
gradients kept as numpy arrays, and backward() on a tensor that needs no grad raising as
PyTorch does. Each of these is the reader's choice within the book."""

import numpy as np

NDArray = np.ndarray


def _ensure_tensor(value):
    return value if isinstance(value, Tensor) else Tensor(value, requires_grad=False)


class Tensor:
    def __init__(self, data, *, device=None, dtype="float32", requires_grad=False):
        if isinstance(data, Tensor):
            data = data.numpy()
        self.data = np.asarray(data).astype(dtype)
        self.grad = None
        self.requires_grad = requires_grad
        self._op = None
        self._inputs = []
        self._device = device or "cpu"

    def numpy(self):
        return self.data.copy()

    @property
    def shape(self):
        return self.data.shape

    def __repr__(self):
        return f"Tensor({self.data}, requires_grad={self.requires_grad})"

    def backward(self, grad=None):
        if not self.requires_grad:
            raise RuntimeError("Cannot call backward on a tensor that does not require gradients.")
        topo_order = []
        visited = set()

        def build_topo(node):
            if node in visited:
                return
            visited.add(node)
            for parent in node._inputs:
                build_topo(parent)
            topo_order.append(node)

        build_topo(self)
        seed = Tensor(np.ones_like(self.data)) if grad is None else _ensure_tensor(grad)
        grads = {id(self): seed}
        for node in reversed(topo_order):
            out_grad = grads.get(id(node))
            if out_grad is None:
                continue
            if node.grad is None:
                node.grad = np.array(out_grad.data, copy=True)
            else:
                node.grad += out_grad.data
            if node._op is None:
                continue
            parent_grads = node._op.backward(out_grad, node)
            if not isinstance(parent_grads, tuple):
                parent_grads = (parent_grads,)
            for parent, parent_grad in zip(node._inputs, parent_grads, strict=True):
                if not parent.requires_grad:
                    continue
                if id(parent) in grads:
                    grads[id(parent)] = Tensor(grads[id(parent)].data + parent_grad.data)
                else:
                    grads[id(parent)] = parent_grad

    def __add__(self, other):
        from .ops import Add, AddScalar

        if isinstance(other, Tensor):
            return Add()(self, other)
        return AddScalar(other)(self)

    __radd__ = __add__

    def __mul__(self, other):
        from .ops import Mul, MulScalar

        if isinstance(other, Tensor):
            return Mul()(self, other)
        return MulScalar(other)(self)

    def __sub__(self, other):
        from .ops import Add, AddScalar, Negate

        if isinstance(other, Tensor):
            return Add()(self, Negate()(other))
        return AddScalar(-other)(self)

    def __truediv__(self, other):
        from .ops import Div, DivScalar

        if isinstance(other, Tensor):
            return Div()(self, other)
        return DivScalar(other)(self)

    def __pow__(self, other):
        from .ops import Pow, PowerScalar

        if isinstance(other, Tensor):
            return Pow()(self, other)
        return PowerScalar(other)(self)

    def __neg__(self):
        from .ops import Negate

        return Negate()(self)

    def __matmul__(self, other):
        from .ops import MatMul

        return MatMul()(self, other)

    matmul = __matmul__

    def sum(self, axes=None):
        from .ops import Summation

        return Summation(axes)(self)

    def reshape(self, *shape):
        from .ops import Reshape

        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        return Reshape(shape)(self)

    def transpose(self, axes=None):
        from .ops import Transpose

        return Transpose(axes)(self)

    def broadcast_to(self, shape):
        from .ops import BroadcastTo

        return BroadcastTo(shape)(self)
