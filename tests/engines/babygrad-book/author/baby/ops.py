"""The reader's ops: every backward built from the ops themselves, as the book advises (no
numpy in a backward pass), named as the book's author names his functions."""

import numpy as np

from .tensor import NDArray, Tensor, _ensure_tensor


class Function:
    def __call__(self, *inputs):
        tensors = [_ensure_tensor(i) for i in inputs]
        requires_grad = any(t.requires_grad for t in tensors)
        output = Tensor(self.forward(*[t.data for t in tensors]), requires_grad=requires_grad)
        if requires_grad:
            output._op = self
            output._inputs = tensors
        return output

    def forward(self, *args):
        raise NotImplementedError

    def backward(self, out_grad, node):
        raise NotImplementedError


class Add(Function):
    def forward(self, a: NDArray, b: NDArray):
        return a + b

    def backward(self, out_grad, node):
        return out_grad, out_grad


def add(a, b):
    return Add()(a, b)


class AddScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        return a + self.scalar

    def backward(self, out_grad, node):
        return out_grad


def add_scalar(a, scalar):
    return AddScalar(scalar)(a)


class Mul(Function):
    def forward(self, a, b):
        return a * b

    def backward(self, out_grad, node):
        a, b = node._inputs
        return multiply(out_grad, b), multiply(out_grad, a)


def multiply(a, b):
    return Mul()(a, b)


class MulScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        return a * self.scalar

    def backward(self, out_grad, node):
        return (mul_scalar(out_grad, self.scalar),)


def mul_scalar(a, scalar):
    return MulScalar(scalar)(a)


class Sub(Function):
    def forward(self, a, b):
        return a - b

    def backward(self, out_grad, node):
        return out_grad, negate(out_grad)


class Div(Function):
    def forward(self, a, b):
        return a / b

    def backward(self, out_grad, node):
        x, y = node._inputs
        return divide(out_grad, y), multiply(negate(out_grad), divide(x, multiply(y, y)))


def divide(a, b):
    return Div()(a, b)


class DivScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        return np.array(a / self.scalar, dtype=a.dtype)

    def backward(self, out_grad, node):
        return divide_scalar(out_grad, self.scalar)


def divide_scalar(a, scalar):
    return DivScalar(scalar)(a)


class Pow(Function):
    def forward(self, a, b):
        return np.power(a, b)

    def backward(self, out_grad, node):
        a, b = node._inputs
        grad_a = multiply(multiply(out_grad, b), power(a, add_scalar(b, -1)))
        grad_b = multiply(multiply(out_grad, node), log(a))
        return grad_a, grad_b


def power(a, b):
    return Pow()(a, b)


class PowerScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        return np.power(a, self.scalar)

    def backward(self, out_grad, node):
        inp = node._inputs[0]
        return multiply(out_grad, mul_scalar(power_scalar(inp, self.scalar - 1), self.scalar))


def power_scalar(a, scalar):
    return PowerScalar(scalar)(a)


class Negate(Function):
    def forward(self, a):
        return -a

    def backward(self, out_grad, node):
        return negate(out_grad)


def negate(a):
    return Negate()(a)


class Log(Function):
    def forward(self, a):
        return np.log(a)

    def backward(self, out_grad, node):
        return divide(out_grad, node._inputs[0])


def log(a):
    return Log()(a)


class Exp(Function):
    def forward(self, a):
        return np.exp(a)

    def backward(self, out_grad, node):
        return multiply(out_grad, exp(node._inputs[0]))


def exp(a):
    return Exp()(a)


class Sqrt(Function):
    def forward(self, a):
        return np.sqrt(a)

    def backward(self, out_grad, node):
        return divide(out_grad, mul_scalar(node, 2))


def sqrt(a):
    return Sqrt()(a)


class Abs(Function):
    def forward(self, a):
        return np.abs(a)

    def backward(self, out_grad, node):
        sign = Tensor(np.sign(node._inputs[0].data))
        return multiply(out_grad, sign)


class ReLU(Function):
    def forward(self, a):
        return a * (a > 0)

    def backward(self, out_grad, node):
        # 1 at exactly 0 too: the book leaves the kink to the reader
        mask = Tensor((node._inputs[0].data >= 0).astype("float32"))
        return multiply(out_grad, mask)


def relu(a):
    return ReLU()(a)


class Sigmoid(Function):
    def forward(self, a):
        return 1 / (1 + np.exp(-a))

    def backward(self, out_grad, node):
        one = Tensor(1.0)
        return multiply(out_grad, multiply(node, add(one, negate(node))))


def sigmoid(x):
    return Sigmoid()(x)


class Tanh(Function):
    def forward(self, a):
        return np.tanh(a)

    def backward(self, out_grad, node):
        one = Tensor(1.0)
        return multiply(out_grad, add(one, negate(multiply(node, node))))


def tanh(x):
    return Tanh()(x)


class Reshape(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        return np.reshape(a, self.shape)

    def backward(self, out_grad, node):
        return reshape(out_grad, node._inputs[0].shape)


def reshape(a, shape):
    return Reshape(shape)(a)


class Transpose(Function):
    def __init__(self, axes=None):
        self.axes = axes

    def forward(self, a):
        if self.axes is None:
            return np.swapaxes(a, -1, -2)
        return np.transpose(a, self.axes)

    def backward(self, out_grad, node):
        if self.axes is None:
            return transpose(out_grad)
        return transpose(out_grad, tuple(np.argsort(self.axes)))


def transpose(a, axes=None):
    return Transpose(axes)(a)


class Summation(Function):
    """Sums over a tuple of axes, or all of them: the book's Optional[tuple]."""

    def __init__(self, axes=None):
        self.axes = axes

    def forward(self, a):
        return np.sum(a, self.axes)

    def backward(self, out_grad, node):
        original = node._inputs[0].shape
        if self.axes is None:
            return broadcast_to(reshape(out_grad, (1,) * len(original)), original)
        grad_shape = list(out_grad.shape)
        for axis in sorted(self.axes):
            grad_shape.insert(axis, 1)
        return broadcast_to(reshape(out_grad, tuple(grad_shape)), original)


def summation(a, axes=None):
    return Summation(axes)(a)


class BroadcastTo(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        return np.broadcast_to(a, self.shape)

    def backward(self, out_grad, node):
        original = node._inputs[0].shape
        grad = out_grad
        for _ in range(len(out_grad.shape) - len(original)):
            grad = summation(grad, (0,))
        for i, (was, now) in enumerate(zip(original, grad.shape, strict=True)):
            if was == 1 and now > 1:
                kept = list(grad.shape)
                kept[i] = 1
                grad = reshape(summation(grad, (i,)), tuple(kept))
        return grad


def broadcast_to(a, shape):
    return BroadcastTo(shape)(a)


class MatMul(Function):
    """Two matrices, as the book derives it."""

    def forward(self, a, b):
        return np.matmul(a, b)

    def backward(self, out_grad, node):
        a, b = node._inputs
        return matmul(out_grad, transpose(b)), matmul(transpose(a), out_grad)


def matmul(a, b):
    return MatMul()(a, b)
