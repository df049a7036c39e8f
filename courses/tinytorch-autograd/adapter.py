"""TinyTorch's autograd module through the grader's adapter protocol (grader/language/adapters.py).

Its ops are Tensor methods (ReLU and Sigmoid: activation classes) that record a ``*Backward``
in ``_grad_fn`` after the forward; each is asked alone with ``apply(grad_output)`` on bare
arrays, and what it returns is reduced to each input's shape by the student's
``reduce_broadcast``, as the course's given ``Tensor.backward`` does. Runs in the worker only.
"""

import importlib
from types import SimpleNamespace


def load():
    core = "tinytorch.core."
    return SimpleNamespace(
        Tensor=importlib.import_module(core + "tensor").Tensor,
        autograd=importlib.import_module(core + "autograd"),
        activations=importlib.import_module(core + "activations"),
    )


def leaf(engine, data):
    return engine.Tensor(data, requires_grad=True)


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
    if op == "relu":
        return engine.activations.ReLU().forward(a)
    if op == "sigmoid":
        return engine.activations.Sigmoid().forward(a)
    raise ValueError(f"TinyTorch's autograd module has no {op}")


def gradients(engine, tensor, out_grad):
    grad_fn = tensor._grad_fn
    grads = grad_fn.apply(out_grad.astype("float32"))
    return [
        None if grad is None else reduced(engine, grad, x.shape)
        for grad, x in zip(grads, grad_fn.saved_tensors, strict=False)
    ]


def reduced(engine, grad, shape):
    """As the given Tensor.backward: only a gradient of another shape is reduced, so an op is
    graded without the helper wherever nothing was broadcast."""
    if getattr(grad, "shape", None) == tuple(shape):
        return grad
    return engine.autograd.reduce_broadcast(grad, shape)
