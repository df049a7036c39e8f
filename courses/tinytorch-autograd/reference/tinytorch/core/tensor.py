"""Module 01 as TinyTorch gives it to the autograd module: a Tensor of float32 numbers with its
forward ops. Written for this course's reference; the autograd module patches these ops."""

import numpy as np


class Tensor:
    """An n-dimensional array of float32 numbers."""

    def __init__(self, data, requires_grad=False):
        self.data = np.array(data, dtype=np.float32)
        self.requires_grad = requires_grad
        self.grad = None

    @property
    def shape(self):
        return self.data.shape

    def __repr__(self):
        return f"Tensor({self.data.tolist()}, requires_grad={self.requires_grad})"

    def __add__(self, other):
        return Tensor(self.data + _array(other))

    def __sub__(self, other):
        return Tensor(self.data - _array(other))

    def __mul__(self, other):
        return Tensor(self.data * _array(other))

    def __truediv__(self, other):
        return Tensor(self.data / _array(other))

    def matmul(self, other):
        return Tensor(np.matmul(self.data, _array(other)))

    def transpose(self, dim0=None, dim1=None):
        """Swaps two axes: the last two unless named."""
        if dim0 is None and dim1 is None:
            dim0, dim1 = -2, -1
        return Tensor(np.swapaxes(self.data, dim0, dim1))

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = tuple(shape[0])
        return Tensor(self.data.reshape(shape))

    def sum(self, axis=None, keepdims=False):
        return Tensor(np.sum(self.data, axis=axis, keepdims=keepdims))


def _array(value):
    return value.data if isinstance(value, Tensor) else np.asarray(value, dtype=np.float32)
