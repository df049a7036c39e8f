"""Module 05, autograd, as this course's reference: each ``*Backward`` class's ``apply`` and
``_reduce_broadcast_grad`` are the students' work; ``Function``, ``enable_autograd`` and
``Tensor.backward`` are given."""

import numpy as np

from .activations import ReLU, Sigmoid
from .tensor import Tensor


class Function:
    """Base class of every op's backward: keeps the inputs in ``saved_tensors``."""

    def __init__(self, *tensors):
        self.saved_tensors = tensors

    def apply(self, grad_output):
        raise NotImplementedError("Each Function must implement apply()")


def _reduce_broadcast_grad(grad, original_shape):
    """Sum ``grad`` down to ``original_shape``: over the leading axes broadcasting added, and
    over the axes it stretched from size 1."""
    # BEGIN SOLUTION [tinytorch.reduce_broadcast; tinytorch.add_backward, tinytorch.sub_backward,
    #   tinytorch.mul_backward, tinytorch.div_backward]:
    #   sum the added axes, then the stretched ones
    while grad.ndim > len(original_shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(original_shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad
    # END SOLUTION


class AddBackward(Function):
    def apply(self, grad_output):
        # BEGIN SOLUTION [tinytorch.add_backward; tinytorch.reduce_broadcast]:
        #   grad_output for each input
        a, b = self.saved_tensors
        return _reduce_broadcast_grad(grad_output, a.shape), _reduce_broadcast_grad(
            grad_output, b.shape
        )
        # END SOLUTION


class SubBackward(Function):
    def apply(self, grad_output):
        # BEGIN SOLUTION [tinytorch.sub_backward; tinytorch.reduce_broadcast]:
        #   grad_output for a, its negation for b
        a, b = self.saved_tensors
        return _reduce_broadcast_grad(grad_output, a.shape), _reduce_broadcast_grad(
            -grad_output, b.shape
        )
        # END SOLUTION


class MulBackward(Function):
    def apply(self, grad_output):
        # BEGIN SOLUTION [tinytorch.mul_backward; tinytorch.reduce_broadcast]:
        #   grad_output times the other input
        a, b = self.saved_tensors
        grad_a = _reduce_broadcast_grad(grad_output * b.data, a.shape)
        return grad_a, _reduce_broadcast_grad(grad_output * a.data, b.shape)
        # END SOLUTION


class DivBackward(Function):
    def apply(self, grad_output):
        # BEGIN SOLUTION [tinytorch.div_backward; tinytorch.reduce_broadcast]:
        #   1 / b and -a / b**2, times grad_output
        a, b = self.saved_tensors
        grad_a = _reduce_broadcast_grad(grad_output / b.data, a.shape)
        return grad_a, _reduce_broadcast_grad(-grad_output * a.data / b.data**2, b.shape)
        # END SOLUTION


class MatmulBackward(Function):
    def apply(self, grad_output):
        # BEGIN SOLUTION [tinytorch.matmul_backward]: grad_output @ b^T and a^T @ grad_output
        a, b = self.saved_tensors
        grad_a = np.matmul(grad_output, np.swapaxes(b.data, -2, -1))
        grad_b = np.matmul(np.swapaxes(a.data, -2, -1), grad_output)
        return grad_a, grad_b
        # END SOLUTION


class TransposeBackward(Function):
    def __init__(self, tensor, dim0, dim1):
        super().__init__(tensor)
        self.dim0, self.dim1 = (-2, -1) if dim0 is None and dim1 is None else (dim0, dim1)

    def apply(self, grad_output):
        # BEGIN SOLUTION [tinytorch.transpose_backward]: swap the same two axes of grad_output back
        return (np.swapaxes(grad_output, self.dim0, self.dim1),)
        # END SOLUTION


class ReshapeBackward(Function):
    def __init__(self, tensor, original_shape):
        super().__init__(tensor)
        self.original_shape = original_shape

    def apply(self, grad_output):
        # BEGIN SOLUTION [tinytorch.reshape_backward]: grad_output in the input's shape
        return (np.reshape(grad_output, self.original_shape),)
        # END SOLUTION


class SumBackward(Function):
    def __init__(self, tensor, axis=None, keepdims=False):
        super().__init__(tensor)
        self.axis = axis
        self.keepdims = keepdims

    def apply(self, grad_output):
        # BEGIN SOLUTION [tinytorch.sum_backward]: restore the summed axes, then broadcast
        (tensor,) = self.saved_tensors
        grad = np.asarray(grad_output)
        if self.axis is not None and not self.keepdims:
            grad = np.expand_dims(grad, self.axis)
        return (np.broadcast_to(grad, tensor.shape).copy(),)
        # END SOLUTION


class ReLUBackward(Function):
    def apply(self, grad_output):
        # BEGIN SOLUTION [tinytorch.relu_backward]: grad_output where the input is positive
        (tensor,) = self.saved_tensors
        return (grad_output * (tensor.data > 0),)
        # END SOLUTION


class SigmoidBackward(Function):
    def __init__(self, tensor, output):
        super().__init__(tensor)
        self.output_data = output.data

    def apply(self, grad_output):
        # BEGIN SOLUTION [tinytorch.sigmoid_backward]: grad_output * s * (1 - s), s the saved output
        return (grad_output * self.output_data * (1 - self.output_data),)
        # END SOLUTION


def enable_autograd():
    """Given: patch Tensor's ops to record a ``*Backward`` after the forward, and give Tensor
    its ``backward``."""
    if getattr(Tensor, "_autograd_enabled", False):
        return
    forwards = {
        name: getattr(Tensor, name)
        for name in ("__add__", "__sub__", "__mul__", "__truediv__", "matmul")
    }
    backwards = {
        "__add__": AddBackward,
        "__sub__": SubBackward,
        "__mul__": MulBackward,
        "__truediv__": DivBackward,
        "matmul": MatmulBackward,
    }

    def binary(name):
        def op(self, other):
            other = other if isinstance(other, Tensor) else Tensor(other)
            return _tracked(forwards[name](self, other), backwards[name](self, other))

        return op

    for name in forwards:
        setattr(Tensor, name, binary(name))
    transpose, reshape, total = Tensor.transpose, Tensor.reshape, Tensor.sum

    def tracked_transpose(self, dim0=None, dim1=None):
        return _tracked(transpose(self, dim0, dim1), TransposeBackward(self, dim0, dim1))

    def tracked_reshape(self, *shape):
        return _tracked(reshape(self, *shape), ReshapeBackward(self, self.shape))

    def tracked_sum(self, axis=None, keepdims=False):
        return _tracked(total(self, axis, keepdims), SumBackward(self, axis, keepdims))

    relu, sigmoid = ReLU.forward, Sigmoid.forward

    def tracked_relu(self, x):
        return _tracked(relu(self, x), ReLUBackward(x))

    def tracked_sigmoid(self, x):
        result = sigmoid(self, x)
        return _tracked(result, SigmoidBackward(x, result))

    Tensor.transpose, Tensor.reshape, Tensor.sum = tracked_transpose, tracked_reshape, tracked_sum
    ReLU.forward, Sigmoid.forward = tracked_relu, tracked_sigmoid
    Tensor.backward = backward
    Tensor._autograd_enabled = True


def _tracked(result, grad_fn):
    if any(isinstance(t, Tensor) and t.requires_grad for t in grad_fn.saved_tensors):
        result.requires_grad = True
        result._grad_fn = grad_fn
    return result


def backward(self, gradient=None):
    """Given: recursive, one call per path; a gradient of another shape is summed down to
    this tensor's, as the course's own code does."""
    if not self.requires_grad:
        return
    if gradient is None:
        gradient = np.ones_like(self.data)
    gradient = np.asarray(gradient, dtype=np.float32)
    while gradient.ndim > self.data.ndim:
        gradient = gradient.sum(axis=0)
    for axis, size in enumerate(self.shape):
        if size == 1 and gradient.shape[axis] != 1:
            gradient = gradient.sum(axis=axis, keepdims=True)
    self.grad = gradient if self.grad is None else self.grad + gradient
    grad_fn = getattr(self, "_grad_fn", None)
    if grad_fn is not None:
        for tensor, grad in zip(grad_fn.saved_tensors, grad_fn.apply(gradient), strict=False):
            if isinstance(tensor, Tensor) and tensor.requires_grad and grad is not None:
                tensor.backward(grad)


enable_autograd()
