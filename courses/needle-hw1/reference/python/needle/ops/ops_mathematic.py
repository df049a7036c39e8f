"""needle's mathematical operations.

Every operation is a ``TensorOp`` subclass with two methods to write:

* ``compute(*arrays)`` receives the operands' data as numpy arrays and returns the output
  array. It works on raw arrays (``array_api`` is numpy), never on Tensors.
* ``gradient(out_grad, node)`` receives the adjoint of the output (``out_grad``, a Tensor shaped
  like the output) and the output Tensor itself (``node``: its operands are ``node.inputs``).
  It returns the partial adjoint of each operand: a single Tensor for a one-operand op, a tuple
  with one Tensor per operand otherwise, each with exactly its operand's shape.

Write every gradient with needle operations on Tensors (the functions of this module and the
Tensor operators ``+ - * / ** @``), not with numpy: the adjoints are then graphs themselves and
can be differentiated again. The one exception is ReLU, whose mask may be read from the data of
its operand (``realize_cached_data()``) and wrapped in a constant Tensor.

Elementwise ops with two Tensor operands take operands of the same shape: needle never
broadcasts implicitly (``broadcast_to`` does it explicitly). Each class has a lowercase function
that applies it, e.g. ``add(a, b)`` or ``summation(a, axes=(0,))``.
"""

from numbers import Integral

from ..autograd import NDArray, Tensor, TensorOp
from ..backend_numpy import array_api


class EWiseAdd(TensorOp):
    """a + b, elementwise (operands of the same shape)."""

    def compute(self, a, b):
        # BEGIN SOLUTION [needle.ops.add]: return the elementwise sum
        return a + b
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.add]: both local derivatives are 1
        return out_grad, out_grad
        # END SOLUTION


def add(a, b):
    return EWiseAdd()(a, b)


class AddScalar(TensorOp):
    """a + scalar, for a Python number ``scalar`` (which gets no gradient)."""

    def __init__(self, scalar):
        self.scalar = scalar

    def compute(self, a):
        # BEGIN SOLUTION [needle.ops.add_scalar; needle.ops.power]: return a plus the scalar
        return a + self.scalar
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.add_scalar]: the local derivative is 1
        return out_grad
        # END SOLUTION


def add_scalar(a, scalar):
    return AddScalar(scalar)(a)


class EWiseMul(TensorOp):
    """a * b, elementwise (operands of the same shape)."""

    def compute(self, a: NDArray, b: NDArray):
        # BEGIN SOLUTION [needle.ops.multiply; needle.ops.power_scalar, needle.ops.power,
        #   needle.ops.divide, needle.ops.exp, needle.ops.relu]:
        #   return the elementwise product
        return a * b
        # END SOLUTION

    def gradient(self, out_grad: Tensor, node: Tensor):
        # BEGIN SOLUTION [needle.ops.multiply]:
        #   the partial adjoint of each operand is out_grad times the OTHER operand
        a, b = node.inputs
        return out_grad * b, out_grad * a
        # END SOLUTION


def multiply(a, b):
    return EWiseMul()(a, b)


class MulScalar(TensorOp):
    """a * scalar, for a Python number ``scalar`` (which gets no gradient)."""

    def __init__(self, scalar):
        self.scalar = scalar

    def compute(self, a: NDArray):
        # BEGIN SOLUTION [needle.ops.mul_scalar; needle.ops.power_scalar]:
        #   return a times the scalar
        return a * self.scalar
        # END SOLUTION

    def gradient(self, out_grad: Tensor, node: Tensor):
        # BEGIN SOLUTION [needle.ops.mul_scalar]: the local derivative is the scalar
        return out_grad * self.scalar
        # END SOLUTION


def mul_scalar(a, scalar):
    return MulScalar(scalar)(a)


class PowerScalar(TensorOp):
    """a ** scalar, elementwise, for an integer ``scalar`` (which gets no gradient).

    The exponent may be 0 or negative; with exponent 0 the gradient is 0 everywhere.
    """

    def __init__(self, scalar: int):
        self.scalar = scalar

    def compute(self, a: NDArray) -> NDArray:
        # BEGIN SOLUTION [needle.ops.power_scalar]: raise a to the power self.scalar
        return a**self.scalar
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.power_scalar]:
        #   power rule: out_grad times scalar * a ** (scalar - 1)
        a = node.inputs[0]
        return out_grad * power_scalar(a, self.scalar - 1) * self.scalar
        # END SOLUTION


def power_scalar(a, scalar):
    return PowerScalar(scalar)(a)


