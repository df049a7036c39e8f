"""Module 05 as an older TinyTorch handout asks for it, written for this test: each op's
``apply`` returns its gradients in the output's shape, and the given ``Tensor.backward`` sums a
broadcast gradient back to its input's shape. There is no ``_reduce_broadcast_grad``: in this
handout reducing is the course's code, not the student's."""

import numpy as np

from .activations import ReLU, Sigmoid
from .tensor import Tensor


class Function:
    def __init__(self, *tensors):
        self.saved_tensors = tensors

    def apply(self, grad_output):
        raise NotImplementedError


def _wants(t):
    return isinstance(t, Tensor) and t.requires_grad


class AddBackward(Function):
    def apply(self, grad_output):
        a, b = self.saved_tensors
        return (grad_output if _wants(a) else None), (grad_output if _wants(b) else None)


class SubBackward(Function):
    def apply(self, grad_output):
        a, b = self.saved_tensors
        return (grad_output if _wants(a) else None), (-grad_output if _wants(b) else None)


class MulBackward(Function):
    def apply(self, grad_output):
        a, b = self.saved_tensors
        da = grad_output * b.data if _wants(a) else None
        db = grad_output * a.data if _wants(b) else None
        return da, db


class DivBackward(Function):
    def apply(self, grad_output):
        a, b = self.saved_tensors
        da = grad_output / b.data if _wants(a) else None
        db = -grad_output * a.data / (b.data * b.data) if _wants(b) else None
        return da, db


class MatmulBackward(Function):
    def apply(self, grad_output):
        a, b = self.saved_tensors
        da = grad_output @ np.swapaxes(b.data, -1, -2) if _wants(a) else None
        db = np.swapaxes(a.data, -1, -2) @ grad_output if _wants(b) else None
        return da, db


class TransposeBackward(Function):
    def __init__(self, tensor, dim0, dim1):
        super().__init__(tensor)
        self.axes = (-1, -2) if dim0 is None and dim1 is None else (dim0, dim1)

    def apply(self, grad_output):
        return (np.swapaxes(grad_output, *self.axes),)


class ReshapeBackward(Function):
    def __init__(self, tensor, original_shape):
        super().__init__(tensor)
        self.original_shape = original_shape

    def apply(self, grad_output):
        return (grad_output.reshape(self.original_shape),)


class SumBackward(Function):
    def __init__(self, tensor, axis=None, keepdims=False):
        super().__init__(tensor)
        self.axis, self.keepdims = axis, keepdims

    def apply(self, grad_output):
        (x,) = self.saved_tensors
        g = np.asarray(grad_output)
        if self.axis is not None and not self.keepdims:
            g = np.expand_dims(g, self.axis)
        return (np.ones_like(x.data) * g,)


class ReLUBackward(Function):
    def apply(self, grad_output):
        (x,) = self.saved_tensors
        return (np.where(x.data > 0, grad_output, 0.0),)


class SigmoidBackward(Function):
    def __init__(self, tensor, output):
        super().__init__(tensor)
        self.s = output.data

    def apply(self, grad_output):
        return (grad_output * self.s * (1.0 - self.s),)


def _record(out, fn):
    """Given: the result remembers the op that made it, if any input needs a gradient."""
    if any(_wants(t) for t in fn.saved_tensors):
        out.requires_grad = True
        out._grad_fn = fn
    return out


def _summed_to(gradient, shape):
    """Given: a broadcast gradient summed back to ``shape``."""
    while gradient.ndim > len(shape):
        gradient = gradient.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and gradient.shape[axis] != 1:
            gradient = gradient.sum(axis=axis, keepdims=True)
    return gradient


def backward(self, gradient=None):
    """Given: depth first, once per path; the gradient is summed to this tensor's shape."""
    if not self.requires_grad:
        return
    gradient = np.ones_like(self.data) if gradient is None else np.asarray(gradient, np.float32)
    gradient = _summed_to(gradient, self.shape)
    self.grad = gradient.copy() if self.grad is None else self.grad + gradient
    fn = getattr(self, "_grad_fn", None)
    if fn is None:
        return
    for parent, grad in zip(fn.saved_tensors, fn.apply(gradient), strict=False):
        if _wants(parent) and grad is not None:
            parent.backward(grad)


def enable_autograd():
    """Given: Tensor's ops and the activations record their backward."""
    if getattr(Tensor, "_autograd_enabled", False):
        return
    plain = {n: getattr(Tensor, n) for n in ("__add__", "__sub__", "__mul__", "__truediv__")}
    plain_matmul, plain_t, plain_r, plain_s = (
        Tensor.matmul,
        Tensor.transpose,
        Tensor.reshape,
        Tensor.sum,
    )
    kinds = {
        "__add__": AddBackward,
        "__sub__": SubBackward,
        "__mul__": MulBackward,
        "__truediv__": DivBackward,
    }

    def make(name):
        def op(self, other):
            other = other if isinstance(other, Tensor) else Tensor(other)
            return _record(plain[name](self, other), kinds[name](self, other))

        return op

    for name in plain:
        setattr(Tensor, name, make(name))
    Tensor.matmul = lambda a, b: _record(plain_matmul(a, b), MatmulBackward(a, b))
    Tensor.transpose = lambda a, d0=None, d1=None: _record(
        plain_t(a, d0, d1), TransposeBackward(a, d0, d1)
    )
    Tensor.reshape = lambda a, *s: _record(plain_r(a, *s), ReshapeBackward(a, a.shape))
    Tensor.sum = lambda a, axis=None, keepdims=False: _record(
        plain_s(a, axis, keepdims), SumBackward(a, axis, keepdims)
    )
    relu, sigmoid = ReLU.forward, Sigmoid.forward
    ReLU.forward = lambda self, x: _record(relu(self, x), ReLUBackward(x))

    def sigmoid_forward(self, x):
        out = sigmoid(self, x)
        return _record(out, SigmoidBackward(x, out))

    Sigmoid.forward = sigmoid_forward
    Tensor.backward = backward
    Tensor._autograd_enabled = True


enable_autograd()
