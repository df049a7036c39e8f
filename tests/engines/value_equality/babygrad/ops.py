"""babygrad's ops written with numpy in backward, unlike the reference in the details: a loop
that sums broadcast axes away one at a time, ``np.expand_dims`` to undo a summation, an inverse
permutation built by hand, matmul gradients summed over batch axes with ``np.sum``."""

import numpy as np

from .tensor import NDArray, Tensor


class Function:
    def __call__(self, *args):
        requires_grad = any(t.requires_grad for t in args)
        out = Tensor(self.forward(*(t.data for t in args)), requires_grad=requires_grad, dtype=None)
        if requires_grad:
            out._op = self
            out._inputs = tuple(args)
        return out

    def forward(self, *args: NDArray) -> NDArray:
        raise NotImplementedError()

    def backward(self, out_grad: Tensor, node: Tensor):
        raise NotImplementedError()


def _t(array):
    return Tensor(array, requires_grad=False)


def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def _inputs(node):
    return [t.data for t in node._inputs]


class Add(Function):
    def forward(self, a, b):
        return a + b

    def backward(self, out_grad, node):
        a, b = _inputs(node)
        return _t(unbroadcast(out_grad.data, a.shape)), _t(unbroadcast(out_grad.data, b.shape))


def add(a, b):
    return Add()(a, b)


class Mul(Function):
    def forward(self, a, b):
        return a * b

    def backward(self, out_grad, node):
        a, b = _inputs(node)
        g = out_grad.data
        return _t(unbroadcast(b * g, a.shape)), _t(unbroadcast(a * g, b.shape))


def mul(a, b):
    return Mul()(a, b)


class Sub(Function):
    def forward(self, a, b):
        return a - b

    def backward(self, out_grad, node):
        a, b = _inputs(node)
        g = out_grad.data
        return _t(unbroadcast(g, a.shape)), _t(unbroadcast(np.negative(g), b.shape))


def sub(a, b):
    return Sub()(a, b)


class Div(Function):
    def forward(self, a, b):
        return a / b

    def backward(self, out_grad, node):
        a, b = _inputs(node)
        quotient = node.data
        g = out_grad.data
        return _t(unbroadcast(g / b, a.shape)), _t(unbroadcast(-g * quotient / b, b.shape))


def divide(a, b):
    return Div()(a, b)


class Pow(Function):
    def forward(self, a, b):
        return a**b

    def backward(self, out_grad, node):
        a, b = _inputs(node)
        g = out_grad.data
        grad_a = g * b * a ** (b - 1)
        grad_b = g * node.data * np.log(a)
        return _t(unbroadcast(grad_a, a.shape)), _t(unbroadcast(grad_b, b.shape))


def power(a, b):
    return Pow()(a, b)


class Negate(Function):
    def forward(self, a):
        return np.negative(a)

    def backward(self, out_grad, node):
        return _t(np.negative(out_grad.data))


def negate(a):
    return Negate()(a)


class Log(Function):
    def forward(self, a):
        return np.log(a)

    def backward(self, out_grad, node):
        (a,) = _inputs(node)
        return _t(out_grad.data / a)


def log(a):
    return Log()(a)


class Exp(Function):
    def forward(self, a):
        return np.exp(a)

    def backward(self, out_grad, node):
        return _t(out_grad.data * node.data)


def exp(a):
    return Exp()(a)


class Sqrt(Function):
    def forward(self, a):
        return np.sqrt(a)

    def backward(self, out_grad, node):
        return _t(0.5 * out_grad.data / node.data)


def sqrt(a):
    return Sqrt()(a)


class Abs(Function):
    def forward(self, a):
        return np.abs(a)

    def backward(self, out_grad, node):
        (a,) = _inputs(node)
        return _t(np.where(a < 0, -out_grad.data, np.where(a > 0, out_grad.data, 0.0)))


def abs(a):  # noqa: A001
    return Abs()(a)