class EWisePow(TensorOp):
    """a ** b, elementwise, both operands Tensors of the same shape.

    Its domain is a > 0: the partial adjoint of the exponent involves log(a).
    """

    def compute(self, a: NDArray, b: NDArray) -> NDArray:
        # BEGIN SOLUTION [needle.ops.power]: raise a to the power b, elementwise
        return a**b
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.power]:
        #   d/da = b * a ** (b - 1) and d/db = a ** b * log(a), each times out_grad
        a, b = node.inputs
        grad_a = out_grad * b * power(a, b - 1)
        grad_b = out_grad * node * log(a)
        return grad_a, grad_b
        # END SOLUTION


def power(a, b):
    return EWisePow()(a, b)


class EWiseDiv(TensorOp):
    """a / b, elementwise (operands of the same shape)."""

    def compute(self, a, b):
        # BEGIN SOLUTION [needle.ops.divide; needle.ops.log]: return the elementwise quotient
        return a / b
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.divide]:
        #   d/da = 1 / b and d/db = -a / b ** 2, each times out_grad
        a, b = node.inputs
        return out_grad / b, -(out_grad * a / (b * b))
        # END SOLUTION


def divide(a, b):
    return EWiseDiv()(a, b)


class DivScalar(TensorOp):
    """a / scalar, for a Python number ``scalar`` (which gets no gradient)."""

    def __init__(self, scalar):
        self.scalar = scalar

    def compute(self, a):
        # BEGIN SOLUTION [needle.ops.divide_scalar]: return a divided by the scalar
        return a / self.scalar
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.divide_scalar]: the local derivative is 1 / scalar
        return out_grad / self.scalar
        # END SOLUTION


def divide_scalar(a, scalar):
    return DivScalar(scalar)(a)


class Transpose(TensorOp):
    """Swap two axes of a.

    ``axes`` is a PAIR ``(i, j)``: the two axes to swap (not a permutation of all axes as in
    ``np.transpose``). ``axes=None`` swaps the LAST two axes. For an input of shape (2, 3, 4),
    ``transpose(x)`` has shape (2, 4, 3) and ``transpose(x, (0, 1))`` has shape (3, 2, 4).
    """

    def __init__(self, axes: tuple | None = None):
        self.axes = axes

    def compute(self, a):
        # BEGIN SOLUTION [needle.ops.transpose; needle.ops.matmul]:
        #   swap the two axes named in self.axes, or the last two when it is None
        first, second = (-2, -1) if self.axes is None else self.axes
        return array_api.swapaxes(a, first, second)
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.transpose]:
        #   swapping the same two axes again undoes the swap
        return transpose(out_grad, self.axes)
        # END SOLUTION


def transpose(a, axes=None):
    return Transpose(axes)(a)


class Reshape(TensorOp):
    """The same entries, in row-major order, in the shape ``shape``."""

    def __init__(self, shape):
        self.shape = shape

    def compute(self, a):
        # BEGIN SOLUTION [needle.ops.reshape; needle.ops.broadcast_to, needle.ops.summation,
        #   needle.ops.matmul]:
        #   return a reshaped to self.shape
        return array_api.reshape(a, self.shape)
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.reshape]: reshape out_grad back to the operand's shape
        return reshape(out_grad, node.inputs[0].shape)
        # END SOLUTION


def reshape(a, shape):
    return Reshape(shape)(a)


class BroadcastTo(TensorOp):
    """a broadcast to ``shape`` by numpy's rules.

    Broadcasting may prepend axes on the left and stretch axes of size 1; every entry of the
    output is a copy of one entry of a.
    """

    def __init__(self, shape):
        self.shape = shape

    def compute(self, a):
        # BEGIN SOLUTION [needle.ops.broadcast_to; needle.ops.summation]:
        #   return a broadcast to self.shape
        return array_api.broadcast_to(a, self.shape)
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.broadcast_to]:
        #   every copy sends its adjoint back: sum out_grad over the prepended axes and over the
        #   axes stretched from size 1, then reshape to the operand's shape
        shape = node.inputs[0].shape
        target = tuple(self.shape)
        prepended = len(target) - len(shape)
        stretched = tuple(
            prepended + i
            for i, size in enumerate(shape)
            if size == 1 and target[prepended + i] != 1
        )
        axes = tuple(range(prepended)) + stretched
        grad = summation(out_grad, axes) if axes else out_grad
        return reshape(grad, shape)
        # END SOLUTION


def broadcast_to(a, shape):
    return BroadcastTo(shape)(a)


