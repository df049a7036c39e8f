"""The ``Tensor`` class: a numpy array plus the bookkeeping autograd needs.

Operators and methods on a Tensor route to the ``Function`` subclasses in ``ops.py``; each call
records the Function (``_op``) and its input Tensors (``_inputs``) on the result, which is how
the computation graph gets built. ``Tensor.backward`` walks that graph in reverse.

Your task in this file is ``Tensor.backward``; everything else is provided.
"""

import numpy as np

NDArray = np.ndarray

_SCALAR_TYPES = (int, float, np.integer, np.floating)


class Tensor:
    """An n-dimensional array that can take part in automatic differentiation.

    Args:
        data: a Tensor, numpy array, (nested) list or number. The values are copied.
        requires_grad: whether gradients should be computed for this tensor.
        dtype: numpy dtype of ``.data`` ("float32" by default). ``None`` keeps the dtype numpy
            infers from ``data``.
    """

    # Make numpy defer to Tensor's reflected operators in mixed expressions like ``arr - t``.
    __array_ufunc__ = None

    def __init__(self, data, requires_grad=True, dtype="float32"):
        if isinstance(data, Tensor):
            data = data.data
        self.data = np.array(data, dtype=dtype)
        self.grad = None
        self.requires_grad = requires_grad
        self._op = None
        self._inputs = ()

    # ------------------------------------------------------------------------------ properties

    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self):
        return self.data.ndim

    def numpy(self):
        """Return a copy of the underlying numpy array."""
        return self.data.copy()

    def __repr__(self):
        return f"Tensor({self.data}, requires_grad={self.requires_grad})"

    def _wrap(self, other):
        """Turn a non-Tensor operand into a constant Tensor of this tensor's dtype."""
        if isinstance(other, Tensor):
            return other
        return Tensor(other, requires_grad=False, dtype=self.dtype)

    # ------------------------------------------------------------------------------ operators

    def __add__(self, other):
        if isinstance(other, _SCALAR_TYPES):
            return ops.add_scalar(self, other)
        return ops.add(self, self._wrap(other))

    def __radd__(self, other):
        if isinstance(other, _SCALAR_TYPES):
            return ops.add_scalar(self, other)
        return ops.add(self._wrap(other), self)

    def __sub__(self, other):
        if isinstance(other, _SCALAR_TYPES):
            return ops.add_scalar(self, -other)
        return ops.sub(self, self._wrap(other))

    def __rsub__(self, other):
        if isinstance(other, _SCALAR_TYPES):
            return ops.add_scalar(ops.negate(self), other)
        return ops.sub(self._wrap(other), self)

    def __mul__(self, other):
        if isinstance(other, _SCALAR_TYPES):
            return ops.mul_scalar(self, other)
        return ops.mul(self, self._wrap(other))

    def __rmul__(self, other):
        if isinstance(other, _SCALAR_TYPES):
            return ops.mul_scalar(self, other)
        return ops.mul(self._wrap(other), self)

    def __truediv__(self, other):
        if isinstance(other, _SCALAR_TYPES):
            return ops.divide_scalar(self, other)
        return ops.divide(self, self._wrap(other))

    def __rtruediv__(self, other):
        if isinstance(other, _SCALAR_TYPES):
            return ops.mul_scalar(ops.power_scalar(self, -1), other)
        return ops.divide(self._wrap(other), self)

    def __pow__(self, other):
        if isinstance(other, _SCALAR_TYPES):
            return ops.power_scalar(self, other)
        return ops.power(self, self._wrap(other))

    def __neg__(self):
        return ops.negate(self)

    def __matmul__(self, other):
        return ops.matmul(self, self._wrap(other))

    # -------------------------------------------------------------------------------- methods

    def matmul(self, other):
        return ops.matmul(self, self._wrap(other))

    def reshape(self, shape):
        return ops.reshape(self, shape)

    def transpose(self, axes=None):
        return ops.transpose(self, axes)

    def sum(self, axes=None):
        return ops.summation(self, axes)

    def broadcast_to(self, shape):
        return ops.broadcast_to(self, shape)

    def log(self):
        return ops.log(self)

    def exp(self):
        return ops.exp(self)

    def sqrt(self):
        return ops.sqrt(self)

    def abs(self):
        return ops.abs(self)

    def relu(self):
        return ops.relu(self)

    def sigmoid(self):
        return ops.sigmoid(self)

    def tanh(self):
        return ops.tanh(self)

    # ------------------------------------------------------------------------ backpropagation

    def backward(self, grad=None):
        """Compute gradients of this tensor with respect to every tensor it depends on.

        ``grad`` is the gradient arriving at this tensor; when omitted it is a tensor of ones
        with this tensor's shape. Then:

        1. Order the graph (follow ``_inputs``) so every tensor comes after all of its inputs.
           Use a depth-first search with an explicit stack, not recursion, and remember visited
           tensors by ``id(tensor)``.
        2. Keep a ledger: a dict from ``id(tensor)`` to the gradient gathered so far.
        3. Visit the tensors from this one back to the leaves. A tensor's ledger entry is final
           once you reach it: store it in ``.grad`` if the tensor requires grad. If the tensor
           came from an op, call ``tensor._op.backward(out_grad, tensor)`` (a single Tensor or a
           tuple with one gradient per input) and ADD each part to that input's ledger entry:
           a tensor used along several paths collects the sum of all of them.
        """
        # graded by babygrad.backward, babygrad.accumulate
        raise NotImplementedError(
            "topologically order the graph, then propagate through a summing ledger"
        )


from . import ops  # noqa: E402  (ops imports Tensor from this module)