class ReLU(Function):
    def forward(self, a):
        return np.where(a > 0, a, 0.0)

    def backward(self, out_grad, node):
        (a,) = _inputs(node)
        return _t(np.where(a > 0, out_grad.data, 0.0))


def relu(a):
    return ReLU()(a)


class Sigmoid(Function):
    def forward(self, a):
        return np.exp(-np.logaddexp(0.0, -a))

    def backward(self, out_grad, node):
        s = node.data
        return _t(out_grad.data * s * (1.0 - s))


def sigmoid(a):
    return Sigmoid()(a)


class Tanh(Function):
    def forward(self, a):
        return np.tanh(a)

    def backward(self, out_grad, node):
        return _t(out_grad.data * (1.0 - np.square(node.data)))


def tanh(a):
    return Tanh()(a)


class Reshape(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        return np.reshape(a, self.shape)

    def backward(self, out_grad, node):
        (a,) = _inputs(node)
        return _t(out_grad.data.reshape(a.shape))


def reshape(a, shape):
    return Reshape(shape)(a)


class Transpose(Function):
    def __init__(self, axes=None):
        self.axes = axes

    def _permutation(self, ndim):
        if self.axes is not None:
            return list(self.axes)
        order = list(range(ndim))
        order[-1], order[-2] = order[-2], order[-1]
        return order

    def forward(self, a):
        return np.transpose(a, self._permutation(a.ndim))

    def backward(self, out_grad, node):
        permutation = self._permutation(out_grad.ndim)
        inverse = [0] * len(permutation)
        for position, axis in enumerate(permutation):
            inverse[axis] = position
        return _t(np.transpose(out_grad.data, inverse))


def transpose(a, axes=None):
    return Transpose(axes)(a)


class Summation(Function):
    def __init__(self, axes=None):
        self.axes = axes

    def forward(self, a):
        return np.sum(a, axis=self.axes)

    def backward(self, out_grad, node):
        (a,) = _inputs(node)
        axes = tuple(range(a.ndim)) if self.axes is None else self.axes
        g = np.expand_dims(out_grad.data, axes)
        return _t(np.broadcast_to(g, a.shape).copy())


def summation(a, axes=None):
    return Summation(axes)(a)


class BroadcastTo(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        return np.broadcast_to(a, self.shape).copy()

    def backward(self, out_grad, node):
        (a,) = _inputs(node)
        return _t(unbroadcast(out_grad.data, a.shape))


def broadcast_to(a, shape):
    return BroadcastTo(shape)(a)


class MatMul(Function):
    def forward(self, a, b):
        return a @ b

    def backward(self, out_grad, node):
        a, b = _inputs(node)
        g = out_grad.data
        grad_a = g @ np.swapaxes(b, -1, -2)
        grad_b = np.swapaxes(a, -1, -2) @ g
        return _t(unbroadcast(grad_a, a.shape)), _t(unbroadcast(grad_b, b.shape))


def matmul(a, b):
    return MatMul()(a, b)


class AddScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        return a + self.scalar

    def backward(self, out_grad, node):
        return _t(out_grad.data)


def add_scalar(a, scalar):
    return AddScalar(scalar)(a)


class MulScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        return a * self.scalar

    def backward(self, out_grad, node):
        return _t(self.scalar * out_grad.data)


def mul_scalar(a, scalar):
    return MulScalar(scalar)(a)


class DivScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        return a / self.scalar

    def backward(self, out_grad, node):
        return _t(out_grad.data / self.scalar)


def divide_scalar(a, scalar):
    return DivScalar(scalar)(a)


class PowerScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        return a**self.scalar

    def backward(self, out_grad, node):
        (a,) = _inputs(node)
        return _t(out_grad.data * self.scalar * a ** (self.scalar - 1))


def power_scalar(a, scalar):
    return PowerScalar(scalar)(a)
