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
    # BEGIN SOLUTION [babygrad.broadcasting; babygrad.ops.add, babygrad.ops.mul,
    #   babygrad.ops.sub, babygrad.ops.div, babygrad.ops.pow, babygrad.ops.broadcast_to,
    #   babygrad.ops.matmul]:
    #   sum over the prepended axes, then over stretched size-1 axes (keepdims)
    shape = tuple(shape)
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad.reshape(shape)
    # END SOLUTION


# ---------------------------------------------------------------------------------------------
# Elementwise binary operations. Inputs may have different shapes that broadcast like numpy;
# the backward pass must give each input a gradient of that input's own shape (unbroadcast).
# ---------------------------------------------------------------------------------------------


class Add(Function):
    """a + b"""

    def forward(self, a, b):
        # BEGIN SOLUTION [babygrad.ops.add; babygrad.broadcasting]: return the elementwise sum
        return a + b
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.add; babygrad.broadcasting]:
        #   both local derivatives are 1; unbroadcast out_grad to each input shape
        a, b = node._inputs
        g = out_grad.data
        return _grad(unbroadcast(g, a.shape), a), _grad(unbroadcast(g, b.shape), b)
        # END SOLUTION


def add(a, b):
    return Add()(a, b)


class Mul(Function):
    """a * b"""

    def forward(self, a, b):
        # BEGIN SOLUTION [babygrad.ops.mul; babygrad.broadcasting]: return the elementwise product
        return a * b
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.mul; babygrad.broadcasting]:
        #   d/da = b and d/db = a, times out_grad, unbroadcast to each shape
        a, b = node._inputs
        g = out_grad.data
        return (
            _grad(unbroadcast(g * b.data, a.shape), a),
            _grad(unbroadcast(g * a.data, b.shape), b),
        )
        # END SOLUTION


def mul(a, b):
    return Mul()(a, b)


class Sub(Function):
    """a - b"""

    def forward(self, a, b):
        # BEGIN SOLUTION [babygrad.ops.sub; babygrad.broadcasting]:
        #   return the elementwise difference
        return a - b
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.sub; babygrad.broadcasting]:
        #   d/da = 1 and d/db = -1, times out_grad, unbroadcast to each shape
        a, b = node._inputs
        g = out_grad.data
        return _grad(unbroadcast(g, a.shape), a), _grad(unbroadcast(-g, b.shape), b)
        # END SOLUTION


def sub(a, b):
    return Sub()(a, b)


class Div(Function):
    """a / b"""

    def forward(self, a, b):
        # BEGIN SOLUTION [babygrad.ops.div; babygrad.broadcasting]: return the elementwise quotient
        return a / b
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.div; babygrad.broadcasting]:
        #   d/da = 1/b and d/db = -a/b**2, times out_grad, unbroadcast each
        a, b = node._inputs
        g = out_grad.data
        return (
            _grad(unbroadcast(g / b.data, a.shape), a),
            _grad(unbroadcast(-g * a.data / (b.data * b.data), b.shape), b),
        )
        # END SOLUTION


def divide(a, b):
    return Div()(a, b)


class Pow(Function):
    """a ** b, elementwise, where both a and b are Tensors."""

    def forward(self, a, b):
        # BEGIN SOLUTION [babygrad.ops.pow]: return np.power(a, b)
        return np.power(a, b)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.pow; babygrad.broadcasting]:
        #   d/da = b * a**(b-1) and d/db = a**b * log(a), unbroadcast each
        a, b = node._inputs
        g, x, y = out_grad.data, a.data, b.data
        with np.errstate(divide="ignore", invalid="ignore"):
            # Same conventions as PyTorch at the edges: no gradient to a where b == 0, and none
            # to b where a == 0 and b >= 0 (the limit of a**b * log(a) there).
            da = np.where(y == 0, 0.0, y * np.power(x, y - 1))
            db = np.where((x == 0) & (y >= 0), 0.0, node.data * np.log(x))
        return _grad(unbroadcast(g * da, a.shape), a), _grad(unbroadcast(g * db, b.shape), b)
        # END SOLUTION


def power(a, b):
    return Pow()(a, b)


# ---------------------------------------------------------------------------------------------
# Elementwise unary operations
# ---------------------------------------------------------------------------------------------


class Negate(Function):
    """-a"""

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.negate]: return -a
        return -a
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.negate]: the local derivative is -1
        return _grad(-out_grad.data, node._inputs[0])
        # END SOLUTION


def negate(a):
    return Negate()(a)


class Log(Function):
    """Natural logarithm."""

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.log]: return np.log(a)
        return np.log(a)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.log]: the local derivative is 1 / a
        a = node._inputs[0]
        return _grad(out_grad.data / a.data, a)
        # END SOLUTION


def log(a):
    return Log()(a)


class Exp(Function):
    """e ** a"""

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.exp]: return np.exp(a)
        return np.exp(a)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.exp]:
        #   the local derivative is exp(a), which is the output itself
        return _grad(out_grad.data * node.data, node._inputs[0])
        # END SOLUTION


def exp(a):
    return Exp()(a)


class Sqrt(Function):
    """Square root."""

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.sqrt]: return np.sqrt(a)
        return np.sqrt(a)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.sqrt]:
        #   the local derivative is 1 / (2 * sqrt(a)), i.e. 1 / (2 * output)
        return _grad(out_grad.data / (2 * node.data), node._inputs[0])
        # END SOLUTION


def sqrt(a):
    return Sqrt()(a)


class Abs(Function):
    """Absolute value. Its derivative is taken as 0 at a == 0."""

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.abs]: return np.abs(a)
        return np.abs(a)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.abs]: the local derivative is sign(a): -1, 0 or 1
        a = node._inputs[0]
        return _grad(out_grad.data * np.sign(a.data), a)
        # END SOLUTION


def abs(a):  # shadows the builtin inside this module on purpose
    return Abs()(a)


class ReLU(Function):
    """max(0, a). Its derivative is taken as 0 at a == 0."""

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.relu]: return a where a > 0 and 0 elsewhere
        return np.where(a > 0, a, 0).astype(a.dtype)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.relu]: gradient passes where a > 0 and is 0 elsewhere
        a = node._inputs[0]
        return _grad(out_grad.data * (a.data > 0), a)
        # END SOLUTION


def relu(a):
    return ReLU()(a)


class Sigmoid(Function):
    """1 / (1 + e**-a), computed without overflow for large negative or positive a."""

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.sigmoid]:
        #   use e = exp(-|a|): 1/(1+e) where a >= 0, e/(1+e) where a < 0
        e = np.exp(-np.abs(a))
        return np.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(a.dtype)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.sigmoid]:
        #   with s the output, the local derivative is s * (1 - s)
        s = node.data
        return _grad(out_grad.data * s * (1 - s), node._inputs[0])
        # END SOLUTION


def sigmoid(a):
    return Sigmoid()(a)


class Tanh(Function):
    """Hyperbolic tangent."""

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.tanh]: return np.tanh(a)
        return np.tanh(a)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.tanh]: with t the output, the local derivative is 1 - t**2
        t = node.data
        return _grad(out_grad.data * (1 - t * t), node._inputs[0])
        # END SOLUTION


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
        # BEGIN SOLUTION [babygrad.ops.reshape]: return a reshaped to self.shape
        return np.reshape(a, self.shape)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.reshape]: reshape out_grad back to the input's shape
        a = node._inputs[0]
        return _grad(np.reshape(out_grad.data, a.shape), a)
        # END SOLUTION


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
        # BEGIN SOLUTION [babygrad.ops.transpose]:
        #   swap the last two axes if self.axes is None, else np.transpose(a, axes)
        if self.axes is None:
            return np.swapaxes(a, -1, -2)
        return np.transpose(a, self.axes)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.transpose]:
        #   swap the last two axes back, or apply the inverse permutation
        if self.axes is None:
            g = np.swapaxes(out_grad.data, -1, -2)
        else:
            g = np.transpose(out_grad.data, np.argsort(self.axes))
        return _grad(g, node._inputs[0])
        # END SOLUTION


def transpose(a, axes=None):
    return Transpose(axes)(a)


class Summation(Function):
    """Sum over ``axes``: None (every axis), an int, or a tuple of ints. Summed axes disappear."""

    def __init__(self, axes=None):
        self.axes = axes

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.summation]:
        #   return np.sum over self.axes (as an array, not a numpy scalar)
        return np.asarray(np.sum(a, axis=self.axes))
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.summation]:
        #   reshape out_grad with the summed axes as size 1, then broadcast back
        a = node._inputs[0]
        if self.axes is None:
            summed = range(a.ndim)
        elif isinstance(self.axes, int):
            summed = (self.axes,)
        else:
            summed = self.axes
        summed = {axis % a.ndim for axis in summed}
        kept = tuple(1 if i in summed else n for i, n in enumerate(a.shape))
        g = np.broadcast_to(np.reshape(out_grad.data, kept), a.shape)
        return _grad(g, a)
        # END SOLUTION


def summation(a, axes=None):
    return Summation(axes)(a)


class BroadcastTo(Function):
    """Broadcast to ``shape`` following numpy's rules (prepend axes, stretch size-1 axes)."""

    def __init__(self, shape):
        self.shape = shape

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.broadcast_to]: return np.broadcast_to(a, self.shape)
        return np.broadcast_to(a, self.shape)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.broadcast_to]: sum out_grad back down to the input's shape
        a = node._inputs[0]
        return _grad(unbroadcast(out_grad.data, a.shape), a)
        # END SOLUTION


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
        # BEGIN SOLUTION [babygrad.ops.matmul]: return np.matmul(a, b)
        return np.matmul(a, b)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.matmul]:
        #   grad_a = out_grad @ b^T, grad_b = a^T @ out_grad, each unbroadcast
        a, b = node._inputs
        x, y, g = a.data, b.data, out_grad.data
        # A 1-D operand acts as a matrix with one row (a) or one column (b); restore that axis.
        if x.ndim == 1:
            x, g = x[np.newaxis, :], np.expand_dims(g, -2)
        if y.ndim == 1:
            y, g = y[:, np.newaxis], np.expand_dims(g, -1)
        ga = unbroadcast(np.matmul(g, np.swapaxes(y, -1, -2)), x.shape)
        gb = unbroadcast(np.matmul(np.swapaxes(x, -1, -2), g), y.shape)
        return _grad(ga.reshape(a.shape), a), _grad(gb.reshape(b.shape), b)
        # END SOLUTION


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
        # BEGIN SOLUTION [babygrad.ops.add_scalar]: return a + self.scalar
        return a + self.scalar
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.add_scalar]: the local derivative is 1
        return _grad(out_grad.data, node._inputs[0])
        # END SOLUTION


def add_scalar(a, scalar):
    return AddScalar(scalar)(a)


class MulScalar(Function):
    """a * scalar"""

    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.mul_scalar]: return a * self.scalar
        return a * self.scalar
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.mul_scalar]: the local derivative is the scalar
        return _grad(out_grad.data * self.scalar, node._inputs[0])
        # END SOLUTION


def mul_scalar(a, scalar):
    return MulScalar(scalar)(a)


class DivScalar(Function):
    """a / scalar"""

    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.divide_scalar]: return a / self.scalar
        return a / self.scalar
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.divide_scalar]: the local derivative is 1 / scalar
        return _grad(out_grad.data / self.scalar, node._inputs[0])
        # END SOLUTION


def divide_scalar(a, scalar):
    return DivScalar(scalar)(a)


class PowerScalar(Function):
    """a ** scalar"""

    def __init__(self, scalar):
        self.scalar = scalar

    def forward(self, a):
        # BEGIN SOLUTION [babygrad.ops.power_scalar]: return np.power(a, self.scalar)
        return np.power(a, self.scalar)
        # END SOLUTION

    def backward(self, out_grad, node):
        # BEGIN SOLUTION [babygrad.ops.power_scalar]: power rule: scalar * a**(scalar - 1)
        a = node._inputs[0]
        return _grad(out_grad.data * self.scalar * np.power(a.data, self.scalar - 1), a)
        # END SOLUTION


def power_scalar(a, scalar):
    return PowerScalar(scalar)(a)
