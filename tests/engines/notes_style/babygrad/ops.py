"""babygrad's ops as the course notes ask for them: every backward is written with the
engine's own Tensor operations ("do not use NumPy functions directly in the backward pass"),
so gradients are float32 Tensors built by the same ops they differentiate."""

import numpy as np

from .tensor import NDArray, Tensor


class Function:
    def __call__(self, *args):
        requires_grad = any(t.requires_grad for t in args)
        inputs_data = [t.data for t in args]
        output_data = self.forward(*inputs_data)
        output_tensor = Tensor(output_data, requires_grad=requires_grad)
        if requires_grad:
            output_tensor._op = self
            output_tensor._inputs = args
        return output_tensor

    def forward(self, *args: NDArray):
        raise NotImplementedError()

    def backward(self, out_grad, node):
        raise NotImplementedError()


def unbroadcast(grad, shape):
    """Sum ``grad`` (a Tensor) down to ``shape`` with summation and reshape."""
    extra = grad.ndim - len(shape)
    stretched = [extra + i for i, n in enumerate(shape) if n == 1 and grad.shape[extra + i] != 1]
    axes = tuple(range(extra)) + tuple(stretched)
    if not axes:
        return grad
    return reshape(summation(grad, axes), shape)


class Add(Function):
    def forward(self, a: NDArray, b: NDArray):
        return a + b

    def backward(self, out_grad, node):
        a, b = node._inputs
        return unbroadcast(out_grad, a.shape), unbroadcast(out_grad, b.shape)


def add(a, b):
    return Add()(a, b)


class Mul(Function):
    def forward(self, a: NDArray, b: NDArray):
        return a * b

    def backward(self, out_grad, node):
        a, b = node._inputs
        return unbroadcast(out_grad * b, a.shape), unbroadcast(out_grad * a, b.shape)


def mul(a, b):
    return Mul()(a, b)


class Sub(Function):
    def forward(self, a: NDArray, b: NDArray):
        return a - b

    def backward(self, out_grad, node):
        a, b = node._inputs
        return unbroadcast(out_grad, a.shape), unbroadcast(-out_grad, b.shape)


def sub(a, b):
    return Sub()(a, b)


class Div(Function):
    def forward(self, a: NDArray, b: NDArray):
        return a / b

    def backward(self, out_grad, node):
        a, b = node._inputs
        return (unbroadcast(out_grad / b, a.shape), unbroadcast(-out_grad * a / (b * b), b.shape))


def divide(a, b):
    return Div()(a, b)


class Pow(Function):
    def forward(self, a: NDArray, b: NDArray):
        return np.power(a, b)

    def backward(self, out_grad, node):
        a, b = node._inputs
        grad_a = out_grad * b * a ** (b - 1)
        grad_b = out_grad * node * log(a)
        return unbroadcast(grad_a, a.shape), unbroadcast(grad_b, b.shape)


def power(a, b):
    return Pow()(a, b)


class Negate(Function):
    def forward(self, a: NDArray):
        return -a

    def backward(self, out_grad, node):
        return -out_grad


def negate(a):
    return Negate()(a)


class Log(Function):
    def forward(self, a: NDArray):
        return np.log(a)

    def backward(self, out_grad, node):
        return out_grad / node._inputs[0]


def log(a):
    return Log()(a)


class Exp(Function):
    def forward(self, a: NDArray):
        return np.exp(a)

    def backward(self, out_grad, node):
        return out_grad * node


def exp(a):
    return Exp()(a)


class Sqrt(Function):
    def forward(self, a: NDArray):
        return np.sqrt(a)

    def backward(self, out_grad, node):
        return out_grad / (2 * node)


def sqrt(a):
    return Sqrt()(a)


class Abs(Function):
    def forward(self, a: NDArray):
        return np.abs(a)

    def backward(self, out_grad, node):
        a = node._inputs[0]
        return out_grad * Tensor(np.sign(a.data), requires_grad=False)  # 0 at a == 0


def abs(a):  # noqa: A001  (the notes' name)
    return Abs()(a)


class ReLU(Function):
    def forward(self, a: NDArray):
        return a * (a > 0)

    def backward(self, out_grad, node):
        a = node._inputs[0]
        return out_grad * Tensor(a.data > 0, requires_grad=False)


def relu(a):
    return ReLU()(a)


class Sigmoid(Function):
    def forward(self, a: NDArray):
        return 1 / (1 + np.exp(-a))

    def backward(self, out_grad, node):
        return out_grad * node * (1 - node)


def sigmoid(a):
    return Sigmoid()(a)


class Tanh(Function):
    def forward(self, a: NDArray):
        return np.tanh(a)

    def backward(self, out_grad, node):
        return out_grad * (1 - node * node)


def tanh(a):
    return Tanh()(a)


class Reshape(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        return a.reshape(self.shape)

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
        return transpose(out_grad, tuple(int(i) for i in np.argsort(self.axes)))


def transpose(a, axes=None):
    return Transpose(axes)(a)


class Summation(Function):
    def __init__(self, axes=None):
        self.axes = axes

    def forward(self, a):
        return np.sum(a, axis=self.axes)

    def backward(self, out_grad, node):
        a = node._inputs[0]
        if self.axes is None:
            axes = range(a.ndim)
        elif isinstance(self.axes, int):
            axes = [self.axes]
        else:
            axes = self.axes
        summed = [axis % a.ndim for axis in axes]
        kept = tuple(1 if i in summed else n for i, n in enumerate(a.shape))
        return reshape(out_grad, kept) * Tensor(np.ones(a.shape), requires_grad=False)


def summation(a, axes=None):
    return Summation(axes)(a)


class BroadcastTo(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        return np.broadcast_to(a, self.shape)

    def backward(self, out_grad, node):
        return unbroadcast(out_grad, node._inputs[0].shape)


def broadcast_to(a, shape):
    return BroadcastTo(shape)(a)


class MatMul(Function):
    def forward(self, a, b):
        return np.matmul(a, b)

    def backward(self, out_grad, node):
        a, b = node._inputs
        return (
            unbroadcast(matmul(out_grad, transpose(b)), a.shape),
            unbroadcast(matmul(transpose(a), out_grad), b.shape),
        )


def matmul(a, b):
    return MatMul()(a, b)


class AddScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a: NDArray):
        return a + self.scalar

    def backward(self, out_grad: Tensor, node: Tensor):
        return out_grad


def add_scalar(a, scalar):
    return AddScalar(scalar)(a)


class MulScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a: NDArray):
        return a * self.scalar

    def backward(self, out_grad: Tensor, node: Tensor):
        return out_grad * self.scalar


def mul_scalar(a, scalar):
    return MulScalar(scalar)(a)


class DivScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a: NDArray):
        return a / self.scalar

    def backward(self, out_grad: Tensor, node: Tensor):
        return out_grad / self.scalar


def divide_scalar(a, scalar):
    return DivScalar(scalar)(a)


class PowerScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a: NDArray):
        return np.power(a, self.scalar)

    def backward(self, out_grad: Tensor, node: Tensor):
        a = node._inputs[0]
        return out_grad * self.scalar * a ** (self.scalar - 1)


def power_scalar(a, scalar):
    return PowerScalar(scalar)(a)
