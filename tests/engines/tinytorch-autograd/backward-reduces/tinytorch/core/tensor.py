"""Module 01 of an older TinyTorch handout, written for this test: a float32 Tensor and its
forward ops, which the autograd module patches."""

import numpy as np


def _raw(x):
    return x.data if isinstance(x, Tensor) else np.asarray(x, dtype=np.float32)


class Tensor:
    def __init__(self, data, requires_grad=False):
        self.data = np.asarray(data, dtype=np.float32)
        self.requires_grad = requires_grad
        self.grad = None

    @property
    def shape(self):
        return self.data.shape

    def __add__(self, other):
        return Tensor(self.data + _raw(other))

    def __sub__(self, other):
        return Tensor(self.data - _raw(other))

    def __mul__(self, other):
        return Tensor(self.data * _raw(other))

    def __truediv__(self, other):
        return Tensor(self.data / _raw(other))

    def matmul(self, other):
        return Tensor(self.data @ _raw(other))

    def transpose(self, dim0=None, dim1=None):
        if dim0 is None and dim1 is None:
            return Tensor(np.swapaxes(self.data, -1, -2))
        return Tensor(np.swapaxes(self.data, dim0, dim1))

    def reshape(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            (shape,) = shape
        return Tensor(np.reshape(self.data, shape))

    def sum(self, axis=None, keepdims=False):
        return Tensor(self.data.sum(axis=axis, keepdims=keepdims))
