"""Functional backwards written otherwise than the reference: lists, and a reduction that
sums every broadcast axis at once."""

import numpy as np


def unbroadcast(grad, shape):
    extra = grad.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, size in enumerate(shape) if size == 1 and grad.shape[extra + i] != 1
    )
    return np.sum(grad, axis=axes).reshape(shape) if axes else grad


def add_backward(grad_output, a, b):
    return [unbroadcast(grad_output, a.shape), unbroadcast(grad_output, b.shape)]


def sub_backward(grad_output, a, b):
    return [unbroadcast(grad_output, a.shape), unbroadcast(np.negative(grad_output), b.shape)]


def mul_backward(grad_output, a, b):
    return [unbroadcast(b * grad_output, a.shape), unbroadcast(a * grad_output, b.shape)]


def div_backward(grad_output, a, b):
    return [
        unbroadcast(grad_output / b, a.shape),
        unbroadcast(-a * grad_output / b**2, b.shape),
    ]


def matmul_backward(grad_output, a, b):
    return [np.dot(grad_output, b.T), np.dot(a.T, grad_output)]


def log_backward(grad_output, a):
    return [np.divide(grad_output, a)]


def exp_backward(grad_output, a):
    return [np.exp(a) * grad_output]


def tanh_backward(grad_output, a):
    t = np.tanh(a)
    return [grad_output * (1 - t * t)]


def sigmoid_backward(grad_output, a):
    s = np.exp(-np.logaddexp(0.0, -a))
    return [grad_output * s * (1 - s)]