class Summation(TensorOp):
    """The sum of a over ``axes``; the summed axes disappear from the shape.

    ``axes`` is None (sum every axis, giving a 0-d result), one int, or a tuple of ints;
    negative axes count from the end as in numpy.
    """

    def __init__(self, axes: tuple | None = None):
        self.axes = axes

    def compute(self, a):
        # BEGIN SOLUTION [needle.ops.summation; needle.ops.broadcast_to, needle.ops.matmul]:
        #   sum a over self.axes
        return array_api.sum(a, axis=self.axes)
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.summation]:
        #   put the summed axes back into out_grad's shape with size 1, then broadcast it to the
        #   operand's shape
        shape = node.inputs[0].shape
        if self.axes is None:
            summed = range(len(shape))
        elif isinstance(self.axes, Integral):
            summed = (self.axes,)
        else:
            summed = self.axes
        summed = {axis % len(shape) for axis in summed}
        kept = tuple(1 if i in summed else size for i, size in enumerate(shape))
        return broadcast_to(reshape(out_grad, kept), shape)
        # END SOLUTION


def summation(a, axes=None):
    return Summation(axes)(a)


class MatMul(TensorOp):
    """The matrix product a @ b, as np.matmul computes it.

    Both operands have at least 2 dimensions. The leading (batch) dimensions broadcast: a
    (6, 5, 4) @ (4, 3) gives (6, 5, 3) and a (1, 5, 4) @ (7, 4, 3) gives (7, 5, 3). Each
    operand's partial adjoint is summed back over the batch axes it was broadcast along.
    """

    def compute(self, a, b):
        # BEGIN SOLUTION [needle.ops.matmul]: return the (batched) matrix product of a and b
        return array_api.matmul(a, b)
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.matmul]:
        #   out_grad @ b^T for a and a^T @ out_grad for b (^T swaps the last two axes), each
        #   summed over the batch axes its operand was broadcast along
        a, b = node.inputs

        def swap_last_two(x):
            return transpose(x, (len(x.shape) - 2, len(x.shape) - 1))

        def reduce_to(grad, shape):
            prepended = len(grad.shape) - len(shape)
            stretched = tuple(
                prepended + i
                for i, size in enumerate(shape)
                if size == 1 and grad.shape[prepended + i] != 1
            )
            axes = tuple(range(prepended)) + stretched
            return reshape(summation(grad, axes), shape) if axes else grad

        grad_a = matmul(out_grad, swap_last_two(b))
        grad_b = matmul(swap_last_two(a), out_grad)
        return reduce_to(grad_a, a.shape), reduce_to(grad_b, b.shape)
        # END SOLUTION


def matmul(a, b):
    return MatMul()(a, b)


class Negate(TensorOp):
    """-a"""

    def compute(self, a):
        # BEGIN SOLUTION [needle.ops.negate; needle.ops.divide]: return a with its sign flipped
        return -a
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.negate]: the local derivative is -1
        return negate(out_grad)
        # END SOLUTION


def negate(a):
    return Negate()(a)


class Log(TensorOp):
    """The natural logarithm, elementwise (domain a > 0)."""

    def compute(self, a):
        # BEGIN SOLUTION [needle.ops.log; needle.ops.power]: return the natural log of a
        return array_api.log(a)
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.log]: the local derivative is 1 / a
        return out_grad / node.inputs[0]
        # END SOLUTION


def log(a):
    return Log()(a)


class Exp(TensorOp):
    """e ** a, elementwise."""

    def compute(self, a):
        # BEGIN SOLUTION [needle.ops.exp]: return e raised to a
        return array_api.exp(a)
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.exp]:
        #   the local derivative is exp(a), which is this op's output
        return out_grad * node
        # END SOLUTION


def exp(a):
    return Exp()(a)


class ReLU(TensorOp):
    """max(a, 0), elementwise. Its derivative is taken as 0 at a == 0 (as PyTorch does)."""

    def compute(self, a):
        # BEGIN SOLUTION [needle.ops.relu]: keep a where it is positive, 0 elsewhere
        return array_api.maximum(a, 0)
        # END SOLUTION

    def gradient(self, out_grad, node):
        # BEGIN SOLUTION [needle.ops.relu]:
        #   out_grad where the operand is positive, 0 elsewhere (at exactly 0 too); the mask
        #   may come from the operand's data, as a constant Tensor
        positive = node.inputs[0].realize_cached_data() > 0
        mask = Tensor(positive, dtype=out_grad.dtype, requires_grad=False)
        return out_grad * mask
        # END SOLUTION


def relu(a):
    return ReLU()(a)
