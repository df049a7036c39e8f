"""The ops of the babygrad book, chapter 3: each a ``Function`` with ``forward`` on numpy arrays
and ``backward(out_grad, node)`` returning one gradient per input (a bare Tensor for an op of
one input), each of that input's shape.

``Function.__call__``, ``Add`` and ``AddScalar`` are the book's own; the rest are its
exercises (3.2 forwards, 3.4 backwards, 3.5 to 3.9 the shape ops and MatMul, 3.10 the scalar
ops). Every backward here reads its numbers from ``.data`` and wraps its shares as constant
Tensors, so that each op stands alone.
"""

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

    def forward(self, *args):
        """The output array, computed from the inputs' arrays."""
        raise NotImplementedError()

    def backward(self, out_grad, node):
        """Each input's share of ``out_grad``, the gradient arriving at ``node``."""
        raise NotImplementedError()


def _share(array) -> Tensor:
    """A gradient computed with numpy, as a Tensor that records nothing."""
    return Tensor(array)


# ------------------------------------------------------------------------- two inputs


class Add(Function):
    def forward(self, a: NDArray, b: NDArray):
        return a + b

    def backward(self, out_grad, node):
        return out_grad, out_grad


def add(a, b):
    return Add()(a, b)


class Mul(Function):
    def forward(self, a: NDArray, b: NDArray):
        # BEGIN SOLUTION [babygrad.ops.mul]: the elementwise product
        return a * b
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.mul]: out_grad times the other input, for each input
        a, b = node._inputs
        return _share(out_grad.data * b.data), _share(out_grad.data * a.data)
        # END SOLUTION


def mul(a, b):
    return Mul()(a, b)


class Sub(Function):
    def forward(self, a: NDArray, b: NDArray):
        # BEGIN SOLUTION [babygrad.ops.sub]: the elementwise difference
        return a - b
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.sub]: out_grad for a, its negation for b
        return _share(out_grad.data), _share(-out_grad.data)
        # END SOLUTION


def sub(a, b):
    return Sub()(a, b)


class Div(Function):
    def forward(self, a: NDArray, b: NDArray):
        # BEGIN SOLUTION [babygrad.ops.div]: the elementwise quotient
        return a / b
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.div]: d/da = 1 / b, d/db = -a / b**2, times out_grad
        a, b = node._inputs
        g = out_grad.data
        return _share(g / b.data), _share(-g * a.data / (b.data * b.data))
        # END SOLUTION


def divide(a, b):
    return Div()(a, b)


class Pow(Function):
    def forward(self, a: NDArray, b: NDArray):
        # BEGIN SOLUTION [babygrad.ops.pow]: np.power(a, b)
        return np.power(a, b)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.pow]:
        #   d/da = b * a**(b - 1), d/db = a**b * log(a), times out_grad
        a, b = node._inputs
        g = out_grad.data
        grad_a = g * b.data * np.power(a.data, b.data - 1)
        grad_b = g * node.data * np.log(a.data)
        return _share(grad_a), _share(grad_b)
        # END SOLUTION


def power(a, b):
    return Pow()(a, b)


# -------------------------------------------------------------------------- one input


class Negate(Function):
    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.negate]: -a
        return -a
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.negate]: the local derivative is -1
        return _share(-out_grad.data)
        # END SOLUTION


def negate(a):
    return Negate()(a)


class Log(Function):
    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.log]: np.log(a)
        return np.log(a)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.log]: the local derivative is 1 / a
        return _share(out_grad.data / node._inputs[0].data)
        # END SOLUTION


def log(a):
    return Log()(a)


class Exp(Function):
    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.exp]: np.exp(a)
        return np.exp(a)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.exp]: the local derivative is exp(a), the output itself
        return _share(out_grad.data * node.data)
        # END SOLUTION


def exp(a):
    return Exp()(a)


class Sqrt(Function):
    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.sqrt]: np.sqrt(a)
        return np.sqrt(a)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.sqrt]: the local derivative is 1 / (2 * sqrt(a))
        return _share(out_grad.data / (2 * node.data))
        # END SOLUTION


def sqrt(a):
    return Sqrt()(a)


class Abs(Function):
    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.abs]: np.abs(a)
        return np.abs(a)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.abs]: the local derivative is the sign of a
        return _share(out_grad.data * np.sign(node._inputs[0].data))
        # END SOLUTION


def absolute(a):
    return Abs()(a)


class ReLU(Function):
    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.relu]: a where a is positive, 0 elsewhere
        return a * (a > 0)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.relu]: out_grad passes where a is positive
        return _share(out_grad.data * (node._inputs[0].data > 0))
        # END SOLUTION


def relu(a):
    return ReLU()(a)


