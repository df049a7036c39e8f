"""TinyTorch's autograd module through the grader's adapter protocol (grader/language/adapters.py).

Its ops are Tensor methods (ReLU and Sigmoid: activation classes) that record a ``*Backward``
in ``_grad_fn`` after the forward; each is asked alone with ``apply(grad_output)`` on bare
arrays; what it returns reaches each input as the course's given ``Tensor.backward`` delivers
it (summed down to the input's shape), but for Add, Sub, Mul and Div: their ``apply`` sums its
gradients back itself, calling the student's ``_reduce_broadcast_grad`` as TinyTorch's solution
does, and is graded on what it returns. Runs in the worker only.
"""

import importlib

import numpy as np

ACTIVATIONS = "tinytorch.core.activations"
"""Imported when ReLU or Sigmoid is applied: an engine without module 02 is graded on the rest."""


def load():
    """Tensor (the engine), once the autograd module is imported: importing it enables
    autograd."""
    importlib.import_module("tinytorch.core.autograd")
    return importlib.import_module("tinytorch.core.tensor").Tensor


def leaf(engine, data):
    return engine(data, requires_grad=True)


def value(tensor):
    return tensor.data


def apply(engine, op, inputs, param):
    a, *rest = inputs
    if op in ("add", "sub", "mul", "div"):
        return {"add": a.__add__, "sub": a.__sub__, "mul": a.__mul__, "div": a.__truediv__}[op](
            rest[0]
        )
    if op == "matmul":
        return a.matmul(rest[0])
    if op == "swap_axes":
        return a.transpose() if param is None else a.transpose(*param)
    if op == "reshape":
        return a.reshape(*param)
    if op == "sum":
        return a.sum(axis=param)
    if op in ("relu", "sigmoid"):
        activation = {"relu": "ReLU", "sigmoid": "Sigmoid"}[op]
        return getattr(importlib.import_module(ACTIVATIONS), activation)().forward(a)
    raise ValueError(f"TinyTorch's autograd module has no {op}")


REDUCING = ("AddBackward", "SubBackward", "MulBackward", "DivBackward")
"""The ops whose ``apply`` the course asks to sum each gradient back to its input's shape
(with ``_reduce_broadcast_grad``): what they return is graded as it is, or a reduction that does
nothing would pass where the given ``Tensor.backward`` sums for it."""


def gradients(engine, tensor, out_grad):
    grad_fn = tensor._grad_fn
    grads = grad_fn.apply(out_grad.astype("float32"))
    reduces = type(grad_fn).__name__ in REDUCING
    return [
        None if grad is None else np.asarray(grad) if reduces else delivered(grad, x.shape)
        for grad, x in zip(grads, grad_fn.saved_tensors, strict=False)
    ]


def delivered(grad, shape):
    """A gradient as the given Tensor.backward delivers it: summed down to the input's shape
    (the course's code, not the student's: a shape MatmulBackward leaves, broadcast batch axes
    and all, is not charged)."""
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad
