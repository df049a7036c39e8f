"""Operator table (2022 layout), with gradients formulated unlike the reference's.

Transpose builds a full permutation for numpy.transpose; Summation's gradient re-inserts the
summed axes one by one (expand_dims style) before broadcasting; BroadcastTo's gradient pads the
input shape with ones and sums wherever the sizes differ; MatMul's gradient peels off the extra
batch axes one at a time; division, log and negation go through powers and scalar products.
As 2022's homework, it has no EWisePow (a tensor raised to a tensor).
"""

import numpy

from .autograd import Tensor, TensorOp

array_api = numpy


def _axes_tuple(axes, ndim):
    """axes (None, an int or a sequence) as a sorted tuple of non-negative axes."""
    if axes is None:
        return tuple(range(ndim))
    if numpy.ndim(axes) == 0:
        axes = (int(axes),)
    return tuple(sorted(int(axis) % ndim for axis in axes))


class EWiseAdd(TensorOp):
    def compute(self, a, b):
        return numpy.add(a, b)

    def gradient(self, out_grad, node):
        return (out_grad, out_grad)


def add(a, b):
    return EWiseAdd()(a, b)


class AddScalar(TensorOp):
    def __init__(self, scalar):
        self.scalar = scalar

    def compute(self, a):
        return numpy.add(a, self.scalar)

    def gradient(self, out_grad, node):
        return (out_grad,)


def add_scalar(a, scalar):
    return AddScalar(scalar)(a)


class EWiseMul(TensorOp):
    def compute(self, a, b):
        return numpy.multiply(a, b)

    def gradient(self, out_grad, node):
        left, right = node.inputs
        return multiply(out_grad, right), multiply(left, out_grad)


def multiply(a, b):
    return EWiseMul()(a, b)


class MulScalar(TensorOp):
    def __init__(self, scalar):
        self.scalar = scalar

    def compute(self, a):
        return numpy.multiply(a, self.scalar)

    def gradient(self, out_grad, node):
        return (mul_scalar(out_grad, self.scalar),)


def mul_scalar(a, scalar):
    return MulScalar(scalar)(a)


class PowerScalar(TensorOp):
    def __init__(self, scalar):
        self.scalar = scalar

    def compute(self, a):
        return numpy.power(a, self.scalar)

    def gradient(self, out_grad, node):
        if self.scalar == 0:
            return (mul_scalar(out_grad, 0),)
        base = node.inputs[0]
        local = mul_scalar(power_scalar(base, self.scalar - 1), self.scalar)
        return (multiply(out_grad, local),)


def power_scalar(a, scalar):
    return PowerScalar(scalar)(a)


class EWiseDiv(TensorOp):
    def compute(self, a, b):
        return numpy.divide(a, b)

    def gradient(self, out_grad, node):
        divisor = node.inputs[1]
        wrt_numerator = multiply(out_grad, power_scalar(divisor, -1))
        # d(a/b)/db = -(a/b) / b: reuse the quotient (node) instead of a.
        wrt_divisor = negate(divide(multiply(out_grad, node), divisor))
        return wrt_numerator, wrt_divisor


def divide(a, b):
    return EWiseDiv()(a, b)


class DivScalar(TensorOp):
    def __init__(self, scalar):
        self.scalar = scalar

    def compute(self, a):
        return numpy.divide(a, self.scalar)

    def gradient(self, out_grad, node):
        return (divide_scalar(out_grad, self.scalar),)


def divide_scalar(a, scalar):
    return DivScalar(scalar)(a)


class Transpose(TensorOp):
    """Swap a pair of axes (default: the last two) through a full permutation."""

    def __init__(self, axes=None):
        self.axes = axes

    def _permutation(self, ndim):
        if self.axes is None:
            i, j = ndim - 2, ndim - 1
        else:
            i, j = (int(axis) % ndim for axis in self.axes)
        order = list(range(ndim))
        order[i], order[j] = order[j], order[i]
        return order

    def compute(self, a):
        return numpy.transpose(a, self._permutation(a.ndim))

    def gradient(self, out_grad, node):
        # A swap is its own inverse; name the axes explicitly rather than relying on None.
        ndim = len(out_grad.shape)
        order = self._permutation(ndim)
        moved = [axis for axis in range(ndim) if order[axis] != axis]
        if not moved:
            return (out_grad,)
        return (transpose(out_grad, tuple(moved)),)


