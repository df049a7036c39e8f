"""Differentiable operations on Tensors.

Every operation is a subclass of ``Function`` with two methods to write:

* ``forward(*arrays)`` receives the inputs' numpy arrays and returns the output numpy array.
* ``backward(out_grad, node)`` receives the gradient of the final result with respect to this
  op's output (``out_grad``, a Tensor shaped like the output) and the output Tensor itself
  (``node``; its inputs are ``node._inputs``). It returns the gradient for each input: a single
  Tensor for a one-input op, a tuple with one Tensor per input otherwise. Every returned
  gradient must have exactly the shape of the input it belongs to.

You may compute gradients with Tensor operations (the functions at the bottom of each section)
or with numpy on ``.data`` arrays; either way, return Tensors.

``Function.__call__`` (provided) runs ``forward`` and records the graph.
"""

import numpy as np

from .tensor import NDArray, Tensor


class Function:
    """Base class of all operations. Calling an instance applies it to Tensors."""

    def __call__(self, *args):
        requires_grad = any(t.requires_grad for t in args)
        output = self.forward(*(t.data for t in args))
        out = Tensor(output, requires_grad=requires_grad, dtype=None)
        if requires_grad:
            out._op = self
            out._inputs = tuple(args)
        return out

    def forward(self, *args: NDArray) -> NDArray:
        raise NotImplementedError()

    def backward(self, out_grad: Tensor, node: Tensor):
        raise NotImplementedError()


def _grad(array, like: Tensor) -> Tensor:
    """Wrap a numpy gradient as a constant Tensor with the dtype of the tensor ``like``."""
    return Tensor(array, requires_grad=False, dtype=like.dtype)


def unbroadcast(grad: NDArray, shape) -> NDArray:
    """Sum ``grad`` down to ``shape``, undoing numpy broadcasting.

    Broadcasting ``shape`` up to ``grad.shape`` may have (1) put extra axes in front and
    (2) stretched axes of size 1. Every copy made by broadcasting received its own gradient, so
    sum over the extra leading axes, then over each stretched axis keeping it as size 1.
    """
    # graded by babygrad.broadcasting
    raise NotImplementedError(
        "sum over the prepended axes, then over stretched size-1 axes (keepdims)"
    )


# ---------------------------------------------------------------------------------------------
# Elementwise binary operations. Inputs may have different shapes that broadcast like numpy;
# the backward pass must give each input a gradient of that input's own shape (unbroadcast).
# ---------------------------------------------------------------------------------------------


class Add(Function):
    """a + b"""

    def forward(self, a, b):
        # graded by babygrad.ops.add
        raise NotImplementedError("return the elementwise sum")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.add
        raise NotImplementedError(
            "both local derivatives are 1; unbroadcast out_grad to each input shape"
        )


def add(a, b):
    return Add()(a, b)


class Mul(Function):
    """a * b"""

    def forward(self, a, b):
        # graded by babygrad.ops.mul
        raise NotImplementedError("return the elementwise product")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.mul
        raise NotImplementedError(
            "d/da = b and d/db = a, times out_grad, unbroadcast to each shape"
        )


def mul(a, b):
    return Mul()(a, b)


class Sub(Function):
    """a - b"""

    def forward(self, a, b):
        # graded by babygrad.ops.sub
        raise NotImplementedError("return the elementwise difference")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.sub
        raise NotImplementedError(
            "d/da = 1 and d/db = -1, times out_grad, unbroadcast to each shape"
        )


def sub(a, b):
    return Sub()(a, b)


class Div(Function):
    """a / b"""

    def forward(self, a, b):
        # graded by babygrad.ops.div
        raise NotImplementedError("return the elementwise quotient")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.div
        raise NotImplementedError(
            "d/da = 1/b and d/db = -a/b**2, times out_grad, unbroadcast each"
        )


def divide(a, b):
    return Div()(a, b)


