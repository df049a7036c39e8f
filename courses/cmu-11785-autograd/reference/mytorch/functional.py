"""Each operation's backward: given the gradient of its output and its inputs, the gradient
of each input, a numpy array of that input's shape (an input broadcast in the forward gets
the broadcast gradient summed back, ``unbroadcast``)."""

import numpy as np


def unbroadcast(grad, shape):
    """``grad`` summed back to ``shape``: over the leading axes broadcasting added, then over
    the axes stretched from size 1 (kept as size 1)."""
    # BEGIN SOLUTION [mytorch.broadcasting; mytorch.add_backward, mytorch.sub_backward,
    #   mytorch.mul_backward, mytorch.div_backward]:
    #   sum grad over the axes broadcasting added or stretched
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad
    # END SOLUTION


def add_backward(grad_output, a, b):
    # BEGIN SOLUTION [mytorch.add_backward; mytorch.broadcasting]: the gradients of a + b
    return unbroadcast(grad_output, a.shape), unbroadcast(grad_output, b.shape)
    # END SOLUTION


def sub_backward(grad_output, a, b):
    # BEGIN SOLUTION [mytorch.sub_backward; mytorch.broadcasting]: the gradients of a - b
    return unbroadcast(grad_output, a.shape), unbroadcast(-grad_output, b.shape)
    # END SOLUTION


def mul_backward(grad_output, a, b):
    # BEGIN SOLUTION [mytorch.mul_backward; mytorch.broadcasting]: the gradients of a * b
    return unbroadcast(grad_output * b, a.shape), unbroadcast(grad_output * a, b.shape)
    # END SOLUTION


def div_backward(grad_output, a, b):
    # BEGIN SOLUTION [mytorch.div_backward; mytorch.broadcasting]: the gradients of a / b
    return (
        unbroadcast(grad_output / b, a.shape),
        unbroadcast(-grad_output * a / (b * b), b.shape),
    )
    # END SOLUTION


def matmul_backward(grad_output, a, b):
    # BEGIN SOLUTION [mytorch.matmul_backward]: the gradients of a @ b (two matrices)
    return grad_output @ b.T, a.T @ grad_output
    # END SOLUTION


def log_backward(grad_output, a):
    # BEGIN SOLUTION [mytorch.log_backward]: the gradient of np.log(a)
    return (grad_output / a,)
    # END SOLUTION


def exp_backward(grad_output, a):
    # BEGIN SOLUTION [mytorch.exp_backward]: the gradient of np.exp(a)
    return (grad_output * np.exp(a),)
    # END SOLUTION


def tanh_backward(grad_output, a):
    # BEGIN SOLUTION [mytorch.tanh_backward]: the gradient of np.tanh(a)
    return (grad_output * (1.0 - np.tanh(a) ** 2),)
    # END SOLUTION


def sigmoid_backward(grad_output, a):
    # BEGIN SOLUTION [mytorch.sigmoid_backward]: the gradient of 1 / (1 + np.exp(-a))
    s = 1.0 / (1.0 + np.exp(-a))
    return (grad_output * s * (1.0 - s),)
    # END SOLUTION