def transpose(a, axes=None):
    return Transpose(axes)(a)


class Reshape(TensorOp):
    def __init__(self, shape):
        self.shape = shape

    def compute(self, a):
        return numpy.reshape(a, self.shape)

    def gradient(self, out_grad, node):
        return (reshape(out_grad, node.inputs[0].shape),)


def reshape(a, shape):
    return Reshape(shape)(a)


class BroadcastTo(TensorOp):
    def __init__(self, shape):
        self.shape = shape

    def compute(self, a):
        return numpy.broadcast_to(a, self.shape)

    def gradient(self, out_grad, node):
        original = node.inputs[0].shape
        wide = tuple(out_grad.shape)
        padded = (1,) * (len(wide) - len(original)) + tuple(original)
        differing = tuple(
            i for i, (was, now) in enumerate(zip(padded, wide, strict=True)) if was != now
        )
        collapsed = summation(out_grad, differing) if differing else out_grad
        return (reshape(collapsed, original),)


def broadcast_to(a, shape):
    return BroadcastTo(shape)(a)


class Summation(TensorOp):
    def __init__(self, axes=None):
        self.axes = axes

    def compute(self, a):
        return numpy.sum(a, axis=None if self.axes is None else _axes_tuple(self.axes, a.ndim))

    def gradient(self, out_grad, node):
        original = node.inputs[0].shape
        restored = list(out_grad.shape)
        for axis in _axes_tuple(self.axes, len(original)):
            restored.insert(axis, 1)
        return (broadcast_to(reshape(out_grad, tuple(restored)), original),)


def summation(a, axes=None):
    return Summation(axes)(a)


def _sum_down_to(grad, shape):
    """Sum grad over the batch axes matmul broadcast, one axis at a time."""
    while len(grad.shape) > len(shape):
        grad = summation(grad, 0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            kept = list(grad.shape)
            kept[axis] = 1
            grad = reshape(summation(grad, axis), tuple(kept))
    return grad


class MatMul(TensorOp):
    def compute(self, a, b):
        return numpy.matmul(a, b)

    def gradient(self, out_grad, node):
        left, right = node.inputs
        wrt_left = matmul(out_grad, transpose(right))
        wrt_right = matmul(transpose(left), out_grad)
        return _sum_down_to(wrt_left, left.shape), _sum_down_to(wrt_right, right.shape)


def matmul(a, b):
    return MatMul()(a, b)


class Negate(TensorOp):
    def compute(self, a):
        return numpy.negative(a)

    def gradient(self, out_grad, node):
        return (mul_scalar(out_grad, -1),)


def negate(a):
    return Negate()(a)


class Log(TensorOp):
    def compute(self, a):
        return numpy.log(a)

    def gradient(self, out_grad, node):
        return (multiply(out_grad, power_scalar(node.inputs[0], -1)),)


def log(a):
    return Log()(a)


class Exp(TensorOp):
    def compute(self, a):
        return numpy.exp(a)

    def gradient(self, out_grad, node):
        return (multiply(out_grad, exp(node.inputs[0])),)


def exp(a):
    return Exp()(a)


class ReLU(TensorOp):
    def compute(self, a):
        return numpy.where(a > 0, a, numpy.zeros_like(a))

    def gradient(self, out_grad, node):
        # The output is positive exactly where the input is (0 at exactly 0).
        passes = node.realize_cached_data() > 0
        return (multiply(out_grad, Tensor.make_const(passes.astype(out_grad.dtype))),)


def relu(a):
    return ReLU()(a)