class Pow(Function):
    """a ** b, elementwise, where both a and b are Tensors."""

    def forward(self, a, b):
        # graded by babygrad.ops.pow
        raise NotImplementedError("return np.power(a, b)")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.pow
        raise NotImplementedError("d/da = b * a**(b-1) and d/db = a**b * log(a), unbroadcast each")


def power(a, b):
    return Pow()(a, b)


# ---------------------------------------------------------------------------------------------
# Elementwise unary operations
# ---------------------------------------------------------------------------------------------


class Negate(Function):
    """-a"""

    def forward(self, a):
        # graded by babygrad.ops.negate
        raise NotImplementedError("return -a")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.negate
        raise NotImplementedError("the local derivative is -1")


def negate(a):
    return Negate()(a)


class Log(Function):
    """Natural logarithm."""

    def forward(self, a):
        # graded by babygrad.ops.log
        raise NotImplementedError("return np.log(a)")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.log
        raise NotImplementedError("the local derivative is 1 / a")


def log(a):
    return Log()(a)


class Exp(Function):
    """e ** a"""

    def forward(self, a):
        # graded by babygrad.ops.exp
        raise NotImplementedError("return np.exp(a)")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.exp
        raise NotImplementedError("the local derivative is exp(a), which is the output itself")


def exp(a):
    return Exp()(a)


class Sqrt(Function):
    """Square root."""

    def forward(self, a):
        # graded by babygrad.ops.sqrt
        raise NotImplementedError("return np.sqrt(a)")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.sqrt
        raise NotImplementedError(
            "the local derivative is 1 / (2 * sqrt(a)), i.e. 1 / (2 * output)"
        )


def sqrt(a):
    return Sqrt()(a)


class Abs(Function):
    """Absolute value. Its derivative is taken as 0 at a == 0."""

    def forward(self, a):
        # graded by babygrad.ops.abs
        raise NotImplementedError("return np.abs(a)")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.abs
        raise NotImplementedError("the local derivative is sign(a): -1, 0 or 1")


def abs(a):  # shadows the builtin inside this module on purpose
    return Abs()(a)


class ReLU(Function):
    """max(0, a). Its derivative is taken as 0 at a == 0."""

    def forward(self, a):
        # graded by babygrad.ops.relu
        raise NotImplementedError("return a where a > 0 and 0 elsewhere")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.relu
        raise NotImplementedError("gradient passes where a > 0 and is 0 elsewhere")


def relu(a):
    return ReLU()(a)


class Sigmoid(Function):
    """1 / (1 + e**-a), computed without overflow for large negative or positive a."""

    def forward(self, a):
        # graded by babygrad.ops.sigmoid
        raise NotImplementedError("use e = exp(-|a|): 1/(1+e) where a >= 0, e/(1+e) where a < 0")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.sigmoid
        raise NotImplementedError("with s the output, the local derivative is s * (1 - s)")


def sigmoid(a):
    return Sigmoid()(a)


class Tanh(Function):
    """Hyperbolic tangent."""

    def forward(self, a):
        # graded by babygrad.ops.tanh
        raise NotImplementedError("return np.tanh(a)")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.tanh
        raise NotImplementedError("with t the output, the local derivative is 1 - t**2")


def tanh(a):
    return Tanh()(a)


# ---------------------------------------------------------------------------------------------
# Shape operations
# ---------------------------------------------------------------------------------------------


class Reshape(Function):
    """View the same values in a new shape."""

    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        # graded by babygrad.ops.reshape
        raise NotImplementedError("return a reshaped to self.shape")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.reshape
        raise NotImplementedError("reshape out_grad back to the input's shape")


def reshape(a, shape):
    return Reshape(shape)(a)