class Sigmoid(Function):
    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.sigmoid]: 1 / (1 + e**-a), without overflowing
        return 0.5 * (1 + np.tanh(0.5 * a))
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.sigmoid]: with s the output, s * (1 - s)
        s = node.data
        return _share(out_grad.data * s * (1 - s))
        # END SOLUTION


def sigmoid(a):
    return Sigmoid()(a)


class Tanh(Function):
    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.tanh]: np.tanh(a)
        return np.tanh(a)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.tanh]: with t the output, 1 - t**2
        t = node.data
        return _share(out_grad.data * (1 - t * t))
        # END SOLUTION


def tanh(a):
    return Tanh()(a)


# ------------------------------------------------------------------------- shape ops


class Reshape(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.reshape]: a in the shape self.shape
        return np.reshape(a, self.shape)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.reshape]: out_grad back in the input's shape
        return _share(np.reshape(out_grad.data, node._inputs[0].shape))
        # END SOLUTION


def reshape(a, shape):
    return Reshape(shape)(a)


class Transpose(Function):
    def __init__(self, axes: tuple | None = None):
        self.axes = axes

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.transpose]:
        #   None swaps the last two axes; otherwise np.transpose with self.axes
        if self.axes is None:
            return np.swapaxes(a, -1, -2)
        return np.transpose(a, self.axes)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.transpose]:
        #   swap the last two axes back, or transpose by np.argsort(self.axes)
        if self.axes is None:
            return _share(np.swapaxes(out_grad.data, -1, -2))
        return _share(np.transpose(out_grad.data, np.argsort(self.axes)))
        # END SOLUTION


def transpose(a, axes=None):
    return Transpose(axes)(a)


class Summation(Function):
    def __init__(self, axes: tuple | None = None):
        self.axes = axes

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.summation]: np.sum over self.axes (None: every axis)
        return np.sum(a, axis=self.axes)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.summation]:
        #   give the summed axes size 1 again, then stretch to the input's shape
        shape = node._inputs[0].shape
        summed = range(len(shape)) if self.axes is None else self.axes
        kept = [1 if axis in summed else size for axis, size in enumerate(shape)]
        return _share(np.broadcast_to(np.reshape(out_grad.data, kept), shape))
        # END SOLUTION


def summation(a, axes=None):
    return Summation(axes)(a)


class BroadcastTo(Function):
    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.broadcast_to]: np.broadcast_to(a, self.shape)
        return np.broadcast_to(a, self.shape)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.broadcast_to]:
        #   sum the axes put in front, then those stretched from size 1
        shape = node._inputs[0].shape
        grad = out_grad.data
        while grad.ndim > len(shape):
            grad = grad.sum(axis=0)
        stretched = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
        return _share(grad.sum(axis=stretched, keepdims=True))
        # END SOLUTION


def broadcast_to(a, shape):
    return BroadcastTo(shape)(a)


class MatMul(Function):
    def forward(self, a, b):
        # BEGIN SOLUTION [babygrad.ops.matmul]: np.matmul(a, b)
        return np.matmul(a, b)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.matmul]: out_grad @ b.T for a, a.T @ out_grad for b
        a, b = node._inputs
        return _share(out_grad.data @ b.data.T), _share(a.data.T @ out_grad.data)
        # END SOLUTION


def matmul(a, b):
    return MatMul()(a, b)


# ------------------------------------------------------------------------ scalar ops


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
        # BEGIN SOLUTION [babygrad.ops.mul_scalar]: a times the scalar
        return a * self.scalar
        # END SOLUTION

    def backward(self, out_grad: Tensor, node: Tensor):
        # BEGIN SOLUTION [babygrad.ops.mul_scalar]: the local derivative is the scalar
        return _share(out_grad.data * self.scalar)
        # END SOLUTION


def mul_scalar(a, scalar):
    return MulScalar(scalar)(a)


class DivScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a: NDArray):
        # BEGIN SOLUTION [babygrad.ops.divide_scalar]: a divided by the scalar
        return a / self.scalar
        # END SOLUTION

    def backward(self, out_grad: Tensor, node: Tensor):
        # BEGIN SOLUTION [babygrad.ops.divide_scalar]: the local derivative is 1 / scalar
        return _share(out_grad.data / self.scalar)
        # END SOLUTION


def divide_scalar(a, scalar):
    return DivScalar(scalar)(a)


class PowerScalar(Function):
    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a: NDArray):
        # BEGIN SOLUTION [babygrad.ops.power_scalar]: a raised to the scalar
        return np.power(a, self.scalar)
        # END SOLUTION

    def backward(self, out_grad: Tensor, node: Tensor):
        # BEGIN SOLUTION [babygrad.ops.power_scalar]: scalar * a**(scalar - 1), times out_grad
        a = node._inputs[0].data
        return _share(out_grad.data * self.scalar * np.power(a, self.scalar - 1))
        # END SOLUTION


def power_scalar(a, scalar):
    return PowerScalar(scalar)(a)