class Transpose(Function):
    """Permute axes.

    ``axes=None`` swaps the last two axes. Otherwise ``axes`` is a full permutation of all axes,
    as in ``np.transpose``; to undo it in backward, use the inverse permutation
    (``np.argsort(axes)``).
    """

    def __init__(self, axes=None):
        self.axes = axes

    def forward(self, a):
        # graded by babygrad.ops.transpose
        raise NotImplementedError(
            "swap the last two axes if self.axes is None, else np.transpose(a, axes)"
        )

    def backward(self, out_grad, node):
        # graded by babygrad.ops.transpose
        raise NotImplementedError("swap the last two axes back, or apply the inverse permutation")


def transpose(a, axes=None):
    return Transpose(axes)(a)


class Summation(Function):
    """Sum over ``axes``: None (every axis), an int, or a tuple of ints. Summed axes disappear."""

    def __init__(self, axes=None):
        self.axes = axes

    def forward(self, a):
        # graded by babygrad.ops.summation
        raise NotImplementedError("return np.sum over self.axes (as an array, not a numpy scalar)")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.summation
        raise NotImplementedError(
            "reshape out_grad with the summed axes as size 1, then broadcast back"
        )


def summation(a, axes=None):
    return Summation(axes)(a)


class BroadcastTo(Function):
    """Broadcast to ``shape`` following numpy's rules (prepend axes, stretch size-1 axes)."""

    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        # graded by babygrad.ops.broadcast_to
        raise NotImplementedError("return np.broadcast_to(a, self.shape)")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.broadcast_to
        raise NotImplementedError("sum out_grad back down to the input's shape")


def broadcast_to(a, shape):
    return BroadcastTo(shape)(a)


class MatMul(Function):
    """Matrix product ``a @ b`` as in ``np.matmul``.

    Both operands have at least 2 dimensions; the leading (batch) dimensions broadcast, so
    ``(2, 3, 4) @ (4, 5)`` gives ``(2, 3, 5)``. Backward: ``out_grad @ b^T`` for ``a`` and
    ``a^T @ out_grad`` for ``b`` (``^T`` swaps the last two axes), each summed back over any
    broadcast batch dimensions to its operand's shape.
    """

    def forward(self, a, b):
        # graded by babygrad.ops.matmul
        raise NotImplementedError("return np.matmul(a, b)")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.matmul
        raise NotImplementedError(
            "grad_a = out_grad @ b^T, grad_b = a^T @ out_grad, each unbroadcast"
        )


def matmul(a, b):
    return MatMul()(a, b)


# ---------------------------------------------------------------------------------------------
# Operations with a constant Python number (the number gets no gradient)
# ---------------------------------------------------------------------------------------------


class AddScalar(Function):
    """a + scalar"""

    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        # graded by babygrad.ops.add_scalar
        raise NotImplementedError("return a + self.scalar")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.add_scalar
        raise NotImplementedError("the local derivative is 1")


def add_scalar(a, scalar):
    return AddScalar(scalar)(a)


class MulScalar(Function):
    """a * scalar"""

    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        # graded by babygrad.ops.mul_scalar
        raise NotImplementedError("return a * self.scalar")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.mul_scalar
        raise NotImplementedError("the local derivative is the scalar")


def mul_scalar(a, scalar):
    return MulScalar(scalar)(a)


class DivScalar(Function):
    """a / scalar"""

    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        # graded by babygrad.ops.divide_scalar
        raise NotImplementedError("return a / self.scalar")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.divide_scalar
        raise NotImplementedError("the local derivative is 1 / scalar")


def divide_scalar(a, scalar):
    return DivScalar(scalar)(a)


class PowerScalar(Function):
    """a ** scalar"""

    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        # graded by babygrad.ops.power_scalar
        raise NotImplementedError("return np.power(a, self.scalar)")

    def backward(self, out_grad, node):
        # graded by babygrad.ops.power_scalar
        raise NotImplementedError("power rule: scalar * a**(scalar - 1)")


def power_scalar(a, scalar):
    return PowerScalar(scalar)(a)
